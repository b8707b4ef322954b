import Foundation

/// Why a due date of a saving plan is not recorded (yet).
public enum SavingWaitReason: String, Sendable {
    /// A manual plan: a reminder, confirmed by hand.
    case manual
    /// No usable price of the asset for that day.
    case noPrice = "no-price"
    /// The buy would overdraw the portfolio's cash.
    case noCash = "no-cash"
}

/// One due date of one plan that `saving run` recorded (or with `--dry-run`, would record).
public struct SavingRecorded: Sendable {
    public var plan: String
    public var day: Int64
    public var buy: Transaction
    /// The linked deposit of a plan funded from outside in a cash-tracking portfolio.
    public var deposit: Transaction?
}

/// One due date that waits, and why.
public struct SavingWaiting: Sendable {
    public var plan: String
    public var day: Int64
    public var assetId: String
    /// The plan's money per due date.
    public var amount: Fixed18
    public var reason: SavingWaitReason
    /// What a person reads: which price is missing, how much cash is short.
    public var detail: String
}

/// What `saving run` did.
public struct SavingRunResult: Sendable {
    public var recorded: [SavingRecorded] = []
    public var waiting: [SavingWaiting] = []
    /// A price fetch failed (exit 3 when a due date waits for a price).
    public var serviceFailure: Error?
}

/// A saving-plan command that cannot go on.
public enum SavingPlanError: Error, CustomStringConvertible {
    case notFound(String)
    case notDue(String, next: Int64)
    case noPrice(String, assetId: String, currency: String, day: Int64)

    public var description: String {
        switch self {
        case let .notFound(name): "No saving plan is named '\(TextEscaping.escaped(name))'; 'bitpal saving list' shows them"
        case let .notDue(name, next): "Saving plan '\(TextEscaping.escaped(name))' has nothing due: its next due date is \(ISODate.dayText(next))"
        case let .noPrice(name, asset, currency, day):
            "No price of \(asset) in \(currency) on \(ISODate.dayText(day)) or the \(SavingPrice.maxAgeDays) days before for '\(TextEscaping.escaped(name))'; give one with --price"
        }
    }
}

/// The rule that picks a saving plan's price (allocation-plans.md): the newest quote of the asset,
/// in the currency it is bought in, at or before the end of the due date.
///
/// Deviation, stated in the README: a quote more than `maxAge` days older than the due date is not
/// usable, so a machine that was off (and offline) never buys at a price weeks old.
public enum SavingPrice {
    public static let maxAgeDays: Int64 = 7

    public static func quote(of assetId: String, currency: String, day: Int64, prices: PriceBook, timeZone: TimeZone) -> Quote? {
        let end = ISODate.start(ofDay: day + 1, in: timeZone)
        let oldest = ISODate.start(ofDay: day - maxAgeDays, in: timeZone)
        return prices.history(assetId).last { $0.time < end && $0.currency == currency && $0.time >= oldest }
    }

    /// Whether a quote of that very day is known (else a coin's daily history is fetched first).
    static func hasQuote(on day: Int64, of assetId: String, currency: String, prices: PriceBook, timeZone: TimeZone) -> Bool {
        let start = ISODate.start(ofDay: day, in: timeZone), end = ISODate.start(ofDay: day + 1, in: timeZone)
        return prices.history(assetId).contains { $0.time >= start && $0.time < end && $0.currency == currency }
    }

    /// A quote's price as stored money: rounded half up to 18 decimals; `nil` when not positive.
    static func fixed(_ price: Decimal) -> Fixed18? {
        var exact = price, rounded = Decimal()
        NSDecimalRound(&rounded, &exact, 18, .plain)
        guard let f = Fixed18(rounded), f.units > 0 else { return nil }
        return f
    }
}

extension Book {
    /// The currency a plan's money is in: the asset's (a registered one), else its portfolio's base.
    public func currency(of plan: SavingPlan) -> String {
        asset(id: plan.assetId)?.currency ?? portfolio(named: plan.portfolio)?.baseCurrency ?? "USD"
    }

    /// The transactions that record one due date of `plan` at `price` (a buy, and a deposit before it
    /// when the money comes from outside into a cash-tracking portfolio), dated `date`.
    public func savingTransactions(_ plan: SavingPlan, price: Fixed18, date: Date) throws(PortfolioError) -> [Transaction] {
        guard let portfolio = portfolio(named: plan.portfolio) else { throw .portfolioNotFound(plan.portfolio) }
        let currency = currency(of: plan)
        guard let units = plan.units(at: price), units.units > 0 else { throw .amountNotPositive }
        let rate = try fxRate(for: currency, in: portfolio, on: date)
        var legs: [Transaction] = []
        if plan.from == .outside && portfolio.trackCash {
            legs.append(Transaction(portfolio: portfolio.name, type: .deposit, assetId: "", amount: plan.amount, price: nil, fee: nil,
                                    currency: currency, fxRate: rate, date: date, notes: plan.transactionNote))
        }
        legs.append(Transaction(portfolio: portfolio.name, type: .buy, assetId: plan.assetId, amount: units, price: price, total: plan.total,
                                fee: plan.fee, currency: currency, fxRate: rate, date: date, notes: plan.transactionNote))
        return legs
    }
}

extension Book {
    /// Adds the transactions of one due date of the `i`-th saving plan and moves the plan on past `day`.
    mutating func record(_ legs: [Transaction], ofSavingPlan i: Int, day: Int64) -> SavingRecorded {
        transactions.append(contentsOf: legs)
        for t in legs { changed.insert(t.id) }
        savingPlans[i].lastExecutedDay = day
        savingPlans[i].nextDueDay = savingPlans[i].due(after: day)
        return SavingRecorded(plan: savingPlans[i].name, day: day, buy: legs[legs.count - 1], deposit: legs.count > 1 ? legs[0] : nil)
    }
}

extension Session {
    /// `saving run`: every open due date of every active automatic plan up to today, oldest first,
    /// each recorded exactly once.
    ///
    /// Prices are fetched first, without the store's lock: today's quote when it is older than 60 s,
    /// and a coin's daily history when a missed day has no quote. Then, under the lock, the plans
    /// are read again and each open date is recorded with the plan's next due date in the same
    /// write, so a run repeated or two runs at once never record a date twice. A date with no
    /// usable price, or whose buy would overdraw cash, waits (with the plan's later dates); other
    /// plans go on.
    public func runSavingPlans(timeZone: TimeZone, dryRun: Bool, names: MessageNames) throws -> SavingRunResult {
        let today = ISODate.dayNumber(of: now, in: timeZone)
        var result = SavingRunResult()
        let before = try loadBook()
        var prices = priceBook(before, history: true)
        if !offline {
            result.serviceFailure = fetchSavingPrices(before, today: today, prices: prices, timeZone: timeZone)
            prices = priceBook(before, history: true)
        }
        let outcome: SavingRunResult = try store.update(now: now, names: names) { book in
            var run = SavingRunResult(serviceFailure: result.serviceFailure)
            let original = book
            record(into: &book, run: &run, today: today, prices: prices, timeZone: timeZone, checkingCash: false)
            if run.recorded.contains(where: { book.savingPlans.first(named: $0.plan)?.from == .cash }) {
                do {
                    try book.admit(from: original, now: now)
                } catch {
                    // Some buy overdraws: record again, checking each date that spends cash on its own.
                    book = original
                    run = SavingRunResult(serviceFailure: result.serviceFailure)
                    record(into: &book, run: &run, today: today, prices: prices, timeZone: timeZone, checkingCash: true)
                }
            }
            return (!dryRun && !run.recorded.isEmpty, run)
        }
        result = outcome
        return result
    }

    /// Records every open due date it can into `book` (see `runSavingPlans`): all plans' dates in date
    /// order (plans in their order on the same day), a plan stopping at its first date that waits.
    private func record(into book: inout Book, run: inout SavingRunResult, today: Int64, prices: PriceBook, timeZone: TimeZone,
                        checkingCash: Bool) {
        var stuck = Set<Int>()
        while true {
            var next: (day: Int64, index: Int)?
            for (i, p) in book.savingPlans.enumerated() where p.active && p.method == .automatic && !stuck.contains(i) && p.nextDueDay <= today {
                if p.nextDueDay < (next?.day ?? .max) { next = (p.nextDueDay, i) }
            }
            guard let (day, i) = next else { return }
            let plan = book.savingPlans[i]
            func wait(_ reason: SavingWaitReason, _ detail: String) {
                run.waiting.append(SavingWaiting(plan: plan.name, day: day, assetId: plan.assetId, amount: plan.amount, reason: reason, detail: detail))
                stuck.insert(i)
            }
            let currency = book.currency(of: plan)
            guard let quote = SavingPrice.quote(of: plan.assetId, currency: currency, day: day, prices: prices, timeZone: timeZone),
                  let price = SavingPrice.fixed(quote.price) else {
                wait(.noPrice, "no price of \(plan.assetId) in \(currency) on \(ISODate.dayText(day)) or the \(SavingPrice.maxAgeDays) days before")
                continue
            }
            let legs: [Transaction]
            do {
                legs = try book.savingTransactions(plan, price: price, date: ISODate.start(ofDay: day, in: timeZone))
            } catch {
                wait(.noPrice, "\(error)")
                continue
            }
            if plan.from == .cash {
                guard book.portfolio(named: plan.portfolio)?.trackCash == true else {
                    wait(.noCash, "'\(plan.portfolio)' does not track cash")
                    continue
                }
                if checkingCash {
                    var trial = book
                    trial.transactions.append(contentsOf: legs)
                    do {
                        try trial.admit(from: book, now: now)
                    } catch {
                        wait(.noCash, "\(error)")
                        continue
                    }
                }
            }
            run.recorded.append(book.record(legs, ofSavingPlan: i, day: day))
        }
    }

    /// `saving due`: every open due date of a manual plan, and of an automatic plan one that cannot be
    /// recorded now (no usable price in what is known, or it would overdraw cash). Nothing is fetched
    /// or written.
    public func waitingSavingDates(timeZone: TimeZone, names: MessageNames) throws -> [SavingWaiting] {
        let today = ISODate.dayNumber(of: now, in: timeZone)
        var book = try loadBook()
        let prices = priceBook(book, history: true)
        var waiting: [SavingWaiting] = []
        for plan in book.savingPlans where plan.active && plan.method == .manual {
            for day in plan.openDays(through: today, limit: 1000) {
                waiting.append(SavingWaiting(plan: plan.name, day: day, assetId: plan.assetId, amount: plan.amount, reason: .manual, detail: ""))
            }
        }
        var run = SavingRunResult()
        record(into: &book, run: &run, today: today, prices: prices, timeZone: timeZone, checkingCash: true)
        // A stuck plan waits at one date with the ones after it.
        for w in run.waiting {
            guard let plan = book.savingPlans.first(named: w.plan) else { continue }
            for day in plan.openDays(through: today, limit: 1000) {
                waiting.append(SavingWaiting(plan: w.plan, day: day, assetId: w.assetId, amount: w.amount, reason: w.reason, detail: w.detail))
            }
        }
        return waiting.sorted { ($0.day, $0.plan.lowercased()) < ($1.day, $1.plan.lowercased()) }
    }

    /// `saving confirm`: records the oldest open due date of the plan named `name` at `price` (default:
    /// the run's rule, from what is known), dated `date` (default the due date), and moves the plan on.
    public func confirmSavingDate(name: String, price given: Fixed18?, date: Date?, timeZone: TimeZone, names: MessageNames) throws -> SavingRecorded {
        let prices = priceBook(try loadBook(), history: true)
        return try store.update(now: now, names: names) { book in
            guard let i = book.savingPlans.firstIndex(where: { $0.name.lowercased() == name.lowercased() }) else {
                throw SavingPlanError.notFound(name)
            }
            let plan = book.savingPlans[i]
            let day = plan.nextDueDay
            let today = ISODate.dayNumber(of: now, in: timeZone)
            guard day <= today else { throw SavingPlanError.notDue(plan.name, next: day) }
            let currency = book.currency(of: plan)
            guard let price = given ?? SavingPrice.quote(of: plan.assetId, currency: currency, day: day, prices: prices, timeZone: timeZone)
                .flatMap({ SavingPrice.fixed($0.price) }) else {
                throw SavingPlanError.noPrice(plan.name, assetId: plan.assetId, currency: currency, day: day)
            }
            let legs = try book.savingTransactions(plan, price: price, date: date ?? ISODate.start(ofDay: day, in: timeZone))
            if plan.from == .cash, book.portfolio(named: plan.portfolio)?.trackCash != true { throw PortfolioError.cashNotTracked(plan.portfolio) }
            return (true, book.record(legs, ofSavingPlan: i, day: day))
        }
    }

    /// Fetches what the open due dates need and the cache lacks; returns the failure, if any.
    private func fetchSavingPrices(_ book: Book, today: Int64, prices: PriceBook, timeZone: TimeZone) -> Error? {
        var current: [String: Set<String>] = [:]  // currency → coins whose quote of today is older than 60 s
        var history: [String: (currency: String, oldest: Int64)] = [:]
        for plan in book.savingPlans where plan.active && plan.method == .automatic && !Asset.isRegisteredID(plan.assetId) {
            let currency = book.currency(of: plan)
            for day in plan.openDays(through: today) {
                if day == today {
                    let newest = prices.history(plan.assetId).last { $0.currency == currency }
                    if newest.map({ now.timeIntervalSince($0.time) > PriceBook.freshFor }) ?? true { current[currency, default: []].insert(plan.assetId) }
                } else if !SavingPrice.hasQuote(on: day, of: plan.assetId, currency: currency, prices: prices, timeZone: timeZone) {
                    let key = plan.assetId + "\u{0}" + currency
                    history[key] = (currency, min(history[key]?.oldest ?? day, day))
                }
            }
        }
        var failure: Error?
        // History first: its last point is "now" too, and the current price fetched after it is the one kept.
        for (key, need) in history.sorted(by: { $0.key < $1.key }) {
            let coin = String(key.prefix { $0 != "\u{0}" })
            // The service keeps 365 days for free; a day further back waits (no price).
            let days = Int(min(365, max(1, today - need.oldest + 1)))
            do {
                _ = try fetchHistory(coin: coin, currencies: [need.currency], days: days, purpose: .explicit)
            } catch {
                failure = failure ?? error
            }
        }
        for (currency, coins) in current.sorted(by: { $0.key < $1.key }) {
            do {
                let fetched = try fetchPrices(coins.sorted(), currencies: [currency], purpose: .explicit)
                for w in fetched.warnings { notify(.service(w)) }
            } catch {
                failure = failure ?? error
            }
        }
        return failure
    }
}

extension [SavingPlan] {
    /// The plan named `name`, any case.
    public func first(named name: String) -> SavingPlan? {
        let lower = name.lowercased()
        return first { $0.name.lowercased() == lower }
    }
}

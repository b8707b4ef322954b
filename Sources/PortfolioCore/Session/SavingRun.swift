import Foundation

/// Why a due date of a saving plan is not recorded (yet).
public enum SavingWaitReason: String, Sendable {
    /// A manual plan: a reminder, confirmed by hand.
    case manual
    /// No usable price of the asset for that day.
    case noPrice = "no-price"
    /// The buy would overdraw the portfolio's cash.
    case noCash = "no-cash"
    /// An earlier due date of the same plan waits: a plan's dates are recorded in order.
    case blocked
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
    /// It waits for a price because fetching that price failed (exit 3).
    public var serviceFailed = false
}

/// What `saving run` did.
public struct SavingRunResult: Sendable {
    public var recorded: [SavingRecorded] = []
    public var waiting: [SavingWaiting] = []
    /// A price fetch failed (said even with `--quiet`; exit 3 when a date waits for that price).
    public var serviceFailure: Error?
}

/// A saving-plan command that cannot go on.
public enum SavingPlanError: Error, CustomStringConvertible {
    case notFound(String)
    case notDue(String, next: Int64)
    case noPrice(String, assetId: String, currency: String, day: Int64)
    case cannotRecord(String, String)
    case bookBreaksRules

    public var description: String {
        switch self {
        case let .notFound(name): "No saving plan is named '\(TextEscaping.escaped(name))'; 'bitpal saving list' shows them"
        case let .notDue(name, next): "Saving plan '\(TextEscaping.escaped(name))' has nothing due: its next due date is \(ISODate.dayText(next))"
        case let .noPrice(name, asset, currency, day):
            "No price of \(asset) in \(currency) on \(ISODate.dayText(day)) or the \(SavingPrices.maxAgeDays) days before for '\(TextEscaping.escaped(name))'; give one with --price"
        case let .cannotRecord(name, why): "Cannot record '\(TextEscaping.escaped(name))': \(why)"
        case .bookBreaksRules: "portfolio.json breaks a rule already, so no saving plan can be recorded; 'bitpal check' says which and how to fix it"
        }
    }
}

/// The rule that picks a saving plan's price (allocation-plans.md): the newest quote of the asset,
/// in the currency it is bought in, at or before the end of the due date; and what else a due
/// date needs to be recorded (the rate into the portfolio's base).
///
/// Deviation, stated in the manual (Deviations): a quote more than `maxAgeDays` days older than the due date is
/// not usable, so a machine that was off (and offline) never buys at a price weeks old.
public struct SavingPrices {
    public static let maxAgeDays: Int64 = 7
    /// The service's daily history reaches this many days back (free and demo plans).
    public static let historyDays: Int64 = 365

    let prices: PriceBook
    let rates: FXTable
    let timeZone: TimeZone
    /// Coins (with their currency) whose fetch failed in this run, and why.
    var failed: [String: Error] = [:]
    /// How the reasons a date waits name the asset (`BTC (Bitcoin)`).
    var names: MessageNames = .plain

    /// - Parameters:
    ///   - prices: every quote (manual and cached), with history.
    ///   - rates: every rate known over time (`Session.historyRates`).
    public init(prices: PriceBook, rates: [FXRate], timeZone: TimeZone) {
        self.prices = prices
        self.timeZone = timeZone
        self.rates = FXTable(rates)
    }

    static func key(_ assetId: String, _ currency: String) -> String { assetId + "\u{0}" + currency }

    /// The index of the first quote at or after `time` in a history sorted by time.
    private static func firstIndex(_ quotes: [Quote], atOrAfter time: Date) -> Int {
        var lo = 0, hi = quotes.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if quotes[mid].time < time { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// The newest usable quote for a due date (see the type).
    public func quote(of assetId: String, currency: String, day: Int64) -> Quote? {
        let quotes = prices.history(assetId)
        let oldest = ISODate.start(ofDay: day - Self.maxAgeDays, in: timeZone)
        var i = Self.firstIndex(quotes, atOrAfter: ISODate.start(ofDay: day + 1, in: timeZone)) - 1
        while i >= 0 && quotes[i].time >= oldest {
            if quotes[i].currency == currency { return quotes[i] }
            i -= 1
        }
        return nil
    }

    /// Whether a quote of that very day is known (else a coin's daily history is fetched first).
    func hasQuote(on day: Int64, of assetId: String, currency: String) -> Bool {
        let quotes = prices.history(assetId)
        let end = ISODate.start(ofDay: day + 1, in: timeZone)
        var i = Self.firstIndex(quotes, atOrAfter: ISODate.start(ofDay: day, in: timeZone))
        while i < quotes.count && quotes[i].time < end {
            if quotes[i].currency == currency { return true }
            i += 1
        }
        return false
    }

    /// A quote's price as stored money: rounded half up to 18 decimals; `nil` when not positive or too large.
    static func fixed(_ price: Decimal) -> Fixed18? {
        var exact = price, rounded = Decimal()
        NSDecimalRound(&rounded, &exact, 18, .plain)
        guard let f = Fixed18(rounded), f.units > 0, f.isStorable else { return nil }
        return f
    }

    /// The price of one due date of `plan`, or why it waits (`nil` price).
    func price(for plan: SavingPlan, currency: String, day: Int64, today: Int64) -> (price: Fixed18?, detail: String, serviceFailed: Bool) {
        let asset = plan.assetId
        let named = names.coin(asset)
        if let error = failed[Self.key(asset, currency)], day == today || !hasQuote(on: day, of: asset, currency: currency) {
            // Never a stale price for a date whose fetch failed.
            return (nil, "fetching the price of \(named) in \(currency) failed: \(error)", !(error is UnknownCoinFailure))
        }
        guard let q = quote(of: asset, currency: currency, day: day) else {
            let beyond = !Asset.isRegisteredID(asset) && day < today - Self.historyDays + 1
            return (nil, "no price of \(named) in \(currency) on \(ISODate.dayText(day)) or the \(Self.maxAgeDays) days before"
                    + (beyond ? " (the price service's history reaches \(Self.historyDays) days back; set one with 'bitpal price set' or move the plan on with 'bitpal saving edit \(plan.name) --next DATE')" : ""),
                    false)
        }
        guard let price = Self.fixed(q.price) else { return (nil, "the price of \(named) on \(ISODate.dayText(day)) is not usable (\(q.price))", false) }
        return (price, "", false)
    }
}

/// A coin the price service does not know: a failure of the plan, not of the service (exit 1).
struct UnknownCoinFailure: Error, CustomStringConvertible {
    var underlying: Error
    var description: String { "\(underlying)" }
}

extension Book {
    /// The currency a plan's money is in: the asset's (a registered one), else its portfolio's base.
    public func currency(of plan: SavingPlan) -> String {
        asset(id: plan.assetId)?.currency ?? portfolio(named: plan.portfolio)?.baseCurrency ?? "USD"
    }

    /// The transactions that record one due date of `plan` at `price` (a buy, and a deposit before it
    /// when the money comes from outside into a cash-tracking portfolio), dated `date`, with the rate
    /// of `rates` when the money is not in the portfolio's base.
    public func savingTransactions(_ plan: SavingPlan, price: Fixed18, date when: RecordDate, rates: FXTable, now: Date) throws(PortfolioError) -> [Transaction] {
        let date = when.date
        guard let portfolio = portfolio(named: plan.portfolio) else { throw .portfolioNotFound(plan.portfolio) }
        let currency = currency(of: plan)
        guard let units = plan.units(at: price) else { throw .tooManyDigits(field: "Amount", text: "\(plan.total.text) / \(price.text)") }
        guard units.units > 0 else { throw .amountNotPositive }
        var rate: Fixed18?
        if currency != portfolio.baseCurrency {
            guard let found = rates.rate(from: currency, to: portfolio.baseCurrency, on: date) else {
                throw .fxRateMissing(from: currency, to: portfolio.baseCurrency, date: date)
            }
            rate = found.rate
        }
        var legs: [Transaction] = []
        // Money paid in for the buy is linked to it (a row of `LinkKind`): deleting one takes the other.
        let link: UUID? = plan.from == .outside && portfolio.trackCash ? UUIDText.random() : nil
        if let link {
            legs.append(try transaction(RecordRequest(id: link, portfolio: portfolio.name, type: .deposit, amount: plan.amount, currency: currency,
                                                      fxRate: rate, date: when, notes: plan.transactionNote, linkedId: link)))
        }
        legs.append(try transaction(RecordRequest(portfolio: portfolio.name, type: .buy, assetId: plan.assetId, amount: units, price: price,
                                                  total: plan.total, fee: plan.fee, currency: currency, fxRate: rate, date: when,
                                                  notes: plan.transactionNote, linkedId: link)))
        for t in legs { try ValueRules.check(t, now: now) }
        return legs
    }

    /// Why the legs of a due date cannot be made, for a person.
    static func savingProblem(_ error: PortfolioError, plan: SavingPlan, price: Fixed18) -> String {
        switch error {
        case .tooManyDigits, .amountNotPositive:
            return "\(plan.total.text) at \(price.text) would buy a quantity bitpal cannot keep exactly (more than 20 digits before the point, or less than 10^-18)"
        case let .fxRateMissing(from, to, date):
            return "no \(from)→\(to) rate is known on \(ISODate.day(date)) (record one with 'bitpal fx set', 'fx import' or 'fx refresh')"
        default:
            return "\(error)"
        }
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
    /// What saving plans are priced with: every quote and every rate known over time.
    func savingPrices(_ book: Book, timeZone: TimeZone) -> SavingPrices {
        let prices = prices.priceBook(book, scope: PriceHistoryScope(assets: Set(book.savingPlans.map(\.assetId)), rates: true))
        return SavingPrices(prices: prices, rates: self.prices.historyRates(book, prices: prices), timeZone: timeZone)
    }

    /// `saving run`: every open due date of every active automatic plan up to today, oldest first,
    /// each recorded exactly once.
    ///
    /// Prices are fetched first, without the store's lock: a coin's daily history when a missed day
    /// has no quote, then today's quote when it is older than 60 s. Then, under the lock, the plans
    /// are read again and each open date is recorded with the plan's next due date in the same
    /// write, so a run repeated or two runs at once never record a date twice. A date with no
    /// usable price, or whose buy would overdraw cash, waits (with the plan's later dates); other
    /// plans go on.
    public func runSavingPlans(timeZone: TimeZone, dryRun: Bool, names: MessageNames) throws -> SavingRunResult {
        let today = ISODate.dayNumber(of: now, in: timeZone)
        let before = try repository.loadBook()
        var failed: [String: Error] = [:]
        if !offline {
            failed = fetchSavingPrices(before, today: today, prices: savingPrices(before, timeZone: timeZone))
        }
        var prices = savingPrices(before, timeZone: timeZone)
        prices.names = names
        prices.failed = failed
        let firstFailure = failed.sorted { $0.key < $1.key }.first?.value
        return try repository.store.update(now: now, names: names) { book in
            var run = SavingRunResult(serviceFailure: firstFailure)
            let original = book
            record(into: &book, run: &run, today: today, prices: prices)
            try settleCash(&book, run: &run, original: original)
            return (!dryRun && !run.recorded.isEmpty, run)
        }
    }

    /// Records every open due date it can into `book` (see `runSavingPlans`): all plans' dates in date
    /// order (plans in their order on the same day), a plan stopping at its first date that waits.
    /// Cash is not checked here (`settleCash` does).
    private func record(into book: inout Book, run: inout SavingRunResult, today: Int64, prices: SavingPrices) {
        var stuck = Set<Int>()
        while true {
            var next: (day: Int64, index: Int)?
            for (i, p) in book.savingPlans.enumerated() where p.active && p.method == .automatic && !stuck.contains(i) && p.nextDueDay <= today {
                if p.nextDueDay < (next?.day ?? .max) { next = (p.nextDueDay, i) }
            }
            guard let (day, i) = next else { return }
            let plan = book.savingPlans[i]
            func wait(_ reason: SavingWaitReason, _ detail: String, serviceFailed: Bool = false) {
                run.waiting.append(SavingWaiting(plan: plan.name, day: day, assetId: plan.assetId, amount: plan.amount, reason: reason,
                                                 detail: detail, serviceFailed: serviceFailed))
                stuck.insert(i)
            }
            let currency = book.currency(of: plan)
            let found = prices.price(for: plan, currency: currency, day: day, today: today)
            guard let price = found.price else {
                wait(.noPrice, found.detail, serviceFailed: found.serviceFailed)
                continue
            }
            let legs: [Transaction]
            do {
                legs = try book.savingTransactions(plan, price: price, date: .day(day, in: prices.timeZone), rates: prices.rates, now: now)
            } catch {
                wait(.noPrice, Book.savingProblem(error, plan: plan, price: price))
                continue
            }
            if plan.from == .cash, book.portfolio(named: plan.portfolio)?.trackCash != true {
                wait(.noCash, "'\(plan.portfolio)' does not track cash")
                continue
            }
            run.recorded.append(book.record(legs, ofSavingPlan: i, day: day))
        }
    }

    /// Keeps of `run.recorded` (in `book`, recorded on `original`) only what leaves every cash balance at
    /// or above zero: the first date whose buy would overdraw waits (`no-cash`) with its plan's later
    /// dates, and the rest is tried again. The first failing date is found by bisection over the
    /// recorded dates (a shorter prefix never overdraws where a longer one does not), so a catch-up of
    /// n dates costs about log₂ n checks of the book, not n.
    private func settleCash(_ book: inout Book, run: inout SavingRunResult, original: Book) throws {
        guard run.recorded.contains(where: { r in book.savingPlans.first(named: r.plan)?.from == .cash }) else { return }
        /// An overdraw a buy made (`no-cash`); anything else (the book broke a rule already) is not the plans'.
        func overdraw(_ error: Error) throws -> Error {
            switch error {
            case PortfolioError.insufficientCash, PortfolioError.breaksLater: return error
            default: throw SavingPlanError.bookBreaksRules
            }
        }
        func attempt(_ records: ArraySlice<SavingRecorded>) -> (book: Book, error: Error?) {
            var trial = original
            for r in records {
                guard let i = trial.savingPlans.firstIndex(where: { $0.name == r.plan }) else { continue }
                _ = trial.record([r.deposit, r.buy].compactMap { $0 }, ofSavingPlan: i, day: r.day)
            }
            do {
                try trial.admit(from: original, now: now)
                return (trial, nil)
            } catch {
                return (trial, error)
            }
        }
        var kept: [SavingRecorded] = []
        var pending = run.recorded[...]
        var result = attempt(pending)
        while let error = result.error, !pending.isEmpty {
            // The longest prefix that passes: `lo` passes, `hi` does not.
            var lo = 0, hi = pending.count
            var cause = try overdraw(error)
            while hi - lo > 1 {
                let mid = (lo + hi) / 2
                let trial = attempt((kept + pending.prefix(mid))[...])
                if let e = trial.error { hi = mid; cause = try overdraw(e) } else { lo = mid }
            }
            let start = pending.startIndex
            let bad = pending[start + lo]
            kept += pending[start..<(start + lo)]
            if let plan = original.savingPlans.first(named: bad.plan) {
                run.waiting.removeAll { $0.plan == bad.plan }
                run.waiting.append(SavingWaiting(plan: bad.plan, day: bad.day, assetId: plan.assetId, amount: plan.amount, reason: .noCash,
                                                 detail: "\(cause)"))
            }
            pending = pending[(start + lo + 1)...].filter { $0.plan != bad.plan }[...]
            result = attempt((kept + pending)[...])
        }
        kept += pending
        run.recorded = kept
        book = result.book
    }

    /// `saving due`: every open due date of a manual plan, and of an automatic plan one that cannot be
    /// recorded now (no usable price in what is known, or it would overdraw cash). Nothing is fetched
    /// or written.
    public func waitingSavingDates(timeZone: TimeZone, names: MessageNames) throws -> [SavingWaiting] {
        let today = ISODate.dayNumber(of: now, in: timeZone)
        var book = try repository.loadBook()
        var prices = savingPrices(book, timeZone: timeZone)
        prices.names = names
        var waiting: [SavingWaiting] = []
        for plan in book.savingPlans where plan.active && plan.method == .manual {
            for day in plan.openDays(through: today) {
                waiting.append(SavingWaiting(plan: plan.name, day: day, assetId: plan.assetId, amount: plan.amount, reason: .manual, detail: ""))
            }
        }
        var run = SavingRunResult()
        let original = book
        record(into: &book, run: &run, today: today, prices: prices)
        try settleCash(&book, run: &run, original: original)
        // A stuck plan waits at one date with the ones after it.
        for w in run.waiting {
            guard let plan = book.savingPlans.first(named: w.plan) else { continue }
            for day in plan.openDays(through: today) {
                // Only the first date waits for its own reason; the later ones wait behind it.
                let own = day == w.day
                waiting.append(SavingWaiting(plan: w.plan, day: day, assetId: w.assetId, amount: w.amount, reason: own ? w.reason : .blocked,
                                             detail: own ? w.detail : "waits behind \(ISODate.dayText(w.day))"))
            }
        }
        return waiting.sorted { ($0.day, $0.plan.lowercased()) < ($1.day, $1.plan.lowercased()) }
    }

    /// `saving confirm`: records the oldest open due date of the plan named `name` at `price` (default:
    /// the run's rule, from what is known), dated `date` (default the due date), and moves the plan on.
    public func confirmSavingDate(name: String, price given: Fixed18?, date: RecordDate?, timeZone: TimeZone, names: MessageNames) throws -> SavingRecorded {
        let known = try repository.loadBook()
        let prices = savingPrices(known, timeZone: timeZone)
        return try repository.store.update(now: now, names: names) { book in
            guard let i = book.savingPlans.firstIndex(where: { $0.name.lowercased() == name.lowercased() }) else {
                throw SavingPlanError.notFound(name)
            }
            let plan = book.savingPlans[i]
            let day = plan.nextDueDay
            let today = ISODate.dayNumber(of: now, in: timeZone)
            guard day <= today else { throw SavingPlanError.notDue(plan.name, next: day) }
            if let date = date?.date, ISODate.dayNumber(of: date, in: timeZone) < day {
                // A buy dated before its due date would be priced at a later quote than its own day's.
                throw SavingPlanError.cannotRecord(plan.name, "the buy of the due date \(ISODate.dayText(day)) cannot be dated "
                    + "before it (\(ISODate.dayText(ISODate.dayNumber(of: date, in: timeZone))))")
            }
            let currency = book.currency(of: plan)
            guard let price = given ?? prices.quote(of: plan.assetId, currency: currency, day: day).flatMap({ SavingPrices.fixed($0.price) }) else {
                throw SavingPlanError.noPrice(plan.name, assetId: plan.assetId, currency: currency, day: day)
            }
            if plan.from == .cash, book.portfolio(named: plan.portfolio)?.trackCash != true { throw PortfolioError.cashNotTracked(plan.portfolio) }
            let legs: [Transaction]
            do throws(PortfolioError) {
                legs = try book.savingTransactions(plan, price: price, date: date ?? .day(day, in: timeZone), rates: prices.rates, now: now)
            } catch {
                throw SavingPlanError.cannotRecord(plan.name, Book.savingProblem(error, plan: plan, price: price))
            }
            return (true, book.record(legs, ofSavingPlan: i, day: day))
        }
    }

    /// Fetches what the open due dates need and the cache lacks: a coin's daily history for missed
    /// days without a quote (within the service's 365 days), then today's quote when older than 60 s.
    /// - Returns: the failures, by coin and currency (`SavingPrices.key`).
    private func fetchSavingPrices(_ book: Book, today: Int64, prices: SavingPrices) -> [String: Error] {
        var current: [String: Set<String>] = [:]  // currency → coins whose newest quote is older than 60 s
        var history: [String: (coin: String, currency: String, oldest: Int64)] = [:]
        let reach = today - SavingPrices.historyDays + 1
        for plan in book.savingPlans where plan.active && plan.method == .automatic && !Asset.isRegisteredID(plan.assetId) {
            let currency = book.currency(of: plan)
            // The open dates the service can price, and today.
            for day in plan.openDays(through: today) where day >= reach {
                if day == today {
                    let newest = prices.prices.history(plan.assetId).last { $0.currency == currency }
                    if newest.map({ now.timeIntervalSince($0.time) > PriceBook.freshFor }) ?? true { current[currency, default: []].insert(plan.assetId) }
                } else if !prices.hasQuote(on: day, of: plan.assetId, currency: currency) {
                    let key = SavingPrices.key(plan.assetId, currency)
                    history[key] = (plan.assetId, currency, min(history[key]?.oldest ?? day, day))
                }
            }
        }
        var failed: [String: Error] = [:]
        // History first: its last point is "now" too, and the current price fetched after it is the one kept.
        for (key, need) in history.sorted(by: { $0.key < $1.key }) {
            // More than 90 days gives daily points (00:00 UTC) at any distance, so a missed date gets the same
            // price however long the machine was off.
            let days = Int(min(SavingPrices.historyDays, max(91, today - need.oldest + 1)))
            do {
                _ = try self.prices.fetchHistory(coin: need.coin, currencies: [need.currency], days: days, purpose: .explicit)
            } catch let error as PriceError {
                if case .unknownCoin = error { failed[key] = UnknownCoinFailure(underlying: error) } else { failed[key] = error }
            } catch {
                failed[key] = error
            }
        }
        for (currency, coins) in current.sorted(by: { $0.key < $1.key }) {
            do {
                let fetched = try self.prices.fetchPrices(coins.sorted(), currencies: [currency], purpose: .explicit)
                for w in fetched.warnings { notify(.service(w)) }
                for coin in fetched.missing {
                    failed[SavingPrices.key(coin, currency)] = UnknownCoinFailure(underlying: PriceError.unknownCoin(coin))
                }
            } catch {
                for coin in coins { failed[SavingPrices.key(coin, currency)] = error }
            }
        }
        return failed
    }
}

extension [SavingPlan] {
    /// The plan named `name`, any case.
    public func first(named name: String) -> SavingPlan? {
        let lower = name.lowercased()
        return first { $0.name.lowercased() == lower }
    }
}

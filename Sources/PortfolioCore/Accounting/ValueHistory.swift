import Foundation

/// A calendar day in the local time zone, counted as days since 1970-01-01.
///
/// Value over time and performance work in whole local days: a day's value is taken at its end,
/// a flow counts on the day it happened.
public struct LocalDay: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var number: Int64

    public init(number: Int64) { self.number = number }

    public init(year: Int64, month: Int64, day: Int64) { number = ISODate.days(fromCivil: year, month, day) }

    /// The day `date` falls on in `zone`.
    public init(_ date: Date, in zone: TimeZone) { number = ISODate.dayNumber(of: date, in: zone) }

    public var parts: (year: Int64, month: Int64, day: Int64) {
        let c = ISODate.civil(fromDays: number)
        return (c.0, c.1, c.2)
    }

    public func adding(days n: Int64) -> LocalDay { LocalDay(number: number + n) }

    /// The same day of the month `n` years later (or earlier); February 29 becomes February 28.
    public func adding(years n: Int64) -> LocalDay {
        let (y, m, d) = parts
        return LocalDay(year: y + n, month: m, day: min(d, ISODate.daysInMonth(y + n, m)))
    }

    /// ISO weekday: 1 Monday … 7 Sunday (1970-01-01 was a Thursday).
    public var weekday: Int { Int(((number % 7) + 10) % 7) + 1 }

    public var isLastOfMonth: Bool { adding(days: 1).parts.day == 1 }

    /// The first instant of the day in `zone`.
    public func start(in zone: TimeZone) -> Date { ISODate.startOfDay(ISODate.civil(fromDays: number), in: zone) }

    /// `2024-01-31`.
    public var description: String {
        let (y, m, d) = parts
        func pad(_ v: Int64, _ width: Int) -> String {
            let t = String(v)
            return String(repeating: "0", count: max(0, width - t.count)) + t
        }
        return "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))"
    }

    public static func < (a: LocalDay, b: LocalDay) -> Bool { a.number < b.number }
}

/// How often `history` takes a row: at the end of every day, week (Sunday) or month.
public enum HistoryInterval: String, CaseIterable, Sendable {
    case day, week, month

    /// Every period end from `start` through `end`, and `end` itself last (a period still running).
    public func periodEnds(from start: LocalDay, through end: LocalDay) -> [LocalDay] {
        guard start <= end else { return [] }
        var out: [LocalDay] = []
        switch self {
        case .day:
            out.reserveCapacity(Int(end.number - start.number + 1))
            for n in start.number...end.number { out.append(LocalDay(number: n)) }
        case .week:
            var d = start.adding(days: Int64(7 - start.weekday))
            while d < end { out.append(d); d = d.adding(days: 7) }
        case .month:
            var (y, m, _) = start.parts
            while true {
                let last = LocalDay(year: y, month: m, day: ISODate.daysInMonth(y, m))
                if last >= end { break }
                out.append(last)
                (y, m) = m == 12 ? (y + 1, 1) : (y, m + 1)
            }
        }
        if out.last != end { out.append(end) }
        return out
    }
}

/// The value of the chosen portfolios at the end of one day.
public struct ValueRow: Sendable, Equatable {
    public var date: LocalDay
    /// Σ quantity × the newest quote at or before the end of the day, at that day's rate (priced holdings only).
    public var holdingsValue: Exact36
    /// Cash of the portfolios that track it, at that day's rates; `nil` when none does.
    public var cash: Exact36?
    public var totalValue: Exact36
    /// Σ flows since the first transaction (money put in, less taken out; transfers at market value).
    public var netInvested: Exact36
    /// totalValue − netInvested.
    public var pnl: Exact36
    /// A holding (or cash) had no price or no rate on that day and is left out.
    public var partial: Bool
}

/// Value over time: one row per period end.
public struct ValueHistory: InOneCurrency, Sendable {
    public var interval: HistoryInterval
    /// The currency of every figure.
    public var currency: CurrencyCode
    public var rows: [ValueRow]
    /// Assets (and `CUR→BASE` rate pairs) whose missing price or rate made some row partial, sorted.
    public var unpriced: [String]
}

/// Money crossing the edge of a portfolio (`performance.md`), in the report's currency.
public struct PortfolioFlow: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        case buy, sell, dividend, interest, deposit, withdrawal
        case transferIn = "transfer-in"
        case transferOut = "transfer-out"
        /// A swap's fee in a portfolio that does not track cash (paid from outside).
        case swapFee = "swap-fee"
        /// Units paid for goods or services, at their value.
        case spend
    }

    public var date: LocalDay
    public var kind: Kind
    public var transactionId: UUID
    public var portfolio: String
    public var assetId: String
    /// As the investor's money goes: + into the portfolio, − out.
    public var amount: Exact36
    /// A transfer with no quote on its day, counted at its basis.
    public var atBasis: Bool
}

/// One replay of the chosen portfolios' history with the price and rate history beside it: what
/// `history` and `performance` (and a report page) read, in the report's currency.
///
/// Built once from a ledger replayed with `keepingChanges`; each question walks the recorded
/// changes once, in date order, keeping each position's quantity and each cash balance as days
/// pass (never a replay per day).
public struct ValueTimeline: Sendable {
    public struct PortfolioInfo: Sendable {
        public var baseCurrency: String
        public var tracksCash: Bool

        public init(baseCurrency: String, tracksCash: Bool) {
            self.baseCurrency = baseCurrency
            self.tracksCash = tracksCash
        }
    }

    /// The currency every figure is in.
    public let currency: String
    public let timeZone: TimeZone
    /// The local day of `now`: the last day anything is valued on.
    public let today: LocalDay
    /// The day of the chosen portfolios' first transaction (`nil`: none yet).
    public let firstDay: LocalDay?
    /// Whether any chosen portfolio tracks cash (else `cash` is `nil` in every row).
    public let tracksCash: Bool
    let changes: [AppliedChange]
    let portfolios: [String: PortfolioInfo]
    let series: [PriceSeries]
    let seriesIndex: [String: Int]
    let rates: [String: RateSeries]

    /// - Parameters:
    ///   - changes: the ledger's `changes` (a replay with `keepingChanges`); those of other portfolios are left out.
    ///   - portfolios: the chosen portfolios by name.
    ///   - prices: every quote known, with history.
    ///   - fxRates: the rates, in recording order (typed ones, then fetched ones).
    public init(changes: [AppliedChange], portfolios: [String: PortfolioInfo], prices: PriceBook, fxRates: [FXRate],
                currency: String, timeZone: TimeZone, now: Date) {
        self.currency = currency
        self.timeZone = timeZone
        self.today = LocalDay(now, in: timeZone)
        self.portfolios = portfolios
        let mine = changes.filter { portfolios[$0.transaction.portfolio] != nil && $0.transaction.date <= now }
        self.changes = mine
        firstDay = mine.first.map { LocalDay($0.transaction.date, in: timeZone) }
        tracksCash = portfolios.values.contains { $0.tracksCash }
        var index: [String: Int] = [:]
        var series: [PriceSeries] = []
        var currencies = Set(portfolios.values.map(\.baseCurrency))
        for c in mine {
            let t = c.transaction
            if let cash = c.cashCurrency { currencies.insert(cash) }
            guard !t.assetId.isEmpty, index[t.assetId] == nil else { continue }
            let s = PriceSeries(prices.history(t.assetId))
            currencies.formUnion(s.currencies)
            index[t.assetId] = series.count
            series.append(s)
        }
        self.series = series
        seriesIndex = index
        var rates: [String: RateSeries] = [:]
        for c in currencies where c != currency { rates[c] = RateSeries(fxRates, from: c, to: currency) }
        self.rates = rates
    }

    /// The value at every period end from the first transaction (or `since`) to today (or `until`).
    public func history(interval: HistoryInterval, since: LocalDay? = nil, until: LocalDay? = nil) -> ValueHistory {
        var out = ValueHistory(interval: interval, currency: CurrencyCode(currency), rows: [], unpriced: [])
        guard let first = firstDay else { return out }
        let start = max(since ?? first, first), end = min(until ?? today, today)
        var walk = ValueWalk(self)
        for day in interval.periodEnds(from: start, through: end) {
            walk.advance(through: day)
            out.rows.append(walk.row(at: day))
        }
        out.unpriced = walk.unpriced.sorted()
        return out
    }

    /// The end-of-day value of every day from `since` through `until` (and of the day before),
    /// with where each day's flows are in `flows`: what `performance` is computed from.
    func days(since: LocalDay, until: LocalDay)
        -> (start: ValueRow, days: [(row: ValueRow, flows: Range<Int>)], flows: [PortfolioFlow], unpriced: [String]) {
        var walk = ValueWalk(self)
        let before = since.adding(days: -1)
        walk.advance(through: before)
        let start = walk.row(at: before)
        var days: [(row: ValueRow, flows: Range<Int>)] = []
        days.reserveCapacity(Int(max(0, until.number - since.number + 1)))
        var day = since
        while day <= until {
            let from = walk.flows.count
            walk.advance(through: day)
            days.append((walk.row(at: day), from..<walk.flows.count))
            day = day.adding(days: 1)
        }
        return (start, days, walk.flows, walk.unpriced.sorted())
    }

    /// Every flow from the first transaction through `until` (today by default), oldest first.
    public func flows(through until: LocalDay? = nil) -> [PortfolioFlow] {
        var walk = ValueWalk(self)
        walk.advance(through: min(until ?? today, today))
        return walk.flows
    }
}

/// The quotes of one asset, oldest first, with their prices made exact once.
struct PriceSeries: Sendable {
    var times: [Double]
    var quotes: [Quote]
    /// The price as `Fixed18`, `nil` when it has more than 18 decimals (then `Exact36.product(_, Decimal)` is used).
    var prices: [Fixed18?]
    var currencies: Set<String>

    init(_ quotes: [Quote]) {
        self.quotes = quotes
        times = quotes.map(\.time.timeIntervalSince1970)
        prices = quotes.map { Fixed18.exactly($0.price) }
        currencies = Set(quotes.map(\.currency))
    }

    /// The quote in force before `bound`: the newest older than it; of equally new ones, the one in `preferred`.
    func index(before bound: Double, preferring preferred: String) -> Int? {
        var lo = 0, hi = times.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if times[mid] < bound { lo = mid + 1 } else { hi = mid }
        }
        guard lo > 0 else { return nil }
        let newest = lo - 1
        var i = newest
        while true {
            if quotes[i].currency == preferred { return i }
            guard i > 0, times[i - 1] == times[newest] else { return newest }
            i -= 1
        }
    }

    /// `quantity` at quote `i`, in the quote's currency.
    func value(_ quantity: Fixed18, at i: Int) -> Exact36? {
        if let p = prices[i] { return Exact36.product(quantity, p) }
        return Exact36.product(quantity, quotes[i].price)
    }
}

/// The rates of one pair over time, as `FXTable.rate` finds them (a recorded inverse counting as
/// 1 ÷ r; of two rates of one date, the one recorded later).
struct RateSeries: Sendable {
    var times: [Double] = []
    var rates: [Fixed18?] = []

    init(_ table: [FXRate], from: String, to: String) {
        var found: [(date: Date, order: Int, rate: Fixed18?)] = []
        for (i, r) in table.enumerated() {
            if r.from == from && r.to == to {
                found.append((r.date, i, r.rate))
            } else if r.from == to && r.to == from {
                let inverse = try? Exact36(Fixed18(units: Fixed18.scale)).divided(by: r.rate).roundedToFixed18()
                found.append((r.date, i, inverse.flatMap { $0.units > 0 ? $0 : nil }))
            }
        }
        found.sort { $0.date != $1.date ? $0.date < $1.date : $0.order < $1.order }
        times = found.map(\.date.timeIntervalSince1970)
        rates = found.map(\.rate)
    }

    /// Units of the target per unit of the source in force before `bound` (rates dated up to the
    /// end of the day), or `nil`.
    func rate(before bound: Double) -> Fixed18? {
        var lo = 0, hi = times.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if times[mid] < bound { lo = mid + 1 } else { hi = mid }
        }
        return lo > 0 ? rates[lo - 1] : nil
    }
}

/// The walk of one question over a timeline: quantities and cash as days pass, flows as they happen.
struct ValueWalk {
    let timeline: ValueTimeline
    private var next = 0
    /// Positions: their series (or -1: no quote at all) and quantity; found by key.
    private var slots: [PositionKey: Int] = [:]
    private var slotSeries: [Int] = []
    private var slotAsset: [String] = []
    private var quantities: [Fixed18] = []
    /// Tracked cash balances of the chosen portfolios.
    private var cash: [(portfolio: String, currency: String, balance: Exact36)] = []
    private(set) var netInvested = Exact36.zero
    private(set) var flows: [PortfolioFlow] = []
    /// What made a row partial (an asset id, or a `CUR→BASE` pair).
    private(set) var unpriced = Set<String>()
    /// A flow could not be converted into the report's currency (no rate): net invested lacks it
    /// from then on, and every later row says so (partial).
    private var flowLeftOut = false
    /// A day whose bounds were computed last: (day, its first instant, the next day's).
    private var knownDay: (day: LocalDay, start: Double, end: Double)?

    init(_ timeline: ValueTimeline) { self.timeline = timeline }

    /// The local day of `date` (remembering the last one found: records come in date order).
    private mutating func day(of date: Date) -> (day: LocalDay, end: Double) {
        let t = date.timeIntervalSince1970
        if let k = knownDay, t >= k.start, t < k.end { return (k.day, k.end) }
        let d = LocalDay(date, in: timeline.timeZone)
        let start = d.start(in: timeline.timeZone).timeIntervalSince1970
        let end = d.adding(days: 1).start(in: timeline.timeZone).timeIntervalSince1970
        knownDay = (d, start, end)
        return (d, end)
    }

    /// The instant the day after `day` starts: what is at or before the end of `day` is before it.
    private func bound(after day: LocalDay) -> Double {
        day.adding(days: 1).start(in: timeline.timeZone).timeIntervalSince1970
    }

    /// Applies every change dated up to the end of `day`.
    mutating func advance(through day: LocalDay) {
        let end = bound(after: day)
        let changes = timeline.changes
        while next < changes.count, changes[next].transaction.date.timeIntervalSince1970 < end {
            apply(changes[next])
            next += 1
        }
    }

    private mutating func apply(_ c: AppliedChange) {
        let t = c.transaction
        if let currency = c.cashCurrency {
            if let i = cash.firstIndex(where: { $0.portfolio == t.portfolio && $0.currency == currency }) {
                cash[i].balance = c.cashBalance
            } else {
                cash.append((t.portfolio, currency, c.cashBalance))
            }
        }
        if !t.assetId.isEmpty && t.rule.movesUnits {
            let key = PositionKey(portfolio: t.portfolio, assetId: t.assetId)
            if let i = slots[key] {
                quantities[i] = c.quantity
            } else {
                slots[key] = quantities.count
                slotSeries.append(timeline.seriesIndex[t.assetId] ?? -1)
                slotAsset.append(t.assetId)
                quantities.append(c.quantity)
            }
        }
        if let flow = flow(of: c) {
            flows.append(flow)
            netInvested = (try? netInvested + flow.amount) ?? netInvested
        }
    }

    /// Money in the portfolio's base as the report's currency at the rate in force before `bound`.
    private mutating func fromBase(_ money: Exact36, of portfolio: String, before bound: Double) -> Exact36? {
        let base = timeline.portfolios[portfolio]?.baseCurrency ?? timeline.currency
        return convert(money, from: base, before: bound)
    }

    private mutating func convert(_ money: Exact36, from currency: String, before bound: Double) -> Exact36? {
        guard currency != timeline.currency else { return money }
        guard let rate = timeline.rates[currency]?.rate(before: bound) else {
            unpriced.insert(currency + "→" + timeline.currency)
            return nil
        }
        return try? money.multiplied(by: rate, dividedBy: Fixed18(units: Fixed18.scale))
    }

    /// `quantity` of `assetId` at its market value before `bound`, in the report's currency; `nil` without a quote or rate.
    private mutating func marketValue(_ quantity: Fixed18, of assetId: String, before bound: Double) -> Exact36? {
        guard let s = timeline.seriesIndex[assetId] else { return nil }
        let series = timeline.series[s]
        guard let i = series.index(before: bound, preferring: timeline.currency), let v = series.value(quantity, at: i) else { return nil }
        return convert(v, from: series.quotes[i].currency, before: bound)
    }

    /// The flow a change is, by its portfolio's rule, or `nil`.
    private mutating func flow(of c: AppliedChange) -> PortfolioFlow? {
        let t = c.transaction
        guard let info = timeline.portfolios[t.portfolio] else { return nil }
        /// Money of the record's currency in the portfolio's base, at the rate stored with it.
        func base(_ money: Exact36) -> Exact36 {
            guard let rate = t.fxRateValue else { return money }
            return (try? money.multiplied(by: rate, dividedBy: Fixed18(units: Fixed18.scale))) ?? money
        }
        let fee = Exact36(t.feeValue ?? .zero)
        var kind: PortfolioFlow.Kind
        var inBase: Exact36?
        var atBasis = false
        let (day, end) = day(of: t.date)
        switch t.type {
        case .transferIn, .transferOut:
            kind = t.type == .transferIn ? .transferIn : .transferOut
            if let v = marketValue(t.amountValue, of: t.assetId, before: end) {
                let signed = t.type == .transferIn ? v : ((try? Exact36.zero - v) ?? v)
                return PortfolioFlow(date: day, kind: kind, transactionId: t.id, portfolio: t.portfolio, assetId: t.assetId,
                                     amount: signed, atBasis: false)
            }
            inBase = c.netDepositsChange
            atBasis = true
        case .spend:
            // Units paid for goods or services leave at their value: money taken out, in any portfolio.
            kind = .spend
            inBase = c.netDepositsChange
        case .deposit, .withdrawal:
            guard info.tracksCash, !c.exchangeLeg else { return nil }  // an exchange stays inside the portfolio
            kind = t.type == .deposit ? .deposit : .withdrawal
            inBase = c.netDepositsChange
        case .buy, .sell, .dividend, .interest:
            guard !info.tracksCash else { return nil }
            switch t.type {
            case .buy:
                guard t.linkedId == nil else { return nil }
                kind = .buy
                inBase = base((try? t.gross + fee) ?? t.gross)
            case .sell:
                if t.linkedId != nil {
                    guard !fee.isZero else { return nil }
                    kind = .swapFee
                    inBase = base(fee)
                } else {
                    kind = .sell
                    inBase = try? Exact36.zero - base((try? t.gross - fee) ?? t.gross)
                }
            default:
                guard !t.assetId.isEmpty else { return nil }  // interest on cash is tracked cash's own
                kind = t.type == .dividend ? .dividend : .interest
                inBase = try? Exact36.zero - base((try? Exact36(t.amountValue) - fee) ?? Exact36(t.amountValue))
            }
        default:
            return nil
        }
        guard let money = inBase, let amount = fromBase(money, of: t.portfolio, before: end) else {
            flowLeftOut = true
            return nil
        }
        return PortfolioFlow(date: day, kind: kind, transactionId: t.id, portfolio: t.portfolio, assetId: t.assetId, amount: amount,
                             atBasis: atBasis)
    }

    /// The value at the end of `day` of what is held now (call after `advance(through: day)`).
    mutating func row(at day: LocalDay) -> ValueRow {
        let end = bound(after: day)
        var holdings = Exact36.zero
        var partial = flowLeftOut
        // Rates of this day, found once per currency.
        var dayRates: [(currency: String, rate: Fixed18?)] = []
        for i in quantities.indices where quantities[i].units > 0 {
            let s = slotSeries[i]
            guard s >= 0, let q = timeline.series[s].index(before: end, preferring: timeline.currency),
                  let v = timeline.series[s].value(quantities[i], at: q) else {
                partial = true
                unpriced.insert(slotAsset[i])
                continue
            }
            let currency = timeline.series[s].quotes[q].currency
            var value = v
            if currency != timeline.currency {
                let rate: Fixed18?
                if let known = dayRates.first(where: { $0.currency == currency }) {
                    rate = known.rate
                } else {
                    rate = timeline.rates[currency]?.rate(before: end)
                    dayRates.append((currency, rate))
                }
                guard let rate, let converted = try? v.multiplied(by: rate, dividedBy: Fixed18(units: Fixed18.scale)) else {
                    partial = true
                    unpriced.insert(currency + "→" + timeline.currency)
                    continue
                }
                value = converted
            }
            holdings = (try? holdings + value) ?? holdings
        }
        var cashValue: Exact36?
        if timeline.tracksCash {
            var sum = Exact36.zero
            for c in cash {
                guard let v = convert(c.balance, from: c.currency, before: end) else { partial = true; continue }
                sum = (try? sum + v) ?? sum
            }
            cashValue = sum
        }
        let total = cashValue.flatMap { try? holdings + $0 } ?? holdings
        return ValueRow(date: day, holdingsValue: holdings, cash: cashValue, totalValue: total, netInvested: netInvested,
                        pnl: (try? total - netInvested) ?? .zero, partial: partial)
    }
}

extension Fixed18 {
    /// The same value from a `Decimal` when it is non-negative with at most 18 decimals and fits.
    ///
    /// A price history has many quotes: this reads the value's digits from its storage (NSDecimal's
    /// layout: an 8-bit exponent, a 4-bit length, a sign bit, then eight 16-bit words of mantissa)
    /// rather than through text, and keeps the result only when it is the very same value again;
    /// anything else goes the slow, sure way.
    static func exactly(_ value: Decimal) -> Fixed18? {
        guard MemoryLayout<Decimal>.size == 20 else { return Fixed18(value) }
        let (exponent, flags, m): (Int, UInt32, UInt128) = withUnsafeBytes(of: value) { raw in
            let head = raw.loadUnaligned(fromByteOffset: 0, as: UInt32.self)
            var m: UInt128 = 0
            for w in (0..<8).reversed() { m = m << 16 | UInt128(raw.loadUnaligned(fromByteOffset: 4 + 2 * w, as: UInt16.self)) }
            return (Int(Int8(truncatingIfNeeded: head)), head >> 8, m)
        }
        let negative = flags & 0x10 != 0
        guard !negative, m != 0 else { return Fixed18(value) }
        let shift = exponent + 18
        var units: UInt128
        if shift >= 0 {
            guard shift <= 38 else { return nil }
            let (p, over) = m.multipliedReportingOverflow(by: Exact36.pow10(shift))
            if over { return nil }
            units = p
        } else {
            guard -shift <= 38 else { return Fixed18(value) }
            let (q, r) = m.quotientAndRemainder(dividingBy: Exact36.pow10(-shift))
            guard r == 0 else { return Fixed18(value) }
            units = q
        }
        let candidate = Fixed18(units: units)
        return candidate.decimal == value ? candidate : Fixed18(value)
    }
}

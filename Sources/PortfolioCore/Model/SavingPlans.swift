import Foundation

/// A habit: MONEY of one asset on every due date (allocation-plans.md, "Regular saving plans").
///
/// Days are calendar days (day numbers since 1970-01-01, stored as `YYYY-MM-DD`), so a plan means the
/// same dates whatever time zone reads it; a due date's buy is dated 00:00 local time of that day.
public struct SavingPlan: Hashable, Sendable {
    public enum Frequency: String, CaseIterable, Sendable {
        case day, week, twoWeeks = "2weeks", month
    }

    /// Where the money comes from: brought in from outside (a linked deposit in a cash-tracking
    /// portfolio), or the portfolio's cash.
    public enum Funding: String, CaseIterable, Sendable { case outside, cash }

    /// `automatic` plans are carried out by `saving run`; `manual` ones are reminders, confirmed by hand.
    public enum Method: String, CaseIterable, Sendable { case automatic, manual }

    public var name: String
    public var portfolio: String
    public var assetId: String
    /// The money each due date spends, fee included, in the currency the asset is bought in.
    public var amount: Fixed18
    public var fee: Fixed18
    public var frequency: Frequency
    /// The first due date; every later one is counted from it (a monthly plan keeps its day of month).
    public var startDay: Int64
    /// The oldest due date not recorded yet.
    public var nextDueDay: Int64
    /// The due date of the latest recorded occurrence.
    public var lastExecutedDay: Int64?
    public var from: Funding
    public var method: Method
    public var active: Bool
    public var notes: String?

    public init(name: String, portfolio: String, assetId: String, amount: Fixed18, fee: Fixed18 = .zero, frequency: Frequency,
                startDay: Int64, nextDueDay: Int64? = nil, lastExecutedDay: Int64? = nil, from: Funding = .outside,
                method: Method = .automatic, active: Bool = true, notes: String? = nil) {
        self.name = name
        self.portfolio = portfolio
        self.assetId = assetId
        self.amount = amount
        self.fee = fee
        self.frequency = frequency
        self.startDay = startDay
        self.nextDueDay = nextDueDay ?? startDay
        self.lastExecutedDay = lastExecutedDay
        self.from = from
        self.method = method
        self.active = active
        self.notes = notes
    }

    /// The note every recorded buy (and its linked deposit) carries.
    public var transactionNote: String { "saving plan \(name)" }

    /// The k-th due date (k = 0 is the start): every 1, 7 or 14 days, or monthly on the start's day of
    /// month, the month's last day when it is shorter (Jan 31 → Feb 29 → Mar 31).
    public func occurrence(_ k: Int64) -> Int64 {
        switch frequency {
        case .day: return startDay + k
        case .week: return startDay + 7 * k
        case .twoWeeks: return startDay + 14 * k
        case .month:
            let d = ISODate.adding(months: Int(k), to: ISODate.civilDay(fromDays: startDay))
            return ISODate.days(fromCivil: d.0, d.1, d.2)
        }
    }

    /// The first due date on or after `day`.
    public func firstDue(onOrAfter day: Int64) -> Int64 {
        guard day > startDay else { return startDay }
        var k: Int64
        switch frequency {
        case .day: return day
        case .week: k = (day - startDay + 6) / 7
        case .twoWeeks: k = (day - startDay + 13) / 14
        case .month:
            let s = ISODate.civilDay(fromDays: startDay), d = ISODate.civilDay(fromDays: day)
            k = max(0, (d.0 - s.0) * 12 + (d.1 - s.1) - 1)
            while occurrence(k) < day { k += 1 }
        }
        return occurrence(k)
    }

    /// The due date after `day` (a due date).
    public func due(after day: Int64) -> Int64 { firstDue(onOrAfter: day + 1) }

    /// Every open due date up to `today`, oldest first (at most `limit`).
    public func openDays(through today: Int64, limit: Int = 100_000) -> [Int64] {
        var days: [Int64] = []
        var d = nextDueDay
        while d <= today && days.count < limit {
            days.append(d)
            d = due(after: d)
        }
        return days
    }

    /// The money that buys the asset: the amount less the fee.
    public var total: Fixed18 { Fixed18(units: amount.units > fee.units ? amount.units - fee.units : 0) }

    /// Units bought at `price`: total ÷ price rounded down to 18 decimals, exactly (`nil` when the
    /// price is zero or the units would pass the range).
    public func units(at price: Fixed18) -> Fixed18? {
        guard price.units > 0 else { return nil }
        let wide = total.units.multipliedFullWidth(by: Fixed18.scale)
        guard wide.high < price.units else { return nil }
        return Fixed18(units: price.units.dividingFullWidth(wide).quotient)
    }
}

extension ISODate {
    /// The day number of a `YYYY-MM-DD` text, or `nil`.
    public static func dayNumber(ofDay text: String) -> Int64? {
        guard let d = parseDay(utf8: text.utf8) else { return nil }
        return days(fromCivil: d.0, d.1, d.2)
    }

    /// 00:00 local time of a day number.
    public static func start(ofDay n: Int64, in timeZone: TimeZone) -> Date { startOfDay(civilDay(fromDays: n), in: timeZone) }
}

import Foundation

/// The period a performance figure covers: local days, both ends included, never past today.
public enum PerformancePeriod: Sendable, Equatable {
    /// January 1 of this year … today.
    case ytd
    /// The N years ending today (since = today − N years + 1 day).
    case years(Int)
    /// The first transaction's day … today.
    case max
    /// That calendar year (until today when it is this year).
    case year(Int)
    /// From `since` (default: the first transaction's day) to `until` (default: today).
    case range(since: LocalDay?, until: LocalDay?)

    /// The first and last day; `until` is today at most. With no transaction yet, `max` is today alone.
    public func days(today: LocalDay, firstTransaction: LocalDay?) -> (since: LocalDay, until: LocalDay) {
        switch self {
        case .ytd: return (LocalDay(year: today.parts.year, month: 1, day: 1), today)
        case let .years(n): return (today.adding(years: -Int64(n)).adding(days: 1), today)
        case .max: return (firstTransaction ?? today, today)
        case let .year(y): return (LocalDay(year: Int64(y), month: 1, day: 1), min(LocalDay(year: Int64(y), month: 12, day: 31), today))
        case let .range(since, until): return (since ?? firstTransaction ?? today, min(until ?? today, today))
        }
    }
}

extension PerformanceReport {
    /// The gain less `summary`'s total P&L (assets moved in or out count here at their market value,
    /// there at their basis); `nil` past 10^41, `differentCurrencies` when the two are in different currencies.
    public func gap(to summary: PortfolioSummary) throws(PortfolioError) -> Money? {
        do throws(PortfolioError) {
            return try money(gain).subtracting(summary.money(summary.totalPnL))
        } catch .valueTooLarge {
            return nil
        }
    }
}

/// How a portfolio did over a period (`performance.md`): values at both ends, the flows between,
/// the gain, and the time- and money-weighted returns.
public struct PerformanceReport: InOneCurrency, Sendable {
    public var since: LocalDay
    public var until: LocalDay
    /// Calendar days in the period, both ends included.
    public var days: Int
    /// The currency of every figure.
    public var currency: CurrencyCode
    /// The value at the end of the day before the period.
    public var startValue: Exact36
    /// The value at the end of its last day.
    public var endValue: Exact36
    /// Σ flows in the period (+ in, − out).
    public var netFlows: Exact36
    /// endValue − startValue − netFlows.
    public var gain: Exact36
    /// Time-weighted return as a fraction (0.4211 is 42.11%).
    public var twr: Double?
    /// `(1 + twr)^(365 ÷ days) − 1` when the period is longer than 366 days, else `nil`.
    public var twrAnnualized: Double?
    /// Money-weighted return, a year's rate (Act/365); `nil` when no rate solves it.
    public var irr: Double?
    public var flows: [PortfolioFlow]
    /// Days (the day before the period included) whose value left out a holding without a price or rate.
    public var partialDays: Int
    /// What was left out on those days (asset ids, `CUR→BASE` pairs).
    public var unpriced: [String]
}

extension ValueTimeline {
    /// Performance from `since` through `until` (local days, inclusive; `until` is clamped to today).
    public func performance(since: LocalDay, until requested: LocalDay) -> PerformanceReport {
        let until = min(requested, today)
        let walked = days(since: since, until: until)
        let start = walked.start.totalValue
        var end = start
        var netFlows = Exact36.zero
        var flows: [PortfolioFlow] = []
        var daily: [ReturnMath.Day] = []
        daily.reserveCapacity(walked.days.count)
        var partialDays = 0  // days of the period (the day before it is not one)
        // A day that left out something held is bridged when a day with everything priced follows in
        // the period: that day is measured from the last one before the gap, the flows between counted
        // together (as a sub-period between two valuations), so a holding waiting for its first price
        // is not a loss and then a gain. After the last fully priced day (a holding never priced in the
        // period) every day is measured on its own, leaving that holding out, as the contract says.
        let lastFull = walked.days.lastIndex { !$0.row.partial } ?? -1
        var inflow = Exact36.zero, outflow = Exact36.zero
        for (i, (row, range)) in walked.days.enumerated() {
            for f in walked.flows[range] {
                if f.amount.isNegative { outflow = (try? outflow - f.amount) ?? outflow } else { inflow = (try? inflow + f.amount) ?? inflow }
                netFlows = (try? netFlows + f.amount) ?? netFlows
                flows.append(f)
            }
            end = row.totalValue
            if row.partial { partialDays += 1 }
            guard !row.partial || i > lastFull else { continue }
            daily.append(ReturnMath.Day(value: row.totalValue.double, inflow: inflow.double, outflow: outflow.double))
            (inflow, outflow) = (.zero, .zero)
        }
        let days = Int(until.number - since.number + 1)
        let twr = ReturnMath.timeWeighted(start: start.double, days: daily)
        var irrFlows: [(days: Int, amount: Double)] = []
        for f in flows {
            let offset = Int(f.date.number - since.number)
            if let last = irrFlows.last, last.days == offset {
                irrFlows[irrFlows.count - 1].amount += f.amount.double
            } else {
                irrFlows.append((offset, f.amount.double))
            }
        }
        let gain = (try? end - start - netFlows) ?? .zero
        return PerformanceReport(
            since: since, until: until, days: max(days, 0), currency: CurrencyCode(currency), startValue: start, endValue: end, netFlows: netFlows,
            gain: gain, twr: twr, twrAnnualized: twr.flatMap { ReturnMath.annualized($0, days: days) },
            irr: days > 0 ? ReturnMath.internalRate(start: start.double, flows: irrFlows, end: end.double, endDays: days) : nil,
            flows: flows, partialDays: partialDays, unpriced: walked.unpriced)
    }

    /// The calendar years from the first transaction's to this one, oldest first (a report page
    /// shows performance for each; empty with no transaction).
    public var calendarYears: [Int] {
        guard let first = firstDay else { return [] }
        return Array(Int(first.parts.year)...Int(today.parts.year))
    }

    /// Performance over a named period.
    public func performance(_ period: PerformancePeriod) -> PerformanceReport {
        let (since, until) = period.days(today: today, firstTransaction: firstDay)
        return performance(since: since, until: until)
    }
}

/// Rates of return: statistics, not money, so binary floating point.
public enum ReturnMath {
    /// One day of a period: its end value, money in (at its start) and out (at its end, positive).
    public struct Day: Sendable, Equatable {
        public var value: Double
        public var inflow: Double
        public var outflow: Double

        public init(value: Double, inflow: Double, outflow: Double) {
            self.value = value
            self.inflow = inflow
            self.outflow = outflow
        }
    }

    /// Π(1 + r_t) − 1 with r_t = (V_t + O_t) ÷ (V_{t−1} + I_t) − 1 (0 when the denominator is 0):
    /// a sale at the day's price is measured against that day's move, so selling everything is
    /// not a −100% day. `nil` if the chain is not a finite number.
    public static func timeWeighted(start: Double, days: [Day]) -> Double? {
        var product = 1.0
        var previous = start
        for d in days {
            let denominator = previous + d.inflow
            if denominator != 0 { product *= (d.value + d.outflow) / denominator }
            previous = d.value
        }
        let r = product - 1
        return r.isFinite ? r : nil
    }

    /// `(1 + r)^(365 ÷ days) − 1` when `days` is more than 366, else `nil`.
    public static func annualized(_ r: Double, days: Int) -> Double? {
        guard days > 366, 1 + r >= 0 else { return nil }
        let a = pow(1 + r, 365 / Double(days)) - 1
        return a.isFinite ? a : nil
    }

    /// The internal rate of return, a year's rate on an Act/365 basis, as hledger's `roi` has it:
    /// the rate that makes −start − Σ F_i (1+r)^−(d_i/365) + end (1+r)^−(endDays/365) = 0, with the
    /// start value at day 0, each flow (+ into the portfolio) at the start of its day `d_i`, and the
    /// end value at `endDays` (the day after the last). `nil` when no rate solves it; 0 when nothing
    /// was ever there.
    ///
    /// Solved in `x = ln(1 + r)`: a bracket is searched outward from 0 (the root nearest to no
    /// return wins when there are several), then halved until the bracket is below 1e-15.
    public static func internalRate(start: Double, flows: [(days: Int, amount: Double)], end: Double, endDays: Int) -> Double? {
        if start == 0 && end == 0 && flows.allSatisfy({ $0.amount == 0 }) { return 0 }
        let years = flows.map { Double($0.days) / 365 }
        let amounts = flows.map(\.amount)
        let horizon = Double(endDays) / 365
        func f(_ x: Double) -> Double {
            var sum = -start + end * exp(-x * horizon)
            for i in amounts.indices where amounts[i] != 0 { sum -= amounts[i] * exp(-x * years[i]) }
            return sum
        }
        // Outward from 0: fine steps near it, coarser far away, as far as the terms stay finite (a
        // short period's loss or gain, made a year's rate, is astronomically large or next to −100%).
        let limit = min(max(700, 700 / max(horizon, years.max() ?? 0, 1e-9)), 1e7)
        var points: [Double] = [0]
        var x = 0.0
        while x < limit {
            x += x < 1 ? 0.01 : x < 5 ? 0.05 : x < 30 ? 0.25 : x * 0.05
            points.append(x)
        }
        let f0 = f(0)
        if f0 == 0 { return 0 }
        var bracket: (Double, Double, Double, Double)?  // (a, fa, b, fb), a nearer to 0
        var up = (x: 0.0, f: f0), down = (x: 0.0, f: f0)
        for p in points.dropFirst() {
            let fu = f(p)
            if fu.isFinite, up.f.isFinite, (fu < 0) != (up.f < 0) || fu == 0 { bracket = (up.x, up.f, p, fu); break }
            up = (p, fu)
            let fd = f(-p)
            if fd.isFinite, down.f.isFinite, (fd < 0) != (down.f < 0) || fd == 0 { bracket = (down.x, down.f, -p, fd); break }
            down = (-p, fd)
        }
        guard var (a, fa, b, fb) = bracket else { return nil }
        if fb == 0 { return exp(b) - 1 }
        var root: Double?
        for _ in 0..<200 {
            let m = (a + b) / 2
            let fm = f(m)
            if fm == 0 || abs(b - a) < 1e-15 { root = m; break }
            if (fm < 0) == (fa < 0) { (a, fa) = (m, fm) } else { (b, fb) = (m, fm) }
        }
        let r = exp(root ?? (a + b) / 2) - 1
        return r.isFinite ? r : nil
    }
}

extension Exact36 {
    /// The value as a `Double` (for rates of return only; money stays exact).
    public var double: Double {
        let magnitude = (Double(high) * 0x1p128 + Double(low)) / 1e36
        return negative ? -magnitude : magnitude
    }
}

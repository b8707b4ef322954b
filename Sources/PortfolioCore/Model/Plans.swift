import Foundation

/// A goal for a portfolio's total value by a date (allocation-plans.md, "Investment plans").
public struct InvestmentPlan: Hashable, Sendable {
    public enum Risk: String, CaseIterable, Sendable { case veryLow = "very-low", low, moderate, high, veryHigh = "very-high" }
    public enum Status: String, CaseIterable, Sendable { case active, paused, completed, cancelled }

    public var name: String
    /// `nil`: every active portfolio, in the default portfolio's base.
    public var portfolio: String?
    public var target: Fixed18
    public var byDate: Date
    public var monthly: Fixed18?
    /// Expected yearly return in percent (0 when not given).
    public var expectedReturn: Fixed18
    public var startDate: Date
    public var risk: Risk
    public var status: Status
    public var notes: String?

    public init(name: String, portfolio: String?, target: Fixed18, byDate: Date, monthly: Fixed18? = nil, expectedReturn: Fixed18 = .zero,
                startDate: Date, risk: Risk = .moderate, status: Status = .active, notes: String? = nil) {
        self.name = name
        self.portfolio = portfolio
        self.target = target
        self.byDate = byDate
        self.monthly = monthly
        self.expectedReturn = expectedReturn
        self.startDate = startDate
        self.risk = risk
        self.status = status
        self.notes = notes
    }
}

extension InvestmentPlan {
    /// The largest growth factor (1 + r)ⁿ a projection may reach: far inside what `Decimal` keeps, so the
    /// projection stays a number (a 10% return over 8,000 years would not).
    static let growthLimit = Decimal(string: "1e60") ?? 1
    private static let utc = TimeZone(secondsFromGMT: 0) ?? .current

    /// Whether the projection from `startDate` to `byDate` stays a number: (1 + monthly rate)^months ≤ 10^60.
    public var projectionIsComputable: Bool {
        let r = expectedReturn.decimal / 12 / 100
        if r.isZero { return true }
        let months = PlanProgress.months(from: ISODate.localDay(of: startDate, in: Self.utc), to: ISODate.localDay(of: byDate, in: Self.utc))
        var growth: Decimal = 1
        for _ in 0..<months {
            growth *= 1 + r
            if growth.isNaN || growth > Self.growthLimit { return false }
        }
        return true
    }
}

/// Where a plan stands today.
public struct PlanProgress: InOneCurrency, Sendable, Equatable {
    /// The currency of every figure (the value's), the plan's target and monthly amounts too.
    public var currency: CurrencyCode
    public var currentValue: Exact36
    public var progressPercentage: Decimal?
    public var daysRemaining: Int
    public var monthsRemaining: Int
    public var projectedTotal: Decimal
    public var onTrack: Bool
    /// `nil` once no month is left.
    public var requiredMonthly: Decimal?

    /// The spec's projection: with r the monthly rate, V(1+r)ⁿ + C((1+r)ⁿ − 1)/r (V + C·n when r = 0);
    /// the monthly amount that reaches the target, never below 0.
    public init(plan: InvestmentPlan, currentValue: Money, today: Date, timeZone: TimeZone) {
        currency = currentValue.currency
        self.currentValue = currentValue.amount
        let v = self.currentValue.decimal
        let target = plan.target.decimal
        progressPercentage = target.isZero ? nil : v / target * 100
        let now = ISODate.localDay(of: today, in: timeZone)
        let by = ISODate.localDay(of: plan.byDate, in: timeZone)
        daysRemaining = max(0, Int(ISODate.dayNumber(of: plan.byDate, in: timeZone) - ISODate.dayNumber(of: today, in: timeZone)))
        monthsRemaining = PlanProgress.months(from: now, to: by)
        let n = monthsRemaining
        let c = plan.monthly?.decimal ?? 0
        let r = plan.expectedReturn.decimal / 12 / 100
        var growth: Decimal = 1
        for _ in 0..<n { growth *= 1 + r }
        if r.isZero {
            projectedTotal = v + c * Decimal(n)
        } else {
            projectedTotal = v * growth + c * (growth - 1) / r
        }
        onTrack = projectedTotal >= target
        if n == 0 {
            requiredMonthly = nil
        } else {
            let needed = r.isZero ? (target - v) / Decimal(n) : (target - v * growth) * r / (growth - 1)
            requiredMonthly = max(0, needed)
        }
    }

    /// The largest n with `from` + n months ≤ `to` (a month later keeps the day, or the month's last day).
    static func months(from: (Int64, Int64, Int64), to: (Int64, Int64, Int64)) -> Int {
        func key(_ d: (Int64, Int64, Int64)) -> Int64 { d.0 * 10_000 + d.1 * 100 + d.2 }
        guard key(from) <= key(to) else { return 0 }
        var n = Int((to.0 - from.0) * 12 + (to.1 - from.1))
        while n > 0 && key(ISODate.adding(months: n, to: from)) > key(to) { n -= 1 }
        return max(0, n)
    }
}

extension ISODate {
    /// The day `n` months after `d`, on the same day of the month or the month's last day when shorter.
    public static func adding(months n: Int, to d: (Int64, Int64, Int64)) -> (Int64, Int64, Int64) {
        let total = d.0 * 12 + (d.1 - 1) + Int64(n)
        let y = total >= 0 ? total / 12 : (total - 11) / 12
        let m = total - y * 12 + 1
        return (y, m, min(d.2, daysInMonth(y, m)))
    }
}

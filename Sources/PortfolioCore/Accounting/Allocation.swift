import Foundation

/// One class of the allocation (allocation-plans.md): an asset type, an asset, or `cash`.
public struct AllocationRow: Sendable, Equatable {
    public var target: String
    public var value: Exact36
    /// value ÷ total × 100; `nil` when the total is zero.
    public var weight: Decimal?
    public var targetPercent: Fixed18
    /// weight − target, in percentage points.
    public var drift: Decimal?
    /// value − target × total.
    public var driftValue: Exact36
    /// What `--deposit` or `--rebalance` suggests, in cents (`nil` without either).
    public var suggested: Exact36?
}

public struct AllocationReport: InOneCurrency, Sendable {
    /// The currency of every figure.
    public var currency: CurrencyCode
    public var by: Targets.Basis
    public var total: Exact36
    public var rows: [AllocationRow]
    /// Holdings without a price, left out.
    public var unpriced: [String]
}

/// What to suggest besides the drift.
public enum AllocationMove: Sendable, Equatable {
    case none
    /// New money split without selling: every receiving class ends at its target share.
    case deposit(Fixed18)
    /// The buys and sells that reach every target.
    case rebalance
}

extension Reports {
    /// The chosen portfolio's mix against `targets`: every target class and every held class.
    public func allocation(_ targets: Targets, move: AllocationMove = .none) -> AllocationReport {
        var values: [String: Exact36] = [:]
        var unpriced: [String] = []
        let h = holdings()
        for line in h.holdings {
            guard let v = line.currentValue else {
                unpriced.append(line.asset.symbol)
                continue
            }
            let key = targets.target(of: line.asset)
            values[key] = (try? (values[key] ?? .zero) + v) ?? values[key]
        }
        if let cash = h.cashBalance { values["cash"] = (try? (values["cash"] ?? .zero) + cash) ?? cash }
        var order = targets.weights.map(\.target)
        order += values.keys.filter { !order.contains($0) }.sorted()
        let percent = Dictionary(targets.weights.map { ($0.target, $0.percent) }, uniquingKeysWith: { a, _ in a })
        var total = Exact36.zero
        for v in values.values { total = (try? total + v) ?? total }
        let hundred = Fixed18(units: 100 * Fixed18.scale)
        var rows: [AllocationRow] = order.map { c in
            let v = values[c] ?? .zero
            let t = percent[c] ?? .zero
            let weight = total.isZero ? nil : Percent.of(v, total)
            let targetValue = (try? total.multiplied(by: t, dividedBy: hundred)) ?? .zero
            return AllocationRow(target: c, value: v, weight: weight, targetPercent: t, drift: weight.map { $0 - t.decimal },
                                 driftValue: (try? v - targetValue) ?? .zero, suggested: nil)
        }
        let exact: [Exact36]?
        switch move {
        case .none: exact = nil
        case .rebalance: exact = rows.map { r in (try? total.multiplied(by: r.targetPercent, dividedBy: hundred) - r.value) ?? .zero }
        case let .deposit(d): exact = Reports.depositSplit(rows.map { ($0.value, $0.targetPercent) }, deposit: Exact36(d))
        }
        if let exact {
            let goal: Exact36
            if case let .deposit(d) = move { goal = Exact36(d) } else { goal = .zero }
            for (i, a) in Reports.cents(exact, adding: goal, names: rows.map(\.target)).enumerated() { rows[i].suggested = a }
        }
        return AllocationReport(currency: currency, by: targets.by, total: total, rows: rows, unpriced: unpriced)
    }

    /// The spec's split of a deposit without selling: give every class of S `t ÷ Σt × (Σv + D) − v`;
    /// drop the classes that would get less than nothing and repeat; the others get 0.
    static func depositSplit(_ classes: [(value: Exact36, target: Fixed18)], deposit: Exact36) -> [Exact36] {
        var receiving = Set(classes.indices)
        while true {
            var sumT = Fixed18.zero, sumV = Exact36.zero
            for i in receiving {
                sumT = (try? sumT.adding(classes[i].target)) ?? sumT
                sumV = (try? sumV + classes[i].value) ?? sumV
            }
            guard sumT.units > 0, let pot = try? sumV + deposit else { return classes.map { _ in .zero } }
            var parts = classes.map { _ in Exact36.zero }
            var dropped = false
            for i in receiving {
                let share = ((try? pot.multiplied(by: classes[i].target, dividedBy: sumT)) ?? .zero)
                let part = (try? share - classes[i].value) ?? .zero
                if part < .zero {
                    receiving.remove(i)
                    dropped = true
                } else {
                    parts[i] = part
                }
            }
            if !dropped { return parts }
        }
    }

    /// Each amount rounded half up to cents, the rounding remainder given to the largest exact amount
    /// (by magnitude; a tie: the first name), so that they add up exactly to `goal`.
    static func cents(_ exact: [Exact36], adding goal: Exact36, names: [String]) -> [Exact36] {
        var rounded = exact.map { $0.rounded(scale: 2) }
        guard !exact.isEmpty else { return rounded }
        var sum = Exact36.zero
        for r in rounded { sum = (try? sum + r) ?? sum }
        guard let rest = try? goal - sum, !rest.isZero else { return rounded }
        func magnitude(_ v: Exact36) -> Exact36 { v < .zero ? ((try? Exact36.zero - v) ?? v) : v }
        var largest = 0
        for i in exact.indices.dropFirst() {
            let a = magnitude(exact[i]), b = magnitude(exact[largest])
            if a > b || (a == b && names[i] < names[largest]) { largest = i }
        }
        rounded[largest] = (try? rounded[largest] + rest) ?? rounded[largest]
        return rounded
    }
}

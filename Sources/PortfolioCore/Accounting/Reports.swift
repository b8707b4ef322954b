import Foundation

/// An open position valued at the latest known price.
public struct Holding: Sendable {
    public var coin: Coin
    public var totalAmount: Decimal
    public var totalCost: Exact36
    public var avgCost: Exact36
    public var quote: Quote?
    public var currentValue: Exact36?
    public var profitLoss: Exact36?
    public var profitLossPercentage: Decimal?
    /// The price is more than 60 minutes old (false when unpriced).
    public var stale = false
}

/// How to order holdings.
public enum HoldingsSort: String, CaseIterable, Sendable {
    case value, pnl, name, amount
}

/// Open holdings with totals and the age of the prices used.
///
/// Money is exact (`Exact36`) from the replay to the printed digits: totals are exact sums,
/// and display rounds each figure once, from its exact value.
public struct HoldingsReport: Sendable {
    public var holdings: [Holding]
    /// Oldest quote time among priced holdings.
    public var pricesAsOf: Date?
    public var stale: Bool
    /// Holdings without any price: outside the totals.
    public var unpricedCount: Int
    /// Σ value of the priced holdings.
    public var totalValue: Exact36
    /// Σ cost basis of the priced holdings, so that `unrealizedPnL == totalValue − totalCost`.
    public var totalCost: Exact36
    public var unrealizedPnL: Exact36
    /// Cost basis of the holdings without a price.
    public var unpricedCost: Exact36
    /// Σ cost basis of every open holding, priced or not.
    public var openCost: Exact36 { (try? totalCost + unpricedCost) ?? totalCost }
    /// `unrealizedPnL / totalCost × 100`; `nil` when nothing priced cost anything.
    public var unrealizedPnLPercentage: Decimal? { Percent.of(unrealizedPnL, totalCost) }
}

/// A closed cycle with its coin resolved.
public struct ClosedLine: Sendable {
    public var coin: Coin
    public var position: ClosedPosition
}

/// The whole portfolio in a few numbers (accounting.md, "Portfolio summary").
public struct PortfolioSummary: Sendable {
    public var totalValue: Exact36
    public var totalOpenCost: Exact36
    public var totalClosedCost: Exact36
    public var unrealizedPnL: Exact36
    public var realizedPnL: Exact36
    public var totalPnL: Exact36
    /// `totalPnL / (priced open cost + closed cost) × 100`: the same holdings on both sides.
    public var totalPnLPercentage: Decimal?
    public var holdingsCount: Int
    public var unpricedCount: Int
    /// Cost basis of the open holdings without a price (part of `totalOpenCost`, outside `totalValue`).
    public var unpricedCost: Exact36
    public var pricesAsOf: Date?
    public var stale: Bool
    /// At most 5 priced holdings, largest value first.
    public var topHoldings: [Holding]
}

/// Turns a ledger, prices and the catalog into reports. Pure: no I/O, no clock of its own.
public struct Reports: Sendable {
    public var ledger: Ledger
    public var prices: PriceBook
    public var coin: @Sendable (String) -> Coin
    public var now: Date

    public init(ledger: Ledger, prices: PriceBook, now: Date, coin: @escaping @Sendable (String) -> Coin) {
        self.ledger = ledger
        self.prices = prices
        self.now = now
        self.coin = coin
    }

    public func holdings(sort: HoldingsSort = .value) -> HoldingsReport {
        var lines: [Holding] = []
        var asOf: Date?
        var value = Exact36.zero, cost = Exact36.zero, pnl = Exact36.zero, unpricedCost = Exact36.zero
        var unpriced = 0
        for p in ledger.openPositions {
            let quote = prices.latest(p.coinId)
            let basis = p.lots.costBasis
            var line = Holding(coin: coin(p.coinId), totalAmount: p.quantity, totalCost: basis,
                               avgCost: p.averageCost ?? .zero, quote: quote)
            // A value is exact when the price has at most 18 decimals (every manual price, nearly every
            // fetched one); otherwise Exact36 takes it rounded at the 36th decimal.
            if let q = quote, let v = Exact36.product(p.lots.quantity, q.price), let gain = try? v - basis,
               let v2 = try? value + v, let c2 = try? cost + basis, let g2 = try? pnl + gain {
                line.currentValue = v
                line.profitLoss = gain
                line.profitLossPercentage = Percent.of(gain, basis)
                line.stale = PriceBook.isStale(q.time, now: now)
                (value, cost, pnl) = (v2, c2, g2)
                asOf = asOf.map { min($0, q.time) } ?? q.time
            } else {
                unpriced += 1
                unpricedCost = (try? unpricedCost + basis) ?? unpricedCost
            }
            lines.append(line)
        }
        lines.sort(by: Reports.order(sort))
        return HoldingsReport(
            holdings: lines, pricesAsOf: asOf, stale: asOf.map { PriceBook.isStale($0, now: now) } ?? false,
            unpricedCount: unpriced, totalValue: value, totalCost: cost, unrealizedPnL: pnl, unpricedCost: unpricedCost)
    }

    /// Closed cycles, most recently closed first.
    public func closed() -> [ClosedLine] {
        ledger.closed.enumerated().sorted { a, b in
            a.element.closedDate != b.element.closedDate
                ? a.element.closedDate > b.element.closedDate : a.offset > b.offset
        }.map { ClosedLine(coin: coin($0.element.coinId), position: $0.element) }
    }

    public func summary() -> PortfolioSummary {
        let h = holdings(sort: .value)
        let total = (try? h.unrealizedPnL + ledger.realizedPnL) ?? h.unrealizedPnL
        let base = (try? h.totalCost + ledger.closedCost) ?? h.totalCost
        return PortfolioSummary(
            totalValue: h.totalValue, totalOpenCost: h.openCost, totalClosedCost: ledger.closedCost,
            unrealizedPnL: h.unrealizedPnL, realizedPnL: ledger.realizedPnL, totalPnL: total,
            totalPnLPercentage: Percent.of(total, base),
            holdingsCount: h.holdings.count, unpricedCount: h.unpricedCount, unpricedCost: h.unpricedCost, pricesAsOf: h.pricesAsOf,
            stale: h.stale, topHoldings: Array(h.holdings.filter { $0.currentValue != nil }.prefix(5)))
    }

    static func order(_ sort: HoldingsSort) -> (Holding, Holding) -> Bool {
        func byName(_ a: Holding, _ b: Holding) -> Bool {
            let x = a.coin.name.lowercased(), y = b.coin.name.lowercased()
            return x != y ? x < y : a.coin.id < b.coin.id
        }
        func unpricedOrder(_ a: Holding, _ b: Holding) -> Bool {
            a.totalCost != b.totalCost ? a.totalCost > b.totalCost : byName(a, b)
        }
        switch sort {
        case .value: return { a, b in KnownFirst.descending(a.currentValue, b.currentValue, tie: byName(a, b), unknown: unpricedOrder(a, b)) }
        case .pnl: return { a, b in KnownFirst.descending(a.profitLoss, b.profitLoss, tie: byName(a, b), unknown: unpricedOrder(a, b)) }
        case .name: return byName
        case .amount: return { a, b in a.totalAmount != b.totalAmount ? a.totalAmount > b.totalAmount : byName(a, b) }
        }
    }
}

/// Orders by a value that may be unknown: largest first, unknown last.
public enum KnownFirst {
    /// - Parameters:
    ///   - tie: the order when both values are equal.
    ///   - unknown: the order when both are unknown.
    public static func descending<T: Comparable>(_ x: T?, _ y: T?, tie: @autoclosure () -> Bool,
                                  unknown: @autoclosure () -> Bool) -> Bool {
        switch (x, y) {
        case let (x?, y?): x != y ? x > y : tie()
        case (.some, nil): true
        case (nil, .some): false
        case (nil, nil): unknown()
        }
    }
}

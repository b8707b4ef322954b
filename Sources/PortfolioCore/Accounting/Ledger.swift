import Foundation

/// One coin's open cycle: what is held now and how the cycle got here.
public struct Position: Sendable {
    public let coinId: String
    public var lots = AverageCostLots()
    /// Sum of the cycle's buy amounts and their cost (fees included).
    public var cycleBuyQuantity: Decimal = 0
    public var cycleBuyCost: Decimal = 0
    /// Sum of the cycle's sell amounts and gross proceeds (before fees).
    public var cycleSellQuantity: Decimal = 0
    public var cycleSellGross: Decimal = 0
    public var cycleRealized: Decimal = 0
    public var openedDate: Date?
    public var lastSellDate: Date?

    public init(coinId: String) { self.coinId = coinId }

    public var quantity: Decimal { lots.quantity }
    public var costBasis: Decimal { lots.costBasis }
    /// `costBasis / quantity`; `nil` at quantity 0. Derived, never stored rounded.
    public var averageCost: Decimal? { quantity > 0 ? costBasis / quantity : nil }
}

/// A finished cycle: bought, then sold down to exactly zero.
public struct ClosedPosition: Sendable, Equatable {
    public var coinId: String
    public var totalQuantity: Decimal
    public var totalCost: Decimal
    public var avgCostPrice: Decimal
    public var avgSellPrice: Decimal
    public var realizedPnL: Decimal
    public var realizedPnLPercentage: Decimal?
    public var openedDate: Date
    public var closedDate: Date
}

/// The result of replaying a history: open positions, closed cycles and realized totals.
public struct Ledger: Sendable {
    /// Every coin's current cycle (quantity 0 when its last cycle closed).
    public var positions: [String: Position] = [:]
    /// Closed cycles in the order they closed.
    public var closed: [ClosedPosition] = []
    /// Σ (proceeds − basisSold) over every sell ever.
    public var realizedPnL: Decimal = 0
    /// Σ basisSold over every sell ever.
    public var closedCost: Decimal = 0

    /// Positions with something held.
    public var openPositions: [Position] { positions.values.filter { $0.quantity > 0 } }

    /// Replays `transactions` in date order, ties in the order given, by weighted average cost.
    ///
    /// A buy adds its amount and `amount × price + fee` to the cost basis. A sell
    /// removes `costBasis × amount / quantity` and records
    /// `amount × price − fee − basisSold` as realized. At exactly zero the cycle
    /// closes and the next buy starts a fresh average.
    ///
    /// - Throws: `PortfolioError.breaksLaterSell` for the first sell that asks for
    ///   more than is held at its point of the replay (callers reword it when that
    ///   sell is the one being written).
    public static func replay(_ transactions: [Transaction]) throws(PortfolioError) -> Ledger {
        var ledger = Ledger()
        for tx in chronological(transactions) { try ledger.apply(tx) }
        return ledger
    }

    /// The transactions in replay order: by date, ties keeping their given order.
    public static func chronological(_ transactions: [Transaction]) -> [Transaction] {
        var sorted = true
        var i = 1
        while i < transactions.count {
            if transactions[i].date < transactions[i - 1].date { sorted = false; break }
            i += 1
        }
        if sorted { return transactions }
        return transactions.enumerated().sorted { a, b in
            a.element.date != b.element.date ? a.element.date < b.element.date : a.offset < b.offset
        }.map(\.element)
    }

    /// Applies one transaction: the one place where a kind changes quantity, basis and realized P&L.
    public mutating func apply(_ tx: Transaction) throws(PortfolioError) {
        var position = positions[tx.coinId] ?? Position(coinId: tx.coinId)
        switch tx.type {
        case .buy:
            if position.quantity == 0 {
                position = Position(coinId: tx.coinId)
                position.openedDate = tx.date
            }
            let cost = tx.amount * tx.pricePerCoin + tx.fee
            position.lots.acquire(quantity: tx.amount, cost: cost, date: tx.date)
            position.cycleBuyQuantity += tx.amount
            position.cycleBuyCost += cost
        case .sell:
            guard tx.amount <= position.quantity else {
                throw .breaksLaterSell(coinId: tx.coinId, held: position.quantity, requested: tx.amount,
                                       date: tx.date, id: tx.id)
            }
            let gross = tx.amount * tx.pricePerCoin
            let basisSold = position.lots.dispose(quantity: tx.amount)
            let realized = gross - tx.fee - basisSold
            position.cycleSellQuantity += tx.amount
            position.cycleSellGross += gross
            position.cycleRealized += realized
            position.lastSellDate = tx.date
            realizedPnL += realized
            closedCost += basisSold
            if position.quantity == 0 { closeCycle(of: position) }
        }
        positions[tx.coinId] = position
    }

    private mutating func closeCycle(of p: Position) {
        guard p.cycleBuyQuantity > 0, let opened = p.openedDate, let closedOn = p.lastSellDate else { return }
        closed.append(ClosedPosition(
            coinId: p.coinId,
            totalQuantity: p.cycleBuyQuantity,
            totalCost: p.cycleBuyCost,
            avgCostPrice: p.cycleBuyCost / p.cycleBuyQuantity,
            avgSellPrice: p.cycleSellQuantity > 0 ? p.cycleSellGross / p.cycleSellQuantity : 0,
            realizedPnL: p.cycleRealized,
            realizedPnLPercentage: Percent.of(p.cycleRealized, p.cycleBuyCost),
            openedDate: opened,
            closedDate: closedOn))
    }
}

/// Percentages: `part / base × 100`, or `nil` when the base is zero.
public enum Percent {
    public static func of(_ part: Decimal, _ base: Decimal) -> Decimal? {
        base.isZero ? nil : part / base * 100
    }
}

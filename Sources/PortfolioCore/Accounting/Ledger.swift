import Foundation

/// One coin's open cycle: what is held now and how the cycle got here.
///
/// Sums are exact (`Fixed18` quantities, `Exact36` money); the `Decimal` views are for reports.
public struct Position: Sendable {
    public let coinId: String
    public var lots = AverageCostLots()
    /// Sum of the cycle's buy amounts and their cost (fees included).
    public var cycleBuyQuantity: Fixed18 = .zero
    public var cycleBuyCost: Exact36 = .zero
    /// Sum of the cycle's sell amounts and gross proceeds (before fees).
    public var cycleSellQuantity: Fixed18 = .zero
    public var cycleSellGross: Exact36 = .zero
    public var cycleRealized: Exact36 = .zero
    public var openedDate: Date?
    public var lastSellDate: Date?

    public init(coinId: String) { self.coinId = coinId }

    /// What one transaction did: realized gain and basis sold (for a sell), and whether the cycle closed.
    public struct Outcome {
        public var realized: (gain: Exact36, basisSold: Exact36)?
        public var closedCycle = false
    }

    /// Applies one transaction to this coin's cycle: the one place where a kind of transaction
    /// changes quantity, cost basis and realized P&L (new kinds are new cases here).
    public mutating func apply(_ tx: Transaction) throws(PortfolioError) -> Outcome {
        switch tx.type {
        case .buy:
            if !isOpen {
                self = Position(coinId: tx.coinId)
                openedDate = tx.date
            }
            let cost = try Exact36.product(tx.amountValue, tx.priceValue) + Exact36(tx.feeValue)
            try lots.acquire(quantity: tx.amountValue, cost: cost, date: tx.date)
            cycleBuyQuantity = try cycleBuyQuantity.adding(tx.amountValue)
            cycleBuyCost = try cycleBuyCost + cost
            return Outcome()
        case .sell:
            guard tx.amountValue <= lots.quantity else {
                throw .breaksLaterSell(coinId: tx.coinId, held: quantity, requested: tx.amount, date: tx.date, id: tx.id)
            }
            let gross = Exact36.product(tx.amountValue, tx.priceValue)
            let basisSold = try lots.dispose(quantity: tx.amountValue)
            let gain = try gross - Exact36(tx.feeValue) - basisSold
            cycleSellQuantity = try cycleSellQuantity.adding(tx.amountValue)
            cycleSellGross = try cycleSellGross + gross
            cycleRealized = try cycleRealized + gain
            lastSellDate = tx.date
            return Outcome(realized: (gain, basisSold), closedCycle: !isOpen)
        }
    }

    /// Something is held.
    public var isOpen: Bool { lots.quantity.units > 0 }
    public var quantity: Decimal { lots.quantity.decimal }
    public var costBasis: Exact36 { lots.costBasis }
    /// `costBasis / quantity` (rounded at the 36th decimal); `nil` at quantity 0. Derived, never stored.
    public var averageCost: Exact36? { isOpen ? try? lots.costBasis.divided(by: lots.quantity) : nil }
}

/// A finished cycle: bought, then sold down to exactly zero.
public struct ClosedPosition: Sendable, Equatable {
    public var coinId: String
    public var totalQuantity: Decimal
    public var totalCost: Exact36
    public var avgCostPrice: Exact36
    public var avgSellPrice: Exact36
    public var realizedPnL: Exact36
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
    private var realized: Exact36 = .zero
    private var basisSoldTotal: Exact36 = .zero

    /// Σ (proceeds − basisSold) over every sell ever.
    public var realizedPnL: Exact36 { realized }
    /// Σ basisSold over every sell ever.
    public var closedCost: Exact36 { basisSoldTotal }

    /// Positions with something held.
    public var openPositions: [Position] { positions.values.filter(\.isOpen) }

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
        let order = chronologicalIndices(transactions)
        if order.elementsEqual(transactions.indices) { return transactions }
        return order.map { transactions[$0] }
    }

    /// Applies one transaction to its coin's position (see `Position.apply`) and the realized totals.
    ///
    /// All or nothing: a transaction that cannot apply (a sell of more than is held, a total
    /// past what is computed exactly) leaves the ledger as it was, so a forgiving replay can
    /// leave it out and go on.
    public mutating func apply(_ tx: Transaction) throws(PortfolioError) {
        var position = positions[tx.coinId] ?? Position(coinId: tx.coinId)
        let outcome = try position.apply(tx)
        if let (gain, basisSold) = outcome.realized {
            let (newRealized, newBasisSold) = (try realized + gain, try basisSoldTotal + basisSold)
            (realized, basisSoldTotal) = (newRealized, newBasisSold)
        }
        positions[tx.coinId] = position
        if outcome.closedCycle { closeCycle(of: position) }
    }

    private mutating func closeCycle(of p: Position) {
        guard p.cycleBuyQuantity.units > 0, let opened = p.openedDate, let closedOn = p.lastSellDate else { return }
        let cost = p.cycleBuyCost
        let realized = p.cycleRealized
        closed.append(ClosedPosition(
            coinId: p.coinId,
            totalQuantity: p.cycleBuyQuantity.decimal,
            totalCost: cost,
            avgCostPrice: (try? cost.divided(by: p.cycleBuyQuantity)) ?? .zero,
            avgSellPrice: p.cycleSellQuantity.units > 0 ? (try? p.cycleSellGross.divided(by: p.cycleSellQuantity)) ?? .zero : .zero,
            realizedPnL: realized,
            realizedPnLPercentage: Percent.of(realized, cost),
            openedDate: opened,
            closedDate: closedOn))
    }
}

/// Percentages: `part / base × 100`, or `nil` when the base is zero.
public enum Percent {
    public static func of(_ part: Decimal, _ base: Decimal) -> Decimal? {
        base.isZero ? nil : part / base * 100
    }

    /// The same for exact money: a ratio, so `Decimal`'s 38 digits are plenty.
    public static func of(_ part: Exact36, _ base: Exact36) -> Decimal? {
        of(part.decimal, base.decimal)
    }
}

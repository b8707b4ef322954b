import Foundation

/// How the cost of what is still held is tracked and released on a disposal.
///
/// Weighted average is today's method; FIFO, LIFO and HIFO become other
/// conforming types (each keeping lots) without touching the replay.
public protocol CostBasisLots: Sendable {
    init()
    /// Units held.
    var quantity: Decimal { get }
    /// Cost of the units held.
    var costBasis: Decimal { get }
    /// Adds units bought for `cost` (fees included).
    mutating func acquire(quantity: Decimal, cost: Decimal, date: Date)
    /// Removes units and returns the cost basis they carried. Requires `quantity ≤ self.quantity`.
    mutating func dispose(quantity: Decimal) -> Decimal
}

/// Weighted average cost: a disposal takes `costBasis × amount / quantity` and leaves the average unchanged.
public struct AverageCostLots: CostBasisLots {
    public private(set) var quantity: Decimal = 0
    public private(set) var costBasis: Decimal = 0

    public init() {}

    public mutating func acquire(quantity amount: Decimal, cost: Decimal, date: Date) {
        quantity += amount
        costBasis += cost
    }

    public mutating func dispose(quantity amount: Decimal) -> Decimal {
        if amount == quantity {
            // The cycle closes at exactly zero: release the whole basis, leave no dust.
            let all = costBasis
            quantity = 0
            costBasis = 0
            return all
        }
        let basisSold = costBasis * amount / quantity
        quantity -= amount
        costBasis -= basisSold
        return basisSold
    }
}

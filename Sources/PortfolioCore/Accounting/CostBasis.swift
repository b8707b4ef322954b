import Foundation

/// How the cost of what is still held is tracked and released on a disposal.
///
/// Lots are the unit of basis: weighted average is the one-lot pool; FIFO, LIFO and HIFO become
/// other conforming types (each keeping lots with their dates) without touching the replay.
public protocol CostBasisLots: Sendable {
    init()
    /// Units held.
    var quantity: Fixed18 { get }
    /// Cost of the units held.
    var costBasis: Exact36 { get }
    /// Adds units acquired for `cost` (fees included).
    mutating func acquire(quantity: Fixed18, cost: Exact36, date: Date) throws(PortfolioError)
    /// Removes units and returns the cost basis they carried. Requires `quantity ≤ self.quantity`.
    mutating func dispose(quantity: Fixed18) throws(PortfolioError) -> Exact36
    /// Multiplies every unit by `numerator / denominator` (a split); the basis stays.
    mutating func scale(by numerator: Fixed18, over denominator: Fixed18) throws(PortfolioError)
}

/// Weighted average cost: a disposal takes `costBasis × amount / quantity` and leaves the average unchanged.
public struct AverageCostLots: CostBasisLots {
    public private(set) var quantity: Fixed18 = .zero
    public private(set) var costBasis: Exact36 = .zero

    public init() {}

    public mutating func acquire(quantity amount: Fixed18, cost: Exact36, date: Date) throws(PortfolioError) {
        quantity = try quantity.adding(amount)
        costBasis = try costBasis + cost
    }

    public mutating func dispose(quantity amount: Fixed18) throws(PortfolioError) -> Exact36 {
        if amount == quantity {
            // The cycle closes at exactly zero: release the whole basis, leave no dust.
            let all = costBasis
            quantity = .zero
            costBasis = .zero
            return all
        }
        let basisSold = try costBasis.multiplied(by: amount, dividedBy: quantity)
        quantity = Fixed18(units: quantity.units - amount.units)
        costBasis = try costBasis - basisSold
        return basisSold
    }

    public mutating func scale(by numerator: Fixed18, over denominator: Fixed18) throws(PortfolioError) {
        quantity = try quantity.scaled(by: numerator, over: denominator)
    }
}

extension Fixed18 {
    /// `self + other`, or `quantityTooLarge` past 128 bits (about 3.4 × 10^20 units).
    public func adding(_ other: Fixed18) throws(PortfolioError) -> Fixed18 {
        let (sum, overflow) = units.addingReportingOverflow(other.units)
        if overflow { throw .quantityTooLarge }
        return Fixed18(units: sum)
    }

    /// `self × numerator / denominator`, rounded half up to 18 decimals (a split's new quantity).
    public func scaled(by numerator: Fixed18, over denominator: Fixed18) throws(PortfolioError) -> Fixed18 {
        do {
            return try Exact36(self).multiplied(by: numerator, dividedBy: denominator).roundedToFixed18()
        } catch .valueTooLarge {
            throw .quantityTooLarge
        }
    }
}

import Foundation

/// A price alert (history-performance.md, "Alerts"): edge-triggered, with its last state.
public struct PriceAlert: Hashable, Sendable {
    public enum Condition: String, CaseIterable, Sendable {
        /// The price is at or above the threshold.
        case above
        /// The price is at or below the threshold.
        case below
        /// The 24-hour change is beyond ± the threshold (a percentage).
        case move
    }

    /// `armed`: the condition was false, or could not be told, at the last check; `fired`: it was true.
    public enum State: String, CaseIterable, Sendable { case armed, fired }

    /// Small and stable: one more than the largest in use when it was added.
    public var id: Int
    public var assetId: String
    public var condition: Condition
    /// A price in `currency`, or a percentage for `move`.
    public var threshold: Fixed18
    /// The currency of the price the alert watches (the asset's, a coin's the default portfolio's base).
    public var currency: String
    /// Fire at every check while true, not only when it turns true.
    public var repeats: Bool
    public var state: State
    public var lastChecked: Date?

    public init(id: Int, assetId: String, condition: Condition, threshold: Fixed18, currency: String, repeats: Bool = false,
                state: State = .armed, lastChecked: Date? = nil) {
        self.id = id
        self.assetId = assetId
        self.condition = condition
        self.threshold = threshold
        self.currency = currency
        self.repeats = repeats
        self.state = state
        self.lastChecked = lastChecked
    }

    /// Whether the condition holds for `quote`; `nil` when it cannot be told (no price, no 24-hour change).
    public func holds(for quote: Quote?) -> Bool? {
        guard let quote, quote.currency == currency || condition == .move else { return nil }
        switch condition {
        case .above: return quote.price >= threshold.decimal
        case .below: return quote.price <= threshold.decimal
        case .move:
            guard let change = quote.change24h else { return nil }
            return abs(change) >= threshold.decimal
        }
    }

    /// The next state and whether the alert fires, for a condition that holds (`true`), does not, or is unknown.
    public func step(_ holds: Bool?) -> (state: State, fires: Bool) {
        switch holds {
        case true?: return (.fired, state == .armed || repeats)
        // Unknown counts as not true: the next check that finds it true fires (history-performance.md).
        case false?, nil: return (.armed, false)
        }
    }
}

/// One alert that fired, with the quote that made it.
public struct FiredAlert: Sendable {
    public var alert: PriceAlert
    public var quote: Quote
}

/// What `alert check` did.
public struct AlertCheck: Sendable {
    public var checked = 0
    public var fired: [FiredAlert] = []
    /// Alerts whose asset has no usable price (their state is left as it was).
    public var unknown: [PriceAlert] = []
}

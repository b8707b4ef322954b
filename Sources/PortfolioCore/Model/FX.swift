import Foundation

/// One exchange rate: units of `to` per one unit of `from`, true at `date`.
public struct FXRate: Hashable, Sendable {
    public enum Source: String, Sendable, CaseIterable {
        /// Typed with `fx set`.
        case manual
        /// Fetched from the price service's `/exchange_rates`.
        case coingecko
        /// Read from a price file (`fx import`), kept in the price cache.
        case imported
        /// The ECB's reference rates (`fx fetch-history`, `fx refresh`), kept in the price cache.
        case ecb
    }

    public var from: String
    public var to: String
    public var rate: Fixed18
    public var date: Date
    public var source: Source

    public init(from: String, to: String, rate: Fixed18, date: Date, source: Source = .manual) {
        self.from = from
        self.to = to
        self.rate = rate
        self.date = date
        self.source = source
    }
}

/// The rates recorded, in recording order, and the one lookup every conversion uses.
public struct FXTable: Sendable {
    public var rates: [FXRate]

    public init(_ rates: [FXRate]) { self.rates = rates }

    /// A rate found for a pair: as recorded, or the inverse of one (`1 ÷ r`, half-up at 18 decimals).
    public struct Found: Equatable, Sendable {
        public var rate: Fixed18
        public var date: Date
        /// The rate recorded the other way round.
        public var inverse: Bool
        public var source: FXRate.Source
    }

    /// Units of `to` per one `from` at `date`: the newest rate of the pair at or before it, a
    /// recorded inverse counting too; when a direct and an inverse rate share a date, the one
    /// recorded later wins. One currency to itself is 1. `nil` when there is none.
    public func rate(from: String, to: String, on date: Date) -> Found? {
        if from == to { return Found(rate: Fixed18(units: Fixed18.scale), date: date, inverse: false, source: .manual) }
        var best: (index: Int, rate: FXRate)?
        for (i, r) in rates.enumerated() where r.date <= date {
            let direct = r.from == from && r.to == to, inverse = r.from == to && r.to == from
            guard direct || inverse else { continue }
            if let b = best, r.date < b.rate.date { continue }
            best = (i, r)  // a later record of the same date wins: records are in recording order
        }
        guard let (_, r) = best else { return nil }
        if r.from == from { return Found(rate: r.rate, date: r.date, inverse: false, source: r.source) }
        guard let inverted = try? Exact36(Fixed18(units: Fixed18.scale)).divided(by: r.rate).roundedToFixed18(),
              inverted.units > 0 else { return nil }
        return Found(rate: inverted, date: r.date, inverse: true, source: r.source)
    }

    /// The newest record of each pair as recorded (`fx list`), by pair.
    public var newest: [FXRate] {
        var byPair: [String: FXRate] = [:]
        for r in rates {
            let key = r.from + "/" + r.to
            if let old = byPair[key], old.date > r.date { continue }
            byPair[key] = r
        }
        return byPair.values.sorted { ($0.from, $0.to) < ($1.from, $1.to) }
    }

    /// Every record of a pair, either way round, oldest first (`fx history`).
    public func history(_ a: String, _ b: String) -> [FXRate] {
        rates.enumerated().filter { ($0.element.from == a && $0.element.to == b) || ($0.element.from == b && $0.element.to == a) }
            .sorted { $0.element.date != $1.element.date ? $0.element.date < $1.element.date : $0.offset < $1.offset }
            .map(\.element)
    }
}

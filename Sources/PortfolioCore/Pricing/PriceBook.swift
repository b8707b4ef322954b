import Foundation

/// Every known quote: the manual ones from the portfolio and the fetched ones from the cache.
///
/// The newest quote of a coin wins, whatever its source.
public struct PriceBook: Sendable {
    /// Quotes older than this are stale (reports say so).
    public static let staleAfter: TimeInterval = 3600
    /// Reports refresh a coin whose newest quote is older than this, unless offline.
    public static let freshFor: TimeInterval = 60

    private var byCoin: [String: [Quote]] = [:]

    public init(manual: [Quote] = [], fetched: [Quote] = []) {
        add(manual + fetched)
    }

    /// Adds quotes (e.g. just fetched), keeping each coin's history in time order.
    public mutating func add(_ quotes: [Quote]) {
        var touched: Set<String> = []
        for q in quotes {
            byCoin[q.coinId, default: []].append(q)
            touched.insert(q.coinId)
        }
        for key in touched {
            byCoin[key]?.sort { $0.time < $1.time }
        }
    }

    /// The newest quote of a coin.
    public func latest(_ coinId: String) -> Quote? { byCoin[coinId]?.last }

    /// The newest quote of a coin; of quotes equally new, the one in `currency` (a coin fetched in
    /// several currencies at once).
    public func latest(_ coinId: String, preferring currency: String) -> Quote? {
        guard let quotes = byCoin[coinId], let newest = quotes.last else { return nil }
        return quotes.last { $0.time == newest.time && $0.currency == currency } ?? newest
    }

    /// No quote of any coin.
    public var isEmpty: Bool { byCoin.isEmpty }

    /// All quotes of a coin, oldest first.
    public func history(_ coinId: String) -> [Quote] { byCoin[coinId] ?? [] }

    /// The newest quote of every coin that has one, by coin id.
    public var latestQuotes: [Quote] { byCoin.keys.sorted().compactMap { latest($0) } }

    /// Coins among `coinIds` with no quote, or whose newest quote is older than `freshFor` at `now`.
    public func needsRefresh(_ coinIds: [String], now: Date) -> [String] {
        coinIds.filter { id in
            guard let q = latest(id) else { return true }
            return now.timeIntervalSince(q.time) > PriceBook.freshFor
        }
    }

    public static func isStale(_ time: Date, now: Date) -> Bool {
        now.timeIntervalSince(time) > staleAfter
    }
}

import Foundation

/// Where a price came from.
public enum QuoteSource: String, Sendable, Hashable {
    case manual
    case coingecko
}

/// One observed USD price of a coin.
public struct Quote: Hashable, Sendable {
    public var coinId: String
    public var price: Decimal
    /// 24-hour change as a percentage, when the service gave one.
    public var change24h: Decimal?
    public var marketCap: Decimal?
    /// When bitpal fetched it, or for a manual price its `--date`.
    public var time: Date
    /// The service's own `last_updated`, kept beside `time`.
    public var sourceUpdatedAt: Date?
    public var source: QuoteSource

    public init(
        coinId: String, price: Decimal, change24h: Decimal? = nil, marketCap: Decimal? = nil,
        time: Date, sourceUpdatedAt: Date? = nil, source: QuoteSource
    ) {
        self.coinId = coinId
        self.price = price
        self.change24h = change24h
        self.marketCap = marketCap
        self.time = time
        self.sourceUpdatedAt = sourceUpdatedAt
        self.source = source
    }
}

/// A coin on the watchlist.
public struct WatchEntry: Hashable, Sendable {
    public var coinId: String
    public var dateAdded: Date

    public init(coinId: String, dateAdded: Date) {
        self.coinId = coinId
        self.dateAdded = dateAdded
    }
}

/// Everything the user typed: the content of `portfolio.json`.
public struct Portfolio: Sendable, Equatable {
    /// The store format this build writes; a file with a higher one is refused, never overwritten.
    public static let formatVersion = 1

    public var transactions: [Transaction]
    public var watchlist: [WatchEntry]
    /// Prices entered with `price set`.
    public var manualPrices: [Quote]

    public init(transactions: [Transaction] = [], watchlist: [WatchEntry] = [], manualPrices: [Quote] = []) {
        self.transactions = transactions
        self.watchlist = watchlist
        self.manualPrices = manualPrices
    }
}

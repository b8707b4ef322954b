import Foundation

/// Where a price came from.
public enum QuoteSource: String, Sendable, Hashable {
    /// Typed with `price set` (kept in portfolio.json).
    case manual
    /// Fetched from the price service (`price refresh`, `price fetch-history`, `fx refresh`).
    case coingecko
    /// Read from a price file (`price import`, `fx import`), kept in the price cache.
    case imported
    /// The ECB's reference rates (`fx fetch-history`, `fx refresh`), dated by day.
    case ecb
    /// The latest trade's price of a holding that has no quote at all (never stored: computed for a report).
    case trade
    /// Fetched from Yahoo Finance for a registered asset (`asset add … --quote yahoo`), kept in the price cache.
    case yahoo
    /// Fetched from Twelve Data for a registered asset (`asset add … --quote twelvedata`), kept in the price cache.
    case twelvedata
}

/// One observed price of an asset (a coin's from the service, or any asset's typed by hand).
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
    /// The currency of `price` (USD for every fetched price until currencies arrive).
    public var currency: String

    public init(
        coinId: String, price: Decimal, change24h: Decimal? = nil, marketCap: Decimal? = nil,
        time: Date, sourceUpdatedAt: Date? = nil, source: QuoteSource, currency: String = "USD"
    ) {
        self.currency = currency
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


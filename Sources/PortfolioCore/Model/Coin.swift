/// A coin known to the catalog.
public struct Coin: Hashable, Sendable {
    /// CoinGecko's id, e.g. `bitcoin`.
    public var id: String
    /// Lower-case ticker as CoinGecko writes it, e.g. `btc`.
    public var symbol: String
    public var name: String
    /// Market-cap rank, 1 is the largest; `nil` when unknown.
    public var marketCapRank: Int?

    public init(id: String, symbol: String, name: String, marketCapRank: Int? = nil) {
        self.id = id
        self.symbol = symbol
        self.name = name
        self.marketCapRank = marketCapRank
    }

    /// A stand-in for an id the catalog does not know (e.g. a coin dropped from the list).
    public static func unknown(_ id: String) -> Coin { Coin(id: id, symbol: id, name: id) }
}

import Foundation

/// How messages name what they mention: a coin (`BTC (Bitcoin)`) and a moment (in the
/// reader's time zone). The core words its messages; the front end says how to name things.
public struct MessageNames {
    public var coin: (String) -> String
    public var date: (Date) -> String

    public init(coin: @escaping (String) -> String, date: @escaping (Date) -> String) {
        self.coin = coin
        self.date = date
    }

    /// Coin ids and ISO 8601 UTC times, as stored.
    public static var plain: MessageNames { MessageNames(coin: { $0 }, date: { ISODate.format($0) }) }
}

import Foundation

/// How messages name what they mention: an asset (`BTC (Bitcoin)`), a moment (in the reader's
/// time zone) and a portfolio (named only when there are several). The core words its messages;
/// the front end says how to name things.
public struct MessageNames {
    public var coin: (String) -> String
    public var date: (Date) -> String
    /// `" in 'trading'"`, or `""` when naming the portfolio adds nothing.
    public var portfolio: (String) -> String
    /// The run's clock, when messages may say that a record is back-dated.
    public var now: Date?

    public init(coin: @escaping (String) -> String, date: @escaping (Date) -> String,
                portfolio: @escaping (String) -> String = { _ in "" }) {
        self.coin = coin
        self.date = date
        self.portfolio = portfolio
    }

    /// Asset ids and ISO 8601 UTC times, as stored.
    public static var plain: MessageNames { MessageNames(coin: { $0 }, date: { ISODate.format($0) }) }
}

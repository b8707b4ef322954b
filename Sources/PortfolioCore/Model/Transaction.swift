import Foundation

/// What a transaction does to a position.
///
/// Today a buy or a sell. Later kinds (transfers, rewards, income, cash) are
/// added here and handled in one place: `PositionBook.apply(_:)`.
public enum TransactionType: String, CaseIterable, Sendable, Hashable {
    case buy
    case sell
}

/// One recorded trade of one coin, in USD.
///
/// Quantities and prices are always positive; the side comes from `type`.
public struct Transaction: Hashable, Sendable {
    public var id: UUID
    /// The asset's id: a CoinGecko coin id today (`bitcoin`).
    public var coinId: String
    public var type: TransactionType
    /// How many units, exactly as entered.
    public var amount: Decimal
    /// USD per unit, exactly as entered.
    public var pricePerCoin: Decimal
    /// USD fee, exactly as entered (0 when none).
    public var fee: Decimal
    /// When it happened (millisecond precision).
    public var date: Date
    public var notes: String?

    public init(
        id: UUID = UUID(), coinId: String, type: TransactionType, amount: Decimal,
        pricePerCoin: Decimal, fee: Decimal = 0, date: Date, notes: String? = nil
    ) {
        self.id = id
        self.coinId = coinId
        self.type = type
        self.amount = amount
        self.pricePerCoin = pricePerCoin
        self.fee = fee
        self.date = date
        self.notes = notes
    }

    /// `amount × pricePerCoin`, before fees.
    public var gross: Decimal { amount * pricePerCoin }

    /// Cash that moved: gross plus the fee for a buy, minus it for a sell.
    public var total: Decimal {
        switch type {
        case .buy: gross + fee
        case .sell: gross - fee
        }
    }

    /// The identity used to recognise a re-imported row: everything but id and notes.
    public var tradeKey: TradeKey {
        TradeKey(coinId: coinId, type: type, amount: amount, pricePerCoin: pricePerCoin, fee: fee,
                 millis: ISODate.millis(date))
    }
}

/// Type, coin, amount, price, fee and date: two transactions with equal keys are the same trade.
public struct TradeKey: Hashable, Sendable {
    public var coinId: String
    public var type: TransactionType
    public var amount: Decimal
    public var pricePerCoin: Decimal
    public var fee: Decimal
    public var millis: Int64
}

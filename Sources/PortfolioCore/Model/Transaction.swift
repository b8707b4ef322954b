import Foundation

/// What a transaction does to a position.
///
/// Today a buy or a sell. Later kinds (transfers, rewards, income, cash) are
/// added here and handled in one place: `Position.apply(_:)`.
public enum TransactionType: String, CaseIterable, Sendable, Hashable {
    case buy
    case sell
}

/// One recorded trade of one coin, in USD.
///
/// Quantities and prices are always positive; the side comes from `type`. Amount,
/// price and fee are held exactly as `Fixed18` (at most 18 fractional digits, the
/// rule for every input) and read as `Decimal`.
public struct Transaction: Hashable, Sendable {
    public var id: UUID
    /// The asset's id: a CoinGecko coin id today (`bitcoin`).
    public var coinId: String
    public var type: TransactionType
    /// How many units, exactly as entered.
    public var amountValue: Fixed18
    /// USD per unit, exactly as entered.
    public var priceValue: Fixed18
    /// USD fee, exactly as entered (0 when none).
    public var feeValue: Fixed18
    /// When it happened (millisecond precision).
    public var date: Date
    public var notes: String?

    public init(
        id: UUID = UUIDText.random(), coinId: String, type: TransactionType, amount: Fixed18, price: Fixed18,
        fee: Fixed18 = .zero, date: Date, notes: String? = nil
    ) {
        self.id = id
        self.coinId = coinId
        self.type = type
        self.amountValue = amount
        self.priceValue = price
        self.feeValue = fee
        self.date = date
        self.notes = notes
    }

    /// Makes a transaction from `Decimal` values.
    ///
    /// The values must already meet the rules (non-negative, at most 18 fractional and
    /// 20 integer digits: `ValueRules.fixed`); anything else is a programming error.
    public init(
        id: UUID = UUIDText.random(), coinId: String, type: TransactionType, amount: Decimal,
        pricePerCoin: Decimal, fee: Decimal = 0, date: Date, notes: String? = nil
    ) {
        self.init(id: id, coinId: coinId, type: type, amount: Fixed18.checked(amount), price: Fixed18.checked(pricePerCoin),
                  fee: Fixed18.checked(fee), date: date, notes: notes)
    }

    /// How many units, exactly as entered.
    public var amount: Decimal {
        get { amountValue.decimal }
        set { amountValue = Fixed18.checked(newValue) }
    }

    /// USD per unit, exactly as entered.
    public var pricePerCoin: Decimal {
        get { priceValue.decimal }
        set { priceValue = Fixed18.checked(newValue) }
    }

    /// USD fee, exactly as entered (0 when none).
    public var fee: Decimal {
        get { feeValue.decimal }
        set { feeValue = Fixed18.checked(newValue) }
    }

    /// `amount × pricePerCoin`, before fees, exactly.
    public var gross: Exact36 { Exact36.product(amountValue, priceValue) }

    /// Cash that moved, exactly: gross plus the fee for a buy, minus it for a sell.
    public var total: Exact36 {
        switch type {
        case .buy: (try? gross + Exact36(feeValue)) ?? gross
        case .sell: (try? gross - Exact36(feeValue)) ?? gross
        }
    }

    /// The identity used to recognise a re-imported row: everything but id and notes.
    public var tradeKey: TradeKey {
        TradeKey(coinId: coinId, type: type, amount: amountValue, price: priceValue, fee: feeValue,
                 millis: ISODate.millis(date))
    }
}

extension Fixed18 {
    /// A value already checked by `ValueRules`; an unrepresentable one is a programming error.
    static func checked(_ value: Decimal) -> Fixed18 {
        guard let fixed = Fixed18(value) else {
            preconditionFailure("\(value) was not checked by ValueRules before becoming a transaction value")
        }
        return fixed
    }
}

/// Type, coin, amount, price, fee and date: two transactions with equal keys are the same trade.
public struct TradeKey: Hashable, Sendable {
    public var coinId: String
    public var type: TransactionType
    public var amount: Fixed18
    public var price: Fixed18
    public var fee: Fixed18
    public var millis: Int64
}

import Foundation

/// What a transaction is (`type` in the store and every codec).
///
/// What each kind does to a position is one row of `KindRule.table`; nothing else in the engine
/// switches on the kind to change quantity, basis, realized P&L or income.
public enum TransactionType: String, CaseIterable, Sendable, Hashable {
    case buy
    case sell
    case transferIn = "transfer-in"
    case transferOut = "transfer-out"
    case reward
    case dividend
    case interest
    case adjustment
    case split
    /// Money paid into a cash-tracking portfolio (no asset).
    case deposit
    /// Money taken out of a cash-tracking portfolio (no asset).
    case withdrawal
    /// Units paid for goods or services: a disposal at their value, nothing received.
    case spend
    /// A stand-alone fee paid in units of an asset: their basis is a realized loss.
    case fee
    /// Money paid from a cash-tracking portfolio's cash for a service (an account fee): a cost, never a flow.
    case expense

    /// How people read it in a sentence ("Cannot transfer out 2").
    public var verb: String {
        switch self {
        case .buy: "buy"
        case .sell: "sell"
        case .transferIn: "transfer in"
        case .transferOut: "transfer out"
        case .reward: "receive as a reward"
        case .dividend: "receive as a dividend"
        case .interest: "receive as interest"
        case .adjustment: "remove by adjustment"
        case .split: "split"
        case .deposit: "deposit"
        case .withdrawal: "withdraw"
        case .spend: "spend"
        case .fee: "pay as a fee"
        case .expense: "pay"
        }
    }
}

/// One recorded transaction of one asset in one portfolio.
///
/// Quantities are exact `Fixed18`; the sign comes from the kind, except for an adjustment, whose
/// amount is signed (`negative`). Which of price, total, fee and currency a kind has is said by
/// its `KindRule`; the others are `nil`.
public struct Transaction: Hashable, Sendable {
    public var id: UUID
    /// The portfolio's name, as stored.
    public var portfolio: String
    public var type: TransactionType
    /// A coin's CoinGecko id (lower case, `bitcoin`) or a registered asset's code (`AAPL`); empty
    /// for cash alone (a deposit, a withdrawal, interest on cash), stored as `null`.
    public var assetId: String
    /// Units (money for a dividend or interest, the ratio's NEW for a split), exactly as entered.
    public var amountValue: Fixed18
    /// An adjustment that removes units.
    public var negative: Bool
    /// Which optional fields are present (price 1, total 2, fee 4, link 8, fxRate 16, day 32): optional `Fixed18`s
    /// would take 32 bytes each, and a million records are kept in memory at once.
    private var present: UInt8 = 0
    private var storedPrice = Fixed18.zero
    private var storedTotal = Fixed18.zero
    private var storedFee = Fixed18.zero
    private var storedFXRate = Fixed18.zero
    private var storedLink = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    private var storedDay: Int32 = 0
    /// The currency of the money fields; `nil` for kinds without money (split, adjustment, transfer-out).
    public var currency: String?
    /// When it counts: an instant (millisecond precision), or, for a record dated a calendar day
    /// (`day`), that day's first instant in the time zone of the process that read or made it.
    /// Set both with `setDate(_:)`; assigning `date` alone keeps `day`, which must then agree.
    public var date: Date
    public var notes: String?

    /// Per unit (cost basis per unit for a transfer-in, fair value for a reward, OLD of a NEW:OLD split).
    public var priceValue: Fixed18? {
        get { present & 1 != 0 ? storedPrice : nil }
        set { (storedPrice, present) = Transaction.store(newValue, bit: 1, in: present) }
    }

    /// The exact money value of a buy or sell before fees, when given.
    public var totalValue: Fixed18? {
        get { present & 2 != 0 ? storedTotal : nil }
        set { (storedTotal, present) = Transaction.store(newValue, bit: 2, in: present) }
    }

    /// Money (units for a transfer-out; tax withheld for a dividend or interest).
    public var feeValue: Fixed18? {
        get { present & 4 != 0 ? storedFee : nil }
        set { (storedFee, present) = Transaction.store(newValue, bit: 4, in: present) }
    }

    /// Units of the portfolio's base currency per one unit of `currency` at the transaction's date;
    /// `nil` for a transaction in the base currency (or without money).
    public var fxRateValue: Fixed18? {
        get { present & 16 != 0 ? storedFXRate : nil }
        set { (storedFXRate, present) = Transaction.store(newValue, bit: 16, in: present) }
    }

    /// The calendar day it is dated (days since 1970-01-01) when it was recorded as a day, not a moment
    /// (stored as `"YYYY-MM-DD"`, shown and counted on that day in every time zone); `nil` for an instant.
    public var day: Int64? {
        present & 32 != 0 ? Int64(storedDay) : nil
    }

    /// Dates it `when`: a day (with its first instant in the zone it was resolved in) or an instant.
    public mutating func setDate(_ when: RecordDate) {
        date = when.date
        if let day = when.day, let small = Int32(exactly: day) {
            storedDay = small
            present |= 32
        } else {
            storedDay = 0
            present &= ~32
        }
    }

    /// Whether it is dated after `now`: an instant after it, or a day that is not yet today anywhere
    /// (a day typed in Tokyo stands in a book read in UTC while it is still the day before there).
    public func isDated(after now: Date) -> Bool {
        guard let day else { return date > now }
        // The zone furthest ahead is 14 hours ahead of UTC.
        let ahead = ISODate.millis(now) + 14 * 3_600_000
        return day > (ahead >= 0 ? ahead / 86_400_000 : (ahead - 86_399_999) / 86_400_000)
    }

    /// Its date as `setDate` takes it.
    public var recordDate: RecordDate { RecordDate(date: date, day: day) }

    /// The first leg's id, on both legs of a swap or a move.
    public var linkedId: UUID? {
        get { present & 8 != 0 ? storedLink : nil }
        set {
            storedLink = newValue ?? UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
            present = newValue == nil ? present & ~8 : present | 8
        }
    }

    private static func store(_ value: Fixed18?, bit: UInt8, in present: UInt8) -> (Fixed18, UInt8) {
        if let value { return (value, present | bit) }
        return (.zero, present & ~bit)
    }

    public init(
        id: UUID = UUIDText.random(), portfolio: String = Portfolio.mainName, type: TransactionType, assetId: String,
        amount: Fixed18, negative: Bool = false, price: Fixed18?, total: Fixed18? = nil, fee: Fixed18? = .zero,
        currency: String? = "USD", fxRate: Fixed18? = nil, date: Date, day: Int64? = nil, notes: String? = nil,
        linkedId: UUID? = nil
    ) {
        self.id = id
        self.portfolio = portfolio
        self.type = type
        self.assetId = assetId
        self.amountValue = amount
        self.negative = negative
        self.currency = currency
        self.date = date
        self.notes = notes
        self.priceValue = price
        self.totalValue = total
        self.feeValue = fee
        self.linkedId = linkedId
        self.fxRateValue = fxRate
        if day != nil { setDate(RecordDate(date: date, day: day)) }
    }

    /// A buy or a sell of a coin in `main`, from `Decimal` values already checked by `ValueRules`.
    public init(
        id: UUID = UUIDText.random(), coinId: String, type: TransactionType, amount: Decimal,
        pricePerCoin: Decimal, fee: Decimal = 0, date: Date, notes: String? = nil
    ) {
        self.init(id: id, type: type, assetId: coinId, amount: Fixed18.checked(amount), price: Fixed18.checked(pricePerCoin),
                  fee: Fixed18.checked(fee), date: date, notes: notes)
    }

    /// A buy or a sell of a coin in `main`.
    public init(
        id: UUID = UUIDText.random(), coinId: String, type: TransactionType, amount: Fixed18, price: Fixed18,
        fee: Fixed18 = .zero, date: Date, notes: String? = nil
    ) {
        self.init(id: id, type: type, assetId: coinId, amount: amount, price: price, fee: fee, date: date, notes: notes)
    }

    public var rule: KindRule { KindRule.of(type) }

    /// Units or money, exactly as entered (negative for an adjustment that removes units).
    public var amount: Decimal {
        get { negative ? -amountValue.decimal : amountValue.decimal }
        set {
            negative = newValue < 0
            amountValue = Fixed18.checked(negative ? -newValue : newValue)
        }
    }

    /// Per unit, as stored (0 when the kind has none).
    public var pricePerCoin: Decimal {
        get { priceValue?.decimal ?? 0 }
        set { priceValue = Fixed18.checked(newValue) }
    }

    /// The fee (0 when none).
    public var fee: Decimal {
        get { feeValue?.decimal ?? 0 }
        set { feeValue = Fixed18.checked(newValue) }
    }

    /// The money value before fees: `total` when stored, else `amount × price` (0 without a price).
    public var gross: Exact36 {
        if let totalValue { return Exact36(totalValue) }
        guard let priceValue else { return .zero }
        return Exact36.product(amountValue, priceValue)
    }

    /// Money that moved, exactly: gross plus the fee for a buy or transfer-in, minus it for a sell;
    /// the net for a dividend or interest; the value for a reward; zero for kinds without money.
    public var total: Exact36 { rule.moneyMoved(self) }

    /// The identity used to recognise a re-imported row: everything but id, notes and links.
    public var tradeKey: TradeKey {
        TradeKey(portfolio: portfolio, assetId: assetId, type: type, amount: amountValue, negative: negative,
                 price: priceValue, total: totalValue, fee: feeValue, millis: ISODate.millis(date))
    }
}

extension Array where Element == Transaction {
    /// Counts each record dated a calendar day from that day's first instant in `zone` (records are
    /// read with the day's UTC midnight).
    public mutating func placeDays(in zone: TimeZone) {
        var starts: [Int64: Date] = [:]
        for i in indices {
            guard let day = self[i].day else { continue }
            if let start = starts[day] {
                self[i].date = start
            } else {
                let start = RecordDate.day(day, in: zone).date
                starts[day] = start
                self[i].date = start
            }
        }
    }
}

extension Array where Element == Transaction {
    /// Dates each record whose instant is exactly a day's first instant in `zone` as that day (how a
    /// version-2 file kept a bare date: the writer's local midnight); returns how many.
    public mutating func dateMidnightsAsDays(in zone: TimeZone) -> Int {
        var count = 0
        for i in indices where self[i].day == nil {
            let date = self[i].date
            let n = ISODate.dayNumber(of: date, in: zone)
            let start = RecordDate.day(n, in: zone)
            guard start.date == date else { continue }
            self[i].setDate(start)
            count += 1
        }
        return count
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

/// Portfolio, asset, kind, amount, price, total, fee and date: two transactions with equal keys
/// are the same trade.
public struct TradeKey: Hashable, Sendable {
    public var portfolio: String
    public var assetId: String
    public var type: TransactionType
    public var amount: Fixed18
    public var negative: Bool
    public var price: Fixed18?
    public var total: Fixed18?
    public var fee: Fixed18?
    public var millis: Int64
}

extension Transaction {
    /// The price a trade given by its total stores: `total ÷ amount`, rounded half up to 18 decimals.
    public static func price(ofTotal total: Fixed18, amount: Fixed18) throws(PortfolioError) -> Fixed18 {
        try Exact36(total).divided(by: amount).roundedToFixed18()
    }

    /// A swap: a sell of one asset and a buy of another, both with `total` = `value`, linked by the sell's id.
    public static func swap(portfolio: String, from: String, amount fromAmount: Fixed18, to: String, amount toAmount: Fixed18,
                            value: Fixed18, fee: Fixed18, currencies: (String?, String?), date: RecordDate, notes: String?)
        throws(PortfolioError) -> [Transaction] {
        let id = UUIDText.random()
        return [
            Transaction(id: id, portfolio: portfolio, type: .sell, assetId: from, amount: fromAmount,
                        price: try price(ofTotal: value, amount: fromAmount), total: value, fee: fee, currency: currencies.0,
                        date: date.date, day: date.day, notes: notes, linkedId: id),
            Transaction(portfolio: portfolio, type: .buy, assetId: to, amount: toAmount,
                        price: try price(ofTotal: value, amount: toAmount), total: value, fee: .zero, currency: currencies.1,
                        date: date.date, day: date.day, notes: notes, linkedId: id),
        ]
    }

    /// A move: a transfer-out of one portfolio and a transfer-in of another, linked by the first leg's id;
    /// the transfer-in has no price (its basis comes from the transfer-out during the replay).
    public static func move(_ assetId: String, amount: Fixed18, from: String, to: String, date: RecordDate, notes: String?) -> [Transaction] {
        let id = UUIDText.random()
        return [
            Transaction(id: id, portfolio: from, type: .transferOut, assetId: assetId, amount: amount, price: nil,
                        fee: .zero, currency: nil, date: date.date, day: date.day, notes: notes, linkedId: id),
            Transaction(portfolio: to, type: .transferIn, assetId: assetId, amount: amount, price: nil,
                        fee: nil, currency: nil, date: date.date, day: date.day, notes: notes, linkedId: id),
        ]
    }

    /// Cash from one portfolio to another: a withdrawal and a deposit, linked by the first leg's id.
    public static func cashTransfer(_ amount: Fixed18, currency: String, from: String, to: String, date: RecordDate,
                                    notes: String?) -> [Transaction] {
        let id = UUIDText.random()
        return [
            Transaction(id: id, portfolio: from, type: .withdrawal, assetId: "", amount: amount, price: nil, fee: nil,
                        currency: currency, date: date.date, day: date.day, notes: notes, linkedId: id),
            Transaction(portfolio: to, type: .deposit, assetId: "", amount: amount, price: nil, fee: nil,
                        currency: currency, date: date.date, day: date.day, notes: notes, linkedId: id),
        ]
    }
}

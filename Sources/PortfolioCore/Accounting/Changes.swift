import Foundation

/// A transaction as a person asks for it: its kind, where, what and how much, with the currency and
/// the rate as given or left to the book.
///
/// `Book.transaction(_:)` makes it a record by its kind's row (`KindRule`) and the book's rules (the
/// currency an asset trades in, the rate of its date); `add`, the cash commands, `import` and saving
/// plans all describe their records so, and nothing else builds one.
public struct RecordRequest: Sendable, Equatable {
    public var id: UUID
    public var portfolio: String
    public var type: TransactionType
    /// Empty for cash alone.
    public var assetId: String
    public var amount: Fixed18
    /// An adjustment that removes units.
    public var negative: Bool
    public var price: Fixed18?
    /// A buy's or a sell's exact value before fees; the price is then `total ÷ amount` unless given.
    public var total: Fixed18?
    public var fee: Fixed18?
    /// `nil`: the asset's own currency, else the portfolio's base.
    public var currency: String?
    /// `nil`: the rate table's, when the money is not in the base.
    public var fxRate: Fixed18?
    public var date: RecordDate
    public var notes: String?
    public var linkedId: UUID?

    public init(id: UUID = UUIDText.random(), portfolio: String, type: TransactionType, assetId: String = "", amount: Fixed18,
                negative: Bool = false, price: Fixed18? = nil, total: Fixed18? = nil, fee: Fixed18? = nil, currency: String? = nil,
                fxRate: Fixed18? = nil, date: RecordDate, notes: String? = nil, linkedId: UUID? = nil) {
        self.id = id
        self.portfolio = portfolio
        self.type = type
        self.assetId = assetId
        self.amount = amount
        self.negative = negative
        self.price = price
        self.total = total
        self.fee = fee
        self.currency = currency
        self.fxRate = fxRate
        self.date = date
        self.notes = notes
        self.linkedId = linkedId
    }

    /// A move's receiving leg: a transfer-in of a link without a price, whose basis comes from the leg that sends.
    var takesItsMoneyFromItsLink: Bool { type == .transferIn && linkedId != nil && price == nil }
}

/// A swap: FROM given up for TO in one portfolio at one money value, the fee on the disposal.
public struct SwapRequest: Sendable, Equatable {
    public var portfolio: String
    public var from: String, fromAmount: Fixed18
    public var to: String, toAmount: Fixed18
    public var value: Fixed18
    public var fee: Fixed18
    public var currency: String?
    public var fxRate: Fixed18?
    public var date: RecordDate
    public var notes: String?

    public init(portfolio: String, from: String, fromAmount: Fixed18, to: String, toAmount: Fixed18, value: Fixed18, fee: Fixed18,
                currency: String?, fxRate: Fixed18?, date: RecordDate, notes: String?) {
        (self.portfolio, self.from, self.fromAmount, self.to, self.toAmount) = (portfolio, from, fromAmount, to, toAmount)
        (self.value, self.fee, self.currency, self.fxRate, self.date, self.notes) = (value, fee, currency, fxRate, date, notes)
    }
}

/// Units of an asset moved from one portfolio to another, their basis with them.
public struct MoveRequest: Sendable, Equatable {
    public var assetId: String
    public var amount: Fixed18
    public var from: String, to: String
    /// Units of the receiving base per unit of the sending one, when the two differ (`nil`: the table's).
    public var fxRate: Fixed18?
    public var date: RecordDate
    public var notes: String?

    public init(assetId: String, amount: Fixed18, from: String, to: String, fxRate: Fixed18?, date: RecordDate, notes: String?) {
        (self.assetId, self.amount, self.from, self.to, self.fxRate, self.date, self.notes) = (assetId, amount, from, to, fxRate, date, notes)
    }
}

/// Cash of one currency converted to another inside one portfolio at `rate` units of TO per FROM,
/// the fee (in FROM) taken before converting.
public struct ExchangeRequest: Sendable, Equatable {
    public var portfolio: String
    public var amount: Fixed18
    public var from: String, to: String
    public var rate: Fixed18
    public var fee: Fixed18
    public var date: RecordDate
    public var notes: String?

    public init(portfolio: String, amount: Fixed18, from: String, to: String, rate: Fixed18, fee: Fixed18, date: RecordDate, notes: String?) {
        (self.portfolio, self.amount, self.from, self.to, self.rate, self.fee, self.date, self.notes) =
            (portfolio, amount, from, to, rate, fee, date, notes)
    }
}

/// What `edit` changes of one record (and of the other leg of its link where the link shares it).
public struct EditRequest: Sendable, Equatable {
    /// An id, a unique prefix of 4+ characters, or `@LINE`.
    public var id: String
    public var assetId: String?
    public var type: TransactionType?
    public var amount: Fixed18?
    public var price: Fixed18?
    public var total: Fixed18?
    /// A swap's value (both legs).
    public var value: Fixed18?
    public var fee: Fixed18?
    public var date: RecordDate?
    /// An empty note removes it.
    public var notes: String?
    public var currency: String?
    public var fxRate: Fixed18?

    public init(id: String) { self.id = id }
}

/// Every change of the book's transactions: the one door through which records are added, changed
/// and removed. `Book.apply` builds the legs by the kind table (`KindRule`) and the link table
/// (`LinkKind`), checks each on its own (`ValueRules`), and the store checks the whole history
/// before it commits.
public enum TransactionChange: Sendable, Equatable {
    case record(RecordRequest)
    /// A cash transfer: the request is the withdrawal from its portfolio; the deposit goes into `to`.
    case cashTransfer(RecordRequest, to: String)
    case cashExchange(ExchangeRequest)
    case swap(SwapRequest)
    case move(MoveRequest)
    case edit(EditRequest)
    /// Ids, unique prefixes or `@LINE`s: each takes the other leg of its link with it.
    case delete([String])
}

extension Book {
    /// The record `r` asks for: the fields its kind has (`KindRule`), the price of a given total, the
    /// currency (given, else the asset's, else the base) and its rate to the base (given, else the
    /// table's of its date). Its values are checked by `ValueRules` when applied.
    public func transaction(_ r: RecordRequest) throws(PortfolioError) -> Transaction {
        guard let portfolio = portfolio(named: r.portfolio) else { throw .portfolioNotFound(r.portfolio) }
        let rule = KindRule.of(r.type)
        var t = Transaction(id: r.id, portfolio: portfolio.name, type: r.type, assetId: r.assetId, amount: r.amount, negative: r.negative,
                            price: rule.price == .none ? nil : r.price, total: rule.takesTotal ? r.total : nil, fee: nil, currency: nil,
                            date: r.date.date, day: r.date.day, notes: r.notes, linkedId: r.linkedId)
        if let total = t.totalValue, t.priceValue == nil, t.amountValue.units > 0, total.units > 0 {
            t.priceValue = try Transaction.price(ofTotal: total, amount: t.amountValue)
        }
        let moneyless = r.takesItsMoneyFromItsLink
        if rule.fee != .none { t.feeValue = r.fee ?? (moneyless ? nil : .zero) }
        if rule.hasCurrency && !(moneyless && r.currency == nil) {
            let code = try currency(given: r.currency, assetId: r.assetId, portfolio: portfolio)
            t.currency = code
            t.fxRateValue = try fxRate(for: code, in: portfolio, on: r.date.date, given: r.fxRate)
        } else {
            t.fxRateValue = r.fxRate  // a move's receiving leg into another base: the rate its basis moves at
        }
        return t
    }

    /// The legs a change adds (one record, or the two legs of a link), each checked on its own.
    func legs(of change: TransactionChange, now: Date) throws -> [Transaction] {
        var legs: [Transaction]
        switch change {
        case let .record(r): legs = [try transaction(r)]
        case let .cashTransfer(r, to): legs = try cashTransferLegs(r, to: to)
        case let .cashExchange(e): legs = try exchangeLegs(e)
        case let .swap(s): legs = try swapLegs(s)
        case let .move(m): legs = try moveLegs(m)
        case .edit, .delete: return []
        }
        for leg in legs { try ValueRules.check(leg, now: now) }
        return legs
    }

    /// Applies `change`: the records it added, changed or removed, grouped by link (one group for an
    /// add). `lines` gives the store's line of each record, for `@LINE` ids.
    public mutating func apply(_ change: TransactionChange, now: Date, lines: () -> [Int] = { [] }) throws -> [[Transaction]] {
        switch change {
        case let .edit(e): return [try edit(e, now: now, lines: lines)]
        case let .delete(ids): return try delete(ids, lines: lines)
        default:
            let legs = try legs(of: change, now: now)
            add(legs)
            return [legs]
        }
    }

    private func swapLegs(_ s: SwapRequest) throws -> [Transaction] {
        guard let portfolio = portfolio(named: s.portfolio) else { throw PortfolioError.portfolioNotFound(s.portfolio) }
        if s.value.units == 0 { throw PortfolioError.refused("A swap's --value must be greater than zero") }
        if s.fromAmount.units == 0 || s.toAmount.units == 0 { throw PortfolioError.amountNotPositive }
        let c1 = try currency(given: s.currency, assetId: s.from, portfolio: portfolio)
        let c2 = try currency(given: s.currency, assetId: s.to, portfolio: portfolio)
        var legs = try Transaction.swap(portfolio: portfolio.name, from: s.from, amount: s.fromAmount, to: s.to, amount: s.toAmount,
                                        value: s.value, fee: s.fee, currencies: (c1, c2), date: s.date, notes: s.notes)
        for i in legs.indices {
            legs[i].fxRateValue = try fxRate(for: legs[i].currency ?? portfolio.baseCurrency, in: portfolio, on: s.date.date, given: s.fxRate)
        }
        return legs
    }

    private func moveLegs(_ m: MoveRequest) throws -> [Transaction] {
        guard let source = portfolio(named: m.from) else { throw PortfolioError.portfolioNotFound(m.from) }
        guard let target = portfolio(named: m.to) else { throw PortfolioError.portfolioNotFound(m.to) }
        if source.name == target.name { throw PortfolioError.refused("--from and --to are both '\(TextEscaping.escaped(source.name))'") }
        var legs = Transaction.move(m.assetId, amount: m.amount, from: source.name, to: target.name, date: m.date, notes: m.notes)
        // Into a portfolio of another base, the basis that moves converts at the move date's rate.
        if source.baseCurrency != target.baseCurrency {
            legs[1].fxRateValue = try fxRate(for: source.baseCurrency, in: target, on: m.date.date, given: m.fxRate)
        } else if m.fxRate != nil {
            throw PortfolioError.misusedOption("--fx-rate is for a move between two base currencies; '\(TextEscaping.escaped(source.name))' and "
                + "'\(TextEscaping.escaped(target.name))' are both in \(source.baseCurrency)")
        }
        return legs
    }

    private func cashTransferLegs(_ out: RecordRequest, to: String) throws -> [Transaction] {
        guard let target = portfolio(named: to) else { throw PortfolioError.portfolioNotFound(to) }
        if target.name == out.portfolio {
            throw PortfolioError.refused("A cash transfer needs two different portfolios (both are '\(TextEscaping.escaped(target.name))')")
        }
        guard target.trackCash else { throw PortfolioError.cashNotTracked(target.name) }
        let withdrawal = try transaction(out)
        let currency = withdrawal.currency ?? target.baseCurrency
        var legs = Transaction.cashTransfer(withdrawal.amountValue, currency: currency, from: withdrawal.portfolio, to: target.name,
                                            date: out.date, notes: withdrawal.notes)
        // Each leg at the rate to its own portfolio's base (none where the cash is in that base).
        legs[0].fxRateValue = withdrawal.fxRateValue
        legs[1].fxRateValue = try fxRate(for: currency, in: target, on: out.date.date)
        return legs
    }

    private func exchangeLegs(_ e: ExchangeRequest) throws -> [Transaction] {
        guard let p = portfolio(named: e.portfolio) else { throw PortfolioError.portfolioNotFound(e.portfolio) }
        let (from, to, rate) = (e.from, e.to, e.rate)
        if from == to { throw PortfolioError.refused("An exchange needs two different currencies (both are \(from))") }
        if rate.units == 0 { throw PortfolioError.refused("Rate must be greater than zero") }
        guard e.fee < e.amount else {
            throw PortfolioError.refused("The fee (\(e.fee.text) \(from)) must be less than the amount (\(e.amount.text) \(from))")
        }
        let one = Fixed18(units: Fixed18.scale)
        let received = try (Exact36(e.amount) - Exact36(e.fee)).multiplied(by: rate, dividedBy: one).roundedToFixed18()
        // Each leg's rate to the base: from the exchange's rate when one side is the base, else the table's.
        func baseRate(of currency: String, implied: () throws -> Fixed18) throws -> Fixed18? {
            if currency == p.baseCurrency { return nil }
            if from == p.baseCurrency || to == p.baseCurrency { return try implied() }
            return try fxRate(for: currency, in: p, on: e.date.date)
        }
        let fromRate = try baseRate(of: from) { rate }  // TO is the base: base per FROM is R
        let toRate = try baseRate(of: to) { try Exact36(one).divided(by: rate).roundedToFixed18() }  // FROM is the base: 1 ÷ R
        let id = UUIDText.random()
        return [
            Transaction(id: id, portfolio: p.name, type: .withdrawal, assetId: "", amount: e.amount, price: nil, fee: nil,
                        currency: from, fxRate: fromRate, date: e.date.date, day: e.date.day, notes: e.notes, linkedId: id),
            Transaction(portfolio: p.name, type: .deposit, assetId: "", amount: received, price: nil, fee: nil,
                        currency: to, fxRate: toRate, date: e.date.date, day: e.date.day, notes: e.notes, linkedId: id),
        ]
    }

    /// `edit`: the record `e.id` names with the changes asked, by the rules `add` applies, and what the
    /// legs of its link share changed on both (a move's asset and amount, a cash transfer's amount,
    /// a swap's value, the date and the note).
    private mutating func edit(_ e: EditRequest, now: Date, lines: () -> [Int]) throws -> [Transaction] {
        let index = try index(matching: e.id, lines: lines)
        let legs = self.legs(of: index)
        let linked = legs.count > 1
        if linked && e.type != nil { throw PortfolioError.linkedLeg("The kind of a swap's or a move's leg cannot change; delete it and add it again") }
        let swap = legs.count == 2 && LinkKind.of(transactions[legs[0]], transactions[legs[1]])?.name == "swap"
        if e.value != nil && !swap {
            throw PortfolioError.misusedOption("--value is a swap's value; use --price or --total on a single trade")
        }
        var t = transactions[index]
        if let asset = e.assetId { t.assetId = asset }
        if let type = e.type {
            t.type = type
            let rule = KindRule.of(type)
            if rule.price == .none { t.priceValue = nil }
            if !rule.takesTotal { t.totalValue = nil }
            if rule.fee == .none { t.feeValue = nil } else if t.feeValue == nil { t.feeValue = .zero }
            if !rule.hasCurrency { t.currency = nil }  // one that gains money takes it as `add` does, below
        }
        if let amount = e.amount { t.amountValue = amount }
        if let price = e.price { t.priceValue = price; t.totalValue = nil }
        if let total = e.total { t.totalValue = total }
        if let fee = e.fee {
            if t.rule.fee == .none { throw PortfolioError.misusedOption("a \(t.type.rawValue) has no fee") }
            t.feeValue = fee
        }
        // The money's currency and its rate to the base, by the rules 'add' applies (a registered asset's own currency;
        // a rate only away from the base, the table's when none is given).
        let moneyless = linked && t.type == .transferIn && t.priceValue == nil
        if moneyless && (e.currency != nil || e.fxRate != nil) {
            // A move's receiving leg carries the basis that left, in no currency of its own: only the rate
            // between the two bases (units of this portfolio's base per unit of the sending one's) may change.
            if e.currency != nil { throw PortfolioError.misusedOption("a move's receiving leg takes its money from the leg that sends; give --fx-rate alone") }
            if let fxRate = e.fxRate {
                guard fxRate.units > 0 else { throw PortfolioError.priceNotPositive }
                t.fxRateValue = fxRate
            }
        } else if !moneyless, e.currency != nil || e.fxRate != nil || e.assetId != nil || e.type != nil, t.rule.hasCurrency,
                  let portfolio = portfolio(named: t.portfolio) {
            // A new asset, or money where there was none, is in the asset's currency unless one is given.
            let code = try currency(given: e.currency ?? (e.assetId != nil ? nil : t.currency), assetId: t.assetId, portfolio: portfolio)
            let keep = e.currency == nil && e.fxRate == nil && code == t.currency ? t.fxRateValue : nil
            t.currency = code
            t.fxRateValue = try keep ?? fxRate(for: code, in: portfolio, on: e.date?.date ?? t.date, given: e.fxRate)
        } else if e.currency != nil || e.fxRate != nil {
            throw PortfolioError.misusedOption("a \(t.type.rawValue) has no money, so no currency or rate")
        }
        var changed: [Transaction] = []
        let link = legs.count == 2 ? LinkKind.of(transactions[legs[0]], transactions[legs[1]]) : nil
        for i in legs {
            var leg = i == index ? t : transactions[i]
            if i != index, let link {
                if link.sameAsset == true, let asset = e.assetId { leg.assetId = asset }
                if link.sameAmount, let amount = e.amount { leg.amountValue = amount }
            }
            if let date = e.date { leg.setDate(date) }
            if let note = e.notes { leg.notes = note.isEmpty ? nil : note }
            if let value = e.value { leg.totalValue = value }
            if let total = leg.totalValue, leg.amountValue.units > 0, total.units > 0 {
                leg.priceValue = try Transaction.price(ofTotal: total, amount: leg.amountValue)
            }
            try ValueRules.check(leg, now: now, dayAsStored: e.date == nil)
            replace(at: i, with: leg)
            changed.append(leg)
        }
        return changed
    }

    /// `delete`: the records `ids` name, each with the other leg of its link, grouped by link.
    private mutating func delete(_ ids: [String], lines: () -> [Int]) throws -> [[Transaction]] {
        var indices: [Int] = []
        var groups: [[Transaction]] = []
        for text in ids {
            let i = try index(matching: text, lines: lines)
            if indices.contains(i) { continue }
            let legs = self.legs(of: i)
            indices += legs.filter { !indices.contains($0) }
            groups.append(legs.map { transactions[$0] })
        }
        delete(at: Set(indices))
        return groups
    }
}

extension TransactionChange {
    /// Whether it edits or deletes stored records (every other change only adds new ones).
    public var changesStoredRecords: Bool {
        switch self {
        case .edit, .delete: true
        default: false
        }
    }
}

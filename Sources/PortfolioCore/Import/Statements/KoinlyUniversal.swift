import Foundation

/// Koinly's universal CSV (`import --format koinly`): one row per event, columns found by name in
/// any order: `Date, Sent Amount, Sent Currency, Received Amount, Received Currency, Fee Amount,
/// Fee Currency, Net Worth Amount, Net Worth Currency, Label` (or `Tag`), `Description, TxHash`.
/// Dates are UTC (`2024-09-26 19:59 UTC`, `2024-09-26 19:59:41`). The fee is paid on top of what
/// was sent or received, in its own currency.
///
/// - Sent and received (a trade): money (fiat, or a USD stablecoin at par) against crypto is a buy
///   or a sell with the money side as the exact total; a fee in that money is the fee, a fee in the
///   crypto is paid in units (a buy receives fewer, a sell gives more), a fee in anything else is
///   counted among the fees not counted. Money against money is a currency conversion. Crypto
///   against crypto is a swap valued at the row's net worth when that is in money, else skipped.
/// - Received only: labels `reward`, `airdrop`, `mining`, `income`, `other income`, `staking`,
///   `loan interest`, `lending interest`, `interest`, `cashback` are rewards valued at the net worth
///   (price = net worth ÷ amount; 0 when the row gives none); in money, interest on cash. Anything
///   else is a deposit: money to cash, crypto a transfer-in at the net worth (price = net worth ÷
///   amount), or at a cost of 0 with a note when the row gives none.
/// - Sent only: `cost`, `margin fee`, `interest payment`, `fee`, `lost`, `stolen` are units gone
///   for nothing (a `fee`: their basis is a realized loss; in money, an expense); `gift`,
///   `donation`, `spend` with a net worth are a spend at that value, without one skipped and
///   counted. Anything else is a withdrawal: money from cash, crypto a transfer-out, its fee in units.
/// - `swap`, `liquidity in`, `liquidity out`, `realized gain` and rows that move nothing are
///   skipped and counted.
/// The id is the TxHash with what the row says (one transaction may have several rows), numbered only
/// among rows that are wholly identical: a re-import of an overlapping file finds the rows again.
extension ExchangeImport.Mapper {
    static let koinlyRewardLabels: Set<String> = [
        "reward", "airdrop", "mining", "income", "other income", "staking", "loan interest", "lending interest", "interest", "cashback",
    ]
    static let koinlyFeeLabels: Set<String> = ["cost", "margin fee", "interest payment", "fee", "lost", "stolen"]
    static let koinlyGiftLabels: Set<String> = ["gift", "donation", "spend"]
    static let koinlySkipLabels: Set<String> = ["swap", "liquidity in", "liquidity out", "realized gain", "margin trade"]

    mutating func koinly(_ bytes: [UInt8]) throws(ImportFailure) {
        let t = try StatementTable.read(bytes, required: [["Date"], ["Sent Amount"], ["Received Amount"]], what: "Koinly universal CSV")
        var seen = RowOccurrences()
        for r in t.records {
            let hash = t.cell(r, "TxHash", "Tx Hash", "Transaction Hash")
            let rowID = id(seen.key(RowOccurrences.rowKey(hash: hash, r.fields.map(\.trimmedSpaces))))
            let label = t.cell(r, "Label", "Tag").lowercased()
            let dateText = t.cell(r, "Date", "Date (UTC)")
            guard let date = Self.utcTimestamp(dateText) else {
                problems.append("line \(r.line): Date '\(TextEscaping.escaped(dateText))' is not a Koinly date (2024-09-26 19:59 UTC)")
                continue
            }
            func amount(_ column: String) -> Decimal?? {
                let text = t.cell(r, column)
                if text.isEmpty { return .some(nil) }
                guard let v = number(text, line: r.line, column: column) else { return nil }
                return .some(v < 0 ? -v : v)
            }
            guard let sentAmount = amount("Sent Amount"), let gotAmount = amount("Received Amount"), let feeAmount = amount("Fee Amount"),
                  let worthAmount = amount("Net Worth Amount") else { continue }
            func leg(_ value: Decimal?, _ currency: String) -> (Decimal, String)? {
                guard let value, value != 0, !currency.isEmpty else { return nil }
                return (value, currency.uppercased())
            }
            let sent = leg(sentAmount, t.cell(r, "Sent Currency")), got = leg(gotAmount, t.cell(r, "Received Currency"))
            let fee = leg(feeAmount, t.cell(r, "Fee Currency"))
            let worth = leg(worthAmount, t.cell(r, "Net Worth Currency")).flatMap { v in ExchangeImport.moneyCurrency(v.1).map { (v.0, $0) } }
            let description = t.cell(r, "Description")
            let notes = "Koinly" + (label.isEmpty ? "" : " \(label)") + (description.isEmpty ? "" : " \(description)") + (hash.isEmpty ? "" : " \(hash)")
            if Self.koinlySkipLabels.contains(label) { skip(label); continue }
            let event = InterchangeEvent(line: r.line, date: date, notes: notes, id: rowID, sent: sent, got: got, fee: fee, worth: worth)
            switch (sent, got) {
            case (.some, .some):
                interchangeTrade(event)
            case let (nil, .some(g)):
                if Self.koinlyRewardLabels.contains(label) {
                    interchangeReward(event, asset: g, what: label)
                } else {
                    interchangeDeposit(event, asset: g)
                }
            case let (.some(s), nil):
                if Self.koinlyFeeLabels.contains(label) {
                    interchangeLoss(event, asset: s, what: label)
                } else if Self.koinlyGiftLabels.contains(label) {
                    interchangeSpend(event, asset: s, what: label)
                } else {
                    interchangeWithdrawal(event, asset: s)
                }
            case (nil, nil):
                skip("row without an amount")
            }
        }
    }
}

/// Counts rows by a key, so identical rows (partial fills of one order) keep ids of their own. The
/// one convention of the crypto presets: the first occurrence is the key, the next ones `#2`, `#3` …
struct RowOccurrences {
    var counts: [String: Int] = [:]

    /// The key of a row: its transaction hash (when it has one) with every cell it has. A hash alone
    /// is no key: one transaction may have several rows (a withdrawal and its `cost`), and a wider
    /// export listing another of them first would shift the ids of the rest.
    static func rowKey(hash: String, _ cells: [String]) -> String {
        (hash.isEmpty ? "row:" : "tx:" + hash + "|") + cells.joined(separator: "\u{1F}")
    }

    /// `key` the first time, `key#2` the second …
    mutating func key(_ key: String) -> String {
        counts[key, default: 0] += 1
        let n = counts[key] ?? 1
        return n == 1 ? key : key + "#\(n)"
    }
}

/// One row of an interchange file (Koinly, CoinTracking, Crypto.com): what left, what came in,
/// the fee, and what it was worth in money when the file says.
struct InterchangeEvent {
    var line: Int
    var date: String
    var notes: String
    var id: String
    var sent: (Decimal, String)?
    var got: (Decimal, String)?
    var fee: (Decimal, String)?
    var worth: (Decimal, String)?
}

extension ExchangeImport.Mapper {
    /// The fee of `e` when it is in `currency` (0 otherwise).
    func feeIn(_ e: InterchangeEvent, _ currency: String) -> Decimal {
        guard let fee = e.fee else { return 0 }
        if fee.1 == currency { return fee.0 }
        // A dollar stablecoin and the dollar are one money (at par).
        if let a = ExchangeImport.moneyCurrency(fee.1), a == ExchangeImport.moneyCurrency(currency) { return fee.0 }
        return 0
    }

    /// Counts a fee in none of `currencies` among the fees not counted.
    mutating func countOtherFee(_ e: InterchangeEvent, _ currencies: [String]) {
        guard let fee = e.fee, fee.0 != 0 else { return }
        if currencies.contains(fee.1) { return }
        if let money = ExchangeImport.moneyCurrency(fee.1), currencies.compactMap(ExchangeImport.moneyCurrency).contains(money) { return }
        feesNotCounted[fee.1, default: 0] += 1
    }

    /// Sets the id of the row `add` kept, when it kept one.
    mutating func addWithID(_ rowID: String, _ body: (inout Self) -> Void) {
        let count = rows.count
        body(&self)
        if rows.count > count { rows[rows.count - 1].fields[.id] = rowID }
    }

    /// What left for what came in: a buy, a sell, a conversion, a swap, or skipped.
    mutating func interchangeTrade(_ e: InterchangeEvent) {
        guard let (spentAmount, spent) = e.sent, let (gotAmount, got) = e.got else { return }
        guard spent != got else { skip("trade (into the same asset)"); return }
        let spentMoney = ExchangeImport.moneyCurrency(spent), gotMoney = ExchangeImport.moneyCurrency(got)
        switch (spentMoney, gotMoney) {
        case let (.some(currency), nil):
            money = currency
            countOtherFee(e, [spent, got])
            addWithID(e.id) { m in
                m.add(line: e.line, type: "buy", coin: got, amount: gotAmount - m.feeIn(e, got), price: spentAmount / gotAmount,
                      fee: m.feeIn(e, spent), total: spentAmount, date: e.date, notes: e.notes)
            }
        case let (nil, .some(currency)):
            money = currency
            countOtherFee(e, [spent, got])
            addWithID(e.id) { m in
                m.add(line: e.line, type: "sell", coin: spent, amount: spentAmount + m.feeIn(e, spent), price: gotAmount / spentAmount,
                      fee: m.feeIn(e, got), total: gotAmount, date: e.date, notes: e.notes)
            }
        case let (.some(from), .some(to)):
            countOtherFee(e, [spent, got])
            cashExchange(line: e.line, from: (spentAmount + feeIn(e, spent), from), to: (gotAmount - feeIn(e, got), to), date: e.date,
                         notes: e.notes, id: e.id)
        case (nil, nil):
            guard let (value, currency) = e.worth else { skip("crypto-to-crypto"); return }
            money = currency
            countOtherFee(e, [spent, got, currency])
            swap(line: e.line, from: (spentAmount + feeIn(e, spent), spent), to: (gotAmount - feeIn(e, got), got), value: value,
                 fee: feeIn(e, currency), date: e.date, notes: e.notes, id: e.id)
        }
    }

    /// A swap of one crypto for another valued at `value` in `money`, two linked legs (as `add swap`),
    /// the fee on the disposal.
    mutating func swap(line: Int, from: (Decimal, String), to: (Decimal, String), value: Decimal, fee: Decimal, date: String, notes: String,
                       id rowID: String) {
        guard let fromAmount = Self.fixed(from.0), let toAmount = Self.fixed(to.0), let total = Self.fixed(value), let feeValue = Self.fixed(fee),
              fromAmount.units > 0, toAmount.units > 0, total.units > 0,
              let sellPrice = try? Exact36(total).divided(by: fromAmount).roundedToFixed18(),
              let buyPrice = try? Exact36(total).divided(by: toAmount).roundedToFixed18(), sellPrice.units > 0, buyPrice.units > 0 else {
            problems.append("line \(line): a swap of \(DecimalFormatting.exact(from.0)) \(from.1) for \(DecimalFormatting.exact(to.0)) \(to.1) "
                + "valued at \(DecimalFormatting.exact(value)) has an amount or a price that is zero or too large")
            return
        }
        keep(line: line, kind: "swap", [
            ["id": rowID, "type": "sell", "asset": from.1, "amount": fromAmount.text, "price": sellPrice.text, "total": total.text,
             "fee": feeValue.text, "date": date, "notes": notes, "linkedId": rowID],
            ["id": id(rowID + ":in"), "type": "buy", "asset": to.1, "amount": toAmount.text, "price": buyPrice.text, "total": total.text,
             "fee": "0", "date": date, "notes": notes, "linkedId": rowID],
        ])
    }

    /// Units earned, valued at the row's worth when it gives one (else 0); money earned is interest.
    mutating func interchangeReward(_ e: InterchangeEvent, asset: (Decimal, String), what: String) {
        let (amount, code) = asset
        let net = amount - feeIn(e, code)
        countOtherFee(e, [code])
        if let currency = ExchangeImport.moneyCurrency(code) {
            cash(line: e.line, type: "interest", amount: net, currency: currency, date: e.date, notes: e.notes, id: e.id)
            return
        }
        guard let (value, currency) = e.worth else {
            reward(line: e.line, asset: code, amount: net, date: e.date, notes: e.notes, id: e.id)
            return
        }
        guard let a = Self.fixed(net), a.units > 0, let v = Self.fixed(value),
              let price = try? Exact36(v).divided(by: a).roundedToFixed18() else {
            if net <= 0 { skip("\(what.isEmpty ? "reward" : what) (zero)") } else { tooLarge(line: e.line, "reward") }
            return
        }
        keep(line: e.line, kind: "reward", [[
            "id": e.id, "type": "reward", "asset": code, "amount": a.text, "price": price.text, "currency": currency, "date": e.date,
            "notes": e.notes,
        ]])
    }

    /// Money into cash, or crypto in from elsewhere at the row's worth when it gives one (price =
    /// worth ÷ the units kept), else at a cost of 0.
    mutating func interchangeDeposit(_ e: InterchangeEvent, asset: (Decimal, String)) {
        let (amount, code) = asset
        countOtherFee(e, [code])
        let net = amount - feeIn(e, code)
        if let currency = ExchangeImport.moneyCurrency(code) {
            cash(line: e.line, type: "deposit", amount: net, currency: currency, date: e.date, notes: e.notes, id: e.id)
        } else if let (value, currency) = e.worth {
            guard let a = Self.fixed(net), a.units > 0, let v = Self.fixed(value), v.units > 0,
                  let price = try? Exact36(v).divided(by: a).roundedToFixed18() else {
                if net <= 0 { skip("transfer-in (zero)") } else { tooLarge(line: e.line, "transfer-in") }
                return
            }
            keep(line: e.line, kind: "transfer-in", [[
                "id": e.id, "type": "transfer-in", "asset": code, "amount": a.text, "price": price.text, "fee": "0", "currency": currency,
                "date": e.date, "notes": e.notes + "; cost: the value in the file",
            ]])
        } else {
            transferIn(line: e.line, asset: code, amount: net, date: e.date, notes: e.notes, id: e.id)
        }
    }

    /// Money out of cash, or crypto sent elsewhere with its fee in units.
    mutating func interchangeWithdrawal(_ e: InterchangeEvent, asset: (Decimal, String)) {
        let (amount, code) = asset
        countOtherFee(e, [code])
        if let currency = ExchangeImport.moneyCurrency(code) {
            cash(line: e.line, type: "withdrawal", amount: amount + feeIn(e, code), currency: currency, date: e.date, notes: e.notes, id: e.id)
        } else {
            transferOut(line: e.line, asset: code, amount: amount, fee: feeIn(e, code), date: e.date, notes: e.notes, id: e.id)
        }
    }

    /// Units gone for nothing (a cost, a fee, lost, stolen): a `fee`, their basis a realized loss; money is an expense.
    mutating func interchangeLoss(_ e: InterchangeEvent, asset: (Decimal, String), what: String) {
        let (amount, code) = asset
        countOtherFee(e, [code])
        let total = amount + feeIn(e, code)
        if let currency = ExchangeImport.moneyCurrency(code) {
            cash(line: e.line, type: "expense", amount: total, currency: currency, date: e.date, notes: e.notes, id: e.id)
            return
        }
        guard let a = Self.fixed(total), a.units > 0 else { tooLarge(line: e.line, what); return }
        keep(line: e.line, kind: "fee", [["id": e.id, "type": "fee", "asset": code, "amount": a.text, "date": e.date, "notes": e.notes]])
    }

    /// Units given away or paid for something: a spend at the row's worth; without one skipped, counted.
    mutating func interchangeSpend(_ e: InterchangeEvent, asset: (Decimal, String), what: String) {
        let (amount, code) = asset
        if let currency = ExchangeImport.moneyCurrency(code) {
            countOtherFee(e, [code])
            cash(line: e.line, type: "withdrawal", amount: amount + feeIn(e, code), currency: currency, date: e.date, notes: e.notes, id: e.id)
            return
        }
        guard let (value, currency) = e.worth else { skip("\(what) (no value in the file)"); return }
        money = currency
        countOtherFee(e, [code, currency])
        let units = amount + feeIn(e, code)
        let count = rows.count
        add(line: e.line, type: "spend", coin: code, amount: units, price: value / units, fee: feeIn(e, currency), total: value,
            date: e.date, notes: e.notes)
        if rows.count > count {
            rows[rows.count - 1].fields[.id] = e.id
            rows[rows.count - 1].fields[.currency] = currency
        }
    }
}

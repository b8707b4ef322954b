import Foundation

/// Revolut's crypto account statement (`import --format revolut` when the header is
/// `Symbol,Type,Quantity,Price,Value,Fees,Date`; the trading statement is read by its mapping). One
/// row per event; money is written with its currency, a symbol before or a code after, and
/// thousands separators (`"89,162.28 SEK"`, `€10.00`).
///
/// Dates are English and local (`"May 5, 2020, 10:10:57 PM"`): the file names no zone, so they are
/// read in the zone `--utc-offset` gives, else as UTC (a time may then be off by the user's offset;
/// the day rarely).
///
/// - `Buy` and `Sell` are a buy or a sale of the coin for `Value` (the exact total) with `Fees` as the
///   fee, in the currency the money strings name (SEK, EUR …); a fee in another currency is counted.
/// - `Send` is a transfer-out, `Receive` a transfer-in at the row's price as its cost.
/// - `Stake` and `Unstake` move the coin within Revolut: counted, not imported.
/// - `Staking reward` is a reward at the row's price, or at 0 when the row has none.
/// Coins are named by symbol and resolve as any import's (nothing is registered). The id is what the
/// row says, numbered among identical rows.
extension ExchangeImport.Mapper {
    static let revolutCryptoColumns = [["Symbol"], ["Type"], ["Quantity"], ["Price"], ["Value"], ["Fees"], ["Date"]]

    /// A Revolut crypto statement's rows, when `bytes` has its header; `nil` otherwise.
    static func revolutCrypto(_ bytes: [UInt8], options: StatementOptions) throws(ImportFailure) -> PresetRows? {
        guard let table = try? StatementTable.read(bytes, required: revolutCryptoColumns, what: "Revolut crypto statement") else { return nil }
        var m = ExchangeImport.Mapper()
        m.tracksCash = options.tracksCash
        m.source = StatementFormat.revolut.rawValue
        m.portfolio = options.portfolio
        m.revolutCrypto(table, offset: options.utcOffsetSeconds)
        if !m.problems.isEmpty { throw ImportFailure(problems: m.problems) }
        return m.result
    }

    static let revolutSymbols: [(String, String)] = [("US$", "USD"), ("€", "EUR"), ("£", "GBP"), ("$", "USD"), ("¥", "JPY"), ("₹", "INR"), ("zł", "PLN")]

    /// `"89,162.28 SEK"`, `€35,761.54`, `-$1.00`, `"0,24 €"` as (value, currency); `nil` when not money.
    static func revolutMoney(_ raw: String) -> (Decimal, String)? {
        var text = raw.replacingOccurrences(of: "\u{00A0}", with: " ").replacingOccurrences(of: "\u{202F}", with: " ").trimmedSpaces
        var negative = false
        if text.hasPrefix("-") { negative = true; text = String(text.dropFirst()).trimmedSpaces }
        var currency = ""
        let words = text.split(separator: " ").map(String.init)
        if words.count == 2, let code = words.first(where: { $0.count == 3 && $0.allSatisfy { $0.isASCII && $0.isLetter } }) {
            currency = code.uppercased()
            text = words.first { $0 != code } ?? ""
        } else {
            for (symbol, code) in revolutSymbols {
                if text.hasPrefix(symbol) { currency = code; text = String(text.dropFirst(symbol.count)).trimmedSpaces; break }
                if text.hasSuffix(symbol) { currency = code; text = String(text.dropLast(symbol.count)).trimmedSpaces; break }
            }
        }
        if text.hasPrefix("-") { negative = true; text = String(text.dropFirst()) }
        guard !currency.isEmpty, let value = revolutNumber(text) else { return nil }
        return (negative ? -value : value, currency)
    }

    /// A number with thousands commas (`89,162.28`), or a lone decimal comma (`0,76672417`).
    static func revolutNumber(_ text: String) -> Decimal? {
        guard !text.isEmpty, text.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == "," || $0 == ".") }) else { return nil }
        return StatementNumber.parse(text, decimalComma: StatementNumber.usesDecimalComma([text]))
    }

    static let revolutMonths = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// `May 5, 2020, 10:10:57 PM` (or `Sept 5, 2020, 9:10 AM`) as the instant of that local time at
    /// `offset` seconds from UTC (UTC when `nil`).
    static func revolutDate(_ raw: String, offset: Int? = nil) -> String? {
        let text = raw.replacingOccurrences(of: "\u{202F}", with: " ").replacingOccurrences(of: "\u{00A0}", with: " ")
        let parts = text.split(separator: ",").map { String($0).trimmedSpaces }
        guard parts.count == 3 else { return nil }
        let monthDay = parts[0].split(separator: " ")
        guard monthDay.count == 2, let m = revolutMonths.firstIndex(of: String(monthDay[0].prefix(3)).lowercased()),
              let day = Int(monthDay[1]), let year = Int(parts[1]), parts[1].count == 4 else { return nil }
        let clock = parts[2].split(separator: " ")
        guard clock.count == 2 else { return nil }
        let hms = clock[0].split(separator: ":").map { Int($0) }
        guard (2...3).contains(hms.count), let h = hms[0], let mi = hms[1], (1...12).contains(h) else { return nil }
        let s = hms.count == 3 ? hms[2] : 0
        guard let s else { return nil }
        let marker = clock[1].uppercased()
        guard marker == "AM" || marker == "PM" else { return nil }
        let hour = h % 12 + (marker == "PM" ? 12 : 0)
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let iso = "\(year)-\(two(m + 1))-\(two(day)) \(two(hour)):\(two(mi)):\(two(s))"
        return DateFormat("yyyy-MM-dd HH:mm:ss")?.recordText(iso, in: TimeZone(secondsFromGMT: offset ?? 0) ?? .current)
    }

    mutating func revolutCrypto(_ table: StatementTable, offset: Int? = nil) {
        var seen = RowOccurrences()
        for r in table.records {
            let type = table.cell(r, "Type").lowercased()
            let coin = table.cell(r, "Symbol").uppercased()
            let dateText = table.cell(r, "Date")
            let rowID = id("crypto:" + seen.key(RowOccurrences.rowKey(hash: "", r.fields.map(\.trimmedSpaces))))
            let notes = "Revolut \(table.cell(r, "Type")) \(coin)"
            switch type {
            case "buy", "sell", "send", "receive", "staking reward": break
            case "stake", "unstake": skip("\(type) (an internal move into or out of staking)"); continue
            default: skip(type.isEmpty ? "row without a type" : type); continue
            }
            guard let date = Self.revolutDate(dateText, offset: offset) else {
                problems.append("line \(r.line): Date '\(TextEscaping.shortened(dateText))' is not a Revolut date (May 5, 2020, 10:10:57 PM)")
                continue
            }
            guard !coin.isEmpty else { skip("\(type) (no symbol)"); continue }
            let quantityText = table.cell(r, "Quantity")
            guard let q = Self.revolutNumber(quantityText.hasPrefix("-") ? String(quantityText.dropFirst()) : quantityText) else {
                problems.append("line \(r.line): Quantity '\(TextEscaping.escaped(quantityText))' is not a number")
                continue
            }
            /// A money cell, `nil` (a problem) when written otherwise; empty is `(0, "")`.
            func money(_ column: String) -> (Decimal, String)? {
                let text = table.cell(r, column)
                if text.isEmpty { return (0, "") }
                guard let m = Self.revolutMoney(text) else {
                    problems.append("line \(r.line): \(column) '\(TextEscaping.escaped(text))' is not an amount of money (89,162.28 SEK, €10.00)")
                    return nil
                }
                guard CurrencyCode.isSupported(m.1) else {
                    problems.append("line \(r.line): \(column) '\(TextEscaping.escaped(text))' is in \(m.1), a currency bitpal does not support")
                    return nil
                }
                return (m.0 < 0 ? -m.0 : m.0, m.1)
            }
            guard let price = money("Price"), let value = money("Value"), let fee = money("Fees") else { continue }
            switch type {
            case "buy", "sell":
                let currency = [value.1, price.1, fee.1].first { !$0.isEmpty } ?? ""
                guard !currency.isEmpty else { skip("\(type) (no value)"); continue }
                var feeAmount = fee.0
                if !fee.1.isEmpty, fee.1 != currency, fee.0 != 0 { feesNotCounted[fee.1, default: 0] += 1; feeAmount = 0 }
                self.money = currency
                let before = rows.count
                add(line: r.line, type: type, coin: coin, amount: q, price: price.0 > 0 ? price.0 : (q > 0 ? value.0 / q : 0), fee: feeAmount,
                    total: value.0 > 0 ? value.0 : nil, date: date, notes: notes)
                if rows.count > before { rows[rows.count - 1].fields[.id] = rowID }
            case "send":
                if fee.0 != 0 { feesNotCounted[fee.1, default: 0] += 1 }
                transferOut(line: r.line, asset: coin, amount: q, fee: 0, date: date, notes: notes, id: rowID)
            case "receive":
                guard price.0 > 0, let a = Self.fixed(q), let p = Self.fixed(price.0), a.units > 0 else {
                    transferIn(line: r.line, asset: coin, amount: q, date: date, notes: notes, id: rowID)
                    continue
                }
                keep(line: r.line, kind: "transfer-in", [[
                    "id": rowID, "type": "transfer-in", "asset": coin, "amount": a.text, "price": p.text, "fee": "0", "currency": price.1,
                    "date": date, "notes": notes + "; cost: the price at receipt",
                ]])
            default:  // staking reward
                guard price.0 > 0, let a = Self.fixed(q), let p = Self.fixed(price.0), a.units > 0 else {
                    reward(line: r.line, asset: coin, amount: q, date: date, notes: notes, id: rowID)
                    continue
                }
                keep(line: r.line, kind: "reward", [[
                    "id": rowID, "type": "reward", "asset": coin, "amount": a.text, "price": p.text, "currency": price.1, "date": date, "notes": notes,
                ]])
            }
        }
    }
}

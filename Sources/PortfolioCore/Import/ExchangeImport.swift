import Foundation

/// Exchanges whose trade-history CSV exports `bitpal import --format` understands.
public enum Exchange: String, CaseIterable, Sendable {
    case coinbase, binance, kraken
}

/// Rows mapped from an exchange export, what they became, and what was left out, counted by kind.
public struct PresetRows: Sendable {
    public var rows: [ImportRow]
    /// (kind, count), e.g. ("send", 3), ("crypto-to-crypto", 1); nothing disappears silently.
    public var skipped: [(String, Int)]
    /// (coin, count): imported rows whose fee was paid in that coin and is left out (e.g. BNB).
    public var feesNotCounted: [(String, Int)]
    /// (what a row became, count), in `PresetRows.kindOrder`: `buy`, `sell`, `transfer-in`,
    /// `transfer-out`, `reward`, `swap` (a swap is one row of the file and two linked legs).
    public var kinds: [(String, Int)]
    /// Stocks, ETFs and funds the file names, registered on the way (those the book has are kept as they are).
    public var assets: [Asset] = []

    public init(rows: [ImportRow], skipped: [(String, Int)], feesNotCounted: [(String, Int)] = [], kinds: [(String, Int)] = []) {
        self.rows = rows
        self.skipped = skipped
        self.feesNotCounted = feesNotCounted
        self.kinds = kinds
    }

    /// The order kinds are counted in.
    public static let kindOrder = ["buy", "sell", "transfer-in", "transfer-out", "reward", "swap", "dividend", "interest", "deposit",
                                   "withdrawal", "expense", "fee", "spend", "cash exchange"]

    /// What each kind became, for people: `12 buys, 3 transfers in, 2 rewards, 1 swap; skipped: 1 crypto-to-crypto trade`.
    public var summary: String {
        func plural(_ n: Int, _ one: String, _ many: String) -> String { "\(n) \(n == 1 ? one : many)" }
        let made = kinds.map { kind, n -> String in
            switch kind {
            case "transfer-in": plural(n, "transfer in", "transfers in")
            case "transfer-out": plural(n, "transfer out", "transfers out")
            case "interest": plural(n, "interest payment", "interest payments")
            default: plural(n, kind, kind + "s")
            }
        }
        let left = skipped.map { kind, n -> String in
            if kind.hasPrefix("quoted in ") { return plural(n, "\(kind.dropFirst(10)) trade", "\(kind.dropFirst(10)) trades") }
            if kind == "crypto-to-crypto" || kind == "margin" { return plural(n, "\(kind) trade", "\(kind) trades") }
            // `deposit (the portfolio does not track cash)`: 2 deposit rows (the portfolio does not track cash).
            if let why = kind.range(of: " (") {
                let what = TextEscaping.escaped(String(kind[..<why.lowerBound]))
                return plural(n, "\(what) row", "\(what) rows") + " " + TextEscaping.escaped(String(kind[why.lowerBound...]).trimmedSpaces)
            }
            return plural(n, "\(TextEscaping.escaped(kind)) row", "\(TextEscaping.escaped(kind)) rows")
        }
        var text = made.isEmpty ? "nothing to import" : made.joined(separator: ", ")
        if !left.isEmpty { text += "; skipped: " + left.joined(separator: ", ") }
        return text
    }
}

/// Numbers as exchanges write them: `2.103e-05`, `-€597.49846`, `"$16,047.61"`, converted exactly (never via Double).
public enum ExchangeNumber {
    public static func parse(_ raw: String) -> Decimal? {
        // The common case, a plain literal with or without a minus (`-1499.9999`): straight to the one
        // literal parser, no trimming, no symbols, no grouping to look at.
        let utf8 = raw.utf8
        if let first = utf8.first, first != 0x20 {
            let digits = first == UInt8(ascii: "-") ? utf8.dropFirst() : utf8[...]
            if let literal = DecimalLiteral.parse(utf8: digits) { return first == UInt8(ascii: "-") ? -literal.value : literal.value }
        }
        var s = Substring(raw.trimmedSpaces)
        var negative = false
        if s.hasPrefix("-") { negative = true; s = s.dropFirst() } else if s.hasPrefix("+") { s = s.dropFirst() }
        for symbol in ["US$", "CA$", "A$", "$", "€", "£"] where s.hasPrefix(symbol) {
            s = s.dropFirst(symbol.count)
            break
        }
        if !negative && s.hasPrefix("-") { negative = true; s = s.dropFirst() }
        // Commas separate thousands: each group after one is three digits (`1,234.5`). Anything else
        // (`0,0577`, `10,99`) is a decimal comma this reader does not take, never a number 100× larger.
        let integerPart = s.prefix { $0 != "." && $0 != "e" && $0 != "E" }
        let groups = integerPart.split(separator: ",", omittingEmptySubsequences: false)
        if groups.count > 1, groups.first?.isEmpty != false || groups.dropFirst().contains(where: { $0.count != 3 }) { return nil }
        let cleaned = s.filter { $0 != "," }
        var mantissa = Substring(cleaned)
        var exponent = 0
        if let e = cleaned.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            mantissa = cleaned[..<e]
            var expText = cleaned[cleaned.index(after: e)...]
            var expNegative = false
            if expText.hasPrefix("-") { expNegative = true; expText = expText.dropFirst() } else if expText.hasPrefix("+") { expText = expText.dropFirst() }
            guard !expText.isEmpty, expText.count <= 2, expText.allSatisfy({ $0.isASCII && $0.isNumber }), let n = Int(expText) else { return nil }
            exponent = expNegative ? -n : n
        }
        guard let plain = plainLiteral(mantissa: mantissa, exponent: exponent),
              let literal = DecimalLiteral.parse(utf8: plain.utf8) else { return nil }
        return negative ? -literal.value : literal.value
    }

    /// `2.103e-05` as the plain literal `0.00002103`: the point moved in the text, so the
    /// value reaches the one literal parser exactly (no `Double`, no `Decimal` exponent range).
    static func plainLiteral(mantissa: Substring, exponent: Int) -> String? {
        guard PlainDecimal.scan(utf8: mantissa.utf8) != nil else { return nil }
        let digits = mantissa.filter { $0 != "." }
        let point = (mantissa.firstIndex(of: ".").map { mantissa.distance(from: mantissa.startIndex, to: $0) } ?? mantissa.count) + exponent
        if exponent == 0 { return String(mantissa) }
        if point <= 0 { return "0." + String(repeating: "0", count: -point) + digits }
        if point >= digits.count { return digits + String(repeating: "0", count: point - digits.count) }
        return String(digits.prefix(point)) + "." + String(digits.dropFirst(point))
    }

    /// A plain literal for the importer: absolute value, at most 18 fractional digits (half-up).
    public static func literal(_ value: Decimal) -> String {
        let v = value < 0 ? -value : value
        return DecimalFormatting.trimmed(v, maxScale: DecimalLiteral.maxFractionDigits)
    }
}

/// Maps Coinbase, Binance and Kraken exports onto bitpal transactions.
///
/// Rows valued in USD or a supported fiat currency count (a fiat row keeps its currency, and the
/// import gives it the rate of its date); trades quoted in USD-pegged stablecoins (USDT, USDC,
/// BUSD, FDUSD, DAI) count as USD at par. Binance and Kraken give buys and sells. Coinbase gives buys
/// and sells (with the exact subtotal as `total`), `Send` as a transfer-out, `Receive` as a
/// transfer-in at the spot price, rewards and staking income as rewards at the spot price, and
/// `Convert` as a swap valued at its subtotal. Everything else (unsupported fiat, crypto-to-crypto
/// without a money value, internal moves) is skipped and counted by kind.
public enum ExchangeImport {
    public static let usdQuotes: Set<String> = ["USD", "ZUSD", "USDT", "USDC", "BUSD", "FDUSD", "DAI"]

    /// The currency a row's money is in: USD for USD and its stablecoins (at par), else a fiat
    /// currency bitpal supports (EUR, GBP, …, kept with the rate of its date or in a portfolio of
    /// that base); `nil` for anything else (crypto, or a fiat bitpal does not support).
    public static func moneyCurrency(_ code: String) -> String? {
        if usdQuotes.contains(code) { return "USD" }
        return fiat.contains(code) ? CurrencyCode.parse(code)?.code : nil
    }
    static let fiat: Set<String> = ["USD", "EUR", "GBP", "CAD", "AUD", "JPY", "CHF", "TRY", "BRL", "NGN", "RUB", "UAH", "ZAR",
                                    "PLN", "SEK", "NOK", "DKK", "CZK", "HUF", "RON", "INR", "IDR", "KRW", "ARS", "MXN", "NZD", "SGD", "HKD"]

    public static func rows(_ bytes: [UInt8], exchange: Exchange, fileName: String = "", utcOffsetSeconds: Int? = nil) throws(ImportFailure) -> PresetRows {
        let records: [CSVRecord]
        do {
            records = try CSV.parse(bytes)
        } catch {
            throw ImportFailure(problems: [error.description])
        }
        var mapper = Mapper()
        switch exchange {
        case .coinbase: try mapper.coinbase(records)
        case .binance: try mapper.binance(records, fileName: fileName, offset: utcOffsetSeconds)
        case .kraken: try mapper.kraken(records)
        }
        if !mapper.problems.isEmpty { throw ImportFailure(problems: mapper.problems) }
        return PresetRows(rows: mapper.rows, skipped: mapper.skipped.sorted { $0.key < $1.key }.map { ($0.key, $0.value) },
                          feesNotCounted: mapper.feesNotCounted.sorted { $0.key < $1.key }.map { ($0.key, $0.value) },
                          kinds: PresetRows.kindOrder.compactMap { k in mapper.made[k].map { (k, $0) } })
    }

    /// `+7`, `-06:00`, `+0530` → seconds east of UTC.
    public static func offsetSeconds(_ text: String) -> Int? {
        guard text.contains(where: { $0.isASCII && $0.isNumber }) else { return nil }
        return Mapper.offsetFromFileName("(UTC" + text.replacingOccurrences(of: "UTC", with: "") + ")")
    }

    /// Columns that only one exchange's export has together, to recognise a file without `--format`.
    static let signatures: [(Exchange, [String])] = [
        (.coinbase, ["Timestamp", "Transaction Type", "Asset", "Quantity Transacted"]),
        (.binance, ["Date(UTC)", "Market", "Fee Coin"]),
        (.binance, ["Pair", "Base Asset", "Quote Asset"]),
        (.binance, ["Pair", "Side", "Executed"]),
        (.kraken, ["txid", "pair", "vol"]),
    ]

    /// The exchange whose export `bytes` is, read from its header among the first lines; `nil` otherwise.
    public static func recognise(_ bytes: [UInt8]) -> Exchange? {
        // Only the first lines matter: parse them one by one, so a long file or a quote left open below costs nothing.
        var records: [CSVRecord] = []
        for line in bytes.prefix(16_384).split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).prefix(12) {
            if let parsed = try? CSV.parse(Array(line)), let first = parsed.first { records.append(first) }
        }
        return signatures.first { header(records, required: $0.1) != nil }?.0
    }

    /// Finds the header among the first lines: the first record holding every one of `required`.
    static func header(_ records: [CSVRecord], required: [String]) -> (Int, [String: Int])? {
        for (index, r) in records.prefix(12).enumerated() {
            var columns: [String: Int] = [:]
            for (i, cell) in r.fields.enumerated() {
                columns[cell.trimmedSpaces.replacingOccurrences(of: "\u{FEFF}", with: "")] = i
            }
            if required.allSatisfy({ columns[$0] != nil }) { return (index, columns) }
        }
        return nil
    }

    struct Mapper {
        var rows: [ImportRow] = []
        var skipped: [String: Int] = [:]
        var feesNotCounted: [String: Int] = [:]
        var problems: [String] = []
        /// What rows became, by kind (a swap counts once).
        var made: [String: Int] = [:]
        /// Assets the file names, by code (statements register stocks and funds on the way).
        var assets: [String: Asset] = [:]
        /// Whether the portfolio imported into tracks cash (statements' cash rows need it).
        var tracksCash = true
        /// The format's name, seeding the ids made from the file's own ids.
        var source = ""
        /// The portfolio imported into, seeding them too.
        var portfolio = ""

        mutating func skip(_ kind: String) { skipped[kind, default: 0] += 1 }

        /// The currency of the money of the row being read (see `moneyCurrency`).
        var money = "USD"

        /// Keeps one row of the file as `fields` (every money field in `money`).
        mutating func keep(line: Int, kind: String, _ legs: [ImportFields]) {
            for var f in legs {
                if f[.currency] == nil, ["buy", "sell", "transfer-in", "reward"].contains(f[.type] ?? "") { f[.currency] = money }
                rows.append(ImportRow(location: "line \(line)", fields: f, order: line))
            }
            made[kind, default: 0] += 1
        }

        /// A buy or a sell. A negative or zero amount or price (a sign an export should not have,
        /// a fee in the bought coin larger than the fill) is a problem to show, never a sign to drop.
        mutating func add(line: Int, type: String, coin: String, amount: Decimal, price priceValue: @autoclosure () -> Decimal, fee: Decimal,
                          total: Decimal? = nil, date: String, notes: String?) {
            // With a total the price is total ÷ amount, made exactly below: the caller's is not worked out.
            let price = total == nil ? priceValue() : 1
            guard !amount.isNaN, !price.isNaN, !fee.isNaN, amount > 0, price > 0, fee >= 0, total.map({ !$0.isNaN && $0 > 0 }) ?? true else {
                func text(_ v: Decimal) -> String { v.isNaN ? "too large" : DecimalFormatting.exact(v) }
                problems.append("line \(line): a \(type) of \(text(amount)) \(coin) " + (total.map { "for \(text($0))" } ?? "at \(text(price))")
                    + " (fee \(text(fee))) has a value that is not positive; bitpal records only positive amounts and prices")
                return
            }
            var f: ImportFields = [
                "type": type, "asset": coin, "amount": ExchangeNumber.literal(amount), "price": ExchangeNumber.literal(price),
                "fee": ExchangeNumber.literal(fee), "date": date, "notes": notes ?? "",
            ]
            if let total {
                // The exact subtotal is stored; the price is total ÷ amount rounded half-up to 18 decimals, as `add --total`.
                guard let t = Self.fixed(total), let a = Self.fixed(amount), a.units > 0,
                      let p = try? Exact36(t).divided(by: a).roundedToFixed18(), p.units > 0 else {
                    problems.append("line \(line): a \(type) of \(DecimalFormatting.exact(amount)) \(coin) for \(DecimalFormatting.exact(total)) "
                        + "has a price bitpal cannot keep (more than \(Fixed18.maxIntegerDigits) digits, or zero)")
                    return
                }
                f[.total] = t.text
                f[.price] = p.text
            }
            keep(line: line, kind: type, [f])
        }

        /// A value as bitpal keeps it (absolute, at most 18 decimals rounded half-up); `nil` past 20 digits.
        static func fixed(_ value: Decimal) -> Fixed18? {
            guard !value.isNaN else { return nil }
            return Fixed18.parse(utf8: ExchangeNumber.literal(value).utf8)
        }

        /// Reads a number cell or records a problem.
        mutating func number(_ text: String, line: Int, column: String) -> Decimal? {
            if let v = ExchangeNumber.parse(text) { return v }
            problems.append("line \(line): \(column) '\(TextEscaping.escaped(text))' is not a number")
            return nil
        }

        // MARK: Coinbase

        /// What a Coinbase `Transaction Type` becomes.
        enum CoinbaseAction {
            case buy, sell, send, receive, reward, convert
        }

        static let coinbaseActions: [String: CoinbaseAction] = [
            "buy": .buy, "advanced trade buy": .buy, "advance trade buy": .buy,
            "sell": .sell, "advanced trade sell": .sell, "advance trade sell": .sell,
            "send": .send, "receive": .receive, "convert": .convert,
            "rewards income": .reward, "staking income": .reward, "learning reward": .reward, "inflation reward": .reward,
        ]

        /// Coinbase's staked ether (`ETH2`) was converted into ETH one for one; bitpal counts it as ETH.
        static func coinbaseAsset(_ code: String) -> (String, String) {
            code == "ETH2" ? ("ETH", "; ETH2 counted as ETH") : (code, "")
        }

        mutating func coinbase(_ records: [CSVRecord]) throws(ImportFailure) {
            guard let (at, cols) = header(records, required: signatures[0].1) else {
                throw ImportFailure(problems: ["no Coinbase transaction-history header found (expected Timestamp, Transaction Type, Asset, Quantity Transacted …)"])
            }
            func find(_ test: (String) -> Bool) -> Int? { cols.first(where: { test($0.key) })?.value }
            let currencyCol = cols["Price Currency"] ?? cols["Spot Price Currency"]
            let prefixCurrency = cols.keys.first(where: { $0.hasSuffix(" Spot Price at Transaction") && $0.count == 29 }).map { String($0.prefix(3)) }
            let spotCol = find { $0.hasSuffix("Price at Transaction") }
            let subtotalCol = find { $0 == "Subtotal" || $0.hasSuffix(" Subtotal") }
            let totalCol = find { $0.hasPrefix("Total") || $0.contains(" Total (") }
            let feeCol = find { $0.hasPrefix("Fees") || $0.hasSuffix(" Fees") }
            let idCol = cols["ID"], notesCol = cols["Notes"]
            for r in records.dropFirst(at + 1) {
                func cell(_ i: Int?) -> String { i.flatMap { $0 < r.fields.count ? r.fields[$0].trimmedSpaces : nil } ?? "" }
                let lower = cell(cols["Transaction Type"]).lowercased()
                guard let action = Self.coinbaseActions[lower] else { skip(lower.isEmpty ? "untyped" : lower); continue }
                let (asset, assetNote) = Self.coinbaseAsset(cell(cols["Asset"]).uppercased())
                let currency = (currencyCol.map { cell($0) } ?? prefixCurrency ?? "USD").uppercased()
                let notes = cell(notesCol)
                if ExchangeImport.fiat.contains(asset) { skip("fiat \(lower)"); continue }
                guard let rowMoney = ExchangeImport.moneyCurrency(currency) else { skip("quoted in \(currency)"); continue }
                money = rowMoney
                if action == .buy || action == .sell, let quote = Self.advancedTradeQuote(notes), ExchangeImport.moneyCurrency(quote) != rowMoney {
                    skip(ExchangeImport.fiat.contains(quote) ? "quoted in \(quote)" : "crypto-to-crypto")
                    continue
                }
                guard let qty = number(cell(cols["Quantity Transacted"]), line: r.line, column: "Quantity Transacted") else { continue }
                let amount = qty < 0 ? -qty : qty
                guard amount > 0 else { skip("zero-quantity"); continue }
                guard let date = Self.utcTimestamp(cell(cols["Timestamp"])) else {
                    problems.append("line \(r.line): Timestamp '\(TextEscaping.escaped(cell(cols["Timestamp"])))' is not a Coinbase time")
                    continue
                }
                let id = cell(idCol)
                let source = (id.isEmpty ? "Coinbase" : "Coinbase \(id)") + assetNote
                switch action {
                case .buy, .sell:
                    let side = action == .buy ? "buy" : "sell"
                    let subtotalText = cell(subtotalCol), totalText = cell(totalCol)
                    if !subtotalText.isEmpty, !totalText.isEmpty {
                        guard let sub = number(subtotalText, line: r.line, column: "Subtotal"),
                              let tot = number(totalText, line: r.line, column: "Total") else { continue }
                        let s = sub < 0 ? -sub : sub, t = tot < 0 ? -tot : tot
                        // The cost or proceeds is the cash that moved: subtotal, plus or minus the fee.
                        add(line: r.line, type: side, coin: asset, amount: amount, price: s / amount, fee: t > s ? t - s : s - t, total: s,
                            date: date, notes: source)
                    } else if let spot = number(cell(spotCol), line: r.line, column: "Price at Transaction") {
                        var fee: Decimal = 0
                        if let f = ExchangeNumber.parse(cell(feeCol)) { fee = f < 0 ? -f : f }
                        add(line: r.line, type: side, coin: asset, amount: amount, price: spot < 0 ? -spot : spot, fee: fee, date: date, notes: source)
                    }
                case .send:
                    // Units leave for another wallet; the file gives no network fee (0 units).
                    guard let a = Self.fixed(amount) else { tooLarge(line: r.line, lower); continue }
                    keep(line: r.line, kind: "transfer-out", [[
                        "type": "transfer-out", "asset": asset, "amount": a.text, "fee": "0", "date": date, "notes": source,
                    ]])
                case .receive, .reward:
                    guard !cell(spotCol).isEmpty else { skip("\(lower) without a spot price"); continue }
                    guard let spotValue = number(cell(spotCol), line: r.line, column: "Price at Transaction") else { continue }
                    guard let a = Self.fixed(amount), let spot = Self.fixed(spotValue) else { tooLarge(line: r.line, lower); continue }
                    if action == .receive {
                        // Coinbase does not know what the units cost before they came in: their value then is the basis.
                        keep(line: r.line, kind: "transfer-in", [[
                            "type": "transfer-in", "asset": asset, "amount": a.text, "price": spot.text, "fee": "0", "date": date,
                            "notes": source + "; basis: spot price at receipt",
                        ]])
                    } else {
                        keep(line: r.line, kind: "reward", [[
                            "type": "reward", "asset": asset, "amount": a.text, "price": spot.text, "date": date, "notes": source,
                        ]])
                    }
                case .convert:
                    convert(r.line, from: asset, amount: amount, notes: notes, subtotal: cell(subtotalCol), fee: cell(feeCol),
                            date: date, source: source)
                }
            }
        }

        mutating func tooLarge(line: Int, _ kind: String) {
            problems.append("line \(line): a \(kind) with a value past what bitpal keeps (\(Fixed18.maxIntegerDigits) digits before the point)")
        }

        /// A `Convert` row: a swap of `amount` of `from` for what its Notes name (`Converted 0.1 ETH to
        /// 370 USDC`), valued at the row's subtotal, the fee on the disposal. Without a subtotal the
        /// file gives no money value, and the row is skipped as crypto-to-crypto.
        mutating func convert(_ line: Int, from: String, amount: Decimal, notes: String, subtotal: String, fee feeText: String,
                              date: String, source: String) {
            guard let (toQuantity, toCode) = Self.convertTarget(notes) else { skip("convert without its target in Notes"); return }
            let (to, toNote) = Self.coinbaseAsset(toCode)
            if ExchangeImport.fiat.contains(to) { skip("convert to fiat"); return }
            if to == from { skip("convert to the same asset"); return }
            guard !subtotal.isEmpty else { skip("crypto-to-crypto"); return }
            guard let valueSigned = number(subtotal, line: line, column: "Subtotal") else { return }
            var fee: Decimal = 0
            if !feeText.isEmpty {
                guard let f = number(feeText, line: line, column: "Fees") else { return }
                fee = f < 0 ? -f : f
            }
            let value = valueSigned < 0 ? -valueSigned : valueSigned
            guard value > 0 else { skip("crypto-to-crypto"); return }
            guard let fromAmount = Self.fixed(amount), let toAmount = Self.fixed(toQuantity), let total = Self.fixed(value),
                  let feeValue = Self.fixed(fee) else { tooLarge(line: line, "convert"); return }
            guard fromAmount.units > 0, toAmount.units > 0,
                  let sellPrice = try? Exact36(total).divided(by: fromAmount).roundedToFixed18(),
                  let buyPrice = try? Exact36(total).divided(by: toAmount).roundedToFixed18(), sellPrice.units > 0, buyPrice.units > 0 else {
                problems.append("line \(line): a convert of \(DecimalFormatting.exact(amount)) \(from) to \(DecimalFormatting.exact(toQuantity)) \(to) "
                    + "valued at \(DecimalFormatting.exact(value)) has a price that is zero or too large")
                return
            }
            // The sell leg's id links both legs, as `add swap` stores them.
            let sellID = UUIDText.lowercased(UUIDText.random())
            let noteText = source + toNote
            keep(line: line, kind: "swap", [
                ["id": sellID, "type": "sell", "asset": from, "amount": fromAmount.text, "price": sellPrice.text, "total": total.text,
                 "fee": feeValue.text, "date": date, "notes": noteText, "linkedId": sellID],
                ["type": "buy", "asset": to, "amount": toAmount.text, "price": buyPrice.text, "total": total.text,
                 "fee": "0", "date": date, "notes": noteText, "linkedId": sellID],
            ])
        }

        /// `Converted 0.00087766 ETH to 1,629.352 USDC` → (1629.352, USDC).
        static func convertTarget(_ notes: String) -> (Decimal, String)? {
            let words = notes.split(whereSeparator: { $0 == " " }).map(String.init)
            guard words.first?.lowercased() == "converted", let to = words.firstIndex(of: "to"), to + 2 < words.count else { return nil }
            guard let quantity = ExchangeNumber.parse(words[to + 1]), quantity > 0 else { return nil }
            let code = words[to + 2].uppercased()
            guard !code.isEmpty, code.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else { return nil }
            return (quantity, code)
        }

        /// The quote of `… on BASE-QUOTE` in Advanced Trade notes.
        static func advancedTradeQuote(_ notes: String) -> String? {
            guard let range = notes.range(of: " on ") else { return nil }
            let pair = notes[range.upperBound...].prefix { !$0.isWhitespace }
            let parts = pair.split(separator: "-")
            guard parts.count == 2 else { return nil }
            return parts[1].uppercased()
        }

        /// `2023-04-20T04:05:40Z`, `2024-03-19 16:02:44 UTC`, `2024-03-19 16:02 UTC`, `2021-06-05 16:36:56` → ISO 8601 UTC.
        static func utcTimestamp(_ text: String) -> String? {
            var t = text.trimmedSpaces
            if t.hasSuffix(" UTC") { t = String(t.dropLast(4)) }
            if ISODate.parseTimestamp(utf8: t.utf8) != nil { return t }
            var bytes = Array(t.utf8)
            for i in bytes.indices where bytes[i] == 0x20 { bytes[i] = UInt8(ascii: "T") }  // `2024-03-19 16:02:44` (no Foundation search)
            t = String(decoding: bytes, as: UTF8.self)
            if bytes.count == 16 { t += ":00" }
            let candidate = t + "Z"
            return ISODate.parseTimestamp(utf8: candidate.utf8) != nil ? candidate : nil
        }

        // MARK: Binance

        mutating func binance(_ records: [CSVRecord], fileName: String, offset: Int?) throws(ImportFailure) {
            if let (at, cols) = header(records, required: ["Date(UTC)", "Market", "Type", "Price", "Amount", "Total", "Fee", "Fee Coin"]) {
                binanceA(records, at: at, cols: cols, pairColumn: "Market", typeColumn: "Type")
            } else if let (at, cols) = header(records, required: ["Date(UTC)", "Pair", "Base Asset", "Quote Asset", "Type", "Price", "Amount", "Total", "Fee", "Fee Coin"]) {
                binanceA(records, at: at, cols: cols, pairColumn: "Pair", typeColumn: "Type")
            } else if let (at, cols) = header(records, required: ["Date(UTC)", "Pair", "Side", "Price", "Executed", "Amount", "Fee"]) {
                binanceB(records, at: at, cols: cols, timeColumn: "Date(UTC)", offset: 0)
            } else if let (at, cols) = header(records, required: ["Time", "Pair", "Side", "Price", "Executed", "Amount", "Fee"]) {
                guard let zone = offset ?? Self.offsetFromFileName(fileName) else {
                    throw ImportFailure(problems: ["this Binance export gives times in the zone named only in its file name, e.g. '(UTC+7)'; keep Binance's file name or rename the file to include it"])
                }
                binanceB(records, at: at, cols: cols, timeColumn: "Time", offset: zone)
            } else {
                throw ImportFailure(problems: ["no Binance spot trade-history header found (e.g. 'Date(UTC),Pair,Side,Price,Executed,Amount,Fee')"])
            }
        }

        /// Variants A and D: `Amount` is the base quantity, `Fee` a number with `Fee Coin`.
        mutating func binanceA(_ records: [CSVRecord], at: Int, cols: [String: Int], pairColumn: String, typeColumn: String) {
            for r in records.dropFirst(at + 1) {
                func cell(_ name: String) -> String { cols[name].flatMap { $0 < r.fields.count ? r.fields[$0].trimmedSpaces : nil } ?? "" }
                let pair = cell(pairColumn).uppercased()
                var base: String, quote: String
                if !cell("Base Asset").isEmpty { base = cell("Base Asset").uppercased(); quote = cell("Quote Asset").uppercased() }
                else if pair.contains("/") { let p = pair.split(separator: "/"); base = String(p.first ?? ""); quote = String(p.last ?? "") }
                else { guard let split = Self.splitPair(pair) else { skip("unrecognised pair"); continue }; (base, quote) = split }
                let side = cell(typeColumn).lowercased()
                guard side == "buy" || side == "sell" else { skip(side.isEmpty ? "untyped" : side); continue }
                guard let rowMoney = ExchangeImport.moneyCurrency(quote) else {
                    skip(ExchangeImport.fiat.contains(quote) ? "quoted in \(quote)" : "crypto-to-crypto"); continue
                }
                money = rowMoney
                guard let price = number(cell("Price"), line: r.line, column: "Price"),
                      var amount = number(cell("Amount"), line: r.line, column: "Amount"),
                      let feeValue = number(cell("Fee").isEmpty ? "0" : cell("Fee"), line: r.line, column: "Fee") else { continue }
                var fee: Decimal = 0
                let feeCoin = cell("Fee Coin").uppercased()
                if feeCoin == quote || (rowMoney == "USD" && ExchangeImport.usdQuotes.contains(feeCoin)) { fee = feeValue }
                else if feeCoin == base { if side == "buy" { amount -= feeValue } else { fee = feeValue * price } }
                else if feeValue > 0 { feesNotCounted[feeCoin, default: 0] += 1 }
                guard let date = Self.utcTimestamp(cell("Date(UTC)")) else {
                    problems.append("line \(r.line): Date(UTC) '\(TextEscaping.escaped(cell("Date(UTC)")))' is not a Binance time"); continue
                }
                add(line: r.line, type: side, coin: base, amount: amount, price: price, fee: fee, date: date, notes: "Binance \(pair)")
            }
        }

        /// Variants B, C, C′: `Executed` (base) and `Amount` (quote) carry their asset as a suffix.
        mutating func binanceB(_ records: [CSVRecord], at: Int, cols: [String: Int], timeColumn: String, offset: Int) {
            for r in records.dropFirst(at + 1) {
                func cell(_ name: String) -> String { cols[name].flatMap { $0 < r.fields.count ? r.fields[$0].trimmedSpaces : nil } ?? "" }
                let side = cell("Side").lowercased()
                guard side == "buy" || side == "sell" else { skip(side.isEmpty ? "untyped" : side); continue }
                let pair = cell("Pair").uppercased()
                let (quoteNumber, quote) = Self.splitSuffix(cell("Amount"))
                guard !quote.isEmpty, pair.hasSuffix(quote) else { problems.append("line \(r.line): cannot tell the quote asset of '\(pair)'"); continue }
                let base = String(pair.dropLast(quote.count))
                guard let rowMoney = ExchangeImport.moneyCurrency(quote) else {
                    skip(ExchangeImport.fiat.contains(quote) ? "quoted in \(quote)" : "crypto-to-crypto"); continue
                }
                money = rowMoney
                let executed = cell("Executed").uppercased()
                let executedNumber = executed.hasSuffix(base) ? String(executed.dropLast(base.count)) : executed
                let (feeNumber, feeCoin) = Self.splitSuffix(cell("Fee"))
                guard let price = number(cell("Price"), line: r.line, column: "Price"),
                      var amount = number(executedNumber, line: r.line, column: "Executed"),
                      number(quoteNumber, line: r.line, column: "Amount") != nil,
                      let feeValue = number(feeNumber.isEmpty ? "0" : feeNumber, line: r.line, column: "Fee") else { continue }
                var fee: Decimal = 0
                if feeCoin == quote || (rowMoney == "USD" && ExchangeImport.usdQuotes.contains(feeCoin)) { fee = feeValue }
                else if feeCoin == base { if side == "buy" { amount -= feeValue } else { fee = feeValue * price } }
                else if feeValue > 0 { feesNotCounted[feeCoin, default: 0] += 1 }
                var text = cell(timeColumn)
                if timeColumn == "Time", text.count == 17 { text = "20" + text }
                guard let local = Self.utcTimestamp(text), let parsed = ISODate.parseTimestamp(utf8: local.utf8) else {
                    problems.append("line \(r.line): \(timeColumn) '\(TextEscaping.escaped(cell(timeColumn)))' is not a Binance time"); continue
                }
                let shifted = parsed.addingTimeInterval(TimeInterval(-offset))
                guard ISODate.isInRange(shifted) else {
                    problems.append("line \(r.line): \(timeColumn) '\(TextEscaping.escaped(cell(timeColumn)))' is outside the dates bitpal keeps (\(ISODate.rangeText))"); continue
                }
                let date = ISODate.format(shifted)
                add(line: r.line, type: side, coin: base, amount: amount, price: price, fee: fee, date: date, notes: "Binance \(pair)")
            }
        }

        /// `0.002803BTC` → ("0.002803", "BTC"); a thousands-separated `"5,983.125USDT"` works too.
        static func splitSuffix(_ text: String) -> (String, String) {
            let t = text.trimmedSpaces
            guard let firstLetter = t.lastIndex(where: { !$0.isLetter }).map({ t.index(after: $0) }) else { return ("", t.uppercased()) }
            return (String(t[..<firstLetter]), String(t[firstLetter...]).uppercased())
        }

        /// `BTCUSDT` → (BTC, USDT), trying the longest known quote first, with Binance's known traps.
        static func splitPair(_ pair: String) -> (String, String)? {
            let exceptions: [String: (String, String)] = [
                "ADAEUR": ("ADA", "EUR"), "BNBUSD": ("BNB", "USD"), "USDTUSD": ("USDT", "USD"),
                "THETAEUR": ("THETA", "EUR"), "GALAEUR": ("GALA", "EUR"),
            ]
            if let e = exceptions[pair] { return e }
            let quotes = ["FDUSD", "USDT", "USDC", "BUSD", "TUSD", "DAI", "USD", "EUR", "GBP", "TRY", "BRL", "BTC", "ETH", "BNB"]
            for q in quotes where pair.hasSuffix(q) && pair.count > q.count { return (String(pair.dropLast(q.count)), q) }
            return nil
        }

        /// `…(UTC+7).csv` → 25200; `(UTC--6)` means UTC−6.
        static func offsetFromFileName(_ name: String) -> Int? {
            guard let open = name.range(of: "(UTC") else { return nil }
            let rest = name[open.upperBound...].prefix { $0 != ")" }
            var sign = 1
            var digits = Substring(rest)
            if digits.hasPrefix("--") { sign = -1; digits = digits.dropFirst(2) }
            else if digits.hasPrefix("-") { sign = -1; digits = digits.dropFirst() }
            else if digits.hasPrefix("+") { digits = digits.dropFirst() }
            if digits.isEmpty { return 0 }
            let parts = digits.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count <= 2, let first = parts.first, let h = Int(first), h >= 0, h <= 14 else { return nil }
            var m = 0
            if parts.count == 2 {
                guard let minutes = Int(parts[1]), minutes >= 0, minutes < 60 else { return nil }
                m = minutes
            }
            return sign * (h * 3600 + m * 60)
        }

        // MARK: Kraken

        mutating func kraken(_ records: [CSVRecord]) throws(ImportFailure) {
            if header(records, required: ["txid", "refid", "time", "type", "asset", "amount"]) != nil {
                throw ImportFailure(problems: ["this is a Kraken ledgers.csv; import it with --format kraken-ledger"])
            }
            guard let (at, cols) = header(records, required: ["txid", "pair", "time", "type", "price", "cost", "fee", "vol"]) else {
                throw ImportFailure(problems: ["no Kraken trades.csv header found (expected \"txid\",\"ordertxid\",\"pair\",\"time\",\"type\",…)"])
            }
            for r in records.dropFirst(at + 1) {
                func cell(_ name: String) -> String { cols[name].flatMap { $0 < r.fields.count ? r.fields[$0].trimmedSpaces : nil } ?? "" }
                let side = cell("type").lowercased()
                guard side == "buy" || side == "sell" else { skip(side.isEmpty ? "untyped" : side); continue }
                if let margin = ExchangeNumber.parse(cell("margin")), margin != 0 { skip("margin"); continue }
                guard let (base, quote) = Self.krakenPair(cell("pair").uppercased()) else { skip("unrecognised pair"); continue }
                guard let rowMoney = ExchangeImport.moneyCurrency(quote) else {
                    skip(ExchangeImport.fiat.contains(quote) ? "quoted in \(quote)" : "crypto-to-crypto"); continue
                }
                money = rowMoney
                guard let price = number(cell("price"), line: r.line, column: "price"),
                      let vol = number(cell("vol"), line: r.line, column: "vol"),
                      let fee = number(cell("fee").isEmpty ? "0" : cell("fee"), line: r.line, column: "fee") else { continue }
                guard let date = Self.utcTimestamp(cell("time")) else {
                    problems.append("line \(r.line): time '\(TextEscaping.escaped(cell("time")))' is not a Kraken time"); continue
                }
                let txid = cell("txid")
                add(line: r.line, type: side, coin: base, amount: vol, price: price, fee: fee, date: date,
                    notes: txid.isEmpty ? "Kraken" : "Kraken \(txid)")
            }
        }

        static let krakenAssets: [String: String] = [
            "XXBT": "BTC", "XBT": "BTC", "XETH": "ETH", "XLTC": "LTC", "XXRP": "XRP", "XXLM": "XLM", "XXMR": "XMR",
            "XZEC": "ZEC", "XETC": "ETC", "XREP": "REP", "XMLN": "MLN", "XXDG": "DOGE", "XDG": "DOGE",
            "ZUSD": "USD", "ZEUR": "EUR", "ZGBP": "GBP", "ZCAD": "CAD", "ZJPY": "JPY", "ZAUD": "AUD",
        ]

        static func krakenAsset(_ code: String) -> String {
            var c = code
            for suffix in [".S", ".M", ".P", ".HOLD"] where c.hasSuffix(suffix) { c = String(c.dropLast(suffix.count)) }
            return krakenAssets[c] ?? c
        }

        /// `XXBTZUSD`, `SOL/EUR`, `DOTUSD` → (base, quote) with Kraken's legacy codes mapped.
        static func krakenPair(_ pair: String) -> (String, String)? {
            if pair.contains("/") {
                let p = pair.split(separator: "/")
                guard p.count == 2 else { return nil }
                return (krakenAsset(String(p[0])), krakenAsset(String(p[1])))
            }
            if pair.count == 8, pair.hasPrefix("X"), Array(pair)[4] == "Z" || Array(pair)[4] == "X" {
                return (krakenAsset(String(pair.prefix(4))), krakenAsset(String(pair.suffix(4))))
            }
            for q in ["USDT", "USDC", "ZUSD", "ZEUR", "DAI", "USD", "EUR", "GBP", "CAD", "JPY", "CHF", "XBT", "ETH"]
            where pair.hasSuffix(q) && pair.count > q.count {
                return (krakenAsset(String(pair.dropLast(q.count))), krakenAsset(q))
            }
            return nil
        }
    }
}

import Foundation

/// Broker and exchange statements (`import --format ibkr|kraken-ledger|…`): files whose rows are
/// cash and asset events, several rows to an event. Each format reads its table (`StatementTable`),
/// groups the rows of one event, classifies them and hands bitpal's own import rows, with the
/// assets the file names, to the one import. Everything the rows are not turned into is counted by
/// what it is.
public enum StatementFormat: String, CaseIterable, Sendable {
    case ibkr
    case krakenLedger = "kraken-ledger"
    case binanceStatement = "binance-statement"
    case degiro
    case trading212
    case cryptoCom = "cryptocom"
    case schwab
    case fidelity
    case revolut
    case koinly
    case coinTracking = "cointracking"

    /// How summaries and messages name the file: `Interactive Brokers Flex Query`.
    public var title: String {
        switch self {
        case .ibkr: "Interactive Brokers Flex Query"
        case .krakenLedger: "Kraken ledger"
        case .binanceStatement: "Binance transaction history"
        case .schwab: "Charles Schwab transactions"
        case .revolut: "Revolut statement"
        case .degiro: "DEGIRO export"
        case .trading212: "Trading 212 history"
        case .koinly: "Koinly universal CSV"
        case .coinTracking: "CoinTracking trade table"
        case .cryptoCom: "Crypto.com App transaction history"
        case .fidelity: "Fidelity account history"
        }
    }

    /// Columns that only this format's header has together; the file is recognised by them.
    var signatures: [[String]] {
        switch self {
        case .ibkr: [["ClientAccountID", "CurrencyPrimary"], ["CurrencyPrimary", "Buy/Sell", "TradePrice"],
                     ["CurrencyPrimary", "Type", "Amount", "SettleDate"], ["CurrencyPrimary", "AssetClass", "Symbol"]]
        case .krakenLedger: [["txid", "refid", "time", "type", "asset", "amount", "fee"]]
        case .binanceStatement: [["Operation", "Coin", "Change", "UTC_Time"], ["Operation", "Coin", "Change", "Time"]]
        case .schwab: [["Date", "Action", "Symbol", "Description", "Quantity", "Price", "Fees & Comm", "Amount"]]
        case .revolut: [["Date", "Ticker", "Type", "Quantity", "Price per share", "Total Amount", "Currency"],
                        ["Symbol", "Type", "Quantity", "Price", "Value", "Fees", "Date"]]
        case .degiro: [["Valutadatum", "Omschrijving", "Mutatie"], ["Value date", "Description", "Change", "Order Id"],
                       ["Valutadatum", "Beschreibung", "Änderung"], ["Data Valor", "Descrição", "Mudança"],
                       ["Product", "ISIN", "Quantity", "Local value"], ["Product", "ISIN", "Aantal", "Lokale waarde"],
                       ["Produkt", "ISIN", "Anzahl", "Kurs"]]
        case .trading212: [["Action", "ISIN", "No. of shares"]]
        case .koinly: [["Date", "Sent Amount", "Sent Currency", "Received Amount", "Received Currency"]]
        case .coinTracking: [["Type", "Buy", "Cur.", "Sell", "Exchange", "Date"],
                             ["Type", "Buy Amount", "Buy Currency", "Sell Amount", "Sell Currency", "Date"]]
        case .cryptoCom: [["Timestamp (UTC)", "Transaction Description", "Currency", "Amount", "Transaction Kind"]]
        case .fidelity: [["Run Date", "Action", "Symbol", "Security Description", "Price ($)", "Amount ($)"],
                         ["Run Date", "Account", "Action", "Symbol", "Security Description", "Amount ($)"],
                         ["Run Date", "Account Number", "Action", "Symbol", "Exchange Currency", "Amount"]]
        }
    }
}

/// What a statement is read for: the portfolio it goes into, as far as reading it matters.
public struct StatementOptions: Sendable {
    /// Whether the portfolio tracks cash: without it deposits, withdrawals, interest on cash, fees
    /// and currency conversions have nowhere to go and are skipped, counted.
    public var tracksCash: Bool
    /// The file's name (Binance names the time zone in it).
    public var fileName: String
    /// The time zone of a file whose times carry none, when the user names it (Binance's new export,
    /// CoinTracking, Revolut's crypto statement; the last two are read as UTC without it).
    public var utcOffsetSeconds: Int?
    /// The portfolio imported into; it seeds the ids made from the file's own.
    public var portfolio: String

    public init(tracksCash: Bool, portfolio: String = Portfolio.mainName, fileName: String = "", utcOffsetSeconds: Int? = nil) {
        self.tracksCash = tracksCash
        self.portfolio = portfolio
        self.fileName = fileName
        self.utcOffsetSeconds = utcOffsetSeconds
    }
}

public enum StatementImport {
    /// The file's rows as bitpal's import rows, with the assets it names and what it skipped.
    public static func rows(_ bytes: [UInt8], format: StatementFormat, options: StatementOptions) throws(ImportFailure) -> PresetRows {
        // Revolut's crypto statement is read by code; its trading statement by the mapping.
        if format == .revolut, let crypto = try ExchangeImport.Mapper.revolutCrypto(bytes, options: options) { return crypto }
        if let text = format.mapping {
            // A preset written as a mapping reads as `import --map` with that mapping does.
            return try ImportMapping.read(Array(text.utf8)).rows(bytes, tracksCash: options.tracksCash, idSeed: options.portfolio + "\u{1F}" + format.rawValue)
        }
        var m = ExchangeImport.Mapper()
        m.tracksCash = options.tracksCash
        m.source = format.rawValue
        m.portfolio = options.portfolio
        switch format {
        case .ibkr: try m.ibkr(bytes)
        case .krakenLedger: try m.krakenLedger(bytes)
        case .binanceStatement: try m.binanceStatement(bytes, fileName: options.fileName, offset: options.utcOffsetSeconds)
        case .schwab, .revolut: break  // mappings, read above
        case .degiro: try m.degiro(bytes)
        case .trading212: try m.trading212(bytes)
        case .koinly: try m.koinly(bytes)
        case .coinTracking: try m.coinTracking(bytes, offset: options.utcOffsetSeconds)
        case .cryptoCom: try m.cryptoCom(bytes)
        case .fidelity: try m.fidelity(bytes)
        }
        if !m.problems.isEmpty { throw ImportFailure(problems: m.problems) }
        return m.result
    }

    /// The statement format `bytes` is, from its header among the first lines; `nil` otherwise.
    public static func recognise(_ bytes: [UInt8]) -> StatementFormat? {
        guard let head = try? StatementTable.head(bytes) else { return nil }
        for format in StatementFormat.allCases {
            for signature in format.signatures where head.contains(where: { line in signature.allSatisfy { line.contains($0.lowercased()) } }) {
                return format
            }
        }
        return nil
    }
}

/// A statement's table: the delimiter sniffed, a byte-order mark, preamble lines before the header
/// and a trailer after it left out, columns found by name (any case, with aliases) wherever they are.
struct StatementTable {
    /// The data records after the header (blank ones already gone).
    var records: [CSVRecord]
    /// Column index by lower-cased name.
    var columns: [String: Int]
    /// The line the header is on.
    var headerLine: Int

    /// Reads `bytes`, finding the header as the first record among the first 30 that holds every one
    /// of `required` (each a list of aliases), with `,`, `;` or a tab between fields.
    static func read(_ bytes: [UInt8], required: [[String]], what: String) throws(ImportFailure) -> StatementTable {
        var firstError: CSVError?
        for delimiter in [UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "\t")] {
            var records: [CSVRecord] = []
            do {
                var seen = 0
                var header: (Int, [String: Int])?
                try CSV.forEachRecord(bytes, delimiter: delimiter) { fields, line in
                    if header == nil {
                        seen += 1
                        let columns = Self.columns(fields)
                        if required.allSatisfy({ names in names.contains { columns[$0.lowercased()] != nil } }) {
                            header = (line, columns)
                            return true
                        }
                        return seen < 30
                    }
                    if fields.contains(where: { !$0.trimmedSpaces.isEmpty }) { records.append(CSVRecord(fields: fields, line: line)) }
                    return true
                }
                if let (line, columns) = header { return StatementTable(records: records, columns: columns, headerLine: line) }
            } catch {
                // A file read with the wrong delimiter may look malformed; the next one is tried, and
                // when none finds the header, the first one's error is the one to show.
                if firstError == nil { firstError = error }
                continue
            }
        }
        if let firstError { throw ImportFailure(problems: [firstError.description]) }
        throw ImportFailure(problems: ["no \(what) header found (expected the columns " + required.map { $0[0] }.joined(separator: ", ") + ")"])
    }

    /// The first lines' cells, lower-cased, for recognising a file.
    static func head(_ bytes: [UInt8]) throws -> [Set<String>] {
        var lines: [Set<String>] = []
        for line in bytes.prefix(65_536).split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true).prefix(30) {
            for delimiter in [UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "\t")] {
                var cells: [String] = []
                try? CSV.forEachRecord(Array(line), delimiter: delimiter) { fields, _ in cells = fields; return false }
                if cells.count > 2 { lines.append(Set(columns(cells).keys)); break }
            }
        }
        return lines
    }

    static func columns(_ fields: [String]) -> [String: Int] {
        var columns: [String: Int] = [:]
        for (i, cell) in fields.enumerated() {
            let name = cell.replacingOccurrences(of: "\u{FEFF}", with: "").trimmedSpaces.lowercased()
            if !name.isEmpty && columns[name] == nil { columns[name] = i }
        }
        return columns
    }

    func has(_ name: String) -> Bool { columns[name.lowercased()] != nil }

    /// The cell of the first of `names` the header has, trimmed; empty when none.
    func cell(_ r: CSVRecord, _ names: String...) -> String {
        for name in names {
            if let i = columns[name.lowercased()] { return i < r.fields.count ? r.fields[i].trimmedSpaces : "" }
        }
        return ""
    }
}

/// Numbers as statements write them: a decimal comma (`1.234,56`), `$`, parentheses for a
/// negative (`(12.50)`), `0E-8`, spaces between thousands; exact, never via `Double`.
enum StatementNumber {
    static func parse(_ raw: String, decimalComma requested: Bool = false) -> Decimal? {
        // A lone point not followed by a thousands group, in a file of decimal commas, is a decimal
        // point (DEGIRO's own files mix `"-27,80"` and `-2.50`): never a value 100× larger.
        var decimalComma = requested
        if decimalComma, !raw.contains(","), raw.filter({ $0 == "." }).count == 1, let point = raw.firstIndex(of: "."),
           raw[raw.index(after: point)...].prefix(while: { $0.isNumber }).count != 3 || raw.trimmedSpaces.hasPrefix("0.") || raw.trimmedSpaces.hasPrefix("-0.") {
            decimalComma = false
        }
        if raw.utf8.allSatisfy({ $0 < 0x80 }) {
            // The common case, byte by byte (a statement has a number in every other cell).
            var bytes: [UInt8] = []
            bytes.reserveCapacity(raw.utf8.count)
            for b in raw.utf8 where b != 0x20 && b != UInt8(ascii: "'") {
                if decimalComma && b == UInt8(ascii: ".") { continue }
                bytes.append(decimalComma && b == UInt8(ascii: ",") ? UInt8(ascii: ".") : b)
            }
            var negative = false
            if bytes.first == UInt8(ascii: "("), bytes.last == UInt8(ascii: ")") { negative = true; bytes = Array(bytes.dropFirst().dropLast()) }
            guard !bytes.isEmpty, let value = ExchangeNumber.parse(String(decoding: bytes, as: UTF8.self)) else { return nil }
            return negative ? -value : value
        }
        var text = raw.filter { !" \u{00A0}\u{202F}'".contains($0) }
        var negative = false
        if text.hasPrefix("("), text.hasSuffix(")") { negative = true; text = String(text.dropFirst().dropLast()) }
        if decimalComma { text = text.replacingOccurrences(of: ".", with: "").replacingOccurrences(of: ",", with: ".") }
        guard !text.isEmpty, let value = ExchangeNumber.parse(text) else { return nil }
        return negative ? -value : value
    }

    /// Whether a file writes a decimal comma: some value has a comma followed by 1–2 or more than 3
    /// digits, or a comma after a point (`1.234,5`), and none has a point after a comma.
    static func usesDecimalComma(_ samples: [String]) -> Bool {
        var comma = false
        for s in samples {
            let t = s.filter { $0.isNumber || $0 == "," || $0 == "." }
            guard let c = t.lastIndex(of: ",") else { continue }
            if let p = t.lastIndex(of: "."), p > c { return false }
            let after = t[t.index(after: c)...]
            if after.count != 3 || t.contains(".") { comma = true }
        }
        return comma
    }
}

extension ExchangeImport.Mapper {
    /// The rows read so far as the preset's result.
    var result: PresetRows {
        var r = PresetRows(rows: rows, skipped: skipped.sorted { $0.key < $1.key }.map { ($0.key, $0.value) },
                           feesNotCounted: feesNotCounted.sorted { $0.key < $1.key }.map { ($0.key, $0.value) },
                           kinds: PresetRows.kindOrder.compactMap { k in made[k].map { (k, $0) } })
        r.assets = assets.values.sorted { $0.id < $1.id }
        return r
    }

    /// A stable id for a row of the file, from the file's own id (a re-import finds it again), the
    /// format and the portfolio: two accounts' files that number their rows alike, imported into two
    /// portfolios, never take each other's rows for recorded ones.
    func id(_ key: String) -> String { ImportMapping.stableID(portfolio + "\u{1F}" + source + ":" + key) }

    /// Registers `code` (a stock, an ETF, a fund the file names) unless it was already.
    mutating func register(_ code: String, name: String, type: AssetType, currency: String, quote: AssetQuoteSource? = nil) -> String? {
        guard let id = Asset.code(code) else { return nil }
        if assets[id] == nil {
            assets[id] = Asset(id: id, name: name.isEmpty ? id : name, type: type, currency: currency, createdDate: Date(), quote: quote)
        }
        return id
    }

    /// Money in or out of cash with no asset (`deposit`, `withdrawal`, `interest`, `expense`): kept in
    /// a portfolio that tracks cash, else skipped and counted.
    mutating func cash(line: Int, type: String, amount: Decimal, currency: String, fee: Decimal = 0, date: String, notes: String, id rowID: String?) {
        guard tracksCash else { skip("\(type) (the portfolio does not track cash)"); return }
        // A negative amount is a reversal or a file's slip, never the other direction in disguise.
        guard amount >= 0, fee >= 0 else { skip("\(type) (negative)"); return }
        guard let a = Self.fixed(amount), a.units > 0, let f = Self.fixed(fee) else {
            if amount == 0 { skip("\(type) (zero)") } else { tooLarge(line: line, type) }
            return
        }
        var fields: ImportFields = ["type": type, "amount": a.text, "currency": currency, "date": date, "notes": notes]
        if f.units != 0 { fields[.fee] = f.text }
        if let rowID { fields[.id] = rowID }
        keep(line: line, kind: type, [fields])
    }

    /// A dividend of `amount` money from `asset`, `tax` withheld.
    mutating func dividend(line: Int, asset: String, amount: Decimal, tax: Decimal, currency: String, date: String, notes: String, id rowID: String?) {
        // A negative dividend is a reversal whose dividend is not in the file: counted, never made positive.
        guard amount > 0 else { skip(amount == 0 ? "dividend (zero)" : "dividend reversal (its dividend is not in the file)"); return }
        guard tax >= 0, let a = Self.fixed(amount), a.units > 0, let t = Self.fixed(tax) else {
            problems.append("line \(line): a dividend of \(DecimalFormatting.exact(amount)) with tax \(DecimalFormatting.exact(tax)) "
                + "is not one bitpal keeps (the tax must not be negative)")
            return
        }
        var fields: ImportFields = ["type": "dividend", "asset": asset, "amount": a.text, "currency": currency, "date": date, "notes": notes]
        if t.units != 0 { fields[.fee] = t.text }
        if let rowID { fields[.id] = rowID }
        keep(line: line, kind: "dividend", [fields])
    }

    /// A currency conversion: `from` leaves cash and `to` arrives, two linked legs (`cash exchange`).
    mutating func cashExchange(line: Int, from: (Decimal, String), to: (Decimal, String), date: String, notes: String, id rowID: String) {
        guard tracksCash else { skip("currency conversion (the portfolio does not track cash)"); return }
        guard from.0 > 0, to.0 > 0, let out = Self.fixed(from.0), let into = Self.fixed(to.0), out.units > 0, into.units > 0 else {
            problems.append("line \(line): a conversion of \(DecimalFormatting.exact(from.0)) \(from.1) into \(DecimalFormatting.exact(to.0)) \(to.1) "
                + "has an amount that is zero or too large")
            return
        }
        guard from.1 != to.1 else { skip("currency conversion (into the same currency)"); return }
        let depositID = id(rowID + ":in")
        keep(line: line, kind: "cash exchange", [
            ["id": rowID, "type": "withdrawal", "amount": out.text, "currency": from.1, "date": date, "notes": notes, "linkedId": rowID],
            ["id": depositID, "type": "deposit", "amount": into.text, "currency": to.1, "date": date, "notes": notes, "linkedId": rowID],
        ])
    }
}

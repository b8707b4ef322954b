import Foundation

/// A mapping for any CSV (`import FILE --map MAPPING.json`): which column holds what, how numbers
/// and dates are written, and what the file's words for the kinds mean. The rows it makes are
/// bitpal's own import rows, so everything after them (assets, all or nothing, re-imports, dry
/// runs) is the import every file has.
///
/// ```json
/// {"delimiter": ";", "decimalMark": ",",
///  "date": {"column": "Datum", "format": "dd.MM.yyyy", "timeZone": "Europe/Berlin"},
///  "kind": {"column": "Vorgang", "values": {"Kauf": "buy", "Verkauf": "sell"}},
///  "asset": {"column": "Titel"}, "amount": {"column": "Menge"}, "price": {"column": "Kurs"}}
/// ```
public struct ImportMapping: Sendable, Equatable {
    public var delimiter: UInt8 = UInt8(ascii: ",")
    /// `.` or `,`: the other is a thousands separator and is dropped.
    public var decimalMark: UInt8 = UInt8(ascii: ".")
    /// The columns of bitpal's fields.
    public var columns: [TransactionField: String] = [:]
    /// The file's date format (`dd.MM.yyyy`, `yyyy-MM-dd HH:mm:ss`; `nil`: as bitpal reads dates) and zone.
    public var dateFormat: String?
    public var timeZone: TimeZone?
    /// The file's words for the kinds (`Kauf` → buy), matched in any case; `nil`: the kinds' own names.
    public var kinds: [String: TransactionType]?
    /// The column whose value is shared by the rows of one event (an order id): see `grouped`.
    public var groupColumn: String?
    /// Values every row takes (`"currency": {"value": "USD"}`), for fields the file has no column for.
    public var constants: [TransactionField: String] = [:]
    /// The column of the money of kinds whose amount is money (a dividend, a deposit), when the file
    /// keeps it apart from the units of trades.
    public var moneyColumn: String?
    /// `kind.match`: the file's word begins with the mapping's (`YOU BOUGHT …`), not equals it.
    public var kindPrefix = false
    /// `kind.otherwise: "skip"`: a row of another word is skipped and counted, not refused.
    public var skipOtherKinds = false
    /// `register`: every asset the file names is a registered code, registered as this type in the
    /// row's currency when the book lacks it (no coin is looked up).
    public var register: AssetType?
    /// `register.name`: the column of the registered assets' names (else their codes).
    public var nameColumn: String?
    /// `register.quote`: the service registered assets are priced by, their code as its symbol (`yahoo`).
    public var registerQuote: AssetQuoteSource.Service?
    /// `money.signed`: the money's sign says which way it went (negative out, positive in), so a
    /// positive fee is a refund and a negative dividend a reversal (both skipped and counted).
    public var moneySigned = false
    /// `total.includesFee`: the total column is the cash that moved, fee included (a buy's is the
    /// total plus the fee, a sale's the total less it); the total bitpal keeps is without it.
    public var totalIncludesFee = false
    /// The file's words for a tax row (`"Foreign Tax Paid": "tax"`): the tax withheld on the
    /// dividend of its asset and day, else an expense.
    public var taxWords: Set<String> = []

    /// The keys a mapping may name for a column, and the field each fills.
    static let fieldKeys: [(key: String, field: TransactionField)] = [
        ("date", .date), ("kind", .type), ("asset", .assetId), ("amount", .amount), ("price", .price), ("total", .total),
        ("fee", .fee), ("currency", .currency), ("note", .notes), ("id", .id), ("portfolio", .portfolio),
    ]

    public init() {}

    /// Reads a mapping file; every problem is named (an unknown key, a kind bitpal does not have).
    public static func read(_ bytes: [UInt8]) throws(ImportFailure) -> ImportMapping {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] else {
            throw ImportFailure(problems: ["the mapping is not a JSON object"])
        }
        var m = ImportMapping()
        var problems: [String] = []
        func column(_ key: String, constant: ((String) -> Void)? = nil) -> String? {
            guard let value = object[key] else { return nil }
            if let constant, let spec = value as? [String: Any], spec.count == 1, let fixed = spec["value"] as? String {
                constant(fixed)
                return nil
            }
            guard let spec = value as? [String: Any], let name = spec["column"] as? String, !name.isEmpty else {
                problems.append("'\(key)' must be {\"column\": \"NAME\"}" + (constant == nil ? "" : " or {\"value\": \"TEXT\"}"))
                return nil
            }
            return name
        }
        for (key, field) in fieldKeys {
            if let name = column(key, constant: field == .type || field == .date ? nil : { m.constants[field] = $0 }) { m.columns[field] = name }
        }
        m.groupColumn = column("group")
        m.moneyColumn = column("money")
        if let money = object["money"] as? [String: Any], let signed = money["signed"] {
            if let flag = signed as? Bool { m.moneySigned = flag } else { problems.append("'money.signed' is true or false") }
        }
        if let total = object["total"] as? [String: Any], let includes = total["includesFee"] {
            if let flag = includes as? Bool { m.totalIncludesFee = flag } else { problems.append("'total.includesFee' is true or false") }
        }
        let extraKeys = ["delimiter", "decimalMark", "group", "money", "register"]
        for key in object.keys.sorted() where !fieldKeys.contains(where: { $0.key == key }) && !extraKeys.contains(key) {
            problems.append("unknown key '\(TextEscaping.shortened(key))' (" + (extraKeys.prefix(2) + fieldKeys.map(\.key) + extraKeys.dropFirst(2)).joined(separator: ", ") + ")")
        }
        if let register = object["register"] {
            if let spec = register as? [String: Any], let name = spec["type"] as? String, let type = AssetType(rawValue: name), type != .crypto,
               spec["name"] == nil || spec["name"] is String,
               spec["quote"] == nil || (spec["quote"] as? String).flatMap(AssetQuoteSource.Service.init(rawValue:)) != nil {
                m.register = type
                m.nameColumn = spec["name"] as? String
                m.registerQuote = (spec["quote"] as? String).flatMap(AssetQuoteSource.Service.init(rawValue:))
            } else {
                problems.append("'register' must be {\"type\": \"stock\", \"name\": \"COLUMN\", \"quote\": \"yahoo\"} (name and quote optional; quote yahoo or twelvedata; type etf, bond, mutual-fund, commodity, real-estate, cash, other)")
            }
        }
        if let text = object["delimiter"] {
            let d = (text as? String).flatMap { $0 == "\\t" ? "\t" : $0 }
            if let d, d.utf8.count == 1, let b = d.utf8.first, b != UInt8(ascii: "\"") { m.delimiter = b } else {
                problems.append("'delimiter' must be one character (\",\", \";\", \"\\t\")")
            }
        }
        if let text = object["decimalMark"] {
            if let d = text as? String, d == "." || d == "," { m.decimalMark = UInt8(ascii: d == "," ? "," : ".") } else {
                problems.append("'decimalMark' must be \".\" or \",\"")
            }
        }
        if let date = object["date"] as? [String: Any] {
            m.dateFormat = date["format"] as? String
            if let zone = date["timeZone"] as? String {
                if let tz = TimeZone(identifier: zone) { m.timeZone = tz } else { problems.append("unknown timeZone '\(TextEscaping.shortened(zone))'") }
            }
            if m.timeZone != nil && m.dateFormat == nil {
                problems.append("'date.timeZone' needs 'date.format' (a date read as bitpal reads it carries its own offset or is a day)")
            }
            if let format = m.dateFormat, DateFormat(format) == nil {
                problems.append("date format '\(TextEscaping.shortened(format))' needs yyyy (or yy), MM and dd; HH, mm and ss may follow")
            }
        }
        if let kind = object["kind"] as? [String: Any] {
            switch kind["match"] as? String {
            case nil, "exact"?: break
            case "prefix"?: m.kindPrefix = true
            default: problems.append("'kind.match' is \"exact\" or \"prefix\"")
            }
            switch kind["otherwise"] as? String {
            case nil, "refuse"?: break
            case "skip"?: m.skipOtherKinds = true
            default: problems.append("'kind.otherwise' is \"refuse\" or \"skip\"")
            }
        }
        if let kind = object["kind"] as? [String: Any], let values = kind["values"] {
            guard let table = values as? [String: String] else {
                problems.append("'kind.values' must map the file's words to kinds")
                return try done()
            }
            var kinds: [String: TransactionType] = [:]
            for (word, name) in table {
                if name == "tax" { m.taxWords.insert(word.lowercased()); continue }
                if let type = TransactionType(rawValue: name) { kinds[word.lowercased()] = type } else {
                    problems.append("kind '\(TextEscaping.shortened(name))' (for '\(TextEscaping.shortened(word))') is not one of "
                        + TransactionType.allCases.map(\.rawValue).joined(separator: ", ") + ", or tax (a dividend's tax row)")
                }
            }
            m.kinds = kinds
        }
        for field in [TransactionField.date, .type, .assetId, .amount] where m.columns[field] == nil {
            problems.append("the mapping names no column for \(fieldKeys.first { $0.field == field }?.key ?? field.name)")
        }
        func done() throws(ImportFailure) -> ImportMapping {
            if !problems.isEmpty { throw ImportFailure(problems: problems.map { "mapping: " + $0 }) }
            return m
        }
        return try done()
    }

    /// The file's rows as bitpal's import rows, with what each kind became and what was skipped. The
    /// header is the first of the first 30 records that has every column the mapping names (lines
    /// before it, a title or a disclaimer, are left out); a column it lacks is refused naming it. A
    /// row whose kind, number or date cannot be read is named with its line. Without `tracksCash`,
    /// rows of money alone (a deposit, a fee) are skipped and counted.
    public func rows(_ bytes: [UInt8], tracksCash: Bool = true, idSeed: String? = nil) throws(ImportFailure) -> PresetRows {
        // The file's ids are the file's: seeded with the portfolio and what the mapping reads, two
        // banks that both number a row 1001 never take each other's row for a recorded one.
        let seed = (idSeed ?? (Self.fieldKeys.compactMap { columns[$0.field] } + [groupColumn ?? ""]).joined(separator: "|")) + "\u{1F}"
        var index: [String: Int] = [:]
        var rows: [ImportRow] = []
        var groups: [String] = []
        var problems: [String] = []
        var header: [String]?
        var first: (line: Int, names: [String])?
        var seen = 0
        var skipped: [String: Int] = [:]
        var made: [String: Int] = [:]
        var registered: [String: (name: String, currency: String)] = [:]  // registered once the rows are joined and kept
        let format = dateFormat.flatMap(DateFormat.init)
        let named = Self.fieldKeys.compactMap { key in columns[key.field].map { (key.field.name, $0) } }
            + [("group", groupColumn), ("money", moneyColumn), ("name", nameColumn)].compactMap { k, v in v.map { (k, $0) } }
        // Longest words first, so that `YOU BOUGHT` is not taken for `YOU`.
        let prefixes = (kinds ?? [:]).sorted { $0.key.count > $1.key.count }
        let taxPrefixes = taxWords.sorted { $0.count > $1.count }
        var taxes: [(row: ImportRow, day: Substring)] = []
        do {
            try CSV.forEachRecord(bytes, delimiter: delimiter) { fields, line in
                if header == nil {
                    seen += 1
                    let names = fields.map { $0.replacingOccurrences(of: "\u{FEFF}", with: "").trimmedSpaces }
                    if first == nil { first = (line, names) }
                    if named.allSatisfy({ names.contains($0.1) }) {
                        header = names
                        for (key, column) in named { index[key] = names.firstIndex(of: column) }
                        return true
                    }
                    return seen < 30
                }
                func text(_ field: TransactionField) -> String? { cell(field.name) ?? constants[field] }
                func cell(_ name: String) -> String? {
                    guard let i = index[name], i < fields.count else { return nil }
                    let t = fields[i].trimmedSpaces
                    return t.isEmpty ? nil : t
                }
                var row = ImportFields()
                var isTax = false
                do throws(LineProblem) {
                    let kindText = text(.type) ?? ""
                    let word = kindText.lowercased()
                    if taxWords.contains(word) {
                        isTax = true
                    } else if kindPrefix, kinds?[word] == nil {
                        // The longest word that begins the file's wins, a tax word or a kind's.
                        let kindMatch = prefixes.first { word.hasPrefix($0.key) }?.key.count ?? 0
                        isTax = (taxPrefixes.first { word.hasPrefix($0) }?.count ?? 0) > kindMatch
                    }
                    var found: TransactionType?
                    if isTax {
                        found = .expense
                    } else if let kinds {
                        found = kinds[word] ?? (kindPrefix ? prefixes.first { word.hasPrefix($0.key) }?.value : nil)
                    } else {
                        found = TransactionType(rawValue: word)
                    }
                    guard var type = found else {
                        if skipOtherKinds { skipped[kindText.isEmpty ? "untyped" : TextEscaping.shortened(kindText), default: 0] += 1; return true }
                        throw LineProblem(kinds == nil ? "kind '\(TextEscaping.shortened(kindText))' is not a kind"
                            : "kind '\(TextEscaping.shortened(kindText))' is not among the mapping's values")
                    }
                    let rule = KindRule.of(type)
                    if rule.asset == .required, text(.assetId) == nil, skipOtherKinds {
                        skipped["\(type.rawValue) (no asset)", default: 0] += 1
                        return true
                    }
                    // A file fills its total column on every row; only a buy or a sell takes one.
                    for field in [TransactionField.amount, .price, .total, .fee] where field != .total || rule.takesTotal {
                        let fromMoney = field == .amount && rule.amountIsMoney && cell("money") != nil
                        let raw = field == .amount && rule.amountIsMoney ? (cell("money") ?? text(field)) : text(field)
                        guard let raw else { continue }
                        guard var number = normalized(raw) else { throw LineProblem("\(field.name) '\(TextEscaping.shortened(raw))' is not a number") }
                        let negative = number.hasPrefix("-")
                        let zero = ExchangeNumber.parse(number) == 0
                        if field == .amount && rule.amountIsMoney && zero {
                            // No money moved (`$0.00`): nothing to record, counted.
                            skipped["\(isTax ? "tax" : type.rawValue) (zero)", default: 0] += 1
                            return true
                        }
                        if field == .amount && rule.amountIsMoney {
                            // Money moving either way under one word (`MoneyLink Transfer`): negative is out.
                            if type == .deposit && negative { type = .withdrawal } else if type == .withdrawal && positiveMeansIn(fromMoney) && !negative { type = .deposit }
                            // Money that comes in is never made positive from a negative (a reversal), and with
                            // signed money a positive outflow (a refund) is not taken for a cost.
                            let inflow = type == .dividend || type == .interest
                            if (inflow && negative) || (type == .expense && positiveMeansIn(fromMoney) && !negative) {
                                let why = inflow ? "negative: a reversal" : "positive: a refund"
                                guard skipOtherKinds || moneySigned else { throw LineProblem("a \(isTax ? "tax" : type.rawValue) row of \(number) (\(why)) is not one bitpal imports") }
                                skipped["\(isTax ? "tax" : type.rawValue) (\(why))", default: 0] += 1
                                return true
                            }
                        }
                        // Files write a sale's or an outflow's amount negative; bitpal's are magnitudes (but an adjustment's).
                        if negative && !(field == .amount && type == .adjustment) { number.removeFirst() }
                        row[field] = number
                    }
                    if totalIncludesFee, let total = row[.total].flatMap({ ExchangeNumber.parse($0) }) {
                        // The cash that moved, fee included: bitpal's total is without it.
                        let fee = row[.fee].flatMap { ExchangeNumber.parse($0) } ?? 0
                        let gross = type == .buy ? total - fee : total + fee
                        row[.total] = gross > 0 ? ExchangeNumber.literal(gross) : nil
                    }
                    row[.type] = type.rawValue
                    guard let dateText = text(.date) else { throw LineProblem("no date") }
                    row[.date] = try date(dateText, format: format)
                    row[.assetId] = rule.asset == .none && !isTax ? nil : text(.assetId)  // a tax row finds its dividend by asset
                    row[.currency] = text(.currency)
                    row[.notes] = text(.notes)
                    row[.portfolio] = text(.portfolio)
                    // The file's own id keeps a re-import from adding a row twice.
                    row[.id] = text(.id).map { Self.stableID(seed + $0) }
                    if register != nil, let asset = row[.assetId] {
                        guard let code = Asset.code(asset) else { throw LineProblem("asset '\(TextEscaping.shortened(asset))' is not a code bitpal keeps (1–24 of A–Z 0–9 . _ - :)") }
                        row[.assetId] = code
                        let currency = row[.currency].flatMap { CurrencyCode.parse($0)?.code } ?? "USD"
                        if let first = registered[code], first.currency != currency, rule.hasCurrency {
                            // bitpal keeps an asset in one currency: a row in a second one is counted, not refused with the file.
                            skipped["\(isTax ? "tax" : type.rawValue) (in \(currency): \(code) is kept in \(first.currency))", default: 0] += 1
                            return true
                        }
                        if registered[code] == nil { registered[code] = (cell("name") ?? code, currency) }
                    }
                } catch {
                    problems.append("line \(line): \(error.message)")
                    return problems.count < 1000
                }
                if isTax {
                    taxes.append((ImportRow(location: "line \(line)", fields: row, order: line), (row[.date] ?? "").prefix(10)))
                    return true
                }
                rows.append(ImportRow(location: "line \(line)", fields: row, order: line))
                groups.append(cell("group") ?? "")
                return true
            }
        } catch {
            throw ImportFailure(problems: [error.description])
        }
        if header == nil {
            // The header is taken to be the first record: what it lacks is named.
            guard let (line, names) = first else { throw ImportFailure(problems: ["the file is empty (expected a header row)"]) }
            let missing = named.filter { !names.contains($0.1) }.map(\.1)
            throw ImportFailure(problems: ["line \(line): no column " + missing.map { "'\(TextEscaping.shortened($0))'" }.joined(separator: ", ")
                + " (the header has " + names.map { "'\(TextEscaping.shortened($0))'" }.joined(separator: ", ") + ")"])
        }
        if !problems.isEmpty { throw ImportFailure(problems: problems) }
        var all = groupColumn == nil ? rows : try Self.grouped(rows, by: groups, seed: seed)
        // A tax row is the tax withheld on the dividend of its asset and day (in the file's order or not); alone, an expense.
        var dividendAt: [String: Int] = [:]
        for (i, row) in all.enumerated() where row.fields[.type] == TransactionType.dividend.rawValue {
            let key = (row.fields[.assetId] ?? "") + "\u{1F}" + (row.fields[.date] ?? "").prefix(10)
            if dividendAt[key] == nil { dividendAt[key] = i }
        }
        for (tax, day) in taxes {
            if let asset = tax.fields[.assetId], let i = dividendAt[asset + "\u{1F}" + day] {
                let withheld = (all[i].fields[.fee].flatMap { ExchangeNumber.parse($0) } ?? 0) + (tax.fields[.amount].flatMap { ExchangeNumber.parse($0) } ?? 0)
                all[i].fields[.fee] = ExchangeNumber.literal(withheld)
            } else {
                var expense = tax
                expense.fields[.assetId] = nil
                all.append(expense)
            }
        }
        all.sort { $0.order < $1.order }
        var kept: [ImportRow] = []
        for row in all {
            let type = row.fields[.type] ?? ""
            // Money alone (a deposit, a fee, interest on cash) needs a portfolio that tracks cash.
            if !tracksCash, let t = TransactionType(rawValue: type), KindRule.of(t).asset != .required, row.fields[.assetId] == nil {
                skipped["\(type) (the portfolio does not track cash)", default: 0] += 1
                continue
            }
            made[type, default: 0] += 1
            kept.append(row)
        }
        var result = PresetRows(rows: kept, skipped: skipped.sorted { $0.key < $1.key }.map { ($0.key, $0.value) },
                                kinds: (PresetRows.kindOrder + TransactionType.allCases.map(\.rawValue).filter { !PresetRows.kindOrder.contains($0) })
                                    .compactMap { k in made[k].map { (k, $0) } })
        // Only assets a kept row names are registered (a tax row left as an expense names none).
        if let register {
            let named = Set(kept.compactMap { $0.fields[.assetId] })
            result.assets = registered.filter { named.contains($0.key) }.sorted { $0.key < $1.key }.map { code, first in
                Asset(id: code, name: first.name, type: register, currency: first.currency, createdDate: Date(),
                      quote: registerQuote.map { AssetQuoteSource(service: $0, symbol: code) })
            }
        }
        return result
    }

    /// Rows sharing a group value (an order id) are one event: the trades of one kind and asset are one
    /// (amounts, totals and fees added; the price is then total ÷ amount), a row of kind `expense`
    /// becomes the fee of the group's trade or the tax of its dividend or interest, and the group's
    /// value makes its id when no row has one. Rows without a group value stay as they are.
    static func grouped(_ rows: [ImportRow], by groups: [String], seed: String) throws(ImportFailure) -> [ImportRow] {
        var order: [String] = []
        var members: [String: [ImportRow]] = [:]
        var out: [ImportRow] = []
        for (row, group) in zip(rows, groups) {
            if group.isEmpty { out.append(row); continue }
            if members[group] == nil { order.append(group) }
            members[group, default: []].append(row)
        }
        var problems: [String] = []
        func number(_ row: ImportRow, _ field: TransactionField) -> Decimal? { row.fields[field].flatMap { ExchangeNumber.parse($0) } }
        for group in order {
            let rows = members[group] ?? []
            let expenses = rows.filter { $0.fields[.type] == TransactionType.expense.rawValue }
            var merged: [ImportRow] = []
            var at: [String: Int] = [:]  // merged row by kind and asset: a group of many rows stays linear
            for row in rows where row.fields[.type] != TransactionType.expense.rawValue {
                let type = row.fields[.type] ?? ""
                let key = type + "\u{1F}" + (row.fields[.assetId] ?? "")
                if ["buy", "sell", "dividend", "interest"].contains(type), let i = at[key] {
                    var into = merged[i]
                    let trade = type == "buy" || type == "sell"
                    func total(_ r: ImportRow) -> Decimal? { number(r, .total) ?? (number(r, .amount).flatMap { a in number(r, .price).map { a * $0 } }) }
                    if trade {
                        guard let t1 = total(into), let t2 = total(row) else {
                            problems.append("\(row.location): a fill of group '\(TextEscaping.shortened(group))' has no price or total to add up")
                            continue
                        }
                        into.fields[.total] = ExchangeNumber.literal(t1 + t2)
                        into.fields[.price] = nil
                    }
                    into.fields[.amount] = ExchangeNumber.literal((number(into, .amount) ?? 0) + (number(row, .amount) ?? 0))
                    let fee = (number(into, .fee) ?? 0) + (number(row, .fee) ?? 0)
                    if fee != 0 { into.fields[.fee] = ExchangeNumber.literal(fee) }
                    merged[i] = into
                } else {
                    if ["buy", "sell", "dividend", "interest"].contains(type) { at[key] = merged.count }
                    merged.append(row)
                }
            }
            if !expenses.isEmpty {
                if let i = merged.firstIndex(where: { ["buy", "sell", "dividend", "interest"].contains($0.fields[.type] ?? "") }) {
                    let extra = expenses.reduce(Decimal(0)) { $0 + (number($1, .amount) ?? 0) }
                    merged[i].fields[.fee] = ExchangeNumber.literal((number(merged[i], .fee) ?? 0) + extra)
                } else {
                    merged += expenses
                }
            }
            for (k, var row) in merged.enumerated() where row.fields[.id] == nil {
                row.fields[.id] = stableID(seed + "group:" + group + (k == 0 ? "" : ":\(k)"))
                merged[k] = row
            }
            out += merged
        }
        if !problems.isEmpty { throw ImportFailure(problems: problems) }
        return out.sorted { $0.order < $1.order }
    }

    struct LineProblem: Error { var message: String; init(_ m: String) { message = m } }

    /// Whether a positive value read for money means money in: with `money.signed`, for the money column.
    func positiveMeansIn(_ fromMoney: Bool) -> Bool { moneySigned && fromMoney }

    /// A number as the file writes it (`1.234,56` with a decimal comma, `$1,234.56`, `(12.50)`, `0E-8`)
    /// as a plain literal bitpal reads; `nil` when it is not one.
    func normalized(_ raw: String) -> String? {
        var text = raw.filter { !" \u{00A0}\u{202F}'$€£¥".contains($0) }
        // A currency code before or after the amount (`USD 325.37`, `EUR3000`, `USD -1.20`, `89.50 SEK`).
        if text.count > 3, text.prefix(3).allSatisfy({ $0.isASCII && $0.isUppercase }), CurrencyCode.isSupported(String(text.prefix(3))) {
            text.removeFirst(3)
        } else if text.count > 3, text.suffix(3).allSatisfy({ $0.isASCII && $0.isUppercase }), CurrencyCode.isSupported(String(text.suffix(3))) {
            text.removeLast(3)
        }
        var negative = false
        if text.hasPrefix("("), text.hasSuffix(")") { negative = true; text = String(text.dropFirst().dropLast()) }
        if text.hasPrefix("-") { negative.toggle(); text.removeFirst() } else if text.hasPrefix("+") { text.removeFirst() }
        var decimalMark = self.decimalMark
        // A comma followed by other than three digits in a file of decimal points is the locale leaking
        // into one value (Revolut's "0,76672417"): a decimal comma, never a thousands separator.
        if decimalMark == UInt8(ascii: "."), !text.contains("."), text.filter({ $0 == "," }).count == 1,
           let comma = text.firstIndex(of: ","), text[text.index(after: comma)...].count != 3 || text.hasPrefix("0,") {
            decimalMark = UInt8(ascii: ",")
        }
        // And the mirror: a lone point in a file of decimal commas, not followed by a thousands group, is a decimal point.
        if decimalMark == UInt8(ascii: ","), !text.contains(","), text.filter({ $0 == "." }).count == 1,
           let point = text.firstIndex(of: "."), text[text.index(after: point)...].count != 3 || text.hasPrefix("0.") {
            decimalMark = UInt8(ascii: ".")
        }
        let thousands: Character = decimalMark == UInt8(ascii: ",") ? "." : ","
        text.removeAll { $0 == thousands }
        if decimalMark == UInt8(ascii: ",") { text = text.replacingOccurrences(of: ",", with: ".") }
        if text.contains(where: { $0 == "e" || $0 == "E" }) {
            // `0E-8` and its kin: exact through Decimal's own reading of the digits.
            guard let value = ServiceNumbers.exact(text) else { return nil }
            text = DecimalFormatting.exact(value)
        }
        guard !text.isEmpty, DecimalLiteral.parse(utf8: text.utf8) != nil else { return nil }
        return (negative ? "-" : "") + text
    }

    /// A date as bitpal reads it: a day `YYYY-MM-DD`, or an instant with its offset (a local time in
    /// the mapping's zone).
    func date(_ text: String, format: DateFormat?) throws(LineProblem) -> String {
        guard let format else { return text }
        guard let date = format.recordText(text, in: timeZone ?? TimeZone(identifier: "UTC") ?? .current) else {
            throw LineProblem("date '\(TextEscaping.shortened(text))' is not written as \(format.pattern)")
        }
        return date
    }

    /// A UUID made from a file's own id text, the same every time (FNV-1a over the text, twice seeded).
    static func stableID(_ text: String) -> String {
        if let u = UUIDText.parse(Array(text.utf8)) { return UUIDText.lowercased(u) }
        func fnv(_ seed: UInt64) -> UInt64 {
            var h = seed
            for b in text.utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01B3 }
            return h
        }
        let a = fnv(0xCBF2_9CE4_8422_2325), b = fnv(0x8422_2325_CBF2_9CE4)
        var bytes = [UInt8](repeating: 0, count: 16)
        for i in 0..<8 { bytes[i] = UInt8((a >> (8 * i)) & 0xFF); bytes[8 + i] = UInt8((b >> (8 * i)) & 0xFF) }
        bytes[6] = (bytes[6] & 0x0F) | 0x50  // version 5-like: name-based
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let uuid = UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                               bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
        return UUIDText.lowercased(uuid)
    }
}

/// A date format of `yyyy`/`yy`, `MM`/`M`, `dd`/`d`, `HH`, `mm`, `ss` and literal characters.
struct DateFormat: Sendable {
    enum Token: Sendable { case year4, year2, month, day, hour, minute, second, literal(Character) }
    let pattern: String
    let tokens: [Token]

    /// A pattern ending in ` *` ignores what follows the date after a space (Schwab's `04/17/2023 as of 04/15/2023`).
    let ignoresRest: Bool

    init?(_ pattern: String) {
        self.pattern = pattern
        var tokens: [Token] = []
        ignoresRest = pattern.hasSuffix(" *")
        var rest = Substring(ignoresRest ? pattern.dropLast(2) : Substring(pattern))
        let names: [(String, Token)] = [("yyyy", .year4), ("yy", .year2), ("MM", .month), ("M", .month), ("dd", .day), ("d", .day),
                                        ("HH", .hour), ("mm", .minute), ("ss", .second)]
        while let c = rest.first {
            if let (name, token) = names.first(where: { rest.hasPrefix($0.0) }) {
                tokens.append(token)
                rest = rest.dropFirst(name.count)
            } else {
                tokens.append(.literal(c))
                rest = rest.dropFirst()
            }
        }
        func has(_ t: (Token) -> Bool) -> Bool { tokens.contains(where: t) }
        guard has({ if case .year4 = $0 { true } else if case .year2 = $0 { true } else { false } }),
              has({ if case .month = $0 { true } else { false } }), has({ if case .day = $0 { true } else { false } }) else { return nil }
        self.tokens = tokens
    }

    /// `text` as bitpal reads a date: the day (`2024-03-01`) when the format has no time, else the
    /// instant of that local time in `zone`; `nil` when `text` is not written so. With `dayOnly`,
    /// the day even when a time is given.
    func recordText(_ text: String, in zone: TimeZone, dayOnly: Bool = false) -> String? {
        guard let parts = read(text) else { return nil }
        guard let millis = parts.millisOfDay, !dayOnly else { return ISODate.dayText(ISODate.days(fromCivil: parts.year, parts.month, parts.day)) }
        return ISODate.format(ISODate.localTime((parts.year, parts.month, parts.day), millisOfDay: millis, in: zone))
    }

    /// The parts `text` holds, or `nil` when it is not written so (or names no real day).
    func read(_ text: String) -> (year: Int64, month: Int64, day: Int64, millisOfDay: Int64?)? {
        var chars = Substring(text)
        var y: Int64 = 0, mo: Int64 = 0, d: Int64 = 0, h: Int64?, mi: Int64 = 0, s: Int64 = 0
        func number(max width: Int) -> Int64? {
            let digits = chars.prefix(width).prefix { $0.isASCII && $0.isNumber }
            guard !digits.isEmpty, let v = Int64(digits) else { return nil }
            chars = chars.dropFirst(digits.count)
            return v
        }
        for token in tokens {
            switch token {
            case .year4: guard let v = number(max: 4) else { return nil }; y = v
            case .year2: guard let v = number(max: 2) else { return nil }; y = 2000 + v
            case .month: guard let v = number(max: 2) else { return nil }; mo = v
            case .day: guard let v = number(max: 2) else { return nil }; d = v
            case .hour: guard let v = number(max: 2) else { return nil }; h = v
            case .minute: guard let v = number(max: 2) else { return nil }; mi = v
            case .second: guard let v = number(max: 2) else { return nil }; s = v
            case let .literal(c): guard chars.first == c else { return nil }; chars = chars.dropFirst()
            }
        }
        if ignoresRest && chars.first == " " { chars = "" }
        guard chars.isEmpty, (1...12).contains(mo), d >= 1, d <= ISODate.daysInMonth(y, mo), (h ?? 0) < 24, mi < 60, s < 60 else { return nil }
        return (y, mo, d, h.map { (($0 * 60 + mi) * 60 + s) * 1000 })
    }
}

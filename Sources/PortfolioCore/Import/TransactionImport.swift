import Foundation

/// One row to import, with its fields under canonical names
/// (`type`, `coin`, `amount`, `price`, `date`, `fee`, `notes`, `id`) and where it came from.
public struct ImportRow: Sendable {
    /// `line 7` for CSV (the line where the record starts), `item 3` for JSON.
    public var location: String
    public var fields: ImportFields
    /// Position in the file, for ordering messages.
    public var order: Int

    public init(location: String, fields: ImportFields, order: Int = 0) {
        self.location = location
        self.fields = fields
        self.order = order
    }
}

/// A row's values by canonical column name, stored without a dictionary (a million rows stay small).
public struct ImportFields: Sendable, ExpressibleByDictionaryLiteral {
    /// The columns bitpal knows.
    public enum Column: Int, CaseIterable, Sendable {
        case type, coin, amount, price, date, fee, notes, id

        public init?(name: String) {
            guard let c = Column.byName[name] else { return nil }
            self = c
        }

        static let byName: [String: Column] = [
            "type": .type, "coin": .coin, "amount": .amount, "price": .price, "date": .date, "fee": .fee,
            "notes": .notes, "id": .id,
        ]
    }

    private var values: (String?, String?, String?, String?, String?, String?, String?, String?) =
        (nil, nil, nil, nil, nil, nil, nil, nil)

    public init(dictionaryLiteral elements: (String, String)...) {
        for (k, v) in elements { self[k] = v }
    }

    public subscript(_ column: Column) -> String? {
        get {
            switch column {
            case .type: values.0
            case .coin: values.1
            case .amount: values.2
            case .price: values.3
            case .date: values.4
            case .fee: values.5
            case .notes: values.6
            case .id: values.7
            }
        }
        set {
            switch column {
            case .type: values.0 = newValue
            case .coin: values.1 = newValue
            case .amount: values.2 = newValue
            case .price: values.3 = newValue
            case .date: values.4 = newValue
            case .fee: values.5 = newValue
            case .notes: values.6 = newValue
            case .id: values.7 = newValue
            }
        }
    }

    public subscript(_ name: String) -> String? {
        get { Column(name: name).flatMap { self[$0] } }
        set { if let c = Column(name: name) { self[c] = newValue } }
    }
}

/// An import that cannot go ahead: every problem found, each prefixed with its location.
public struct ImportFailure: Error, Equatable, Sendable {
    public var problems: [String]

    public init(problems: [String]) { self.problems = problems }
}

/// What an import adds and what it recognises as already recorded.
public struct ImportPlan: Sendable {
    public var added: [Transaction]
    public var skipped: Int
    /// Where each added transaction came from (`line 7`), for messages.
    public var locations: [String] = []

    /// `message` prefixed with the row the failing transaction came from, when it is one of ours.
    public func locate(_ error: PortfolioError, names: MessageNames = .plain) -> String {
        let text = error.description(names: names)
        switch error {
        case let .insufficientQuantity(s):
            if let i = added.firstIndex(where: { $0.id == s.id }), i < locations.count { return "\(locations[i]): \(text)" }
        case .breaksLater:
            return "the imported rows would break a recorded transaction: " + text
        default: break
        }
        return text
    }
}

/// Reads `bitpal import` files and checks every row as `add` would, all or nothing.
public enum TransactionImport {
    static let aliases: [String: String] = [
        "type": "type", "coin": "coin", "coinid": "coin", "amount": "amount", "price": "price",
        "pricepercoin": "price", "date": "date", "fee": "fee", "notes": "notes", "note": "notes", "id": "id",
    ]
    static let required = ["type", "coin", "amount", "price", "date"]

    /// Rows of a bitpal CSV: a header naming the columns in any order (case-insensitive).
    public static func rows(csv bytes: [UInt8]) throws(ImportFailure) -> [ImportRow] {
        var columns: [(Int, ImportFields.Column)] = []
        var headerSeen = false
        var rows: [ImportRow] = []
        rows.reserveCapacity(bytes.count / 60)
        var headerProblem: String?
        do {
            try CSV.forEachRecord(bytes) { fields, line in
                if !headerSeen {
                    headerSeen = true
                    var seen: Set<String> = []
                    for (i, raw) in fields.enumerated() {
                        if let canonical = aliases[raw.trimmedSpaces.lowercased()] {
                            if !seen.insert(canonical).inserted {
                                headerProblem = "line \(line): column '\(canonical)' appears twice"
                                return false
                            }
                            if let column = ImportFields.Column(name: canonical) { columns.append((i, column)) }
                        }
                    }
                    let missing = required.filter { !seen.contains($0) }
                    if !missing.isEmpty {
                        headerProblem = "line \(line): missing column\(missing.count == 1 ? "" : "s") "
                            + missing.map { "'\($0)'" }.joined(separator: ", ")
                            + " (need type, coin, amount, price, date; optional fee, notes, id)"
                        return false
                    }
                    return true
                }
                var row = ImportFields()
                for (i, column) in columns where i < fields.count { row[column] = fields[i] }
                rows.append(ImportRow(location: "line \(line)", fields: row, order: line))
                return true
            }
        } catch {
            throw ImportFailure(problems: [error.description])
        }
        if let headerProblem { throw ImportFailure(problems: [headerProblem]) }
        if !headerSeen { throw ImportFailure(problems: ["the file is empty (expected a header row)"]) }
        return rows
    }

    /// Rows of a JSON array of transaction objects, as `list --json` and `export` print them.
    public static func rows(json bytes: [UInt8]) throws(ImportFailure) -> [ImportRow] {
        var r = JSONReader(bytes: bytes)
        var rows: [ImportRow] = []
        do {
            try r.beginArray()
            var item = 0
            while try r.nextElement() {
                item += 1
                var fields = ImportFields()
                try r.beginObject()
                while let key = try r.nextKey() {
                    let canonical = aliases[key.lowercased()] ?? key
                    if r.consumeNull() { continue }
                    switch canonical {
                    case "amount", "price", "fee":
                        // Decimals are strings in bitpal's JSON; a bare number is accepted too, from its text.
                        if let s = try? r.readString() {
                            fields[canonical] = s
                        } else {
                            fields[canonical] = try r.readNumberText()
                        }
                    case "type", "coin", "date", "notes", "id":
                        fields[canonical] = try r.readString()
                    default:
                        try r.skipValue()
                    }
                }
                rows.append(ImportRow(location: "item \(item)", fields: fields, order: item))
            }
            try r.finish()
        } catch {
            throw ImportFailure(problems: ["not a JSON array of transactions: \(error)"])
        }
        return rows
    }

    /// Checks every row, drops rows already recorded, and checks the merged history.
    ///
    /// A row is already recorded when its `id` is in the store, or (unless
    /// `allowDuplicates`) when a stored transaction has the same type, coin, amount,
    /// price, fee and date — counted as a multiset, so two identical rows in a first
    /// import both land and importing the file again adds none.
    ///
    /// - Parameter resolveCoin: turns the `coin` text into a coin id, or throws `PortfolioError.coinNotFound`.
    /// - Throws: `ImportFailure` listing every failing row.
    public static func plan(
        _ rows: [ImportRow], into existing: [Transaction], now: Date, allowDuplicates: Bool,
        timeZone: TimeZone = .current, resolveCoin: (String) throws -> String
    ) throws(ImportFailure) -> ImportPlan {
        var problems: [(Int, String)] = []
        var parsed: [Transaction] = []
        var parsedRow: [Int] = []
        var coinCache: [String: Result<String, Error>] = [:]
        var idsInFile: [UUID: String] = [:]
        parsed.reserveCapacity(rows.count)
        parsedRow.reserveCapacity(rows.count)
        for (index, row) in rows.enumerated() {
            do {
                let coinText = try field(row, .coin)
                let coinId: String
                switch coinCache[coinText] {
                case let .success(id)?: coinId = id
                case let .failure(e)?: throw e
                case nil:
                    do {
                        coinId = try resolveCoin(coinText)
                        coinCache[coinText] = .success(coinId)
                    } catch {
                        coinCache[coinText] = .failure(error)
                        throw error
                    }
                }
                let tx = try transaction(from: row, coinId: coinId, timeZone: timeZone)
                try ValueRules.check(tx, now: now)
                if row.fields[.id].map({ !$0.isEmpty }) == true {
                    if let first = idsInFile[tx.id] {
                        throw CommandError("id \(UUIDText.lowercased(tx.id)) also appears at \(first)")
                    }
                    idsInFile[tx.id] = row.location
                }
                parsed.append(tx)
                parsedRow.append(index)
            } catch {
                problems.append((row.order, "\(row.location): \(error)"))
            }
        }

        // De-duplicate against the store, as a multiset of trade keys.
        let knownIDs = Set(existing.map(\.id))
        var counts: [TradeKey: Int] = [:]
        if !allowDuplicates { for t in existing { counts[t.tradeKey, default: 0] += 1 } }
        var added: [Transaction] = []
        added.reserveCapacity(parsed.count)
        var addedRow: [Int] = []
        addedRow.reserveCapacity(parsed.count)
        var skipped = 0
        for (i, tx) in parsed.enumerated() {
            if !knownIDs.isEmpty && knownIDs.contains(tx.id) { skipped += 1; continue }
            if !counts.isEmpty, let n = counts[tx.tradeKey], n > 0 {
                counts[tx.tradeKey] = n - 1
                skipped += 1
                continue
            }
            added.append(tx)
            addedRow.append(parsedRow[i])
        }
        parsed = []

        if !problems.isEmpty {
            throw ImportFailure(problems: problems.sorted { $0.0 < $1.0 }.map(\.1))
        }
        // The merged history is checked where every write is: `Book.admit`, under the store's lock.
        return ImportPlan(added: added, skipped: skipped, locations: addedRow.map { rows[$0].location })
    }

    static func field(_ row: ImportRow, _ column: ImportFields.Column) throws -> String {
        guard let v = row.fields[column]?.trimmedSpaces, !v.isEmpty else {
            throw CommandError("missing \(column)")
        }
        return v
    }

    static func transaction(from row: ImportRow, coinId: String, timeZone: TimeZone) throws -> Transaction {
        let typeText = try field(row, .type)
        guard let type = TransactionType(rawValue: typeText.lowercased()) else {
            throw CommandError("type '\(TextEscaping.escaped(typeText))' is not buy or sell")
        }
        func value(_ column: ImportFields.Column, _ label: String) throws -> Fixed18 {
            try ValueRules.fixed(try field(row, column), field: label)
        }
        let amount = try value(.amount, "Amount")
        let price = try value(.price, "Price")
        let fee = row.fields[.fee].map { $0.trimmedSpaces.isEmpty } == false
            ? try value(.fee, "Fee") : .zero
        let dateText = try field(row, .date)
        // A day, a local time or an instant, as on the command line (`today` is not a date in a file).
        guard let input = DateInput.parse(dateText) else { throw LiteralError.notADate(field: "Date", text: dateText) }
        if case .relativeDay = input {
            // A file's dates may not depend on the day it is imported.
            throw CommandError("Date '\(TextEscaping.shortened(dateText))' depends on the day of the import: write the day itself (YYYY-MM-DD)")
        }
        let date = try input.start(in: timeZone, now: Date(), field: "Date", text: dateText)
        var id = UUIDText.random()
        if let idText = row.fields[.id]?.trimmedSpaces, !idText.isEmpty {
            guard let parsed = UUIDText.parse(idText.utf8) else {
                throw CommandError("id '\(TextEscaping.escaped(idText))' is not a UUID")
            }
            id = parsed
        }
        let notes = row.fields[.notes].flatMap { $0.isEmpty ? nil : $0 }
        return Transaction(id: id, coinId: coinId, type: type, amount: amount, price: price, fee: fee,
                           date: date, notes: notes)
    }
}

/// A one-off message used inside the importer.
struct CommandError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Writes transactions for `bitpal export` (CSV here; JSON shares the store's object writer).
public enum TransactionExport {
    public static let csvHeader = "id,date,type,coin,amount,price,fee,notes"

    public static func csv(_ transactions: [Transaction]) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(transactions.count * 110 + 64)
        out.append(contentsOf: csvHeader.utf8)
        out.append(10)
        for t in transactions {
            UUIDText.write(t.id, to: &out)
            out.append(44)
            ISODate.write(t.date, to: &out)
            out.append(44)
            out.append(contentsOf: t.type.rawValue.utf8)
            out.append(44)
            out.append(contentsOf: CSV.escape(t.assetId).utf8)
            out.append(44)
            t.amountValue.write(to: &out)
            out.append(44)
            t.priceValue?.write(to: &out)
            out.append(44)
            t.feeValue?.write(to: &out)
            out.append(44)
            if let notes = t.notes { out.append(contentsOf: CSV.escape(notes).utf8) }
            out.append(10)
        }
        return out
    }

    public static func json(_ transactions: [Transaction]) -> [UInt8] {
        var w = JSONWriter(capacity: transactions.count * 300 + 16)
        w.beginArray()
        for t in transactions { PortfolioCodec.writeTransaction(t, to: &w) }
        w.endArray()
        w.finish()
        return w.bytes
    }
}

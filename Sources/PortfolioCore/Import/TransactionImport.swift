import Foundation

/// One row to import, with its fields under canonical names
/// (`type`, `coin`, `amount`, `price`, `date`, `fee`, `notes`, `id`) and where it came from.
public struct ImportRow: Sendable {
    /// `line 7` for CSV (the line where the record starts), `item 3` for JSON.
    public var location: String
    public var fields: [String: String]
    /// Position in the file, for ordering messages.
    public var order: Int

    public init(location: String, fields: [String: String], order: Int = 0) {
        self.location = location
        self.fields = fields
        self.order = order
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
        let records: [CSVRecord]
        do {
            records = try CSV.parse(bytes)
        } catch {
            throw ImportFailure(problems: [error.description])
        }
        guard let header = records.first else { throw ImportFailure(problems: ["the file is empty (expected a header row)"]) }
        var columns: [Int: String] = [:]
        for (i, raw) in header.fields.enumerated() {
            let name = raw.trimmedSpaces.lowercased()
            if let canonical = aliases[name] {
                if columns.values.contains(canonical) {
                    throw ImportFailure(problems: ["line \(header.line): column '\(canonical)' appears twice"])
                }
                columns[i] = canonical
            }
        }
        let missing = required.filter { !columns.values.contains($0) }
        if !missing.isEmpty {
            throw ImportFailure(problems: ["line \(header.line): missing column\(missing.count == 1 ? "" : "s") "
                + missing.map { "'\($0)'" }.joined(separator: ", ")
                + " (need type, coin, amount, price, date; optional fee, notes, id)"])
        }
        return records.dropFirst().map { record in
            var fields: [String: String] = [:]
            for (i, name) in columns where i < record.fields.count { fields[name] = record.fields[i] }
            return ImportRow(location: "line \(record.line)", fields: fields, order: record.line)
        }
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
                var fields: [String: String] = [:]
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
        var parsed: [(ImportRow, Transaction)] = []
        var coinCache: [String: Result<String, Error>] = [:]
        var idsInFile: [UUID: String] = [:]
        parsed.reserveCapacity(rows.count)
        for row in rows {
            do {
                let coinText = try field(row, "coin")
                let coinId: String
                switch coinCache[coinText.lowercased()] {
                case let .success(id)?: coinId = id
                case let .failure(e)?: throw e
                case nil:
                    do {
                        coinId = try resolveCoin(coinText)
                        coinCache[coinText.lowercased()] = .success(coinId)
                    } catch {
                        coinCache[coinText.lowercased()] = .failure(error)
                        throw error
                    }
                }
                let tx = try transaction(from: row, coinId: coinId, timeZone: timeZone)
                try ValueRules.check(tx, now: now)
                if row.fields["id"].map({ !$0.isEmpty }) == true {
                    if let first = idsInFile[tx.id] {
                        throw CommandError("id \(tx.id.uuidString.lowercased()) also appears at \(first)")
                    }
                    idsInFile[tx.id] = row.location
                }
                parsed.append((row, tx))
            } catch {
                problems.append((row.order, "\(row.location): \(error)"))
            }
        }
        // De-duplicate against the store, as a multiset of trade keys.
        let knownIDs = Set(existing.map(\.id))
        var counts: [TradeKey: Int] = [:]
        if !allowDuplicates { for t in existing { counts[t.tradeKey, default: 0] += 1 } }
        var added: [Transaction] = []
        var locations: [UUID: ImportRow] = [:]
        var skipped = 0
        for (row, tx) in parsed {
            if knownIDs.contains(tx.id) { skipped += 1; continue }
            if !allowDuplicates, let n = counts[tx.tradeKey], n > 0 {
                counts[tx.tradeKey] = n - 1
                skipped += 1
                continue
            }
            added.append(tx)
            locations[tx.id] = row
        }

        // The merged history must be valid; report one broken sell per coin.
        let merged = existing + added
        let touched = Set(added.map(\.coinId))
        var byCoin: [String: [Transaction]] = [:]
        for t in merged where touched.contains(t.coinId) { byCoin[t.coinId, default: []].append(t) }
        for coin in byCoin.keys.sorted() {
            do {
                _ = try Ledger.replay(byCoin[coin] ?? [])
            } catch let PortfolioError.breaksLaterSell(c, held, requested, date, id) {
                if let row = locations[id] {
                    problems.append((row.order, "\(row.location): "
                        + PortfolioError.insufficientQuantity(coinId: c, held: held, requested: requested).description))
                } else {
                    problems.append((Int.max, "the imported rows would break a recorded sell: "
                        + PortfolioError.breaksLaterSell(coinId: c, held: held, requested: requested, date: date, id: id).description))
                }
            } catch {
                problems.append((Int.max, String(describing: error)))
            }
        }
        if !problems.isEmpty {
            throw ImportFailure(problems: problems.sorted { $0.0 < $1.0 }.map(\.1))
        }
        return ImportPlan(added: added, skipped: skipped)
    }

    static func field(_ row: ImportRow, _ name: String) throws -> String {
        guard let v = row.fields[name]?.trimmedSpaces, !v.isEmpty else {
            throw CommandError("missing \(name)")
        }
        return v
    }

    static func transaction(from row: ImportRow, coinId: String, timeZone: TimeZone) throws -> Transaction {
        let typeText = try field(row, "type")
        guard let type = TransactionType(rawValue: typeText.lowercased()) else {
            throw CommandError("type '\(TextEscaping.escaped(typeText))' is not buy or sell")
        }
        func value(_ name: String, _ label: String) throws -> Fixed18 {
            let text = try field(row, name)
            if let fast = Fixed18.parse(utf8: text.utf8) { return fast }
            // Not representable: let the literal parser and the rules say exactly why.
            let literal = try DecimalLiteral(parsing: text, field: label)
            _ = try ValueRules.precise(literal, field: label, text: text)
            throw PortfolioError.tooManyDigits(field: label, text: text)
        }
        let amount = try value("amount", "Amount")
        let price = try value("price", "Price")
        let fee = row.fields["fee"].map { $0.trimmedSpaces.isEmpty } == false
            ? try value("fee", "Fee") : .zero
        let dateText = try field(row, "date")
        let date: Date
        if let parts = ISODate.parseDay(utf8: dateText.utf8) {
            date = ISODate.startOfDay(parts, in: timeZone)
        } else if let d = ISODate.parseTimestamp(utf8: dateText.utf8) {
            date = ISODate.truncatedToMillis(d)
        } else {
            throw LiteralError.notADate(field: "Date", text: dateText)
        }
        var id = UUID()
        if let idText = row.fields["id"]?.trimmedSpaces, !idText.isEmpty {
            guard let parsed = UUIDText.parse(idText.utf8) else {
                throw CommandError("id '\(TextEscaping.escaped(idText))' is not a UUID")
            }
            id = parsed
        }
        let notes = row.fields["notes"].flatMap { $0.isEmpty ? nil : $0 }
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
            out.append(contentsOf: CSV.escape(t.coinId).utf8)
            out.append(44)
            t.amountValue.write(to: &out)
            out.append(44)
            t.priceValue.write(to: &out)
            out.append(44)
            t.feeValue.write(to: &out)
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

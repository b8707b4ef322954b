import Foundation

/// Reads and writes `portfolio.json`.
///
/// The document is pretty-printed JSON with a fixed key order:
/// `{"format", "version", "baseCurrency", "transactions", "watchlist", "manualPrices"}`,
/// one transaction (watch entry, manual price) per line, so a change is a one-line diff.
/// Every Decimal is a JSON **string** holding its exact digits (`"0.5"`), so no JSON
/// library's number handling can round it, and every date is ISO 8601 UTC. The reader
/// and writer are hand-written (one pass over the bytes), which keeps a million
/// transactions to seconds instead of the tens of seconds Foundation's coders need.
public enum PortfolioCodec {
    public static let formatName = "bitpal-portfolio"

    public static func encode(_ p: Portfolio) -> [UInt8] {
        var w = JSONWriter(capacity: 4096 + p.transactions.count * 176)
        w.beginObject()
        w.key("format"); w.string(formatName)
        w.key("version"); w.number(String(Portfolio.formatVersion))
        w.key("baseCurrency"); w.string("USD")
        w.key("transactions")
        w.beginArray()
        for t in p.transactions { writeTransactionLine(t, to: &w) }
        w.endArray()
        w.key("watchlist")
        w.beginArray()
        for e in p.watchlist {
            w.beginInlineObject()
            w.key("coinId"); w.string(e.coinId)
            w.key("dateAdded"); w.string(ISODate.format(e.dateAdded))
            w.endObject()
        }
        w.endArray()
        w.key("manualPrices")
        w.beginArray()
        for q in p.manualPrices {
            w.beginInlineObject()
            w.key("coinId"); w.string(q.coinId)
            w.key("price"); w.string(DecimalFormatting.exact(q.price))
            w.key("date"); w.string(ISODate.format(q.time))
            w.endObject()
        }
        w.endArray()
        w.endObject()
        w.finish()
        return w.bytes
    }

    /// Writes one transaction on one line, as the store keeps it: the same keys and order as
    /// `writeTransaction`, written as constant chunks (a million lines in a fraction of a second).
    static func writeTransactionLine(_ t: Transaction, to w: inout JSONWriter) {
        w.prepareValue()
        w.raw("{\"id\": \"")
        w.withBytes { UUIDText.write(t.id, to: &$0) }
        w.raw("\", \"coinId\": ")
        w.rawQuoted(t.coinId)
        w.raw(t.type == .buy ? ", \"type\": \"buy\", \"amount\": \"" : ", \"type\": \"sell\", \"amount\": \"")
        w.withBytes { t.amountValue.write(to: &$0) }
        w.raw("\", \"pricePerCoin\": \"")
        w.withBytes { t.priceValue.write(to: &$0) }
        w.raw("\", \"fee\": \"")
        w.withBytes { t.feeValue.write(to: &$0) }
        w.raw("\", \"date\": \"")
        w.withBytes { ISODate.write(t.date, to: &$0) }
        if let notes = t.notes {
            w.raw("\", \"notes\": ")
            w.rawQuoted(notes)
            w.raw("}")
        } else {
            w.raw("\", \"notes\": null}")
        }
        w.markValueWritten()
    }

    /// Writes one transaction object in the order `list --json` and the store share
    /// (on one line when `inline`, as the store writes them).
    public static func writeTransaction(_ t: Transaction, to w: inout JSONWriter, inline: Bool = false) {
        if inline { w.beginInlineObject() } else { w.beginObject() }
        w.key("id"); w.uuid(t.id)
        w.key("coinId"); w.string(t.coinId)
        w.key("type"); w.string(t.type.rawValue)
        w.key("amount"); w.fixed(t.amountValue)
        w.key("pricePerCoin"); w.fixed(t.priceValue)
        w.key("fee"); w.fixed(t.feeValue)
        w.key("date"); w.date(t.date)
        w.key("notes"); w.string(t.notes)
        w.endObject()
    }

    /// Parses a whole document.
    ///
    /// - Throws: `StoreError` with `.malformed` (naming the line) or `.unsupportedVersion`.
    public static func decode(_ bytes: [UInt8], path: String) throws(StoreError) -> Portfolio {
        try decode(ByteBuffer(copying: bytes), path: path)
    }

    /// Parses a whole document in place.
    public static func decode(_ buffer: ByteBuffer, path: String) throws(StoreError) -> Portfolio {
        var r = JSONReader(buffer: buffer)
        do {
            var p = Portfolio()
            var version: Int?
            try r.beginObject()
            while let key = try r.nextKey() {
                switch key {
                case "version":
                    let v = try r.readInt()
                    if v > Portfolio.formatVersion {
                        throw StoreError(path: path, reason: .unsupportedVersion(v, highestSupported: Portfolio.formatVersion))
                    }
                    if v < 1 { throw r.error("unknown version \(v)") }
                    version = v
                case "format":
                    let f = try r.readString()
                    if f != formatName { throw r.error("this is not a bitpal portfolio (format '\(f)')") }
                case "baseCurrency":
                    let c = try r.readString()
                    if c != "USD" { throw r.error("base currency '\(c)' is not supported yet") }
                case "transactions":
                    p.transactions.reserveCapacity(buffer.count / 160)
                    try r.beginArray()
                    while try r.nextElement() {
                        if let t = readTransactionLine(&r) {
                            p.transactions.append(t)
                        } else {
                            p.transactions.append(try readTransaction(&r))
                        }
                    }
                case "watchlist":
                    try r.beginArray()
                    while try r.nextElement() {
                        var id: String?, added: Date?
                        try r.beginObject()
                        while let k = try r.nextKey() {
                            switch k {
                            case "coinId": id = try r.readString()
                            case "dateAdded": added = try readDate(&r)
                            default: try r.skipValue()
                            }
                        }
                        guard let id, let added else { throw r.error("a watchlist entry needs coinId and dateAdded") }
                        p.watchlist.append(WatchEntry(coinId: id, dateAdded: added))
                    }
                case "manualPrices":
                    try r.beginArray()
                    while try r.nextElement() {
                        var id: String?, price: Decimal?, date: Date?
                        try r.beginObject()
                        while let k = try r.nextKey() {
                            switch k {
                            case "coinId": id = try r.readString()
                            case "price": price = try readFixed(&r).decimal
                            case "date": date = try readDate(&r)
                            default: try r.skipValue()
                            }
                        }
                        guard let id, let price, let date else { throw r.error("a manual price needs coinId, price and date") }
                        p.manualPrices.append(Quote(coinId: id, price: price, time: date, source: .manual))
                    }
                default:
                    try r.skipValue()
                }
            }
            try r.finish()
            guard version != nil else { throw JSONReadError(message: "no \"version\" field", line: 1, column: 1) }
            return p
        } catch {
            throw StoreError.reading(path, error)
        }
    }

    /// Reads one transaction laid out exactly as `writeTransactionLine` writes it, or returns `nil`
    /// (at the same position) so the general reader can take over and report any error precisely.
    static func readTransactionLine(_ r: inout JSONReader) -> Transaction? {
        r.skipSpace()
        let start = r.mark
        func fail() -> Transaction? {
            r.rewind(to: start)
            return nil
        }
        guard r.consume("{\"id\": "), let idBytes = try? r.readRawStringBytes(), let id = UUIDText.parse(idBytes),
              r.consume(", \"coinId\": "), let coin = try? r.readString(),
              r.consume(", \"type\": ") else { return fail() }
        let type: TransactionType
        if r.consume("\"buy\"") { type = .buy } else if r.consume("\"sell\"") { type = .sell } else { return fail() }
        guard r.consume(", \"amount\": "), let a = try? r.readRawStringBytes(), let amount = Fixed18.parse(utf8: a),
              r.consume(", \"pricePerCoin\": "), let pr = try? r.readRawStringBytes(), let price = Fixed18.parse(utf8: pr),
              r.consume(", \"fee\": "), let f = try? r.readRawStringBytes(), let fee = Fixed18.parse(utf8: f),
              r.consume(", \"date\": "), let d = try? r.readRawStringBytes(), let date = ISODate.parseTimestamp(utf8: d),
              r.consume(", \"notes\": ") else { return fail() }
        var notes: String?
        if !r.consume("null") {
            guard let n = try? r.readString() else { return fail() }
            notes = n
        }
        guard r.consume("}") else { return fail() }
        return Transaction(id: id, coinId: coin, type: type, amount: amount, price: price, fee: fee, date: date, notes: notes)
    }

    /// Reads one transaction object with its keys in any order and any layout.
    public static func readTransaction(_ r: inout JSONReader) throws(JSONReadError) -> Transaction {
        var id: UUID?, coin: String?, type: TransactionType?, amount: Fixed18?, price: Fixed18?
        var fee = Fixed18.zero, date: Date?, notes: String?
        try r.beginObject()
        while let k = try r.nextKeyBytes() {
            switch TransactionKey(k) {
            case .id:
                let raw = try r.readRawStringBytes()
                guard let u = UUIDText.parse(raw) else {
                    throw r.error("'\(String(decoding: raw, as: UTF8.self))' is not a UUID")
                }
                id = u
            case .coinId: coin = try r.readString()
            case .type:
                let raw = try r.readRawStringBytes()
                if raw.count == 3 && raw.first == UInt8(ascii: "b") && raw.last == UInt8(ascii: "y") && raw[raw.startIndex + 1] == UInt8(ascii: "u") {
                    type = .buy
                } else if raw.count == 4 && raw.first == UInt8(ascii: "s") && raw.last == UInt8(ascii: "l")
                            && raw[raw.startIndex + 1] == UInt8(ascii: "e") && raw[raw.startIndex + 2] == UInt8(ascii: "l") {
                    type = .sell
                } else {
                    throw r.error("unknown transaction type '\(String(decoding: raw, as: UTF8.self))'")
                }
            case .amount: amount = try readFixed(&r)
            case .pricePerCoin: price = try readFixed(&r)
            case .fee: fee = r.consumeNull() ? .zero : try readFixed(&r)
            case .date: date = try readDate(&r)
            case .notes: notes = try r.readStringOrNull()
            case .other: try r.skipValue()
            }
        }
        guard let id, let coin, let type, let amount, let price, let date else {
            throw r.error("a transaction needs id, coinId, type, amount, pricePerCoin and date")
        }
        return Transaction(id: id, coinId: coin, type: type, amount: amount, price: price, fee: fee, date: date, notes: notes)
    }

    /// The keys of a transaction object, recognised from their bytes without making strings.
    enum TransactionKey {
        case id, coinId, type, amount, pricePerCoin, fee, date, notes, other

        init(_ k: UnsafeBufferPointer<UInt8>) {
            guard let first = k.first else { self = .other; return }
            let candidate: TransactionKey
            switch (k.count, first) {
            case (2, UInt8(ascii: "i")): candidate = .id
            case (6, UInt8(ascii: "c")): candidate = .coinId
            case (4, UInt8(ascii: "t")): candidate = .type
            case (6, UInt8(ascii: "a")): candidate = .amount
            case (12, UInt8(ascii: "p")): candidate = .pricePerCoin
            case (3, UInt8(ascii: "f")): candidate = .fee
            case (4, UInt8(ascii: "d")): candidate = .date
            case (5, UInt8(ascii: "n")): candidate = .notes
            default: self = .other; return
            }
            let name = TransactionKey.names[candidate.index]
            var i = k.startIndex
            for b in name {
                if k[i] != b { self = .other; return }
                i += 1
            }
            self = candidate
        }

        private var index: Int {
            switch self {
            case .id: 0
            case .coinId: 1
            case .type: 2
            case .amount: 3
            case .pricePerCoin: 4
            case .fee: 5
            case .date: 6
            case .notes: 7
            case .other: 0
            }
        }

        private static let names: [[UInt8]] = ["id", "coinId", "type", "amount", "pricePerCoin", "fee", "date", "notes"]
            .map { Array($0.utf8) }
    }

    static func readFixed(_ r: inout JSONReader) throws(JSONReadError) -> Fixed18 {
        let raw = try r.readRawStringBytes()
        guard let value = Fixed18.parse(utf8: raw) else {
            throw r.error("'\(String(decoding: raw, as: UTF8.self))' is not a plain decimal string")
        }
        return value
    }

    static func readDecimal(_ r: inout JSONReader) throws(JSONReadError) -> Decimal {
        let raw = try r.readRawStringBytes()
        guard let lit = DecimalLiteral.parse(utf8: raw) else {
            throw r.error("'\(String(decoding: raw, as: UTF8.self))' is not a plain decimal string")
        }
        return lit.value
    }

    static func readDate(_ r: inout JSONReader) throws(JSONReadError) -> Date {
        let raw = try r.readRawStringBytes()
        if let d = ISODate.parseTimestamp(utf8: raw) { return d }
        let text = TextEscaping.escaped(String(decoding: raw, as: UTF8.self))
        if ISODate.parseTimestampMillis(utf8: raw) != nil {
            throw r.error("'\(text)' is outside the dates bitpal keeps (\(ISODate.rangeText))")
        }
        throw r.error("'\(text)' is not an ISO 8601 time")
    }
}

import Foundation

/// Reads and writes `portfolio.json`.
///
/// The document is pretty-printed JSON with a fixed key order:
/// `{"format", "version", "baseCurrency", "transactions", "watchlist", "manualPrices"}`.
/// Every Decimal is a JSON **string** holding its exact digits (`"0.5"`), so no JSON
/// library's number handling can round it, and every date is ISO 8601 UTC. The reader
/// and writer are hand-written (one pass over the bytes), which keeps a million
/// transactions to seconds instead of the tens of seconds Foundation's coders need.
public enum PortfolioCodec {
    public static let formatName = "bitpal-portfolio"

    public static func encode(_ p: Portfolio) -> [UInt8] {
        var w = JSONWriter(capacity: 256 + p.transactions.count * 300)
        w.beginObject()
        w.key("format"); w.string(formatName)
        w.key("version"); w.number(String(Portfolio.formatVersion))
        w.key("baseCurrency"); w.string("USD")
        w.key("transactions")
        w.beginArray()
        for t in p.transactions { writeTransaction(t, to: &w) }
        w.endArray()
        w.key("watchlist")
        w.beginArray()
        for e in p.watchlist {
            w.beginObject()
            w.key("coinId"); w.string(e.coinId)
            w.key("dateAdded"); w.string(ISODate.format(e.dateAdded))
            w.endObject()
        }
        w.endArray()
        w.key("manualPrices")
        w.beginArray()
        for q in p.manualPrices {
            w.beginObject()
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

    /// Writes one transaction object in the order `list --json` and the store share.
    public static func writeTransaction(_ t: Transaction, to w: inout JSONWriter) {
        w.beginObject()
        w.key("id"); w.string(t.id.uuidString.lowercased())
        w.key("coinId"); w.string(t.coinId)
        w.key("type"); w.string(t.type.rawValue)
        w.key("amount"); w.string(DecimalFormatting.exact(t.amount))
        w.key("pricePerCoin"); w.string(DecimalFormatting.exact(t.pricePerCoin))
        w.key("fee"); w.string(DecimalFormatting.exact(t.fee))
        w.key("date"); w.string(ISODate.format(t.date))
        w.key("notes"); w.string(t.notes)
        w.endObject()
    }

    /// Parses a whole document.
    ///
    /// - Throws: `StoreError` with `.malformed` (naming the line) or `.unsupportedVersion`.
    public static func decode(_ bytes: [UInt8], path: String) throws(StoreError) -> Portfolio {
        var r = JSONReader(bytes: bytes)
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
                    try r.beginArray()
                    while try r.nextElement() { p.transactions.append(try readTransaction(&r)) }
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
                            case "price": price = try readDecimal(&r)
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
        } catch let e as JSONReadError {
            throw StoreError(path: path, reason: .malformed(e.description))
        } catch let e as StoreError {
            throw e
        } catch {
            throw StoreError(path: path, reason: .malformed(String(describing: error)))
        }
    }

    /// Reads one transaction object (store and JSON import share it).
    public static func readTransaction(_ r: inout JSONReader) throws(JSONReadError) -> Transaction {
        var id: UUID?, coin: String?, type: TransactionType?, amount: Decimal?, price: Decimal?
        var fee: Decimal = 0, date: Date?, notes: String?
        try r.beginObject()
        while let k = try r.nextKey() {
            switch k {
            case "id":
                let s = try r.readString()
                guard let u = UUID(uuidString: s) else { throw r.error("'\(s)' is not a UUID") }
                id = u
            case "coinId": coin = try r.readString()
            case "type":
                let s = try r.readString()
                guard let t = TransactionType(rawValue: s) else { throw r.error("unknown transaction type '\(s)'") }
                type = t
            case "amount": amount = try readDecimal(&r)
            case "pricePerCoin": price = try readDecimal(&r)
            case "fee": fee = try r.consumeNull() ? 0 : try readDecimal(&r)
            case "date": date = try readDate(&r)
            case "notes": notes = try r.readStringOrNull()
            default: try r.skipValue()
            }
        }
        guard let id, let coin, let type, let amount, let price, let date else {
            throw r.error("a transaction needs id, coinId, type, amount, pricePerCoin and date")
        }
        return Transaction(id: id, coinId: coin, type: type, amount: amount, pricePerCoin: price, fee: fee,
                           date: date, notes: notes)
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
        guard let d = ISODate.parseTimestamp(utf8: raw) else {
            throw r.error("'\(String(decoding: raw, as: UTF8.self))' is not an ISO 8601 time")
        }
        return d
    }
}

import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The price cache (`prices.json`): fetched quotes and their history.
///
/// The file starts with the newest quote of each coin (`latest`), which is all a report
/// needs, and then the history (`quotes`, oldest first), so reports read a few lines
/// however long the history grows. Deleting it loses nothing the user typed. It has its own lock, so a price
/// refresh never holds the portfolio lock, and it never holds this lock during
/// network I/O either (fetch first, then lock-merge-write).
public struct PriceCache: Sendable {
    public static let formatVersion = 1
    /// Quotes kept per coin; older ones are dropped (a 5-minute cron keeps about 17 days).
    public static let historyLimit = 5000

    public let directory: String
    public var path: String { directory + "/prices.json" }
    public var lockPath: String { directory + "/.prices.lock" }

    public init(directory: String) { self.directory = directory }

    /// The largest price cache read: 256 MiB. The history keeps at most `historyLimit` quotes
    /// a coin at ~230 bytes each, about 1.1 MB a coin, so this covers some 200 coins' full history.
    public static let readLimit = 256 << 20

    /// Every cached quote, oldest first; empty when there is no cache.
    public func load() throws(StoreError) -> [Quote] {
        guard let buffer = try FileSystem.readBuffer(path, limit: Self.readLimit) else { return [] }
        return try Self.decode(buffer, path: path, latestOnly: false)
    }

    /// The newest cached quote of each coin (reads only the top of the file).
    public func loadLatest() throws(StoreError) -> [Quote] {
        guard let buffer = try FileSystem.readBuffer(path, limit: Self.readLimit) else { return [] }
        return try Self.decode(buffer, path: path, latestOnly: true)
    }

    /// Appends fetched quotes under the cache lock.
    ///
    /// A cache that cannot be read (a hand edit, a disk error) holds nothing the user typed: it
    /// is moved aside to `prices.json.unreadable` and a new cache starts with these quotes.
    /// - Returns: the error that made it start afresh, if it did.
    @discardableResult
    public func append(_ quotes: [Quote]) throws(StoreError) -> StoreError? {
        try FileSystem.ensureDirectory(directory)
        let lock = try FileLock(path: lockPath)
        defer { lock.unlock() }
        var all: [Quote]
        var setAside: StoreError?
        do {
            all = try load()
        } catch {
            guard case .malformed = error.reason else { throw error }
            guard rename(path, path + ".unreadable") == 0 else { throw error }
            setAside = error
            all = []
        }
        all.append(contentsOf: quotes)
        all = Self.trimmed(all)
        try FileSystem.writeAtomically(Self.encode(all), to: path)
        return setAside
    }

    static func trimmed(_ quotes: [Quote]) -> [Quote] {
        var counts: [String: Int] = [:]
        for q in quotes { counts[q.coinId, default: 0] += 1 }
        guard counts.values.contains(where: { $0 > historyLimit }) else { return quotes }
        var skip = counts.mapValues { max(0, $0 - historyLimit) }
        return quotes.filter { q in
            if let n = skip[q.coinId], n > 0 {
                skip[q.coinId] = n - 1
                return false
            }
            return true
        }
    }

    static func encode(_ quotes: [Quote]) -> [UInt8] {
        var w = JSONWriter(capacity: 256 + quotes.count * 220)
        w.beginObject()
        w.key("format"); w.string("bitpal-prices")
        w.key("version"); w.number(String(formatVersion))
        // The newest quote of each coin in each currency it is fetched in.
        var newest: [String: Quote] = [:]
        for q in quotes {
            let key = q.coinId + "|" + q.currency
            if newest[key].map({ $0.time <= q.time }) ?? true { newest[key] = q }
        }
        w.key("latest")
        w.beginArray()
        for coin in newest.keys.sorted() { if let q = newest[coin] { writeQuote(q, to: &w) } }
        w.endArray()
        w.key("quotes")
        w.beginArray()
        for q in quotes { writeQuote(q, to: &w) }
        w.endArray()
        w.endObject()
        w.finish()
        return w.bytes
    }

    static func writeQuote(_ q: Quote, to w: inout JSONWriter) {
        w.beginInlineObject()
        w.key("coinId"); w.string(q.coinId)
        w.key("price"); w.string(DecimalFormatting.exact(q.price))
        w.key("change24h"); w.string(q.change24h.map(DecimalFormatting.exact))
        w.key("marketCap"); w.string(q.marketCap.map(DecimalFormatting.exact))
        w.key("time"); w.string(ISODate.format(q.time))
        w.key("sourceUpdatedAt"); w.string(q.sourceUpdatedAt.map(ISODate.format))
        w.key("source"); w.string(q.source.rawValue)
        if q.currency != "USD" { w.key("currency"); w.string(q.currency) }  // USD when left out
        w.endObject()
    }

    static func decode(_ buffer: ByteBuffer, path: String, latestOnly: Bool) throws(StoreError) -> [Quote] {
        var r = JSONReader(buffer: buffer)
        do {
            var quotes: [Quote] = []
            try r.beginObject()
            while let key = try r.nextKey() {
                switch key {
                case "latest" where latestOnly:
                    try r.beginArray()
                    while try r.nextElement() { quotes.append(try readQuote(&r)) }
                    return quotes
                case "version":
                    let v = try r.readInt()
                    if v > formatVersion {
                        throw StoreError(path: path, reason: .unsupportedVersion(v, highestSupported: formatVersion))
                    }
                case "quotes":
                    try r.beginArray()
                    while try r.nextElement() { quotes.append(try readQuote(&r)) }
                default: try r.skipValue()
                }
            }
            try r.finish()
            return quotes
        } catch {
            throw StoreError.reading(path, error)
        }
    }

    private static func readQuote(_ r: inout JSONReader) throws(JSONReadError) -> Quote {
        var coin: String?, price: Decimal?, change: Decimal?, cap: Decimal?, time: Date?, updated: Date?
        var source = QuoteSource.coingecko
        var currency = "USD"
        try r.beginObject()
        while let k = try r.nextKey() {
            switch k {
            case "coinId": coin = try r.readString()
            case "price":
                let p = try readSignedDecimal(&r)
                guard p > 0 else { throw r.error("a price must be greater than zero") }
                price = p
            case "change24h": change = r.consumeNull() ? nil : try readSignedDecimal(&r)
            case "marketCap": cap = r.consumeNull() ? nil : try readSignedDecimal(&r)
            case "time": time = try PortfolioCodec.readDate(&r)
            case "sourceUpdatedAt": updated = r.consumeNull() ? nil : try PortfolioCodec.readDate(&r)
            case "source":
                let s = try r.readString()
                guard let src = QuoteSource(rawValue: s) else { throw r.error("unknown source '\(s)'") }
                source = src
            case "currency":
                let text = try r.readString()
                guard let code = CurrencyCode.parse(text) else { throw r.error("unknown currency '\(TextEscaping.escaped(text))'") }
                currency = code
            default: try r.skipValue()
            }
        }
        guard let coin, let price, let time else { throw r.error("a quote needs coinId, price and time") }
        return Quote(coinId: coin, price: price, change24h: change, marketCap: cap, time: time,
                     sourceUpdatedAt: updated, source: source, currency: currency)
    }

    /// A decimal string that may carry a leading `-` (24h changes can be negative).
    static func readSignedDecimal(_ r: inout JSONReader) throws(JSONReadError) -> Decimal {
        let raw = try r.readRawStringBytes()
        let negative = raw.first == UInt8(ascii: "-")
        let digits = raw.dropFirst(negative ? 1 : 0)
        guard let lit = DecimalLiteral.parse(utf8: digits) else {
            throw r.error("'\(TextEscaping.shortened(String(decoding: raw, as: UTF8.self)))' is not a decimal string")
        }
        // Exactly as written, or refused: a value with more digits than Decimal keeps is not rounded quietly.
        guard DecimalFormatting.exact(lit.value) == canonical(digits) else {
            throw r.error("'\(TextEscaping.shortened(String(decoding: raw, as: UTF8.self)))' has more digits than bitpal keeps (38)")
        }
        return negative ? -lit.value : lit.value
    }

    /// A literal without leading zeros, trailing fractional zeros or a bare point (`007.50` → `7.5`, `.0` → `0`).
    static func canonical(_ bytes: some Collection<UInt8>) -> String {
        var text = String(decoding: bytes, as: UTF8.self)
        if text.contains(".") {
            while text.hasSuffix("0") { text.removeLast() }
            if text.hasSuffix(".") { text.removeLast() }
        }
        while text.hasPrefix("0") { text.removeFirst() }
        if text.isEmpty || text.hasPrefix(".") { text = "0" + text }
        return text
    }
}

/// The cached full coin list (`coins.json`), kept 7 days.
public struct CatalogCache: Sendable {
    public static let maxAge: TimeInterval = 7 * 86_400
    public let directory: String
    public var path: String { directory + "/coins.json" }

    public init(directory: String) { self.directory = directory }

    /// The largest coin list read: 64 MiB (CoinGecko's ~17,000 coins take about 2 MB).
    public static let readLimit = 64 << 20

    /// The cached coins and when they were fetched; `nil` when there is no cache.
    public func load() throws(StoreError) -> (fetchedAt: Date, coins: [Coin])? {
        guard let bytes = try FileSystem.read(path, limit: Self.readLimit) else { return nil }
        var r = JSONReader(bytes: bytes)
        do {
            var coins: [Coin] = []
            var fetched: Date?
            try r.beginObject()
            while let key = try r.nextKey() {
                switch key {
                case "fetchedAt": fetched = try PortfolioCodec.readDate(&r)
                case "coins":
                    try r.beginArray()
                    while try r.nextElement() {
                        var id: String?, sym: String?, name: String?, rank: Int?
                        try r.beginObject()
                        while let k = try r.nextKey() {
                            switch k {
                            case "id": id = try r.readString()
                            case "symbol": sym = try r.readString()
                            case "name": name = try r.readString()
                            case "marketCapRank": rank = r.consumeNull() ? nil : try r.readInt()
                            default: try r.skipValue()
                            }
                        }
                        guard let id, let sym, let name else { throw r.error("a coin needs id, symbol and name") }
                        coins.append(Coin(id: id, symbol: sym, name: name, marketCapRank: rank))
                    }
                default: try r.skipValue()
                }
            }
            try r.finish()
            guard let fetched else { throw r.error("no fetchedAt") }
            return (fetched, coins)
        } catch {
            throw StoreError.reading(path, error)
        }
    }

    public func save(_ coins: [Coin], fetchedAt: Date) throws(StoreError) {
        try FileSystem.ensureDirectory(directory)
        var w = JSONWriter(capacity: coins.count * 90)
        w.beginObject()
        w.key("format"); w.string("bitpal-coins")
        w.key("version"); w.number("1")
        w.key("fetchedAt"); w.string(ISODate.format(fetchedAt))
        w.key("coins")
        w.beginArray()
        for c in coins {
            w.beginObject()
            w.key("id"); w.string(c.id)
            w.key("symbol"); w.string(c.symbol)
            w.key("name"); w.string(c.name)
            w.key("marketCapRank")
            if let rank = c.marketCapRank { w.number(String(rank)) } else { w.null() }
            w.endObject()
        }
        w.endArray()
        w.endObject()
        w.finish()
        try FileSystem.writeAtomically(w.bytes, to: path)
    }
}

import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The price cache (`prices.json`): fetched and imported quotes and their history.
///
/// The file starts with the newest quote of each coin (`latest`), which is all most reports
/// need, and then the history (`quotes`), one quote a line, sorted by coin, currency and time
/// (`"order": "series"`), so reports read a few kilobytes however long the history grows: the
/// latest list alone, or (value over time, performance) the few coins' periods they need, found by
/// binary search (`loadHistory(_:)`). A merge writes the file a piece at a time. Deleting it loses
/// nothing the user typed (imported history comes back with the same import, fetched history with
/// `price fetch-history`). It has its own lock, so a price
/// refresh never holds the portfolio lock, and it never holds this lock during network I/O
/// either (fetch first, then lock-merge-write).
///
/// **Retention.** Every quote of the last 7 days (`recentSeconds`) is kept; of each earlier
/// calendar day in the local time zone, only the last quote of each coin in each currency
/// (`retained(_:now:timeZone:)`). There is no count limit: a 5-minute cron keeps its last week
/// in full and one quote a day before it, for ever.
///
/// **Versions.** Version 1 is written while every quote is fetched; a cache holding imported
/// quotes is written as version 2, and one holding the ECB's rates as version 3, which an older
/// bitpal refuses instead of moving it aside.
public struct PriceCache: Sendable {
    /// The newest format this build reads and writes.
    public static let formatVersion = 3
    /// Every quote younger than this (7 days) is kept; older ones thin to the last of each local day.
    public static let recentSeconds: TimeInterval = 7 * 86_400

    public let directory: String
    public var path: String { directory + "/prices.json" }
    public var lockPath: String { directory + "/.prices.lock" }

    public init(directory: String) { self.directory = directory }

    /// The largest price cache read: 256 MiB. A quote takes about 110 bytes, so this holds some
    /// 2 million: a week of 5-minute quotes of 200 coins and 25 years of their daily history.
    public static let readLimit = 256 << 20

    /// Every cached quote, in the file's order (by coin, currency and time, as this build writes
    /// it; an older build's file in the order its quotes were added); empty when there is no cache.
    public func load() throws(StoreError) -> [Quote] {
        guard let buffer = try FileSystem.readBuffer(path, limit: Self.readLimit) else { return [] }
        return try Self.decode(buffer, path: path, latestOnly: false)
    }

    /// The newest cached quote of each coin in each currency.
    ///
    /// Reads the file in growing prefixes from 64 KiB and stops once the `latest` list is whole,
    /// so a report reads a few kilobytes however long the history is.
    public func loadLatest() throws(StoreError) -> [Quote] {
        let path = self.path
        let quotes = try FileSystem.readPrefixes(path, limit: Self.readLimit, first: 1 << 16) { buffer, complete throws(StoreError) in
            if complete { return try Self.decode(buffer, path: path, latestOnly: true) }
            return try? Self.decode(buffer, path: path, latestOnly: true, prefix: true)
        }
        return quotes ?? []
    }

    /// Appends quotes under the cache lock, then applies the retention rule at `now`.
    ///
    /// A cache that cannot be read (a hand edit, a disk error) holds nothing the user typed: it
    /// is moved aside to `prices.json.unreadable` and a new cache starts with these quotes.
    /// - Returns: the error that made it start afresh, if it did.
    @discardableResult
    public func append(_ quotes: [Quote], now: Date = Date(), timeZone: TimeZone = .current) throws(StoreError) -> StoreError? {
        try merge(quotes, now: now, timeZone: timeZone).setAside
    }

    /// What merging quotes into the cache did.
    public struct Merge: Sendable, Equatable {
        /// Quotes new to the cache (or replacing one of the same coin, currency and time) and kept.
        public var added = 0
        /// Quotes already cached with the same time and price: left as they were.
        public var unchanged = 0
        /// Quotes the retention rule dropped at once: a later quote of the same day, more than 7 days ago.
        public var notKept = 0
        /// The unreadable cache that was moved aside (or, without `write`, would be).
        public var setAside: StoreError?
    }

    /// Merges `quotes` into the cache under its lock: a quote of the same coin, currency and time
    /// as a cached one replaces it (or, with the same price and source, leaves it as it was), so
    /// merging the same quotes twice changes nothing. The retention rule then applies at `now`.
    ///
    /// Without `write` nothing is locked or written: the outcome is what a write would do (a dry run).
    public func merge(_ quotes: [Quote], now: Date, timeZone: TimeZone, write: Bool = true) throws(StoreError) -> Merge {
        var packed = PackedQuotes()
        packed.append(contentsOf: quotes)
        return try merge(&packed, now: now, timeZone: timeZone, write: write)
    }

    /// `merge` of quotes already packed (a price import of millions of lines); `incoming` is used up.
    ///
    /// The cached quotes are read into the same table, sorted with the new ones by coin, currency,
    /// time and then the order they came in (the cached ones first), so that a quote meets the
    /// cached one of its coin, currency and time beside it, and each local day's last quote is the
    /// last of its run: one pass decides what is replaced, what is kept and what the retention rule
    /// drops, and the file is written in that order, piece by piece.
    func merge(_ incoming: inout PackedQuotes, now: Date, timeZone: TimeZone, write: Bool) throws(StoreError) -> Merge {
        var lock: FileLock?
        if write {
            try FileSystem.ensureDirectory(directory)
            lock = try FileLock(path: lockPath)
        }
        defer { lock?.unlock() }
        var outcome = Merge()
        // The cached quotes go in before the new ones: numbered from Int32.min up, in file order.
        var all = incoming
        incoming = PackedQuotes()
        all.nextSeq = Int32.min
        do {
            try readCached(into: &all)
        } catch {
            guard case .malformed = error.reason else { throw error }
            if write { guard rename(path, path + ".unreadable") == 0 else { throw error } }
            outcome.setAside = error
            all.removeCached()
        }
        all.sort()
        let entries = all.entries
        let n = entries.count
        /// 0: kept; 1: not in the cache (a replaced cached quote, a new one already cached or not the
        /// last of its key); 2: dropped by the retention rule.
        var state = [UInt8](repeating: 0, count: n)
        var replaced = false
        var i = 0
        while i < n {
            var j = i + 1
            while j < n && entries[j].series == entries[i].series && entries[j].millis == entries[i].millis { j += 1 }
            // One coin, currency and time: the last new quote wins (the cached ones sort first).
            if entries[j - 1].seq >= 0 {
                let winner = j - 1
                var cached = false
                for k in i..<winner {
                    if entries[k].seq >= 0 {
                        state[k] = 1
                    } else if all.samePrice(entries[k], entries[winner]) && entries[k].source == entries[winner].source {
                        cached = true
                    } else {
                        state[k] = 1
                        replaced = true
                    }
                }
                if cached {
                    state[winner] = 1
                    outcome.unchanged += 1
                }
            }
            i = j
        }
        // Retention: a quote before the last 7 days goes when the next one of its series is also
        // before them and on the same local day.
        let cutoff = now.addingTimeInterval(-Self.recentSeconds)
        var days = LocalDays(timeZone)
        var previous = -1
        var previousDay: Int64 = 0
        var dropped = false
        for k in 0..<n where state[k] != 1 {
            let e = entries[k]
            let old = ISODate.date(millis: e.millis) < cutoff
            let day = old ? days.dayNumber(millis: e.millis) : 0
            if previous >= 0, old, entries[previous].series == e.series, previousDay == day,
               ISODate.date(millis: entries[previous].millis) < cutoff {
                state[previous] = 2
                dropped = true
            }
            previous = k
            previousDay = day
        }
        for k in 0..<n where entries[k].seq >= 0 {
            if state[k] == 0 { outcome.added += 1 } else if state[k] == 2 { outcome.notKept += 1 }
        }
        if write && (outcome.added > 0 || replaced || dropped || outcome.setAside != nil) {
            try FileSystem.writeAtomically(to: path) { sink throws(StoreError) in
                try Self.write(all, keeping: { state[$0] == 0 }, to: { piece throws(StoreError) in try sink.write(piece) })
            }
        }
        return outcome
    }

    /// Appends every cached quote to `packed`, as `loadHistory()` reads them; nothing when there is no cache.
    func readCached(into packed: inout PackedQuotes) throws(StoreError) {
        switch PriceCacheFile.open(path) {
        case .missing:
            return
        case let .file(file):
            let start = packed.count
            var series: Int32 = 0
            let reading = file.readAll(series: { coin, currency in series = packed.series(coin: coin, currency: currency) }) { line, other in
                if let line {
                    packed.append(series: series, millis: line.millis, price: line.price, source: line.source)
                } else if let other {
                    packed.append(other)
                }
            }
            if reading != nil { return }
            packed.removeLast(packed.count - start)
        case .other:
            break
        }
        packed.append(contentsOf: try loadHistory())
    }

    /// Whether the cache's quotes are as its readers expect: how many there are, and the line of the
    /// first one out of the order the file declares (reports that read one coin's quotes rely on it).
    public struct Verification: Sendable, Equatable {
        public var quotes: Int
        public var outOfOrderLine: Int?
    }

    /// Reads the whole cache to check it, a piece at a time: the verdict of `load()`, without its
    /// memory; `nil` when there is no cache.
    ///
    /// - Throws: `load()`'s error for a cache that cannot be read.
    public func verify() throws(StoreError) -> Verification? {
        switch PriceCacheFile.open(path) {
        case .missing:
            return nil
        case let .file(file):
            // The `latest` list as the canonical reader reads it, then every quote.
            if (try? Self.decode(file.prefix, path: path, latestOnly: true, prefix: true)) != nil,
               let reading = file.readAll(series: { _, _ in }, add: { _, _ in }) {
                return Verification(quotes: reading.count, outOfOrderLine: reading.disorder)
            }
        case .other:
            break
        }
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        return Verification(quotes: try load().count, outOfOrderLine: nil)
    }

    /// One coin's prices in one currency.
    struct SeriesKey: Hashable {
        var coinId: String
        var currency: String
    }

    /// One quote's place: coin, currency and time to the millisecond.
    struct QuoteKey: Hashable {
        var coinId: String
        var currency: String
        var millis: Int64
        init(_ q: Quote) {
            coinId = q.coinId
            currency = q.currency
            millis = ISODate.millis(q.time)
        }
    }

    /// Which of `quotes` the retention rule keeps at `now`: every quote of the last 7 days (and any
    /// later one), and of each earlier local calendar day in `timeZone` the last quote of each coin in
    /// each currency (of two at the same time, the one added later). Order is not changed.
    public static func retained(_ quotes: [Quote], now: Date, timeZone: TimeZone) -> [Bool] {
        let cutoff = now.addingTimeInterval(-recentSeconds)
        var keep = [Bool](repeating: true, count: quotes.count)
        var lastOfDay: [DayKey: Int] = [:]
        var days = LocalDays(timeZone)
        for (i, q) in quotes.enumerated() where q.time < cutoff {
            let key = DayKey(coinId: q.coinId, currency: q.currency, day: days.dayNumber(q.time))
            if let j = lastOfDay[key] {
                if quotes[j].time <= q.time {
                    keep[j] = false
                    lastOfDay[key] = i
                } else {
                    keep[i] = false
                }
            } else {
                lastOfDay[key] = i
            }
        }
        return keep
    }

    /// `quotes` with only what the retention rule keeps at `now`.
    public static func trimmed(_ quotes: [Quote], now: Date, timeZone: TimeZone) -> [Quote] {
        zip(quotes, retained(quotes, now: now, timeZone: timeZone)).filter(\.1).map(\.0)
    }

    struct DayKey: Hashable {
        var coinId: String
        var currency: String
        var day: Int64
    }

    /// The file holding `quotes` (sorted into the cache's order), all in memory.
    static func encode(_ quotes: [Quote]) -> [UInt8] {
        var packed = PackedQuotes()
        packed.append(contentsOf: quotes)
        packed.sort()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256 + quotes.count * 110)
        try? Self.write(packed) { piece in bytes.append(contentsOf: piece) }  // appending to memory cannot fail
        return bytes
    }

    /// With `prefix`, `buffer` is the start of the file: reading stops at the end of `latest`, and
    /// a file without `version` before it is not answered from a prefix.
    static func decode(_ buffer: ByteBuffer, path: String, latestOnly: Bool, prefix: Bool = false) throws(StoreError) -> [Quote] {
        var r = JSONReader(buffer: buffer)
        do {
            var quotes: [Quote] = []
            var sawVersion = false
            try r.beginObject()
            while let key = try r.nextKey() {
                switch key {
                case "latest" where latestOnly:
                    if prefix && !sawVersion { throw r.error("no version before the latest quotes") }
                    try r.beginArray()
                    while try r.nextElement() { quotes.append(try readQuote(&r)) }
                    return quotes
                case "latest":
                    // Not kept (the history holds every quote), but read: a report reads this list first.
                    try r.beginArray()
                    while try r.nextElement() { _ = try readQuote(&r) }
                case "version":
                    let v = try r.readInt()
                    sawVersion = true
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
                guard let code = CurrencyCode.parse(text)?.code else { throw r.error("unknown currency '\(TextEscaping.escaped(text))'") }
                currency = code
            default: try r.skipValue()
            }
        }
        guard let coin, let price, let time else { throw r.error("a quote needs coinId, price and time") }
        guard isRateIDValid(coin) else {
            throw r.error("'\(TextEscaping.shortened(coin))' is not a rate between two supported currencies")
        }
        return Quote(coinId: coin, price: price, change24h: change, marketCap: cap, time: time,
                     sourceUpdatedAt: updated, source: source, currency: currency)
    }

    /// False for an exchange rate's id (`fx:FROM/TO`) that does not name two different supported
    /// currencies; true for every other id.
    static func isRateIDValid(_ coin: String) -> Bool {
        guard coin.hasPrefix("fx:") else { return true }
        let pair = coin.dropFirst(3).split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        return pair.count == 2 && CurrencyCode.isSupported(pair[0]) && CurrencyCode.isSupported(pair[1]) && pair[0] != pair[1]
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

/// Local calendar days of many instants, fast: the zone's offset is asked twice per UTC day
/// (at its start and end) and reused for every instant of a day with one offset throughout; only
/// an instant of a day with a clock change asks for its own.
struct LocalDays {
    let zone: TimeZone
    /// By UTC day number: the offset in seconds all day, or `nil` for a day with a clock change.
    private var offsets: [Int64: Int64?] = [:]

    init(_ zone: TimeZone) { self.zone = zone }

    /// Days since 1970-01-01 of the local day `date` falls on (as `ISODate.dayNumber`).
    mutating func dayNumber(_ date: Date) -> Int64 { dayNumber(millis: ISODate.millis(date)) }

    /// The same for the instant `ms` milliseconds after 1970.
    mutating func dayNumber(millis ms: Int64) -> Int64 {
        let seconds = ms / 1000  // as ISODate.localDay reads it
        let date = ISODate.date(millis: ms)
        let utcDay = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let offset: Int64
        if let known = offsets[utcDay] {
            offset = known ?? Int64(zone.secondsFromGMT(for: date))
        } else {
            let first = Date(timeIntervalSince1970: TimeInterval(utcDay * 86_400))
            let a = zone.secondsFromGMT(for: first), b = zone.secondsFromGMT(for: first.addingTimeInterval(86_399))
            offsets[utcDay] = a == b ? Int64(a) : Optional<Int64>.none
            offset = a == b ? Int64(a) : Int64(zone.secondsFromGMT(for: date))
        }
        let local = seconds + offset
        return local >= 0 ? local / 86_400 : (local - 86_399) / 86_400
    }
}

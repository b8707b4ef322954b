import Foundation

/// Many quotes of the price cache at once, small: what a merge of millions of quotes (a price
/// import of decades of daily prices) holds in memory instead of `Quote`s (48 bytes a quote, not
/// 128, and no reference counting).
///
/// A quote is its series (coin and currency, kept once in a table), its time to the millisecond
/// (the precision the cache keeps), its source and its price as `Fixed18`; the rare rest (a price
/// with more than 18 decimals, a 24-hour change, a market cap, the service's own time) sits in a
/// side table.
struct PackedQuotes {
    struct Entry {
        var millis: Int64
        /// The order quotes were added in: of two with one series and time, the later one wins.
        var seq: Int32
        var series: Int32
        /// The price when it fits `Fixed18` (nearly always); else `extra`'s.
        var price: Fixed18
        /// Index into `extras`, or -1.
        var extra: Int32
        var source: QuoteSource
    }

    /// What few quotes carry besides a plain price.
    struct Extra {
        /// A price `Fixed18` cannot hold exactly.
        var price: Decimal?
        var change24h: Decimal?
        var marketCap: Decimal?
        var sourceUpdatedAt: Date?
    }

    private(set) var coins: [String] = []
    private(set) var currencies: [String] = []
    private var seriesIndex: [PriceCache.SeriesKey: Int32] = [:]
    var entries: [Entry] = []
    private(set) var extras: [Extra] = []
    /// The `seq` of the next quote appended.
    var nextSeq: Int32 = 0

    var count: Int { entries.count }

    /// The series of `coin` in `currency`, added when new.
    mutating func series(coin: String, currency: String) -> Int32 {
        let key = PriceCache.SeriesKey(coinId: coin, currency: currency)
        if let i = seriesIndex[key] { return i }
        let i = Int32(coins.count)
        coins.append(coin)
        currencies.append(currency)
        seriesIndex[key] = i
        return i
    }

    mutating func append(series: Int32, millis: Int64, price: Fixed18, source: QuoteSource) {
        entries.append(Entry(millis: millis, seq: nextSeq, series: series, price: price, extra: -1, source: source))
        nextSeq &+= 1
    }

    /// Forgets the last `k` quotes appended.
    mutating func removeLast(_ k: Int) {
        entries.removeLast(k)
        nextSeq &-= Int32(truncatingIfNeeded: k)
    }

    /// Forgets the quotes numbered below zero (those read from the cache by a merge).
    mutating func removeCached() {
        entries.removeAll { $0.seq < 0 }
    }

    mutating func append(_ q: Quote) {
        let s = series(coin: q.coinId, currency: q.currency)
        let fixed = Fixed18(q.price).flatMap { $0.units > 0 ? $0 : nil }
        var extra: Int32 = -1
        if fixed == nil || q.change24h != nil || q.marketCap != nil || q.sourceUpdatedAt != nil {
            extra = Int32(extras.count)
            extras.append(Extra(price: fixed == nil ? q.price : nil, change24h: q.change24h, marketCap: q.marketCap,
                                sourceUpdatedAt: q.sourceUpdatedAt))
        }
        entries.append(Entry(millis: ISODate.millis(q.time), seq: nextSeq, series: s, price: fixed ?? .zero, extra: extra, source: q.source))
        nextSeq &+= 1
    }

    mutating func append(contentsOf quotes: [Quote]) {
        entries.reserveCapacity(entries.count + quotes.count)
        for q in quotes { append(q) }
    }

    /// The price as `Quote` holds it.
    func price(_ e: Entry) -> Decimal {
        if e.extra >= 0, let p = extras[Int(e.extra)].price { return p }
        return e.price.decimal
    }

    /// Whether two entries hold the same price (as `Decimal`s compare: by value).
    func samePrice(_ a: Entry, _ b: Entry) -> Bool {
        let aDecimal = a.extra >= 0 && extras[Int(a.extra)].price != nil
        let bDecimal = b.extra >= 0 && extras[Int(b.extra)].price != nil
        if !aDecimal && !bDecimal { return a.price == b.price }
        return price(a) == price(b)
    }

    func quote(_ e: Entry) -> Quote {
        let extra = e.extra >= 0 ? extras[Int(e.extra)] : nil
        return Quote(coinId: coins[Int(e.series)], price: extra?.price ?? e.price.decimal, change24h: extra?.change24h,
                     marketCap: extra?.marketCap, time: ISODate.date(millis: e.millis), sourceUpdatedAt: extra?.sourceUpdatedAt,
                     source: e.source, currency: currencies[Int(e.series)])
    }

    /// Every series' rank in the cache's order: by coin, then currency, as UTF-8 bytes.
    func seriesRanks() -> [Int32] {
        let order = coins.indices.sorted { a, b in
            let c = PackedQuotes.compare(coins[a], coins[b])
            return c != 0 ? c < 0 : PackedQuotes.compare(currencies[a], currencies[b]) < 0
        }
        var rank = [Int32](repeating: 0, count: coins.count)
        for (r, s) in order.enumerated() { rank[s] = Int32(r) }
        return rank
    }

    /// Sorts the entries into the cache's order: by series (coin, then currency, as bytes), time,
    /// then the order they were added in.
    mutating func sort() {
        let rank = seriesRanks()
        entries.sort { a, b in
            let ra = rank[Int(a.series)], rb = rank[Int(b.series)]
            if ra != rb { return ra < rb }
            if a.millis != b.millis { return a.millis < b.millis }
            return a.seq < b.seq
        }
    }

    /// Whether every coin id and currency is plain ASCII, so that the byte order the file is sorted
    /// in is also the order in which `String`s equal to them are found.
    var plainNames: Bool {
        (coins + currencies).allSatisfy { name in name.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F && $0 != 0x22 && $0 != 0x5C } }
    }

    /// `a` and `b` compared by their UTF-8 bytes: negative, zero or positive.
    static func compare(_ a: String, _ b: String) -> Int {
        var x = a, y = b
        return x.withUTF8 { p in y.withUTF8 { q in compare(p, q) } }
    }

    static func compare(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Int {
        let n = min(a.count, b.count)
        if n > 0, let pa = a.baseAddress, let pb = b.baseAddress {
            let c = memcmp(pa, pb, n)
            if c != 0 { return Int(c) }
        }
        return a.count - b.count
    }
}

extension PriceCache {
    /// Writes `quotes` (in the cache's order, see `PackedQuotes.sort`) as the cache file, in pieces
    /// to `sink`: the header, the newest quote of each series (`latest`), then every quote.
    ///
    /// When every name is plain ASCII the header says `"order": "series"`: the quotes are sorted by
    /// coin, currency and time, so a report can find one coin's quotes of a period without reading
    /// the rest (`PriceCacheFile`).
    static func write(_ quotes: PackedQuotes, keeping keep: (Int) -> Bool = { _ in true },
                      to emit: (UnsafeBufferPointer<UInt8>) throws(StoreError) -> Void) throws(StoreError) {
        var w = JSONWriter(capacity: 1 << 20)
        w.beginObject()
        w.key("format"); w.string("bitpal-prices")
        // Version 1 while every quote is fetched from CoinGecko, so an older bitpal still reads such a
        // cache; 2 with imported quotes; 3 with the ECB's, Yahoo's or Twelve Data's (sources an older bitpal cannot read).
        var version = 1
        var newest: [Int32: Int] = [:]  // series → index of its newest kept quote (the last: they are sorted)
        for (i, e) in quotes.entries.enumerated() where keep(i) {
            if e.source == .imported { version = max(version, 2) }
            if e.source == .ecb || e.source == .yahoo || e.source == .twelvedata { version = formatVersion }
            newest[e.series] = i
        }
        w.key("version"); w.number(String(version))
        if quotes.plainNames { w.key("order"); w.string(seriesOrder) }
        // The newest quote of each coin in each currency it is fetched in.
        w.key("latest")
        w.beginArray()
        let keyed = newest.map { (quotes.coins[Int($0.key)] + "|" + quotes.currencies[Int($0.key)], $0.value) }
        for (_, i) in keyed.sorted(by: { $0.0 < $1.0 }) { writeQuote(quotes, quotes.entries[i], to: &w) }
        w.endArray()
        w.key("quotes")
        w.beginArray()
        for (i, e) in quotes.entries.enumerated() where keep(i) {
            writeQuote(quotes, e, to: &w)
            if w.bytes.count >= 1 << 20 { try w.drain(emit) }
        }
        w.endArray()
        w.endObject()
        w.finish()
        try w.drain(emit)
    }

    /// What the header's `order` says of a file sorted by series.
    static let seriesOrder = "series"

    static func writeQuote(_ quotes: PackedQuotes, _ e: PackedQuotes.Entry, to w: inout JSONWriter) {
        let extra = e.extra >= 0 ? quotes.extras[Int(e.extra)] : nil
        w.beginInlineObject()
        w.key("coinId"); w.string(quotes.coins[Int(e.series)])
        w.key("price")
        if let p = extra?.price { w.string(DecimalFormatting.exact(p)) } else { w.fixed(e.price) }
        // Unknown values are left out (readers take a missing key as null): history is mostly bare prices.
        if let change = extra?.change24h { w.key("change24h"); w.string(DecimalFormatting.exact(change)) }
        if let cap = extra?.marketCap { w.key("marketCap"); w.string(DecimalFormatting.exact(cap)) }
        w.key("time"); w.rawString { ISODate.write(millis: e.millis, to: &$0) }
        if let updated = extra?.sourceUpdatedAt { w.key("sourceUpdatedAt"); w.string(ISODate.format(updated)) }
        w.key("source"); w.string(e.source.rawValue)
        let currency = quotes.currencies[Int(e.series)]
        if currency != "USD" { w.key("currency"); w.string(currency) }  // USD when left out
        w.endObject()
    }
}

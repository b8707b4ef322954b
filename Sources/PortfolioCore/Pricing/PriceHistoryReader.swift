import Foundation

extension PriceCache {
    /// Every cached quote, oldest first, as `load()` reads them; faster for a long price history
    /// (`history`, `performance`).
    ///
    /// A history of years holds a quote per coin and day: 50 coins over 5 years are some 91,000
    /// quotes, and `load()` checks each price by printing it back as text. This reads the cache's
    /// own plain layout straight into exact values instead (a price is exact by construction when
    /// it is read as an integer count of 10⁻¹⁸). Anything else it meets — a newer version, a price
    /// with more than 18 decimals, a value it does not know, any error — is left to `load()`, so
    /// every file reads to the very same quotes, and every broken one fails with `load()`'s error.
    public func loadHistory() throws(StoreError) -> [Quote] {
        guard let buffer = try FileSystem.readBuffer(path, limit: Self.readLimit) else { return [] }
        if let quotes = PriceHistoryReader.read(buffer) { return quotes }
        return try load()
    }
}

/// The part of the price history a report needs: some assets' quotes (all of them, or from an
/// instant on), the rates' too or not.
public struct PriceHistoryScope: Sendable, Equatable {
    /// Coin ids and registered codes whose quotes are read; `nil`: every asset's (and every rate's).
    public var assets: Set<String>?
    /// The rates' (`fx:FROM/TO` quotes) too.
    public var rates: Bool
    /// Only quotes from this instant on, and of each coin in each currency the newest before it
    /// (every quote at that time): what a price "in force" at any instant from `since` on needs.
    /// `nil`: every quote.
    public var since: Date?

    public init(assets: Set<String>?, rates: Bool = true, since: Date? = nil) {
        self.assets = assets
        self.rates = rates
        self.since = since
    }

    /// Every quote of every asset and rate.
    public static let everything = PriceHistoryScope(assets: nil)
    /// Every rate's quotes, no asset's.
    public static let rates = PriceHistoryScope(assets: [], rates: true)

    /// Whether the quotes of `coinId` are read.
    public func includes(_ coinId: String) -> Bool {
        guard let assets else { return true }
        return assets.contains(coinId) || (rates && coinId.hasPrefix("fx:"))
    }

    /// What `PriceCache.loadHistory(_:)` gives of a cache holding `quotes`: the quotes of the
    /// series in scope from `since` on (with the newest before it), and the newest quote of every
    /// other series (of two at one time, the later one), in their order.
    public func filter(_ quotes: [Quote]) -> [Quote] {
        guard assets != nil else { return quotes }
        let since = self.since.map(ISODate.millis)
        var newestBefore: [PriceCache.SeriesKey: Int64] = [:]
        var newest: [PriceCache.SeriesKey: Int] = [:]
        for (i, q) in quotes.enumerated() {
            let key = PriceCache.SeriesKey(coinId: q.coinId, currency: q.currency)
            let millis = ISODate.millis(q.time)
            if includes(q.coinId) {
                if let since, millis < since { newestBefore[key] = max(newestBefore[key] ?? .min, millis) }
            } else if newest[key].map({ ISODate.millis(quotes[$0].time) <= millis }) ?? true {
                newest[key] = i
            }
        }
        let others = Set(newest.values)
        return quotes.indices.filter { i in
            let q = quotes[i]
            guard includes(q.coinId) else { return others.contains(i) }
            guard let since else { return true }
            let millis = ISODate.millis(q.time)
            return millis >= since || millis == newestBefore[PriceCache.SeriesKey(coinId: q.coinId, currency: q.currency)]
        }.map { quotes[$0] }
    }
}

extension PriceCache {
    /// The quotes `scope` asks for: of the assets (and rates) in it, every quote from `scope.since`
    /// on and the newest before it; of every other coin and currency, the newest quote (what
    /// `latest` holds).
    ///
    /// A cache this build wrote is sorted by coin, currency and time (`"order": "series"`): then
    /// each asset's quotes of the period are found by binary search and read alone, so a report
    /// over a few coins' last years reads kilobytes of a cache of decades. Any other file — an
    /// older layout, an unusual line, a line out of order — is read whole and filtered, to the same
    /// quotes (`PriceHistoryScope.filter`).
    public func loadHistory(_ scope: PriceHistoryScope) throws(StoreError) -> [Quote] {
        guard scope.assets != nil else { return try loadHistory() }
        if case let .file(file) = PriceCacheFile.open(path), file.ordered,
           let latest = try? Self.decode(file.prefix, path: path, latestOnly: true, prefix: true),
           let quotes = file.selected(scope, latest: latest) {
            return quotes
        }
        return scope.filter(try loadHistory())
    }
}

/// The fast path of `PriceCache.loadHistory`: `nil` whenever the canonical reader should decide.
enum PriceHistoryReader {
    static func read(_ buffer: ByteBuffer) -> [Quote]? {
        var r = JSONReader(buffer: buffer)
        do {
            var quotes: [Quote] = []
            try r.beginObject()
            while let key = try r.nextKeyBytes() {
                if equal(key, "version") {
                    guard try r.readInt() <= PriceCache.formatVersion else { return nil }
                } else if equal(key, "quotes") {
                    try r.beginArray()
                    var names = Names()
                    while try r.nextElement() {
                        guard let q = try quote(&r, names: &names) else { return nil }
                        quotes.append(q)
                    }
                } else {
                    try r.skipValue()
                }
            }
            try r.finish()
            return quotes
        } catch {
            return nil
        }
    }

    /// The strings quotes repeat (a coin's id, its currency), made once.
    struct Names {
        var coin: (bytes: [UInt8], text: String) = ([], "")
        var currency: (bytes: [UInt8], code: String) = (Array("USD".utf8), "USD")
    }

    static func equal(_ bytes: UnsafeBufferPointer<UInt8>, _ text: StaticString) -> Bool {
        guard bytes.count == text.utf8CodeUnitCount, let base = bytes.baseAddress else { return bytes.isEmpty && text.utf8CodeUnitCount == 0 }
        return memcmp(base, text.utf8Start, bytes.count) == 0
    }

    static func quote(_ r: inout JSONReader, names: inout Names) throws(JSONReadError) -> Quote? {
        var coin: String?, price: Decimal?, change: Decimal?, cap: Decimal?, time: Date?, updated: Date?
        var source = QuoteSource.coingecko
        var currency = "USD"
        try r.beginObject()
        while let k = try r.nextKeyBytes() {
            if equal(k, "coinId") {
                let raw = try r.readRawStringBytes()
                if !raw.elementsEqual(names.coin.bytes) { names.coin = (Array(raw), String(decoding: raw, as: UTF8.self)) }
                coin = names.coin.text
            } else if equal(k, "price") {
                let raw = try r.readRawStringBytes()
                guard let fixed = Fixed18.parse(utf8: raw), fixed.units > 0 else { return nil }
                price = fixed.decimal
            } else if equal(k, "change24h") {
                change = r.consumeNull() ? nil : try PriceCache.readSignedDecimal(&r)
            } else if equal(k, "marketCap") {
                cap = r.consumeNull() ? nil : try PriceCache.readSignedDecimal(&r)
            } else if equal(k, "time") {
                time = try PortfolioCodec.readDate(&r)
            } else if equal(k, "sourceUpdatedAt") {
                updated = r.consumeNull() ? nil : try PortfolioCodec.readDate(&r)
            } else if equal(k, "source") {
                let raw = try r.readRawStringBytes()
                if equal(raw, "coingecko") { source = .coingecko } else {
                    guard let s = QuoteSource(rawValue: String(decoding: raw, as: UTF8.self)) else { return nil }
                    source = s
                }
            } else if equal(k, "currency") {
                let raw = try r.readRawStringBytes()
                if !raw.elementsEqual(names.currency.bytes) {
                    guard let code = CurrencyCode.parse(String(decoding: raw, as: UTF8.self))?.code else { return nil }
                    names.currency = (Array(raw), code)
                }
                currency = names.currency.code
            } else {
                try r.skipValue()
            }
        }
        guard let coin, let price, let time else { return nil }
        return Quote(coinId: coin, price: price, change24h: change, marketCap: cap, time: time, sourceUpdatedAt: updated,
                     source: source, currency: currency)
    }
}

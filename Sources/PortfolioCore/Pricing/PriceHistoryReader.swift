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
                    guard let code = CurrencyCode.parse(String(decoding: raw, as: UTF8.self)) else { return nil }
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

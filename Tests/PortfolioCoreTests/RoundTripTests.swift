import Foundation
import PortfolioCore
import Testing

/// Whatever bitpal writes, the next read of it succeeds and gives the same values: the store,
/// the price cache, the coin cache, and CSV and JSON exports imported back. Values are generated
/// from a fixed seed (a failure names its round) and include the limits: 20 integer digits,
/// 18 fractional digits, the first and last instants kept, and notes with quotes, backslashes,
/// control characters, emoji, U+2028 and text that looks like escapes or broken encodings.
@Suite struct RoundTripTests {
    static let textPieces = ["a", "Z", " ", "  ", ",", ";", "\"", "\"\"", "\\", "\\\\", "\\u0000", "\\ud800", "\\n", "/", "\n", "\r\n", "\r",
                             "\t", "\u{0}", "\u{1}", "\u{1B}[31m", "\u{7F}", "\u{85}", "\u{2028}", "\u{2029}", "\u{FEFF}", "\u{FFFD}",
                             "\u{10FFFF}", "é", "e\u{301}", "😀", "👩‍👩‍👧", "中文", "%ff", "&#0;", "=1+2", "null", "true", "0", "-1", "'"]

    static func text(_ g: inout SeededRandom, max: Int = 8) -> String {
        (0..<g.below(max + 1)).map { _ in g.pick(textPieces) }.joined()
    }

    /// A plain decimal with up to 20 integer and 18 fractional digits (often at the limits).
    static func decimalText(_ g: inout SeededRandom, positive: Bool = false) -> String {
        func digits(_ n: Int) -> String { (0..<n).map { _ in String(g.below(10)) }.joined() }
        let intCount = g.pick([1, 1, 2, 5, 19, 20, 20])
        var whole = String(g.below(9) + 1) + digits(intCount - 1)
        if g.below(5) == 0 { whole = "0" }
        let fracCount = g.pick([0, 0, 1, 2, 8, 17, 18, 18])
        var text = fracCount == 0 ? whole : whole + "." + digits(fracCount)
        if positive && Fixed18.parse(utf8: text.utf8) == .zero { text = "0.000000000000000001" }
        return text
    }

    static func fixed(_ g: inout SeededRandom, positive: Bool) -> Fixed18 {
        let text = decimalText(&g, positive: positive)
        guard let f = Fixed18.parse(utf8: text.utf8) else { preconditionFailure("generator made '\(text)'") }
        return f
    }

    /// An instant in the kept range, at the ends a third of the time.
    static func date(_ g: inout SeededRandom) -> Date {
        let ms: Int64
        switch g.below(6) {
        case 0: ms = ISODate.minMillis + Int64(g.below(3))
        case 1: ms = ISODate.maxMillis - Int64(g.below(3))
        default: ms = ISODate.minMillis + Int64(g.next() % UInt64(ISODate.maxMillis - ISODate.minMillis + 1))
        }
        // Either to the whole second or to the millisecond.
        let value = g.below(2) == 0 ? ms - ((ms % 1000) + 1000) % 1000 : ms
        return Date(timeIntervalSince1970: TimeInterval(value) / 1000)
    }

    static func transaction(_ g: inout SeededRandom, buysOnly: Bool = false) -> Transaction {
        Transaction(id: UUID(), coinId: g.below(3) == 0 ? text(&g) : g.pick(["bitcoin", "ethereum", "x"]),
                    type: buysOnly || g.below(2) == 0 ? .buy : .sell,
                    amount: fixed(&g, positive: true), price: fixed(&g, positive: true),
                    fee: g.below(3) == 0 ? .zero : fixed(&g, positive: false), date: date(&g),
                    notes: g.below(3) == 0 ? nil : text(&g, max: 12))
    }

    func same(_ a: [Transaction], _ b: [Transaction], _ context: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(a.count == b.count, "\(context)", sourceLocation: sourceLocation)
        for (x, y) in zip(a, b) {
            #expect(x.id == y.id && x.type == y.type && x.amountValue == y.amountValue && x.priceValue == y.priceValue
                    && x.feeValue == y.feeValue, "\(context): \(x) → \(y)", sourceLocation: sourceLocation)
            #expect(x.assetId.unicodeScalars.elementsEqual(y.assetId.unicodeScalars), "\(context): coin \(x.assetId.debugDescription) → \(y.assetId.debugDescription)", sourceLocation: sourceLocation)
            #expect((x.notes ?? "").unicodeScalars.elementsEqual((y.notes ?? "").unicodeScalars) && (x.notes == nil) == (y.notes == nil),
                    "\(context): notes \(String(describing: x.notes).debugDescription) → \(String(describing: y.notes).debugDescription)", sourceLocation: sourceLocation)
            #expect(ISODate.millis(x.date) == ISODate.millis(y.date), "\(context): \(ISODate.format(x.date)) → \(ISODate.format(y.date))", sourceLocation: sourceLocation)
        }
    }

    @Test func storeReadsBackWhatItWrote() throws {
        var g = SeededRandom(seed: 1)
        for round in 0..<300 {
            var p = Book()
            p.transactions = (0..<g.below(6)).map { _ in Self.transaction(&g) }
            p.watchlist = (0..<g.below(3)).map { _ in WatchEntry(coinId: Self.text(&g), dateAdded: Self.date(&g)) }
            p.manualPrices = (0..<g.below(3)).map { _ in
                Quote(coinId: Self.text(&g), price: Self.fixed(&g, positive: true).decimal, time: Self.date(&g), source: .manual)
            }
            let bytes = PortfolioCodec.encode(p)
            let back = try PortfolioCodec.decode(bytes, path: "round \(round)")
            same(p.transactions, back.transactions, "round \(round)")
            #expect(back.watchlist.map { ISODate.millis($0.dateAdded) } == p.watchlist.map { ISODate.millis($0.dateAdded) })
            #expect(back.watchlist.map { Array($0.coinId.unicodeScalars) } == p.watchlist.map { Array($0.coinId.unicodeScalars) })
            #expect(back.manualPrices.map(\.price) == p.manualPrices.map(\.price), "round \(round)")
            #expect(back.manualPrices.map { ISODate.millis($0.time) } == p.manualPrices.map { ISODate.millis($0.time) })
            // Writing what was read gives the same bytes.
            #expect(PortfolioCodec.encode(back) == bytes, "round \(round)")
        }
    }

    @Test func storeFileThroughTheStore() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var g = SeededRandom(seed: 2)
        let store = PortfolioStore(directory: dir)
        let txs = (0..<200).map { _ in Self.transaction(&g) }
        // Random records break the history's rules (oversells, future dates), which `update` refuses:
        // write the file the way `update` does, then read it back through the store.
        try FileSystem.ensureDirectory(dir)
        try FileSystem.writeAtomically(PortfolioCodec.encode(Book(transactions: txs)), to: store.path)
        same(txs, try store.load().transactions, "file")
    }

    @Test func priceCacheReadsBackWhatItWrote() throws {
        var g = SeededRandom(seed: 3)
        for round in 0..<60 {
            let dir = scratchDirectory()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            // Distinct coins (the retention rule would rightly merge two quotes of a coin at one time).
            let quotes: [Quote] = (0..<(g.below(8) + 1)).map { i in
                let change = g.below(3) == 0 ? nil : Self.fixed(&g, positive: false).decimal * (g.below(2) == 0 ? -1 : 1)
                return Quote(coinId: "\(i)" + Self.text(&g), price: Self.fixed(&g, positive: true).decimal, change24h: change,
                             marketCap: g.below(3) == 0 ? nil : Self.fixed(&g, positive: false).decimal,
                             time: Self.date(&g), sourceUpdatedAt: g.below(2) == 0 ? nil : Self.date(&g),
                             source: g.pick([QuoteSource.coingecko, .manual, .imported]))
            }
            let cache = PriceCache(directory: dir)
            try cache.append(quotes, now: .distantPast)  // every quote counts as recent: all are kept
            let back = try cache.load()
            #expect(back.count == quotes.count, "round \(round)")
            for (q, b) in zip(quotes, back) {
                #expect(Array(q.coinId.unicodeScalars) == Array(b.coinId.unicodeScalars), "round \(round)")
                #expect(q.price == b.price && q.change24h == b.change24h && q.marketCap == b.marketCap && q.source == b.source,
                        "round \(round): \(q) → \(b)")
                #expect(ISODate.millis(q.time) == ISODate.millis(b.time), "round \(round)")
                #expect(q.sourceUpdatedAt.map(ISODate.millis) == b.sourceUpdatedAt.map(ISODate.millis), "round \(round)")
            }
            #expect(try cache.loadLatest().count == Set(quotes.map { Array($0.coinId.unicodeScalars).map(\.value) }).count, "round \(round)")
        }
    }

    @Test func coinCacheReadsBackWhatItWrote() throws {
        var g = SeededRandom(seed: 4)
        for round in 0..<60 {
            let dir = scratchDirectory()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let coins = (0..<g.below(10)).map { _ in
                Coin(id: Self.text(&g), symbol: Self.text(&g), name: Self.text(&g, max: 12),
                     marketCapRank: g.pick([nil, 0, 1, 250, Int.max, Int(truncatingIfNeeded: g.next() >> 1)]))
            }
            let fetched = Self.date(&g)
            let cache = CatalogCache(directory: dir)
            try cache.save(coins, fetchedAt: fetched)
            let back = try #require(try cache.load(), "round \(round)")
            #expect(ISODate.millis(back.fetchedAt) == ISODate.millis(fetched))
            #expect(back.coins.count == coins.count)
            for (c, b) in zip(coins, back.coins) {
                #expect(Array(c.id.unicodeScalars) == Array(b.id.unicodeScalars) && Array(c.symbol.unicodeScalars) == Array(b.symbol.unicodeScalars)
                        && Array(c.name.unicodeScalars) == Array(b.name.unicodeScalars) && c.marketCapRank == b.marketCapRank, "round \(round): \(c) → \(b)")
            }
        }
    }

    @Test(arguments: ["csv", "json"]) func exportsImportBackToTheSameTransactions(format: String) throws {
        var g = SeededRandom(seed: format == "csv" ? 5 : 6)
        let latest = Date(timeIntervalSince1970: TimeInterval(ISODate.maxMillis) / 1000)
        for round in 0..<40 {
            // Buys only, so every history is valid; notes non-empty (an empty note is no note).
            // Coin ids as the catalog has them (import trims the coin column before resolving it); each has a
            // lower-case letter, as a coin id does (an id without one names a registered asset, which needs registering).
            let txs = (0..<(g.below(12) + 1)).map { _ in
                var t = Self.transaction(&g, buysOnly: true)
                if t.notes == "" { t.notes = nil }
                t.assetId = g.pick(["bitcoin", "usd-coin", "a,b", "q\"x", "line\nbreak", "crlf\r\nx", "x\"\u{301}", "üx"])
                return t
            }
            let ordered = Ledger.chronological(txs)
            let bytes = format == "csv" ? TransactionExport.csv(ordered) : TransactionExport.json(ordered)
            let rows = format == "csv" ? try TransactionImport.rows(csv: bytes) : try TransactionImport.rows(json: bytes)
            let plan = try TransactionImport.plan(rows, into: [], now: latest, allowDuplicates: false,
                                                  timeZone: TimeZone(identifier: "Pacific/Kiritimati") ?? .current, resolveCoin: { $0 })
            same(ordered, plan.added, "\(format) round \(round)")
        }
    }
}

import Foundation
import Testing
@testable import PortfolioCore

/// The price cache sorted by coin, currency and time, and the readers that take only part of it:
/// every part they read is what the whole file read by the canonical reader gives, a report is the
/// same whatever else the cache holds, and a merge keeps what the rule of the cache says.
@Suite struct PriceCacheLayoutTests {
    static let utc = TimeZone(identifier: "UTC")!

    /// A cache of `coins` with random stretches of quotes (some also in EUR at the same times, some
    /// on the same day), rates `fx:EUR/USD`, now and then a quote with a 24-hour change or a market cap.
    static func randomQuotes(_ g: inout SplitMix64, coins: [String], days: Int = 400) -> [Quote] {
        var quotes: [Quote] = []
        let start = day("2023-01-01").timeIntervalSince1970
        for coin in coins + ["fx:EUR/USD", "fx:USD/GBP"] {
            let first = g.below(days), count = g.below(days) + 1
            var cents = UInt64(g.below(1_000_000) + 100)
            for d in first..<(first + count) where g.below(5) != 0 {
                cents = max(1, cents + UInt64(g.below(200)) - 100)
                let time = Date(timeIntervalSince1970: start + Double(d) * 86_400 + Double(g.below(3)) * 3600)
                let price = dec("\(cents / 100).\(cents % 100)")
                let rare = g.below(40) == 0
                let currency = coin.hasPrefix("fx:") ? String(coin.suffix(3)) : "USD"
                quotes.append(Quote(coinId: coin, price: price, change24h: rare ? dec("-1.25") : nil, marketCap: rare ? dec("1234567") : nil,
                                    time: time, source: g.below(2) == 0 ? .imported : .coingecko, currency: currency))
                if !coin.hasPrefix("fx:") && g.below(3) == 0 {
                    quotes.append(Quote(coinId: coin, price: price * 2, time: time, source: .coingecko, currency: "EUR"))
                }
            }
        }
        // Added in no particular order, as fetches and imports interleave.
        for i in quotes.indices.reversed() {
            let j = g.below(i + 1)
            quotes.swapAt(i, j)
        }
        return quotes
    }

    static func written(_ quotes: [Quote], in dir: String) throws -> PriceCache {
        let cache = PriceCache(directory: dir)
        try FileSystem.writeAtomically(PriceCache.encode(quotes), to: cache.path)
        return cache
    }

    @Test func aPartReadIsTheWholeFileFiltered() throws {
        var g = SplitMix64(seed: 20_261_126)
        let coins = ["aave", "bitcoin", "cardano", "dogecoin", "ethereum", "AAPL", "solana"]
        var partReads = 0
        for round in 0..<30 {
            let dir = scratchDirectory()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let cache = try Self.written(Self.randomQuotes(&g, coins: Array(coins.prefix(g.below(coins.count) + 1))), in: dir)
            let whole = try cache.load()
            for _ in 0..<8 {
                let assets = Set(coins.filter { _ in g.below(3) == 0 } + (g.below(4) == 0 ? ["not-cached"] : []))
                let since: Date? = g.below(4) == 0 ? nil : day("2023-01-01").addingTimeInterval(Double(g.below(900)) * 43_200)
                let scope = PriceHistoryScope(assets: assets, rates: g.below(2) == 0, since: since)
                let part = try cache.loadHistory(scope)
                let same = part == scope.filter(whole)
                #expect(same, "round \(round): \(scope)")
                // The part was read from the sorted file, not by the whole-file fallback.
                if case let .file(file) = PriceCacheFile.open(cache.path), file.ordered,
                   let latest = try? PriceCache.decode(file.prefix, path: cache.path, latestOnly: true, prefix: true),
                   file.selected(scope, latest: latest) != nil {
                    partReads += 1
                }
            }
        }
        #expect(partReads > 150, "the sorted file's reader took most scopes: \(partReads) of 240")
    }

    /// `filter` on its own terms: every quote of a chosen series from `since` on plus every quote at
    /// its newest time before; of the others, the newest.
    @Test func theFilterKeepsWhatAPriceInForceNeeds() {
        let q = { (coin: String, price: String, date: String, currency: String) in
            Quote(coinId: coin, price: dec(price), time: day(date), source: .imported, currency: currency)
        }
        let quotes = [
            q("bitcoin", "1", "2024-01-01", "USD"), q("bitcoin", "2", "2024-01-02", "USD"), q("bitcoin", "3", "2024-01-02", "EUR"),
            q("bitcoin", "4", "2024-01-05", "USD"), q("ethereum", "5", "2024-01-01", "USD"), q("ethereum", "6", "2024-01-03", "USD"),
            q("fx:EUR/USD", "1.1", "2024-01-01", "USD"), q("fx:EUR/USD", "1.2", "2024-01-04", "USD"),
        ]
        let scope = PriceHistoryScope(assets: ["bitcoin"], rates: false, since: day("2024-01-03"))
        #expect(scope.filter(quotes).map(\.price) == ["2", "3", "4", "6", "1.2"].map(dec))
        let rates = PriceHistoryScope(assets: [], rates: true, since: day("2024-01-02"))
        #expect(rates.filter(quotes).map(\.price) == ["3", "4", "6", "1.1", "1.2"].map(dec))
        #expect(PriceHistoryScope.everything.filter(quotes) == quotes)
    }

    /// A book's value over time and its flows, read through the part reader, are those of the whole
    /// cache read by the canonical reader; and the same whether the cache holds other coins' and
    /// older years' quotes or only the book's.
    @Test func valueOverTimeIsTheSameFromALargeOrASmallCache() throws {
        var g = SplitMix64(seed: 77)
        let now = day("2024-03-01T12:00:00Z")
        for round in 0..<12 {
            let held = ["bitcoin", "ethereum", "AAPL"]
            var records: [Transaction] = []
            var units = [String: Int]()
            for i in 0..<40 {
                let asset = held[g.below(held.count)]
                let date = ISODate.format(day("2023-03-01").addingTimeInterval(Double(i * 7 + g.below(7)) * 86_400))
                // The euro portfolio holds coins only, bought and sold in euros.
                let portfolio = asset != "AAPL" && g.below(3) == 0 ? "eu" : "main"
                let key = portfolio + asset
                var t: Transaction
                if units[key, default: 0] > 1 && g.below(3) == 0 {
                    t = record(.sell, asset, "1", price: "\(g.below(900) + 100)", fee: "0", on: date, portfolio: portfolio)
                    units[key, default: 0] -= 1
                } else {
                    t = record(.buy, asset, "2", price: "\(g.below(900) + 100)", fee: "1", on: date, portfolio: portfolio)
                    units[key, default: 0] += 2
                }
                if portfolio == "eu" { t.currency = "EUR" }
                records.append(t)
            }
            let apple = Asset(id: "AAPL", name: "Apple", type: .stock, createdDate: ISODate.epoch2024)
            let book = Book(transactions: records, portfolios: [Portfolio(name: "main"), Portfolio(name: "eu", baseCurrency: "EUR")],
                            assets: [apple], defaultPortfolio: "main")
            var options = book.ledgerOptions
            options.keepingChanges = true
            let checked = book.checked(now: now, options: options)
            #expect(checked.problems.isEmpty, "round \(round): \(checked.problems)")
            let ledger = checked.ledger
            let quotes = Self.randomQuotes(&g, coins: held + ["cardano", "dogecoin", "litecoin", "solana", "tron"], days: 500)
            let large = scratchDirectory(), small = scratchDirectory()
            defer {
                try? FileManager.default.removeItem(atPath: large)
                try? FileManager.default.removeItem(atPath: small)
            }
            _ = try Self.written(quotes, in: large)
            let mine = quotes.filter { held.contains($0.coinId) || $0.coinId.hasPrefix("fx:") }
            _ = try Self.written(mine, in: small)
            func session(_ dir: String) -> Session {
                Session(SessionEnvironment(directory: dir, now: now, offline: true,
                                           transport: RecordingTransport { _ in HTTPResponse(status: 404, headers: [:], body: Data()) },
                                           timeZone: Self.utc, network: { throw PriceError.offline }))
            }
            // The canonical reader's whole file, as reports read it before.
            let whole = PriceBook(manual: book.manualPrices, fetched: try PriceCache(directory: large).load())
            for chosen in [Set(["main"]), Set(["eu"]), Set(["main", "eu"])] {
                var info: [String: ValueTimeline.PortfolioInfo] = [:]
                for p in book.portfolios where chosen.contains(p.name) {
                    info[p.name] = ValueTimeline.PortfolioInfo(baseCurrency: p.baseCurrency, tracksCash: p.trackCash)
                }
                let reference = ValueTimeline(changes: ledger.changes, portfolios: info, prices: whole,
                                              fxRates: book.fxRates + Prices.cachedRates(whole), currency: "USD", timeZone: Self.utc, now: now)
                for dir in [large, small] {
                    let timeline = try session(dir).timeline(book, portfolios: chosen, refresh: false, currency: "USD", timeZone: Self.utc,
                                                             names: .plain)
                    for interval in HistoryInterval.allCases {
                        let a = timeline.history(interval: interval), b = reference.history(interval: interval)
                        #expect(a.rows == b.rows && a.unpriced == b.unpriced, "round \(round) \(chosen) \(interval)")
                    }
                    #expect(timeline.flows() == reference.flows(), "round \(round) \(chosen)")
                }
            }
        }
    }

    /// The merge against the rule as it was written before the sorted layout: the cached quotes in
    /// file order, then the new ones; a new quote of a cached coin, currency and time replaces it
    /// (or, with the same price and source, leaves it); then `retained` thins the older days.
    @Test func aMergeKeepsWhatTheRuleKeeps() throws {
        var g = SplitMix64(seed: 5)
        let now = day("2024-03-01T12:00:00Z")
        for round in 0..<60 {
            let dir = scratchDirectory()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let cache = PriceCache(directory: dir)
            func some() -> [Quote] {
                (0..<g.below(40)).map { _ in
                    // A few coins, a few days around the 7-day edge, a few times a day.
                    let time = now.addingTimeInterval(-Double(g.below(12)) * 86_400 - Double(g.below(4)) * 21_600)
                    return Quote(coinId: ["bitcoin", "ethereum"][g.below(2)], price: Decimal(g.below(3) + 1), time: time,
                                 source: g.below(2) == 0 ? .imported : .coingecko, currency: ["USD", "EUR"][g.below(2)])
                }
            }
            let first = some()
            try cache.append(first, now: now, timeZone: Self.utc)
            let cached = try cache.load()
            let incoming = some()
            let before = FileManager.default.contents(atPath: cache.path)
            let outcome = try cache.merge(incoming, now: now, timeZone: Self.utc)

            // The rule, on plain arrays.
            func key(_ q: Quote) -> String { "\(q.coinId)|\(q.currency)|\(ISODate.millis(q.time))" }
            var last: [String: Int] = [:]
            for (i, q) in incoming.enumerated() { last[key(q)] = i }
            var replaced = Set<Int>(), alreadyCached = Set<Int>()
            for (i, q) in cached.enumerated() {
                guard let j = last[key(q)] else { continue }
                if incoming[j].price == q.price && incoming[j].source == q.source { alreadyCached.insert(j) } else { replaced.insert(i) }
            }
            var all = cached.enumerated().filter { !replaced.contains($0.offset) }.map(\.element)
            let firstNew = all.count
            for (i, q) in incoming.enumerated() where last[key(q)] == i && !alreadyCached.contains(i) { all.append(q) }
            let keep = PriceCache.retained(all, now: now, timeZone: Self.utc)
            let added = (firstNew..<all.count).filter { keep[$0] }.count
            #expect(outcome.added == added && outcome.notKept == all.count - firstNew - added && outcome.unchanged == alreadyCached.count,
                    "round \(round): \(outcome)")
            let expected = zip(all, keep).filter(\.1).map(\.0)
            func sorted(_ q: [Quote]) -> [String] { q.map { key($0) + "|\($0.price)|\($0.source)" }.sorted() }
            #expect(sorted(try cache.load()) == sorted(expected), "round \(round)")
            let wrote = added > 0 || !replaced.isEmpty || keep.contains(false)
            if !wrote { #expect(FileManager.default.contents(atPath: cache.path) == before, "round \(round): nothing changed, nothing written") }
        }
    }

    /// `check` reads the whole cache a piece at a time: its count, and a quote out of the declared
    /// order by its line; a part read that meets it reads the whole file instead.
    @Test func verifyCountsAndFindsAQuoteOutOfOrder() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var g = SplitMix64(seed: 9)
        let cache = try Self.written(Self.randomQuotes(&g, coins: ["bitcoin", "ethereum"]), in: dir)
        let whole = try cache.load()
        #expect(try cache.verify() == PriceCache.Verification(quotes: whole.count, outOfOrderLine: nil))
        // Swap two neighbouring lines of bitcoin's dollar quotes.
        var lines = String(decoding: try #require(FileManager.default.contents(atPath: cache.path)), as: UTF8.self)
            .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let quotesLine = try #require(lines.firstIndex { $0.contains(#""quotes": ["#) })
        func dollarBitcoin(_ i: Int) -> Bool {
            lines[i].contains(#"{"coinId": "bitcoin""#) && !lines[i].contains(#""currency""#) && lines[i].hasSuffix(",")
        }
        let bitcoin = try #require((quotesLine + 1..<lines.count - 1).filter { dollarBitcoin($0) && dollarBitcoin($0 + 1) }.dropFirst(2).first)
        lines.swapAt(bitcoin, bitcoin + 1)
        try FileSystem.writeAtomically(Array(lines.joined(separator: "\n").utf8), to: cache.path)
        #expect(try cache.verify() == PriceCache.Verification(quotes: whole.count, outOfOrderLine: bitcoin + 2))
        let scope = PriceHistoryScope(assets: ["bitcoin"], rates: false)
        #expect(try cache.loadHistory(scope) == scope.filter(try cache.load()))
        // A file an older build wrote (in the order quotes were added, no `order`): read whole, then
        // written sorted by the next merge.
        let unsorted = lines.filter { !$0.contains(#""order":"#) }
        try FileSystem.writeAtomically(Array(unsorted.joined(separator: "\n").utf8), to: cache.path)
        #expect(try cache.verify()?.outOfOrderLine == nil)
        #expect(try cache.loadHistory(scope) == scope.filter(try cache.load()))
        try cache.append([Quote(coinId: "bitcoin", price: 1, time: day("2024-06-01T00:30:00Z"), source: .imported)], now: day("2024-06-02"),
                         timeZone: Self.utc)
        let rewritten = String(decoding: try #require(FileManager.default.contents(atPath: cache.path)), as: UTF8.self)
        #expect(rewritten.contains(#""order": "series""#))
        #expect(try cache.verify() == PriceCache.Verification(quotes: whole.count + 1, outOfOrderLine: nil))
    }
}

extension PriceCacheLayoutTests {
    /// A cache larger than the readers' pieces (over 1 MB), and a line longer than a probe's piece.
    @Test func longFilesAndLongLinesReadInPieces() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let long = String(repeating: "x", count: 6000)
        var quotes: [Quote] = []
        for coin in ["bitcoin", long, "zcash"] {
            for d in 0..<(coin == long ? 200 : 6000) {
                quotes.append(Quote(coinId: coin, price: Decimal(d + 1), time: day("2010-01-01").addingTimeInterval(Double(d) * 86_400), source: .imported))
            }
        }
        let cache = try Self.written(quotes, in: dir)
        #expect((try FileManager.default.attributesOfItem(atPath: cache.path)[.size] as? Int ?? 0) > 2 << 20)
        #expect(try cache.verify() == PriceCache.Verification(quotes: quotes.count, outOfOrderLine: nil))
        for coin in ["bitcoin", long, "zcash"] {
            let scope = PriceHistoryScope(assets: [coin], rates: false, since: day("2020-06-01"))
            let part = try cache.loadHistory(scope)
            #expect(part == scope.filter(try cache.load()))
            let since = try #require(scope.since)
            let later = quotes.filter { $0.coinId == coin && $0.time >= since }.count
            #expect(part.filter { $0.coinId == coin }.count == later + 1)
        }
        // A merge reads it back whole, in pieces, and writes it again the same.
        let before = FileManager.default.contents(atPath: cache.path)
        #expect(try cache.merge(Array(quotes.prefix(10)), now: day("2030-01-01"), timeZone: Self.utc).unchanged == 10)
        #expect(FileManager.default.contents(atPath: cache.path) == before)
    }
}

/// The readings of plain ASCII lines from their bytes (a long price file's lines) against the
/// character-by-character ones they stand in for.
@Suite struct PriceLineBytesTests {
    @Test func asciiReadingsAgreeWithTheCharacterOnes() throws {
        var g = SplitMix64(seed: 11)
        let pieces = ["\"", "\"\"", ",", " ", "\t", "\u{0B}", "a", "BTC", "42,000.50", ";", "#", "*", "P", "2024-01-15", "2024/1/5", "\r"]
        for _ in 0..<20_000 {
            let line = (0..<g.below(9)).map { _ in pieces[g.below(pieces.count)] }.joined()
            let bytes = try? PriceImport.splitASCII(Array(line.utf8)), characters = try? PriceImport.splitCharacters(line)
            #expect(bytes == characters, "\(line.debugDescription)")
            #expect(line.trimmedSpace == String(line.unicodeScalars.drop { $0.properties.isWhitespace }.reversed().drop { $0.properties.isWhitespace }
                .reversed().map(Character.init)), "\(line.debugDescription)")
            let skipped = line.first(where: { $0 != " " && $0 != "\t" }).map { $0 == ";" || $0 == "#" || $0 == "*" } ?? true
            #expect(PriceImport.isSkipped(line) == skipped, "\(line.debugDescription)")
            var quoted = false
            var plain = Substring(line)
            for i in line.indices {
                if line[i] == "\"" { quoted.toggle() }
                if line[i] == ";" && !quoted { plain = line[..<i]; break }
            }
            #expect(PriceImport.withoutComment(Substring(line)) == plain, "\(line.debugDescription)")
        }
    }

    /// A plain ledger line read from its bytes is the line `ledger` reads from its text.
    @Test func plainLedgerLinesAreTheLedgerReadersLines() throws {
        var g = SplitMix64(seed: 12)
        let pieces = ["P", " ", "\t", "2024-01-15", "2023-02-29", "BTC", "\"VANGUARD 500\"", "42000", "0.5", "0", "1.0000000000000000001",
                      "USD", "eur", "XYZ", "12:00", ";", "$", ",", "-", "\"", "123456789012345678901"]
        var plain = 0, prices = 0
        for _ in 0..<20_000 {
            // The shape of a price line, each part now and then something else.
            let shape = [["", " "], ["P"], [" ", "\t", "  "], ["2024-01-15", "2023-02-28"], [" "], ["BTC", "\"VANGUARD 500\"", "bitcoin"], [" "],
                         ["42000", "0.5", "42000.25"], ["", " USD", " eur", "\tGBP"], ["", " "]]
            let line = shape.map { g.below(6) == 0 ? pieces[g.below(pieces.count)] : $0[g.below($0.count)] }.joined()
            let fast = Array(line.utf8).withUnsafeBufferPointer { PriceImport.plainLedger($0, line: 1) }
            guard let fast else { continue }
            plain += 1
            switch fast {
            case .skip:
                #expect(PriceImport.isSkipped(line), "\(line.debugDescription)")
            case let .price(p):
                prices += 1
                #expect(!PriceImport.isSkipped(line) && (try? PriceImport.ledger(line, line: 1)) == p, "\(line.debugDescription)")
            }
        }
        #expect(plain > 2000 && prices > 2000, "the generated lines include plain ones: \(plain), \(prices) prices")
    }
}

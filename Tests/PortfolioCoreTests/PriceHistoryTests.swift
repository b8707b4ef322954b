import Foundation
import PortfolioCore
import Testing

/// The price cache's retention rule, its merge, and the price-file reader (issue 14, price history).
@Suite struct PriceHistoryTests {
    let utc = TimeZone(identifier: "UTC") ?? .current
    let berlin = TimeZone(identifier: "Europe/Berlin") ?? .current

    // MARK: Retention

    /// A 5-minute cron for a year, trimmed at every simulated midnight as appends would: the last
    /// week stays whole, every earlier day keeps exactly its last quote, and the count stays bounded.
    @Test func aYearOfFiveMinuteCronKeepsADailyHistoryAndStaysBounded() {
        let start = day("2023-06-01T00:00:00Z")
        let perDay = 288
        var cache: [Quote] = []
        var peak = 0
        for d in 0..<366 {
            for i in 0..<perDay {
                let t = start.addingTimeInterval(TimeInterval(d * 86_400 + i * 300))
                cache.append(Quote(coinId: "bitcoin", price: Decimal(d * perDay + i + 1), time: t, source: .coingecko))
            }
            let now = start.addingTimeInterval(TimeInterval((d + 1) * 86_400 - 1))
            cache = PriceCache.trimmed(cache, now: now, timeZone: utc)
            peak = max(peak, cache.count)
            // Never more than the last week in full plus one quote a day before it.
            #expect(cache.count <= 8 * perDay + d + 1, "day \(d)")
        }
        let now = start.addingTimeInterval(TimeInterval(366 * 86_400 - 1))
        let cutoff = now.addingTimeInterval(-PriceCache.recentSeconds)
        let old = cache.filter { $0.time < cutoff }
        let recent = cache.filter { $0.time >= cutoff }
        // Every quote of the last 7 days …
        #expect(recent.count == 7 * perDay)
        // … and of every earlier day its last one, at 23:55.
        let oldDays = old.map { ISODate.dayNumber(of: $0.time, in: utc) }
        #expect(Set(oldDays).count == old.count)
        #expect(old.count == 359)
        #expect(old.allSatisfy { Int($0.time.timeIntervalSince1970) % 86_400 == 86_100 })
        #expect(old.first?.price == Decimal(perDay))  // 2023-06-01 23:55
        #expect(peak <= 8 * perDay + 366)
        // In order, as appended.
        #expect(cache.map(\.time) == cache.map(\.time).sorted())
    }

    /// End to end through the file: hourly appends over three weeks, each trimming at its own time.
    @Test func appendsThroughTheFileKeepTheSameHistory() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cache = PriceCache(directory: dir)
        let start = day("2024-03-01T00:30:00Z")
        for h in 0..<(21 * 24) {
            let t = start.addingTimeInterval(TimeInterval(h * 3600))
            try cache.append([Quote(coinId: "bitcoin", price: Decimal(h + 1), time: t, source: .coingecko),
                              Quote(coinId: "bitcoin", price: Decimal(h + 1), time: t, source: .coingecko, currency: "EUR")],
                             now: t, timeZone: berlin)
        }
        let all = try cache.load()
        let now = start.addingTimeInterval(TimeInterval((21 * 24 - 1) * 3600))
        let cutoff = now.addingTimeInterval(-PriceCache.recentSeconds)
        for currency in ["USD", "EUR"] {
            let series = all.filter { $0.currency == currency }
            #expect(series.filter { $0.time >= cutoff }.count == 7 * 24 + 1)
            let old = series.filter { $0.time < cutoff }
            // One per Berlin day: the 23:30 local quote (22:30 UTC in winter).
            #expect(Set(old.map { ISODate.dayNumber(of: $0.time, in: berlin) }).count == old.count)
            #expect(old.dropLast().allSatisfy { ISODate.localDay(of: $0.time.addingTimeInterval(3600), in: berlin) != ISODate.localDay(of: $0.time, in: berlin) })
        }
        #expect(try cache.loadLatest().count == 2)
    }

    /// Days are the zone's calendar days, also across daylight-saving changes and 30-minute offsets.
    @Test func lastOfEachDayFollowsTheZonesCalendar() throws {
        var g = SeededRandom(seed: 14)
        for zoneName in ["America/New_York", "Australia/Lord_Howe", "Asia/Kolkata", "UTC"] {
            let zone = try #require(TimeZone(identifier: zoneName))
            let base = day("2023-01-01T00:00:00Z").timeIntervalSince1970
            let quotes = (0..<3000).map { i in
                Quote(coinId: "bitcoin", price: Decimal(i + 1), time: Date(timeIntervalSince1970: base + TimeInterval(g.below(730 * 86_400))),
                      source: .coingecko)
            }
            var expected: [Int64: Quote] = [:]
            for q in quotes {
                let d = ISODate.dayNumber(of: q.time, in: zone)
                if let e = expected[d], e.time > q.time { continue }
                expected[d] = q
            }
            let got = Prices.lastOfEachDay(quotes, timeZone: zone)
            #expect(got.map(\.price) == expected.keys.sorted().compactMap { expected[$0]?.price }, "\(zoneName)")
            // The cache's rule agrees when everything is older than a week.
            let kept = PriceCache.trimmed(quotes, now: day("2030-01-01T00:00:00Z"), timeZone: zone)
            #expect(Set(kept.map(\.price)) == Set(got.map(\.price)), "\(zoneName)")
        }
    }

    @Test func mergeIsIdempotentAndReplacesAQuoteOfTheSameTime() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cache = PriceCache(directory: dir)
        let now = day("2024-06-01T12:00:00Z")
        let quotes = [
            Quote(coinId: "bitcoin", price: dec("42000"), time: day("2024-01-15T00:00:00Z"), source: .imported),
            Quote(coinId: "bitcoin", price: dec("43000"), time: day("2024-01-16T00:00:00Z"), source: .imported),
        ]
        let dry = try cache.merge(quotes, now: now, timeZone: utc, write: false)
        #expect(dry.added == 2 && dry.unchanged == 0)
        #expect(!FileManager.default.fileExists(atPath: cache.path), "a dry run writes nothing")
        #expect(try cache.merge(quotes, now: now, timeZone: utc).added == 2)
        let bytes = FileManager.default.contents(atPath: cache.path)
        let again = try cache.merge(quotes, now: now, timeZone: utc)
        #expect(again.added == 0 && again.unchanged == 2)
        #expect(FileManager.default.contents(atPath: cache.path) == bytes, "nothing changed, nothing written")
        // A corrected price of the same day and time replaces the cached one.
        var fixed = quotes[1]
        fixed.price = dec("43000.5")
        let corrected = try cache.merge([fixed], now: now, timeZone: utc)
        #expect(corrected.added == 1 && corrected.unchanged == 0)
        #expect(try cache.load().map(\.price) == [dec("42000"), dec("43000.5")])
        // An earlier quote of a cached day is not kept: the day's last quote is.
        let early = Quote(coinId: "bitcoin", price: dec("1"), time: day("2024-01-15T00:00:00Z").addingTimeInterval(-60), source: .imported)
        let late = Quote(coinId: "bitcoin", price: dec("2"), time: day("2024-01-15T18:00:00Z"), source: .imported)
        let noon = Quote(coinId: "bitcoin", price: dec("3"), time: day("2024-01-15T12:00:00Z"), source: .imported)
        let both = try cache.merge([early, late, noon], now: now, timeZone: utc)
        // `early` is 2024-01-14, a day of its own; `late` replaces 42000 as 2024-01-15's last; `noon` is not kept.
        #expect(both.added == 2 && both.notKept == 1)
        // The cache keeps each coin's quotes in time order (01-14 23:59, 01-15 18:00, 01-16).
        #expect(try cache.load().map(\.price) == [dec("1"), dec("2"), dec("43000.5")])
    }

    @Test func versionOneUntilImportedQuotesAndTheLatestAreReadFromAPrefix() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cache = PriceCache(directory: dir)
        let now = day("2024-06-01T12:00:00Z")
        // Ten years of daily quotes of 40 coins: megabytes of history behind a short `latest`.
        var quotes: [Quote] = []
        for c in 0..<40 {
            for d in 0..<3650 {
                quotes.append(Quote(coinId: "coin-\(c)", price: Decimal(d + 1), time: now.addingTimeInterval(TimeInterval(-d * 86_400)), source: .coingecko))
            }
        }
        try cache.append(quotes, now: now, timeZone: utc)
        let text = String(decoding: FileManager.default.contents(atPath: cache.path) ?? Data(), as: UTF8.self)
        #expect(text.contains("\"version\": 1,"))
        #expect(!text.contains("null"), "unknown values are left out")
        #expect(text.utf8.count < 146_000 * 100)
        let latest = try cache.loadLatest()
        #expect(latest.count == 40 && latest.allSatisfy { $0.price == 1 })
        try cache.append([Quote(coinId: "coin-0", price: 7, time: now, source: .imported)], now: now, timeZone: utc)
        let text2 = String(decoding: FileManager.default.contents(atPath: cache.path) ?? Data(), as: UTF8.self)
        #expect(text2.contains("\"version\": 2,"))
        #expect(try cache.loadLatest().first { $0.coinId == "coin-0" }?.source == .imported)
        // The ECB's rates make it version 3 (a source older builds cannot read).
        try cache.append([Quote(coinId: "fx:USD/EUR", price: dec("0.92"), time: now, source: .ecb, currency: "EUR")], now: now, timeZone: utc)
        let text3 = String(decoding: FileManager.default.contents(atPath: cache.path) ?? Data(), as: UTF8.self)
        #expect(text3.contains("\"version\": 3,"))
        #expect(try cache.loadLatest().first { $0.coinId == "fx:USD/EUR" }?.source == .ecb)
        // A newer version than this build reads is refused by name, from a prefix or the whole file.
        try Data(text3.replacingOccurrences(of: "\"version\": 3,", with: "\"version\": 4,").utf8).write(to: URL(fileURLWithPath: cache.path))
        #expect(throws: StoreError.self) { try cache.loadLatest() }
        #expect(throws: StoreError.self) { try cache.load() }
    }

    // MARK: Fetching history

    /// The public entry point other features call: hourly points for 2 days thin to the last point of
    /// each Berlin day, land in the cache, and come back oldest first.
    @Test func sessionFetchHistoryKeepsTheLastPointOfEachLocalDay() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let now = day("2024-06-01T12:00:00Z")
        let first = Int64(now.timeIntervalSince1970 * 1000) - 48 * 3_600_000
        let transport = RecordingTransport { url in
            guard url.path.hasSuffix("/coins/bitcoin/market_chart") else { return HTTPResponse(status: 404, headers: [:], body: Data()) }
            let points = (0...48).map { h in "[\(first + Int64(h) * 3_600_000),\(60000 + h).5]" }
            let body = #"{"prices":["# + points.joined(separator: ",") + #"],"market_caps":[],"total_volumes":[]}"#
            return HTTPResponse(status: 200, headers: [:], body: Data(body.utf8))
        }
        let session = Session(SessionEnvironment(
            directory: dir, now: now, offline: false, transport: transport, timeZone: berlin,
            network: { NetworkSettings(config: PriceServiceConfig(environment: ["BITPAL_API_URL": "http://127.0.0.1:9/api/v3"]), secrets: []) }))
        let quotes = try session.prices.fetchHistory(coin: "bitcoin", currencies: ["usd"], days: 2, purpose: .explicit)
        // 2024-05-30 12:00Z … 2024-06-01 12:00Z is 14:00 on the 30th to 14:00 on the 1st in Berlin (UTC+2):
        // the 30th and the 31st end at 23:00 local (21:00Z), the 1st ends with the last point.
        #expect(quotes.map { ISODate.format($0.time) } == ["2024-05-30T21:00:00Z", "2024-05-31T21:00:00Z", "2024-06-01T12:00:00Z"])
        #expect(quotes.map(\.price) == [dec("60009.5"), dec("60033.5"), dec("60048.5")])
        #expect(quotes.allSatisfy { $0.currency == "USD" && $0.source == .coingecko })
        #expect(transport.paths == ["http://127.0.0.1:9/api/v3/coins/bitcoin/market_chart?vs_currency=usd&days=2"])
        #expect(try PriceCache(directory: dir).load() == quotes)
        #expect(throws: PriceError.historyDays(366)) {
            try session.prices.fetchHistory(coin: "bitcoin", currencies: ["USD"], days: 366, purpose: .explicit)
        }
        #expect(transport.paths.count == 1)
    }

    // MARK: Price files

    struct LineCase: CustomTestStringConvertible {
        let name: String
        let text: String
        let format: PriceFileFormat
        /// commodity, price, currency, date as typed
        let expected: [(String, String, String?, String)]
        var testDescription: String { name }
    }

    static let lineCases: [LineCase] = [
        .init(name: "ledger with a currency code", text: "P 2024-01-15 BTC 42000.00 USD\n", format: .ledger,
              expected: [("BTC", "42000", "USD", "2024-01-15")]),
        .init(name: "ledger with a time, a quoted symbol and $ with thousands", text: "P 2024-01-15 12:00:00 \"BTC\" $42,000.00\n",
              format: .ledger, expected: [("BTC", "42000", "USD", "2024-01-15 12:00:00")]),
        .init(name: "ledger slashes, a short time, a code before, a comment after", text: "P 2024/01/15 09:30 ETH EUR 2,345.5 ; close\n",
              format: .ledger, expected: [("ETH", "2345.5", "EUR", "2024-01-15 09:30")]),
        .init(name: "ledger quoted symbol with a space, no currency", text: "P 2024-01-15 \"VANGUARD 500\" 412.75\n", format: .ledger,
              expected: [("VANGUARD 500", "412.75", nil, "2024-01-15")]),
        .init(name: "hledger's short dates", text: "P 2024/1/5 BTC 40000 USD\nP 2024-01-5 BTC 41000 USD\n", format: .ledger,
              expected: [("BTC", "40000", "USD", "2024-01-05"), ("BTC", "41000", "USD", "2024-01-05")]),
        .init(name: "comments and blanks", text: "; header\n# also\n* org\n\n   \nP 2024-01-15 BTC €40000\n", format: .ledger,
              expected: [("BTC", "40000", "EUR", "2024-01-15")]),
        .init(name: "beancount", text: "2024-01-15 price BTC 42000.00 USD\n  source: \"coingecko\"\n2024-01-16 price ETH  2500 USD ; x\n",
              format: .beancount, expected: [("BTC", "42000", "USD", "2024-01-15"), ("ETH", "2500", "USD", "2024-01-16")]),
        .init(name: "bitpal CSV", text: "date,asset,price,currency\n2024-01-15,btc,42000,USD\n2024-01-16 12:00,eth,\"$2,500.25\",\n",
              format: .csv, expected: [("btc", "42000", "USD", "2024-01-15"), ("eth", "2500.25", "USD", "2024-01-16 12:00")]),
        .init(name: "pricehist CSV", text: "date,base,quote,amount,source,type\r\n2024-01-15,BTC,USD,42000.123456789,coingecko,price\r\n",
              format: .csv, expected: [("BTC", "42000.123456789", "USD", "2024-01-15")]),
    ]

    @Test(arguments: lineCases) func readsEachFormat(_ c: LineCase) throws {
        #expect(PriceImport.detect(Array(c.text.utf8)) == c.format)
        let file = try PriceImport.read(Array(c.text.utf8), format: nil)
        #expect(file.problems.isEmpty, "\(file.problems)")
        #expect(file.format == c.format)
        #expect(file.prices.count == c.expected.count)
        for (p, e) in zip(file.prices, c.expected) {
            #expect(p.commodity == e.0)
            #expect(p.price.decimal == dec(e.1))
            #expect(p.currency == e.2)
            #expect(p.date == DateInput.parse(e.3))
        }
    }

    @Test func everyBadLineIsListed() throws {
        let text = """
        P 2024-01-15 BTC 42000 USD
        P 2024-01-15 BTC 42,00 USD
        P 2024-02-30 BTC 1 USD
        P 2024-01-15 BTC -5 USD
        P 2024-01-15 BTC 0 USD
        P 2024-01-15 BTC 1.0000000000000000001 USD
        P 2024-01-15 BTC 5 BTC
        P 2024-01-15 BTC USD 5 EUR
        P 2024-01-15 25:00 BTC 5 USD
        P 2024-01-15 "BTC 5 USD
        D $1,000.00

        """
        let file = try PriceImport.read(Array(text.utf8), format: .ledger)
        #expect(file.prices.count == 1)
        #expect(file.problems.map(\.line) == [2, 3, 4, 5, 6, 7, 8, 9, 10, 11])
        #expect(file.problems[0].message.contains("',' may only separate thousands"))
        #expect(file.problems[1].message.contains("'2024-02-30' is not a date"))
        #expect(file.problems[2].message == "Price must be greater than zero")
        #expect(file.problems[4].message.contains("18"), "\(file.problems[4].message)")
        #expect(file.problems[5].message.hasPrefix("Unsupported currency 'BTC'"))
        #expect(file.problems[7].message.contains("not a time"))
        #expect(file.problems[9].message.hasPrefix("not a price line"))
        #expect(throws: ImportFailure.self) { try PriceImport.read(Array("hello world\n".utf8), format: nil) }
        let csv = try PriceImport.read(Array("date,price\n2024-01-15,1\n".utf8), format: nil)
        #expect(csv.problems.map(\.line) == [1] && csv.problems[0].message.contains("missing: asset"))
        let short = try PriceImport.read(Array("date,asset,price\n2024-01-15,btc\nyesterday,btc,1\n".utf8), format: nil)
        #expect(short.problems.map(\.line) == [2, 3])
    }
}

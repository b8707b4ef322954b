import BitpalCLI
import Foundation
import PortfolioCore
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// What a hostile or broken price server can do, against the fake on 127.0.0.1 (issue #9).
final class NetworkHardeningTests: FakeServiceTestCase {
    func holdBitcoin(_ s: Sandbox) {
        s.ok(["--offline", "add", "buy", "btc", "1", "30000", "--date", "2024-01-01"])
    }

    func pricesReply(_ fields: String) -> FakeCoinGecko.Reply {
        FakeCoinGecko.Reply(status: 200, body: #"{"bitcoin":{"# + fields + "}}")
    }

    // MARK: 1. Absurd numbers

    func testAbsurdUpdateTimesBecomeNullAndTheCacheStaysReadable() throws {
        for stamp in ["1e12", "1e20", "-1e20", "1e400", "253402300800", "-2208988801", "1" + String(repeating: "0", count: 400)] {
            let s = online()
            holdBitcoin(s)
            server.fallback = { [unowned self] _ in self.pricesReply(#""usd":67187.33,"last_updated_at":"# + stamp) }
            let r = s.run(["price", "refresh"])
            XCTAssertEqual(r.code, .success, "\(stamp): \(r)")
            XCTAssertTrue(r.err.contains("warning: ignored the update time of 'bitcoin' from the price service"), "\(stamp): \(r.err)")
            let quotes = try PriceCache(directory: s.dir).load()
            XCTAssertEqual(quotes.count, 1, stamp)
            XCTAssertEqual(quotes.first?.price, dec("67187.33"))
            XCTAssertNil(quotes.first?.sourceUpdatedAt, stamp)
            let holdings = s.run(["--offline", "holdings", "--json"])
            XCTAssertEqual(holdings.code, .success, "\(stamp): the next report reads the cache: \(holdings)")
            XCTAssertTrue(holdings.out.contains(#""currentPrice": "67187.33""#), holdings.out)
        }
    }

    func testTimesInsideTheStoresRangeAreKept() throws {
        for (stamp, expected) in [("-1", "1969-12-31T23:59:59Z"), ("253402300799", "9999-12-31T23:59:59Z"),
                                  ("-2208988800", "1900-01-01T00:00:00Z"), ("1711356300.5", "2024-03-25T08:45:00.500Z")] {
            let s = online()
            holdBitcoin(s)
            server.fallback = { [unowned self] _ in self.pricesReply(#""usd":1.5,"last_updated_at":"# + stamp) }
            let r = s.run(["price", "refresh"])
            XCTAssertEqual(r.code, .success, "\(stamp): \(r)")
            XCTAssertFalse(r.err.contains("warning"), r.err)
            let quote = try XCTUnwrap(PriceCache(directory: s.dir).load().first)
            XCTAssertEqual(quote.sourceUpdatedAt.map(ISODate.format), expected)
            XCTAssertEqual(s.run(["--offline", "price", "history", "btc", "--json"]).code, .success)
        }
    }

    func testAbsurdPricesAreSkippedWithAWarning() throws {
        let huge = "9" + String(repeating: "9", count: 600)
        let longFraction = "0." + String(repeating: "1", count: 600)
        for price in ["-1", "0", "1e400", "1e-400", "-1e400", "1e20", "1e-31", huge, longFraction, "1.0e+16",
                      "123456789012345678901234567890123456789", "\"67187.33\"", "true", "[]", "{}", "-0.5"] {
            let s = online()
            holdBitcoin(s)
            s.ok(["--offline", "price", "set", "btc", "100", "--date", "2024-05-01"])
            server.fallback = { [unowned self] _ in self.pricesReply(#""usd":"# + price + #","usd_24h_change":1.5"#) }
            let r = s.run(["price", "refresh"])
            XCTAssertEqual(r.code, .success, "\(price.prefix(20)): \(r)")
            XCTAssertTrue(r.err.contains("warning: ignored the price of 'bitcoin' from the price service"), "\(price.prefix(20)): \(r.err)")
            XCTAssertLessThan(r.err.count, 400, "a long number is shortened in the warning")
            XCTAssertEqual(r.out, "Refreshed 0 of 1 price from 127.0.0.1.\n")
            XCTAssertEqual(try PriceCache(directory: s.dir).load(), [])
            let holdings = s.run(["--offline", "holdings", "--json"])
            XCTAssertEqual(holdings.code, .success)
            XCTAssertTrue(holdings.out.contains(#""currentPrice": "100""#), holdings.out)
        }
    }

    func testUsablePricesAtTheEdgesAreKeptExactly() throws {
        let cases = [("1e-18", "0.000000000000000001"), ("1e15", "1000000000000000"),
                     ("123456789012345.12345678901234567890123", "123456789012345.12345678901234567890123"),
                     ("8.45E-06", "0.00000845"), ("2.866e-05", "0.00002866")]
        for (sent, kept) in cases {
            let s = online()
            holdBitcoin(s)
            server.fallback = { [unowned self] _ in
                self.pricesReply(#""usd":"# + sent + #","usd_24h_change":-1e400,"usd_market_cap":-5"#)
            }
            let r = s.run(["price", "refresh"])
            XCTAssertEqual(r.code, .success, "\(sent): \(r)")
            XCTAssertTrue(r.err.contains("ignored the 24h change of 'bitcoin'") && r.err.contains("ignored the market cap"), r.err)
            let quote = try XCTUnwrap(PriceCache(directory: s.dir).load().first)
            XCTAssertEqual(DecimalFormatting.exact(quote.price), kept)
            XCTAssertNil(quote.change24h)
            XCTAssertNil(quote.marketCap)
        }
    }

    func testServiceNumbersParseStrictly() {
        XCTAssertEqual(ServiceNumbers.exact("8.45e-06"), dec("0.00000845"))
        XCTAssertEqual(ServiceNumbers.exact("-0.0"), 0)
        XCTAssertEqual(ServiceNumbers.exact("1.0e+16"), dec("10000000000000000"))
        for bad in ["", "-", "01", "1.", ".5", "1e", "1e+", "+1", "1.2.3", "0x10", "NaN", "Infinity", "1e5e5", " 1", "1_0",
                    "1e128", "1e-129", String(repeating: "7", count: 39)] {
            XCTAssertNil(ServiceNumbers.exact(bad), bad)
        }
        XCTAssertNil(ServiceNumbers.date("1e12"))
        XCTAssertNil(ServiceNumbers.date("1e20"))
        XCTAssertNil(ServiceNumbers.date("1e999999999999"))
    }

    // MARK: 2. Secrets

    func testAKeyEchoedByTheServerIsNeverPrinted() throws {
        let demo = "CG-demoSECRET123"
        let pro = "CG-proSECRET456"
        let cases: [([String: String], FakeCoinGecko.Reply)] = [
            (["COINGECKO_API_KEY": demo], .init(status: 400, body: #"{"error":"invalid request for key CG-demoSECRET123"}"#)),
            (["COINGECKO_API_KEY": demo], .init(status: 400, body: #"{"error":"invalid request for key cg-demosecret123 (normalised)"}"#)),
            (["COINGECKO_PRO_API_KEY": pro], .init(status: 404, body: #"{"status":{"error_code":404,"error_message":"no route for key CG-proSECRET456"}}"#)),
            (["COINGECKO_PRO_API_KEY": pro], .init(status: 418, body: #"{"error":""# + String(repeating: "x", count: 190) + #"CG-proSECRET456"}"#)),
            (["COINGECKO_API_KEY": demo], .init(status: 302, body: "", headers: ["location": "http://CG-demoSECRET123.example/"])),
            // Trimmed, re-cased, run into other text: still not printed.
            (["COINGECKO_API_KEY": demo], .init(status: 400, body: #"{"error":"invalid key cg-demosecret12 (one short)"}"#)),
            (["COINGECKO_API_KEY": demo], .init(status: 400, body: #"{"error":"key=xxCG-DEMOSECRET123yy"}"#)),
        ]
        for (env, reply) in cases {
            let s = online(env)
            holdBitcoin(s)
            server.fallback = { _ in reply }
            let refresh = s.run(["price", "refresh"])
            XCTAssertEqual(refresh.code, .service, "\(refresh)")
            let holdings = s.run(["holdings"])  // the warning; the failure is remembered now, so refresh again
            try? FileManager.default.removeItem(atPath: s.dir + "/.network-failure")
            let holdingsAgain = s.run(["holdings"])
            let memory = String(decoding: FileManager.default.contents(atPath: s.dir + "/.network-failure") ?? Data(), as: UTF8.self)
            for text in [refresh.err, refresh.out, holdings.err, holdingsAgain.err, memory] {
                XCTAssertFalse(text.lowercased().contains("secret"), text)
                XCTAssertFalse(text.lowercased().contains("secre"), "no part of the key: \(text)")
            }
            XCTAssertTrue(refresh.err.contains("[redacted]") || reply.status == 302, refresh.err)
            XCTAssertTrue(holdingsAgain.err.hasPrefix("warning: could not refresh prices"), holdingsAgain.err)
        }
    }

    func testAKeyCannotSmuggleAHeader() {
        let s = online(["COINGECKO_API_KEY": "abc\r\nX-Evil: 1"])
        holdBitcoin(s)
        let r = s.run(["price", "refresh"])
        XCTAssertEqual(r.code, .service, "\(r)")
        XCTAssertTrue(server.requests.allSatisfy { $0.headers["x-evil"] == nil }, "\(server.requests)")
        XCTAssertTrue(server.requests.isEmpty, "nothing is sent with a broken header")
    }

    func testTransportErrorsAreRedactedToo() {
        // A key that happens to appear in the URL's host: curl names the host in its error.
        let s = online(["COINGECKO_API_KEY": "no-such-host-xq", "BITPAL_HTTP_TIMEOUT": "2"])
        s.variables["BITPAL_API_URL"] = "http://no-such-host-xq.invalid/api/v3"
        holdBitcoin(s)
        let r = s.run(["price", "refresh"])
        XCTAssertEqual(r.code, .service)
        XCTAssertFalse(r.err.contains("no-such-host-xq"), r.err)
    }

    // MARK: 3. Redirects

    func testARedirectIsNotFollowedAndTheKeyGoesNowhereElse() throws {
        let other = try FakeCoinGecko()
        defer { other.stop() }
        let s = online(["COINGECKO_API_KEY": "CG-redirect-secret"])
        holdBitcoin(s)
        for status in [301, 302, 307, 308] {
            server.enqueue(.init(status: status, body: "", headers: ["location": other.baseURL + "/simple/price?ids=bitcoin"]))
            let r = s.run(["price", "refresh"])
            XCTAssertEqual(r.code, .service, "\(r)")
            XCTAssertEqual(r.err, "error: the price service answered with a redirect (HTTP \(status) to 127.0.0.1:\(other.port)); bitpal follows no redirects, so check BITPAL_API_URL\n")
        }
        XCTAssertEqual(other.requests.count, 0, "the second server never hears from bitpal")
        XCTAssertEqual(server.requests.count, 4)
        XCTAssertEqual(server.requests.first?.headers["x-cg-demo-api-key"], "CG-redirect-secret")
    }

    // MARK: 4. Body caps

    func testAGzipBombIsCutOffAtTheCap() throws {
        let s = online()
        holdBitcoin(s)
        // 4 MiB + 1 KiB of zeros, about 27 KB compressed: just past the /simple/price cap of 4 MiB.
        let bomb = Gzip.zeros(runs: (4 << 20 + 1024) / 258)
        XCTAssertLessThan(bomb.count, 40_000)
        server.fallback = { _ in FakeCoinGecko.Reply(status: 200, body: "", headers: ["content-encoding": "gzip"], bytes: bomb) }
        let r = s.run(["price", "refresh"])
        XCTAssertEqual(r.code, .service, "\(r)")
        XCTAssertEqual(r.err, "error: the price service sent a reply larger than 4 MiB; stopped reading it\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: s.dir + "/prices.json"))
    }

    func testTheTransportStopsReadingAtItsCap() throws {
        // 64 MiB of zeros (400 KB on the wire) against a 64 KiB cap: stops after about the cap.
        let bomb = Gzip.zeros(runs: (64 << 20) / 258)
        server.fallback = { _ in FakeCoinGecko.Reply(status: 200, body: "", headers: ["content-encoding": "gzip"], bytes: bomb) }
        let url = try XCTUnwrap(URL(string: server.baseURL + "/ping"))
        XCTAssertThrowsError(try CurlTransport().send(HTTPRequest(url: url, headers: [:], timeout: 5, maxBodyBytes: 64 << 10))) {
            XCTAssertEqual($0 as? TransportError, .tooLarge(limit: 64 << 10))
        }
        // A plain body past the cap too.
        server.fallback = { _ in FakeCoinGecko.Reply(status: 200, body: String(repeating: "x", count: 100_000)) }
        XCTAssertThrowsError(try CurlTransport().send(HTTPRequest(url: url, headers: [:], timeout: 5, maxBodyBytes: 99_999))) {
            XCTAssertEqual($0 as? TransportError, .tooLarge(limit: 99_999))
        }
        let exact = try CurlTransport().send(HTTPRequest(url: url, headers: [:], timeout: 5, maxBodyBytes: 100_000))
        XCTAssertEqual(exact.body.count, 100_000)
    }

    func testGzipRepliesAreDecodedAndHeadersRead() throws {
        let body = Array(#"{"bitcoin":{"usd":42.5}}"#.utf8)
        server.fallback = { _ in
            FakeCoinGecko.Reply(status: 200, body: "", headers: ["content-encoding": "gzip", "x-Thing": "a"], bytes: Gzip.stored(body))
        }
        let url = try XCTUnwrap(URL(string: server.baseURL + "/simple/price?ids=bitcoin"))
        let r = try CurlTransport().send(HTTPRequest(url: url, headers: ["x-cg-demo-api-key": "k"], timeout: 5, maxBodyBytes: 1000))
        XCTAssertEqual(r.status, 200)
        XCTAssertEqual(Array(r.body), body)
        XCTAssertEqual(r.headers["x-thing"], "a")
        XCTAssertEqual(server.requests.first?.headers["x-cg-demo-api-key"], "k")
        XCTAssertNotNil(server.requests.first?.headers["accept-encoding"])
    }

    // MARK: 5. BITPAL_HTTP_TIMEOUT

    func testTheTimeoutSettingIsValidated() {
        let s = online()
        holdBitcoin(s)
        for bad in ["0", "601", "1e20", "100000000000000000000", "-5", " 5", "5s", "1.5", "five", "0005"] {
            s.variables["BITPAL_HTTP_TIMEOUT"] = bad
            for args in [["price", "refresh"], ["holdings"], ["coins", "update"]] {
                let r = s.run(args)
                XCTAssertEqual(r.code, .usage, "\(bad) \(args): \(r)")
                XCTAssertTrue(r.err.hasPrefix("error: BITPAL_HTTP_TIMEOUT '") && r.err.hasSuffix("is not a whole number of seconds from 1 to 600\n"), r.err)
                XCTAssertEqual(r.err.filter { $0 == "\n" }.count, 1)
            }
            XCTAssertEqual(s.run(["--offline", "holdings"]).code, .success, "offline, the setting is not used")
        }
        XCTAssertEqual(server.requests.count, 0)
        for good in ["1", "600", ""] {
            s.variables["BITPAL_HTTP_TIMEOUT"] = good
            XCTAssertEqual(s.run(["price", "refresh", "--quiet"]).code, .success, good)
        }
    }

    func testTheServiceURLMustBeHTTP() {
        let s = online()
        holdBitcoin(s)
        for bad in ["file:///etc/passwd", "ftp://127.0.0.1/api", "127.0.0.1:8080", "http://"] {
            s.variables["BITPAL_API_URL"] = bad
            let r = s.run(["price", "refresh"])
            XCTAssertEqual(r.code, .usage, "\(bad): \(r)")
            XCTAssertTrue(r.err.hasPrefix("error: BITPAL_API_URL '"), r.err)
        }
    }

    // MARK: 6. One budget per command

    func testRetriesAndASlowBodyFitInTheBudget() {
        let s = online(["BITPAL_HTTP_TIMEOUT": "3"])
        holdBitcoin(s)
        let limited = FakeCoinGecko.Reply(status: 429, body: "{}", headers: ["retry-after": "1"])
        server.enqueue(limited, limited, .init(status: 200, body: #"{"bitcoin":{"usd":1}}"#, trickle: 1))
        let started = Date()
        let r = s.run(["price", "refresh"])
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertEqual(r.code, .service, "\(r)")
        XCTAssertEqual(s.sleeps, [1, 1])
        XCTAssertEqual(r.err, "error: the price service at 127.0.0.1 did not answer within 3 s (set BITPAL_HTTP_TIMEOUT to wait longer)\n")
        XCTAssertLessThan(elapsed, 2.5, "2 s of the 3 went on (pretended) waits; the slow body gets the last second")
    }

    func testAWaitThatWouldCrossTheDeadlineIsNotStarted() {
        let s = online(["BITPAL_HTTP_TIMEOUT": "5"])
        holdBitcoin(s)
        server.enqueue(.init(status: 429, body: "{}", headers: ["retry-after": "8"]))
        let r = s.run(["price", "refresh"])
        XCTAssertEqual(r.code, .service)
        XCTAssertTrue(r.err.hasPrefix("error: the price service is rate-limiting requests (HTTP 429, 1 attempt)"), r.err)
        XCTAssertEqual(s.sleeps, [])
        XCTAssertEqual(server.requests.count, 1)
        // Without the setting, price refresh has 30 s: the 8 s wait fits.
        s.variables["BITPAL_HTTP_TIMEOUT"] = nil
        server.enqueue(.init(status: 429, body: "{}", headers: ["retry-after": "8"]))
        XCTAssertEqual(s.run(["price", "refresh", "--quiet"]).code, .success)
        XCTAssertEqual(s.sleeps, [8])
    }

    // MARK: 7. A failure is remembered

    func testAReportWaitsAboutThreeSecondsThenRemembersTheFailure() {
        let s = online()
        holdBitcoin(s)
        s.ok(["--offline", "price", "set", "btc", "60000", "--date", "2024-05-01"])
        s.ok(["--offline", "watch", "add", "eth"])
        server.enqueue(.init(status: 200, body: "", hang: true))
        var started = Date()
        let first = s.run(["holdings", "--json"])
        let waited = Date().timeIntervalSince(started)
        XCTAssertEqual(first.code, .success)
        XCTAssertTrue(first.err.hasPrefix("warning: could not refresh prices (the price service at 127.0.0.1 did not answer within 3 s"), first.err)
        XCTAssertGreaterThan(waited, 2.5)
        XCTAssertLessThan(waited, 5)
        XCTAssertTrue(FileManager.default.fileExists(atPath: s.dir + "/.network-failure"))

        // Within 5 minutes: straight to the cache, with the warning, no request.
        s.now = s.now.addingTimeInterval(240)
        started = Date()
        for args in [["holdings"], ["summary"], ["widget"], ["watch"]] {
            let r = s.run(args)
            XCTAssertEqual(r.code, .success)
            XCTAssertTrue(r.err.contains("not asking again before 2024-06-01 12:05 UTC"), "\(args): \(r.err)")
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 1)
        XCTAssertEqual(server.requests.count, 1)

        // price refresh always tries, and its success clears the memory.
        XCTAssertEqual(s.run(["price", "refresh", "--quiet"]).code, .success)
        XCTAssertEqual(server.requests.count, 2)
        XCTAssertFalse(FileManager.default.fileExists(atPath: s.dir + "/.network-failure"))
        s.now = s.now.addingTimeInterval(61)
        XCTAssertEqual(s.run(["holdings"]).err, "")
        XCTAssertEqual(server.requests.count, 3)
    }

    func testTheMemoryExpiresAfterFiveMinutes() {
        let s = online()
        holdBitcoin(s)
        server.enqueue(.init(status: 503, body: "down"), .init(status: 503, body: "down"))
        XCTAssertTrue(s.run(["holdings"]).err.contains("HTTP 503"))
        let before = server.requests.count
        s.now = s.now.addingTimeInterval(299)
        let remembered = s.run(["holdings"])
        XCTAssertTrue(remembered.err.contains("not asking again"), remembered.err)
        XCTAssertEqual(server.requests.count, before)
        s.now = s.now.addingTimeInterval(2)
        XCTAssertEqual(s.run(["holdings"]).err, "")
        XCTAssertEqual(server.requests.count, before + 1)
        XCTAssertFalse(FileManager.default.fileExists(atPath: s.dir + "/.network-failure"))
    }

    func testCoinsUpdateAlwaysTriesAndClearsTheMemory() {
        let s = online()
        server.enqueue(.init(status: 500, body: "x"), .init(status: 500, body: "x"), .init(status: 500, body: "x"))
        XCTAssertEqual(s.run(["coins", "update"]).code, .service)
        XCTAssertTrue(FileManager.default.fileExists(atPath: s.dir + "/.network-failure"))
        XCTAssertEqual(s.run(["coins", "update"]).code, .success)
        XCTAssertFalse(FileManager.default.fileExists(atPath: s.dir + "/.network-failure"))
    }

    // MARK: 8. Quiet waits, no libcurl

    func testAHangingRequestUsesAlmostNoCPU() {
        let s = online(["BITPAL_HTTP_TIMEOUT": "1"])
        holdBitcoin(s)
        server.fallback = { _ in FakeCoinGecko.Reply(status: 200, body: "", hang: true) }
        let cpuBefore = processCPUSeconds()
        let started = Date()
        let r = s.run(["price", "refresh"])
        let wall = Date().timeIntervalSince(started)
        let cpu = processCPUSeconds() - cpuBefore
        XCTAssertEqual(r.code, .service)
        XCTAssertGreaterThan(wall, 0.9)
        XCTAssertLessThan(cpu, 0.25 * wall, "waiting must not spin (URLSession used ~80% of a core)")
    }

    func testMissingLibcurlIsAClearErrorNotACrash() {
        let s = online()
        holdBitcoin(s)
        let console = Console(live: false)
        var env = Environment(variables: s.variables, now: { s.now }, transport: CurlTransport(libraryName: "libcurl-not-here.so.4"))
        env.sleep = { _ in }
        let code = CLI(environment: env, console: console).run(["price", "refresh"])
        XCTAssertEqual(code, .service)
        XCTAssertTrue(console.err.hasPrefix("error: cannot use the network: cannot load libcurl-not-here.so.4"), console.err)
        XCTAssertTrue(console.err.contains("apt install libcurl4"), console.err)
    }

    // MARK: 9. Did you mean, at once

    func testACloseMatchIsAnsweredAtOnceWithoutTheNetwork() {
        let s = online()
        server.fallback = { _ in FakeCoinGecko.Reply(status: 200, body: "", hang: true) }
        let started = Date()
        let r = s.run(["add", "buy", "bitcon", "1", "100"])
        XCTAssertEqual(r.code, .failure)
        XCTAssertEqual(r.err, "error: Cryptocurrency 'bitcon' not found. Did you mean 'bitcoin'? (if 'bitcon' is a coin, run 'bitpal coins update')\n")
        XCTAssertLessThan(Date().timeIntervalSince(started), 1)
        XCTAssertEqual(server.requests.count, 0)
        XCTAssertEqual(s.run(["watch", "add", "etherum"]).code, .failure)
        XCTAssertEqual(s.run(["price", "set", "solan", "1"]).code, .failure)
        XCTAssertEqual(server.requests.count, 0)
    }

    func testNoCloseMatchRefreshesTheListWithinTheShortBudget() {
        let s = online(["BITPAL_HTTP_TIMEOUT": "1"])
        server.fallback = { _ in FakeCoinGecko.Reply(status: 200, body: "", hang: true) }
        let started = Date()
        let r = s.run(["add", "buy", "qqqqqqqqqq", "1", "100"])
        XCTAssertLessThan(Date().timeIntervalSince(started), 2.5)
        XCTAssertEqual(r.code, .failure)
        XCTAssertTrue(r.err.hasPrefix("warning: could not refresh the coin list (the price service at 127.0.0.1 did not answer within 1 s"), r.err)
        XCTAssertEqual(server.requests.map(\.path), ["/api/v3/coins/list"])
        // The failure is remembered: the next unknown coin does not wait again.
        let again = s.run(["add", "buy", "zzzzzzzzzz", "1", "100"])
        XCTAssertTrue(again.err.contains("not asking again"), again.err)
        XCTAssertEqual(server.requests.count, 1)
    }
}

/// CPU seconds this process has used (all threads).
func processCPUSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

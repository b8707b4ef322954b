import BitpalCLI
import Foundation
import PortfolioCore
import XCTest

/// The hostile replies of `NetworkHardeningTests` (CoinGecko's), against the market-data clients
/// (issue 24, item 4): Yahoo Finance and Twelve Data through `price refresh` and `price fetch-history`,
/// Frankfurter through `fx fetch-history`. Each run must exit as market-data.md's "Exit codes" say,
/// name the failure in one line, leave portfolio.json byte for byte, and keep in the price cache only
/// what the services that answered well sent.
final class MarketDataHardeningTests: FakeServiceTestCase {
    typealias Reply = FakeCoinGecko.Reply
    static let key = "td-hostile-KEY-9876543210"

    /// Where each service lives on the fake.
    enum Route: String {
        case yahoo = "/v8/finance/chart/", twelveData = "/td/", frankfurter = "/fx/"
        /// The registered asset priced by this service, and its symbol there.
        var asset: String { self == .yahoo ? "YAH" : "TWD" }
        var service: String { self == .yahoo ? "Yahoo Finance" : "Twelve Data" }
        var other: Route { self == .yahoo ? .twelveData : .yahoo }
    }

    /// What is run against a hostile reply.
    enum Run {
        case refresh, history, fx
        var args: [String] {
            switch self {
            case .refresh: ["price", "refresh"]
            case .history: ["price", "fetch-history", "YAH", "TWD", "--days", "5"]
            case .fx: ["fx", "fetch-history"]
            }
        }
    }

    // MARK: Good replies

    /// 2024-05-29, -30 and -31 at 13:30 UTC (New York's open).
    static let stamps = ["1716989400", "1717075800", "1717162200"]

    /// A Yahoo chart in USD: `latest` at 2024-05-31 19:59 UTC, and `closes` on the days of `stamps` (no `timestamp` when nil).
    static func chart(latest: String = "101.5", closes: [String]? = ["100.5", "101", "101.5"]) -> Reply {
        let bars = closes.map { #""timestamp":[\#(stamps.joined(separator: ","))],"indicators":{"quote":[{"close":[\#($0.joined(separator: ","))]}]}"# }
            ?? #""indicators":{"quote":[{}]}"#
        return Reply(status: 200, body: #"{"chart":{"result":[{"meta":{"currency":"USD","symbol":"YSYM","exchangeTimezoneName":"America/New_York","#
            + #""regularMarketPrice":\#(latest),"regularMarketTime":1717185540},\#(bars)}],"error":null}}"#)
    }

    /// A Twelve Data `/quote` in USD.
    static func quote(close: String = #""50.5""#) -> Reply {
        Reply(status: 200, body: #"{"symbol":"TSYM","currency":"USD","datetime":"2024-05-31","timestamp":1717106400,"#
            + #""last_quote_at":1717169400,"close":\#(close),"is_market_open":false}"#)
    }

    /// A Twelve Data `/time_series` in USD, newest first: 2024-05-31, -30 and -29.
    static func series(closes: [String] = [#""50.5""#, #""50""#, #""49.5""#]) -> Reply {
        let values = zip(["2024-05-31", "2024-05-30", "2024-05-29"], closes).map { #"{"datetime":"\#($0)","close":\#($1)}"# }
        return Reply(status: 200, body: #"{"meta":{"symbol":"TSYM","interval":"1day","currency":"USD","#
            + #""exchange_timezone":"America/New_York"},"values":[\#(values.joined(separator: ","))],"status":"ok"}"#)
    }

    /// A Frankfurter range per euro: USD on 2024-05-30 (`usd30`) and 2024-05-31.
    static func rates(usd30: String) -> Reply {
        Reply(status: 200, body: #"{"amount":1.0,"base":"EUR","start_date":"2024-05-30","end_date":"2024-05-31","rates":{"#
            + #""2024-05-30":{"GBP":0.8530,"USD":\#(usd30)},"2024-05-31":{"GBP":0.8531,"USD":1.0831}}}"#)
    }

    /// Good replies everywhere but `route`'s, which is `reply` to every request.
    func serve(_ route: Route? = nil, _ reply: Reply? = nil) {
        serve(route) { _ in reply }
    }

    /// Good replies everywhere but `route`'s, which `answer` gives (a good one when it gives none).
    func serve(_ route: Route?, answering answer: @escaping (FakeCoinGecko.Request) -> Reply?) {
        server.fallback = { request in
            if let route, request.path.hasPrefix(route.rawValue), let reply = answer(request) { return reply }
            switch request.path {
            case let path where path.hasPrefix(Route.yahoo.rawValue): return Self.chart()
            case "/td/quote": return Self.quote()
            case "/td/time_series": return Self.series()
            default: return FakeCoinGecko.frankfurter(request)
            }
        }
    }

    // MARK: The sandbox and the checks

    /// A euro portfolio holding YAH (Yahoo's YSYM) and TWD (Twelve Data's TSYM), both in dollars, with a
    /// price cache already holding their quotes of a minute ago (fetched from good replies).
    func sandbox(_ extra: [String: String] = [:]) -> Sandbox {
        var variables = ["BITPAL_YAHOO_URL": "http://127.0.0.1:\(server.port)", "BITPAL_TWELVEDATA_URL": "http://127.0.0.1:\(server.port)/td",
                         "BITPAL_TWELVEDATA_KEY": Self.key]
        variables.merge(extra) { $1 }
        let s = online(variables)
        s.ok(["--offline", "portfolio", "add", "eu", "--currency", "EUR"])
        s.ok(["--offline", "portfolio", "default", "eu"])
        s.ok(["--offline", "asset", "add", "YAH", "--name", "Yahoo asset", "--type", "stock", "--currency", "USD", "--quote", "yahoo:YSYM"])
        s.ok(["--offline", "asset", "add", "TWD", "--name", "Twelve asset", "--type", "stock", "--currency", "USD", "--quote", "twelvedata:TSYM"])
        s.ok(["--offline", "add", "buy", "YAH", "2", "90", "--fx-rate", "0.92", "--date", "2024-05-02"])
        serve()
        let noon = s.now
        s.now = noon.addingTimeInterval(-60)
        s.ok(["price", "refresh", "--quiet"])
        s.now = noon
        return s
    }

    var cachePath: (Sandbox) -> String = { $0.dir + "/prices.json" }
    /// How long the last `check` ran.
    var seconds: TimeInterval = 0

    /// Runs `run` in `s` and checks what no hostile reply may change: portfolio.json stays byte for byte,
    /// no cached quote is lost, and the cache gains quotes of the assets in `kept` only (with none,
    /// it stays byte for byte); those of `maybe` may come or not.
    @discardableResult
    func check(_ s: Sandbox, _ run: Run, kept: Set<String>, maybe: Set<String> = [], file: StaticString = #filePath, line: UInt = #line) -> CLIResult {
        let store = s.storeBytes, cache = FileManager.default.contents(atPath: cachePath(s))
        let before = (try? PriceCache(directory: s.dir).load()) ?? []
        let started = Date()
        let r = s.run(run.args)
        seconds = Date().timeIntervalSince(started)
        XCTAssertEqual(s.storeBytes, store, "portfolio.json changed: \(r)", file: file, line: line)
        let after = (try? PriceCache(directory: s.dir).load()) ?? []
        XCTAssertTrue(before.allSatisfy(after.contains), "a cached quote was lost: \(r)", file: file, line: line)
        let added = after.filter { !before.contains($0) }
        XCTAssertEqual(Set(added.map { $0.coinId.hasPrefix("fx:") ? "fx" : $0.coinId }).subtracting(maybe), kept, "\(run.args): \(r)", file: file, line: line)
        if added.isEmpty { XCTAssertEqual(FileManager.default.contents(atPath: cachePath(s)), cache, "the cache changed", file: file, line: line) }
        return r
    }

    /// In a fresh sandbox, `route` answers `reply` while `run` runs: it exits `code`, exactly one line of
    /// stderr is `route`'s failure (`failure(route, run)`) and says `saying` (stderr has `lines` in all), and
    /// the cache gains only the quotes of `kept` (by default the other service's).
    @discardableResult
    func expect(_ route: Route, _ reply: Reply, _ run: Run, exit code: ExitCode, saying: String, lines: Int = 1, kept: Set<String>? = nil,
                maybe: Set<String> = [], env: [String: String] = [:], file: StaticString = #filePath, line: UInt = #line) -> CLIResult {
        let s = sandbox(env)
        serve(route, reply)
        let r = check(s, run, kept: kept ?? (route == .frankfurter ? [] : [route.other.asset]), maybe: maybe, file: file, line: line)
        XCTAssertEqual(r.code, code, "\(run.args): \(r)", file: file, line: line)
        let errLines = r.err.split(separator: "\n")
        let prefix = failure(route, run)
        XCTAssertEqual(errLines.filter { $0.hasPrefix(prefix) && $0.contains(saying) }.count, 1, "\(saying) \(run.args): \(r.err)", file: file, line: line)
        XCTAssertEqual(errLines.count, lines - (maybe.isEmpty || r.err.contains("no time left") ? 0 : 1), "\(run.args): \(r.err)", file: file, line: line)
        return r
    }

    /// How the failure line of `route`'s asset in `run` begins (a refresh warns per asset, fetch-history errs).
    func failure(_ route: Route, _ run: Run) -> String {
        switch run {
        case .refresh: "warning: \(route.asset): \(route.service) "
        case .history: "error: \(route.asset): \(route.service) "
        case .fx: "error: "
        }
    }

    // MARK: 1. Absurd numbers

    static let absurd = ["1e400", "-5", "0", String(repeating: "9", count: 500), "1e-30", "-1e400", "1e-400"]

    func testAbsurdLatestPricesAreDroppedWithAWarningAndNeverStored() {
        for number in Self.absurd {
            let label = String(number.prefix(12))
            for (route, reply) in [(Route.yahoo, Self.chart(latest: number)), (.twelveData, Self.quote(close: number)),
                                   (.twelveData, Self.quote(close: "\"\(number)\""))] {
                let r = expect(route, reply, .refresh, exit: .service, saying: "gave no quote: no latest price", lines: 2)
                XCTAssertTrue(r.err.hasPrefix("warning: 1 unusable price from Yahoo Finance and Twelve Data dropped\n"), "\(label): \(r.err)")
                XCTAssertLessThan(r.err.count, 300, "\(label): a long number is not printed")
                XCTAssertTrue(r.out.contains("Refreshed 1 of 2 asset prices"), r.out)
            }
        }
        // Twelve Data's numbers come as strings: "NaN" is one more unusable one.
        let nan = expect(.twelveData, Self.quote(close: #""NaN""#), .refresh, exit: .service, saying: "no latest price for 'TSYM'", lines: 2)
        XCTAssertTrue(nan.err.contains("1 unusable price"), nan.err)
    }

    func testAbsurdClosesAreDroppedWithAWarningAndTheOthersKept() throws {
        for number in Self.absurd + [#""NaN""#] {
            let label = String(number.prefix(12))
            for (route, reply) in [(Route.yahoo, Self.chart(closes: ["100.5", number, "101.5"])),
                                   (.twelveData, Self.series(closes: [#""50.5""#, number, #""49.5""#]))] where route == .twelveData || number != #""NaN""# {
                let s = sandbox()
                serve(route, reply)
                let r = check(s, .history, kept: ["YAH", "TWD"])
                XCTAssertEqual(r.code, .success, "\(label): \(r)")
                XCTAssertEqual(r.err, "warning: 1 unusable price of \(route.asset) dropped\n", label)
                let kept = try PriceCache(directory: s.dir).load().filter { $0.coinId == route.asset && $0.time < s.now.addingTimeInterval(-120) }
                XCTAssertEqual(kept.map(\.price), route == .yahoo ? [dec("100.5"), dec("101.5")] : [dec("49.5"), dec("50.5")], label)
            }
        }
    }

    func testAbsurdRatesAreDroppedWithAWarningAndNeverStored() throws {
        for number in Self.absurd + [#""NaN""#, "null", "{}"] {
            let s = sandbox()
            serve(.frankfurter, Self.rates(usd30: number))
            let r = check(s, .fx, kept: ["fx"])
            XCTAssertEqual(r.code, .success, "\(number.prefix(12)): \(r)")
            XCTAssertEqual(r.err, "warning: ignored 1 rate from the exchange-rate service (not a usable number)\n", String(number.prefix(12)))
            let history = s.ok(["--offline", "--json", "fx", "history", "USD", "EUR"]).out
            XCTAssertTrue(history.contains("2024-05-31T00:00:00Z") && !history.contains("2024-05-30T00:00:00Z"), history)
        }
    }

    /// `NaN` as a bare word is no JSON: the whole reply is unreadable (exit 3), never a crash.
    func testABareNaNIsAnUnreadableReply() {
        expect(.yahoo, Self.chart(latest: "NaN"), .refresh, exit: .service, saying: "a reply bitpal could not read")
        expect(.twelveData, Self.quote(close: "NaN"), .refresh, exit: .service, saying: "a reply bitpal could not read")
        expect(.frankfurter, Self.rates(usd30: "NaN"), .fx, exit: .service, saying: "could not read")
    }

    // MARK: 2. Caps, cut replies, silence, dribbles

    /// Every command against every service: Yahoo's and Twelve Data's both ways, Frankfurter's.
    static let everywhere: [(Route, Run)] = [(.yahoo, .refresh), (.yahoo, .history), (.twelveData, .refresh), (.twelveData, .history),
                                             (.frankfurter, .fx)]

    /// A good body of `route`'s (the latest quote for Twelve Data: its series is unreadable cut the same way).
    static func goodBody(_ route: Route) -> String {
        switch route {
        case .yahoo: chart().body
        case .twelveData: quote().body
        case .frankfurter: rates(usd30: "1.0830").body
        }
    }

    func testAReplyLargerThanTheCapIsCutOff() {
        for (route, run) in Self.everywhere {
            let cap = route == .frankfurter ? 16 : 4
            // (cap + 1 KiB) of zeros, about 27 KB (108 KB for 16 MiB) on the wire.
            let bomb = Reply(status: 200, body: "", headers: ["content-encoding": "gzip"], bytes: Gzip.zeros(runs: (cap << 20 + 1024) / 258))
            expect(route, bomb, run, exit: .service, saying: "a reply larger than \(cap) MiB; stopped reading it")
        }
    }

    func testATruncatedReplyIsAFailureOfTheService() {
        for (route, run) in Self.everywhere {
            for cut in [0, 1, 30] {
                expect(route, Reply(status: 200, body: Self.goodBody(route), truncateAfter: cut), run, exit: .service,
                       saying: "transfer closed with")
            }
        }
    }

    /// A server that never answers, or dribbles a byte at a time, is ended by the run's one deadline;
    /// after Yahoo's, Twelve Data (asked after it) has no time left, or only the few milliseconds its
    /// own answer takes.
    func testSilenceAndDribblesEndAtTheDeadline() {
        for (route, run) in Self.everywhere {
            for reply in [Reply(status: 200, body: "", hang: true), Reply(status: 200, body: Self.goodBody(route), trickle: 0.05)] {
                let first = route == .yahoo
                let r = expect(route, reply, run, exit: .service, saying: "within 1 s", lines: first ? 2 : 1, kept: first ? [] : nil,
                               maybe: first ? ["TWD"] : [], env: ["BITPAL_HTTP_TIMEOUT": "1"])
                if first && r.err.contains("no time left") {
                    XCTAssertTrue(r.err.contains(failure(.twelveData, run) + "gave no quote: no time left in this run's budget"), r.err)
                }
                XCTAssertGreaterThan(seconds, 0.9)
                XCTAssertLessThan(seconds, 2.5, "\(route) \(run): the deadline ends the wait")
            }
        }
    }

    // MARK: 3. Redirects

    func testARedirectToAnotherHostIsNotFollowed() throws {
        let other = try FakeCoinGecko()
        defer { other.stop() }
        for (route, run) in Self.everywhere {
            for status in [301, 302] {
                let location = "http://127.0.0.1:\(other.port)\(route.rawValue)x?apikey=\(Self.key)"
                let r = expect(route, Reply(status: status, body: "", headers: ["location": location]), run, exit: .service,
                               saying: "HTTP \(status)")
                XCTAssertTrue(r.err.contains("redirect") && r.err.contains("follow"), r.err)
                XCTAssertFalse(r.err.contains(Self.key), r.err)
            }
        }
        XCTAssertEqual(other.requests.count, 0, "the other host never hears from bitpal")
    }

    // MARK: 4. Yahoo's own ways (research §1.3, §1.4, §7)

    /// No `timestamp` (and `"quote":[{}]`) is an empty window, not an error; the latest price still comes from `meta`.
    func testAYahooReplyWithoutTimestampsIsAnEmptyWindow() {
        let s = sandbox()
        serve(.yahoo, Self.chart(closes: nil))
        let history = check(s, .history, kept: ["TWD"])
        XCTAssertEqual(history.code, .success, "\(history)")
        XCTAssertEqual(history.err, "")
        XCTAssertTrue(history.out.contains("YAH (Yahoo asset): Yahoo Finance has no prices for the last 5 days."), history.out)
        s.now = s.now.addingTimeInterval(60)
        XCTAssertEqual(check(s, .refresh, kept: ["YAH", "TWD"]).code, .success)
    }

    func testNullYahooClosesAreSkippedWithoutAWarning() {
        let s = sandbox()
        serve(.yahoo, Self.chart(closes: ["null", "101", "null"]))
        let r = check(s, .history, kept: ["YAH", "TWD"])
        XCTAssertEqual(r.code, .success, "\(r)")
        XCTAssertEqual(r.err, "")
        XCTAssertTrue(r.out.contains("YAH (Yahoo asset): 1 daily price in USD, 2024-05-30 … 2024-05-30 (Yahoo Finance)."), r.out)
    }

    /// A 400 with Yahoo's JSON error, a 429 or an outage page as plain text or HTML (with 200 too), a 5xx, a
    /// JSON reply without a chart: the service failed or refused for now, exit 3, in one line.
    func testYahooRefusalsAreFailuresOfTheService() {
        let cases: [(Reply, String)] = [
            (Reply(status: 400, body: #"{"chart":{"result":null,"error":{"code":"Bad Request","#
                + #""description":"Data doesn't exist for startDate = 1565740800, endDate = 1596067200"}}}"#), "gave no quote: it failed (HTTP 400)"),
            (Reply(status: 429, body: "Too Many Requests\n", headers: ["content-type": "text/plain"]), "gave no quote: it refused for now (HTTP 429"),
            (Reply(status: 429, body: "Edge: Too Many Requests", headers: ["content-type": "text/plain"]), "gave no quote: it refused for now (HTTP 429"),
            (Reply(status: 200, body: "<html><body>Will be right back</body></html>", headers: ["content-type": "text/html"]),
             "gave no quote: it sent a page that is not JSON"),
            (Reply(status: 404, body: "<html><body>Not found</body></html>", headers: ["content-type": "text/html"]),
             "gave no quote: it sent a page that is not JSON"),
            (Reply(status: 503, body: "Service Unavailable"), "gave no quote: it failed (HTTP 503)"),
            (Reply(status: 200, body: #"{"chart":{"result":null,"error":null}}"#), "gave no quote: a reply bitpal could not read"),
            // Free text as the currency is no currency (nor printed at length as one).
            (Reply(status: 200, body: Self.chart().body.replacingOccurrences(of: #""currency":"USD""#,
                                                                           with: #""currency":""# + String(repeating: "US Dollar ", count: 500) + #"""#)),
             "gave no quote: a reply bitpal could not read"),
        ]
        for (reply, saying) in cases {
            for run in [Run.refresh, .history] { expect(.yahoo, reply, run, exit: .service, saying: saying) }
        }
    }

    /// Yahoo refuses a request without a User-Agent: a fake that does the same answers bitpal's (its own, or
    /// BITPAL_USER_AGENT's).
    func testYahooIsAskedWithAUserAgent() throws {
        let refusing: (FakeCoinGecko.Request) -> Reply? = { request in
            (request.headers["user-agent"] ?? "").isEmpty ? Reply(status: 429, body: "Too Many Requests\n") : nil
        }
        serve(.yahoo, answering: refusing)
        // The fake does refuse a request without one.
        let url = try XCTUnwrap(URL(string: "http://127.0.0.1:\(server.port)/v8/finance/chart/YSYM?interval=1d"))
        XCTAssertEqual(try CurlTransport().send(HTTPRequest(url: url, headers: [:], timeout: 5, maxBodyBytes: 1 << 20)).status, 429)
        for (env, agent) in [([:], "Mozilla/5.0 (compatible; bitpal/"), (["BITPAL_USER_AGENT": "Portfolio-Test/2.0"], "Portfolio-Test/2.0")] {
            let s = sandbox(env)
            serve(.yahoo, answering: refusing)
            let before = server.requests.count
            for run in [Run.refresh, .history] {
                s.now = s.now.addingTimeInterval(60)
                let r = check(s, run, kept: ["YAH", "TWD"])
                XCTAssertEqual(r.code, .success, "\(r)")
            }
            let asked = server.requests.dropFirst(before).filter { $0.path.hasPrefix(Route.yahoo.rawValue) }
            XCTAssertEqual(asked.count, 2)
            XCTAssertTrue(asked.allSatisfy { ($0.headers["user-agent"] ?? "").hasPrefix(agent) }, "\(asked.map(\.headers))")
        }
    }

    // MARK: 5. Twelve Data's own ways (research §4.2)

    /// The error envelope as HTTP 200, with a code or without one: never read as a quote.
    func testTwelveDataErrorsAsHTTP200AreNeverQuotes() {
        let cases: [(Reply, ExitCode, String)] = [
            (TwelveDataTests.failure(500, "Internal error", status: 200), .service, "gave no quote: it failed (500: Internal error)"),
            (TwelveDataTests.failure(503, "Service is temporarily unavailable", status: 200), .service, "gave no quote: it failed (503"),
            (TwelveDataTests.failure(429, "You have run out of API credits for the current minute.", status: 200), .service,
             "refused for now (HTTP 429"),
            (TwelveDataTests.failure(404, "**symbol** not found: TSYM.", status: 200), .failure, "does not know the symbol 'TSYM'"),
            (TwelveDataTests.failure(403, "This symbol is not available with your plan", status: 200), .failure, "does not serve 'TSYM' on your key's plan"),
            (Reply(status: 200, body: #"{"status":"error","message":"Something went wrong"}"#), .service, "gave no quote: a reply bitpal could not read"),
            (Reply(status: 200, body: #"{"code":"oops","status":"error","message":"odd"}"#), .service, "gave no quote: a reply bitpal could not read"),
            (Reply(status: 200, body: #"{"code":500,"status":"error","message":null}"#), .service, "gave no quote: it failed (500)"),
        ]
        for (reply, code, saying) in cases {
            for run in [Run.refresh, .history] { expect(.twelveData, reply, run, exit: code, saying: saying) }
        }
    }

    /// A server that sends the key back (in a message, a field, a page, a cut or unreadable reply, as
    /// sent, re-cased, percent-encoded or in part) never gets it printed or written anywhere.
    func testTheTwelveDataKeyIsNeverPrintedNorWritten() throws {
        let key = Self.key
        let encoded = try XCTUnwrap(key.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
        let echoes: [Reply] = [
            TwelveDataTests.failure(500, "Internal error for apikey \(key)", status: 200),
            TwelveDataTests.failure(500, "Internal error for APIKEY \(key.uppercased())", status: 500),
            TwelveDataTests.failure(500, "bad request /quote?apikey=\(encoded)", status: 200),
            TwelveDataTests.failure(500, "key \(key.dropLast(4)) (trimmed)", status: 200),
            TwelveDataTests.failure(401, "**apikey** \(key) is incorrect or not specified.", status: 401),
            TwelveDataTests.failure(404, "**symbol** not found for \(key)", status: 404),
            Reply(status: 502, body: "<html><body>Bad gateway for \(key)</body></html>"),
            Reply(status: 200, body: #"{"symbol":"TSYM","currency":"USD","close":\#(key),"last_quote_at":1717169400}"#),
            Reply(status: 200, body: #"{"symbol":"TSYM","currency":"USD","close":"1.5","last_quote_at":"\#(key)"}"#),
            Reply(status: 200, body: #"{"symbol":"TSYM","currency":"\#(key)","close":"1.5","last_quote_at":1717169400,"#
                + #""meta":{"currency":"\#(key)"},"values":[{"datetime":"2024-05-31","close":"1.5"}],"status":"ok"}"#),
            Reply(status: 200, body: TwelveDataTests.failure(500, "apikey \(key)", status: 200).body, truncateAfter: 50),
        ]
        for reply in echoes {
            let s = sandbox()
            serve(.twelveData, reply)
            var printed: [String] = []
            for run in [Run.refresh, .history] {
                s.now = s.now.addingTimeInterval(60)
                let r = check(s, run, kept: ["YAH"])
                XCTAssertNotEqual(r.code, .success, "\(r)")
                XCTAssertEqual(r.err.split(separator: "\n").filter { $0.contains("TWD: Twelve Data") }.count, 1, r.err)
                printed += [r.out, r.err]
            }
            let json = s.run(["price", "refresh", "--json"])
            printed += [json.out, json.err]
            let files = try FileManager.default.subpathsOfDirectory(atPath: s.dir).compactMap { FileManager.default.contents(atPath: s.dir + "/" + $0) }
            for text in printed + files.map({ String(decoding: $0, as: UTF8.self) }) { assertNoKey(text, reply.body) }
        }
    }

    /// No 8 characters in a row of the key, in any case, nor its percent-encoded form.
    func assertNoKey(_ text: String, _ context: String, file: StaticString = #filePath, line: UInt = #line) {
        let lower = text.lowercased(), key = Array(Self.key.lowercased())
        for start in 0...(key.count - 8) where lower.contains(String(key[start..<(start + 8)])) {
            XCTFail("'\(String(key[start..<(start + 8)]))' of the key printed (\(context.prefix(80))): \(text)", file: file, line: line)
            return
        }
    }
}

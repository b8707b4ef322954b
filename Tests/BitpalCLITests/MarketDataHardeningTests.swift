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
        server.fallback = { request in
            if let route, let reply, request.path.hasPrefix(route.rawValue) { return reply }
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
    /// it stays byte for byte).
    @discardableResult
    func check(_ s: Sandbox, _ run: Run, kept: Set<String>, file: StaticString = #filePath, line: UInt = #line) -> CLIResult {
        let store = s.storeBytes, cache = FileManager.default.contents(atPath: cachePath(s))
        let before = (try? PriceCache(directory: s.dir).load()) ?? []
        let started = Date()
        let r = s.run(run.args)
        seconds = Date().timeIntervalSince(started)
        XCTAssertEqual(s.storeBytes, store, "portfolio.json changed: \(r)", file: file, line: line)
        let after = (try? PriceCache(directory: s.dir).load()) ?? []
        XCTAssertTrue(before.allSatisfy(after.contains), "a cached quote was lost: \(r)", file: file, line: line)
        let added = after.filter { !before.contains($0) }
        XCTAssertEqual(Set(added.map { $0.coinId.hasPrefix("fx:") ? "fx" : $0.coinId }), kept, "\(run.args): \(r)", file: file, line: line)
        if kept.isEmpty { XCTAssertEqual(FileManager.default.contents(atPath: cachePath(s)), cache, "the cache changed", file: file, line: line) }
        return r
    }

    /// In a fresh sandbox, `route` answers `reply` while `run` runs: it exits `code`, exactly one line of
    /// stderr is `route`'s failure (`failure(route, run)`) and says `saying` (stderr has `lines` in all), and
    /// the cache gains only the quotes of `kept` (by default the other service's).
    @discardableResult
    func expect(_ route: Route, _ reply: Reply, _ run: Run, exit code: ExitCode, saying: String, lines: Int = 1, kept: Set<String>? = nil,
                env: [String: String] = [:], file: StaticString = #filePath, line: UInt = #line) -> CLIResult {
        let s = sandbox(env)
        serve(route, reply)
        let r = check(s, run, kept: kept ?? (route == .frankfurter ? [] : [route.other.asset]), file: file, line: line)
        XCTAssertEqual(r.code, code, "\(run.args): \(r)", file: file, line: line)
        let errLines = r.err.split(separator: "\n")
        let prefix = failure(route, run)
        XCTAssertEqual(errLines.filter { $0.hasPrefix(prefix) && $0.contains(saying) }.count, 1, "\(saying) \(run.args): \(r.err)", file: file, line: line)
        XCTAssertEqual(errLines.count, lines, "\(run.args): \(r.err)", file: file, line: line)
        return r
    }

    /// How the failure line of `route`'s asset in `run` begins (a refresh warns per asset, fetch-history errs).
    func failure(_ route: Route, _ run: Run) -> String {
        switch run {
        case .refresh: "warning: \(route.asset): \(route.service) gave no quote: "
        case .history: "error: \(route.asset): \(route.service) gave no quote: "
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
                let r = expect(route, reply, .refresh, exit: .service, saying: "no latest price", lines: 2)
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
    /// after Yahoo's, Twelve Data (asked after it) has no time left either.
    func testSilenceAndDribblesEndAtTheDeadline() {
        for (route, run) in Self.everywhere {
            for reply in [Reply(status: 200, body: "", hang: true), Reply(status: 200, body: Self.goodBody(route), trickle: 0.05)] {
                let after = route == .yahoo
                let r = expect(route, reply, run, exit: .service, saying: "within 1 s", lines: after ? 2 : 1,
                               kept: after ? [] : nil, env: ["BITPAL_HTTP_TIMEOUT": "1"])
                if after { XCTAssertTrue(r.err.contains(failure(.twelveData, run) + "no time left in this run's budget"), r.err) }
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
}

import Foundation
import XCTest

/// Registered assets priced by Twelve Data (market-data.md, "Sources of an asset"), against a fake
/// `/quote` and `/time_series` on 127.0.0.1 that answers as research §4 and §7 describe: string
/// numbers, newest first, and the error envelope both as HTTP 200 and as its own status.
final class TwelveDataTests: FakeServiceTestCase {
    static let key = "td-secret-key-0123456789"

    /// A `/quote` reply: `close` in `currency`, last quoted at 2024-05-31 15:30 UTC.
    static func quote(_ symbol: String, currency: String, close: String) -> FakeCoinGecko.Reply {
        FakeCoinGecko.Reply(status: 200, body: #"{"symbol":"\#(symbol)","name":"\#(symbol) SE","exchange":"XETR","mic_code":"XETR","#
            + #""currency":"\#(currency)","datetime":"2024-05-31","timestamp":1717106400,"last_quote_at":1717169400,"open":"1.0","#
            + #""close":"\#(close)","volume":"1000","previous_close":"1.0","is_market_open":false}"#,
            headers: ["content-type": "application/json"])
    }

    /// The error envelope, as HTTP `status` (200 or the code itself).
    static func failure(_ code: Int, _ message: String, status: Int) -> FakeCoinGecko.Reply {
        FakeCoinGecko.Reply(status: status, body: #"{"code":\#(code),"message":"\#(message)","status":"error"}"#)
    }

    /// Counts the requests to `/td/…` (the fake's threads call the routes).
    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var n = 0
        func next() -> Int { lock.lock(); defer { lock.unlock() }; n += 1; return n }
    }

    /// Routes `/td/quote` and `/td/time_series` by symbol (404 envelope when unknown); with
    /// `perMinute`, the call after that many is refused with the 429 envelope, as the free plan does.
    func serve(quotes: [String: FakeCoinGecko.Reply] = [:], series: [String: FakeCoinGecko.Reply] = [:], perMinute: Int? = nil) {
        let coins = server.fallback, counter = Counter()
        server.fallback = { request in
            guard request.path.hasPrefix("/td/") else { return coins(request) }
            if let perMinute, counter.next() > perMinute {
                return Self.failure(429, "You have run out of API credits for the current minute. \(perMinute + 1) API credits were used, "
                    + "with the current limit being \(perMinute).", status: 429)
            }
            let symbol = request.query["symbol"] ?? ""
            let routes = request.path == "/td/quote" ? quotes : series
            return routes[symbol] ?? Self.failure(404, "**symbol** not found: \(symbol). Please specify it correctly", status: 404)
        }
    }

    func twelveData(key: String? = TwelveDataTests.key) -> Sandbox {
        var extra = ["BITPAL_TWELVEDATA_URL": "http://127.0.0.1:\(server.port)/td"]
        extra["BITPAL_TWELVEDATA_KEY"] = key
        return online(extra)
    }

    func testTheLatestPriceIsRefreshedWithTheKeyAndTheMarket() throws {
        serve(quotes: ["SAP": Self.quote("SAP", currency: "EUR", close: "171.24000"), "VOD": Self.quote("VOD", currency: "GBp", close: "70.5")])
        let s = twelveData()
        s.ok(["asset", "add", "SAP", "--name", "SAP", "--type", "stock", "--currency", "EUR", "--quote", "twelvedata:SAP@XETR"])
        s.ok(["asset", "add", "VOD", "--name", "Vodafone", "--type", "stock", "--currency", "GBP", "--quote", "twelvedata"])
        XCTAssertTrue(s.ok(["asset", "list"]).out.contains("twelvedata:SAP@XETR"))
        XCTAssertEqual(s.run(["asset", "edit", "SAP", "--quote", "twelvedata:SAP@"]).code, .usage)
        // Pence are pounds / 100; the price is `close`, Twelve Data's time (`last_quote_at`) kept beside it.
        assertRefreshes(s, saying: "Refreshed 2 of 2 asset prices from Twelve Data.", prices: ["171.24", "0.705"], source: "twelvedata",
                        serviceTime: "2024-05-31T15:30:00Z")
        // One /quote a symbol, the market as mic_code, the key as apikey; the key is printed nowhere.
        let asked = server.requests.filter { $0.path.hasPrefix("/td/") }
        XCTAssertEqual(asked.map(\.path), ["/td/quote", "/td/quote"])
        let sap = try XCTUnwrap(asked.first { $0.query["symbol"] == "SAP" })
        XCTAssertEqual(sap.query["mic_code"], "XETR")
        XCTAssertEqual(sap.query["apikey"], Self.key)
        XCTAssertNil(asked.first { $0.query["symbol"] == "VOD" }?.query["mic_code"])
        let again = s.ok(["price", "refresh"])
        XCTAssertFalse((again.out + again.err).contains(Self.key))
        // The cache keeps the source and reads it back (the fast reader included).
        XCTAssertTrue(s.ok(["price", "history", "SAP", "--json"]).out.contains(#""source": "twelvedata""#))
    }

    func testErrorsComeAsHTTP200AndAsTheirOwnStatus() throws {
        let echo = "Internal error for apikey \(Self.key)"
        serve(quotes: ["GONE200": Self.failure(404, "**symbol** not found: GONE200", status: 200),
                       "LOCKED": Self.failure(403, "This symbol is not available with your plan", status: 403),
                       "LOCKED200": Self.failure(403, "This symbol is not available with your plan", status: 200),
                       "ECHO": Self.failure(500, echo, status: 500),
                       "ECHO200": Self.failure(500, echo, status: 200),
                       "PAGE": FakeCoinGecko.Reply(status: 502, body: "<html><body>Bad gateway</body></html>"),
                       "CUT": FakeCoinGecko.Reply(status: 200, body: #"{"symbol":"CUT","currency":"EUR","close":"1"#)])
        let s = twelveData()
        for code in ["GONE", "GONE200", "LOCKED", "LOCKED200", "ECHO", "ECHO200", "PAGE", "CUT"] {
            s.ok(["asset", "add", code, "--name", code, "--type", "stock", "--currency", "EUR", "--quote", "twelvedata"])
        }
        let r = s.run(["price", "refresh"])
        // Unknown (404 as itself and as 200) and not on the plan (403 both ways): broken rules, exit 1.
        XCTAssertEqual(r.code, .failure, r.err)
        XCTAssertTrue(r.err.contains("GONE: Twelve Data does not know the symbol 'GONE'"), r.err)
        XCTAssertTrue(r.err.contains("GONE200: Twelve Data does not know the symbol 'GONE200'"), r.err)
        XCTAssertTrue(r.err.contains("'bitpal asset edit CODE --quote twelvedata:SYMBOL'"), r.err)
        XCTAssertTrue(r.err.contains("LOCKED: Twelve Data does not serve 'LOCKED' on your key's plan (HTTP 403)"), r.err)
        XCTAssertTrue(r.err.contains("LOCKED200: Twelve Data does not serve 'LOCKED200' on your key's plan"), r.err)
        // A server error echoing the key (either way), an HTML page, a cut reply: refused for now, the key redacted.
        XCTAssertTrue(r.err.contains("ECHO: Twelve Data gave no quote: it failed (500: Internal error for apikey [redacted])"), r.err)
        XCTAssertTrue(r.err.contains("ECHO200: Twelve Data gave no quote: it failed (500: Internal error for apikey [redacted])"), r.err)
        XCTAssertTrue(r.err.contains("PAGE: Twelve Data gave no quote: it sent a page that is not JSON (HTTP 502"), r.err)
        XCTAssertTrue(r.err.contains("CUT: Twelve Data gave no quote: a reply bitpal could not read"), r.err)
        XCTAssertFalse((r.out + r.err).contains(Self.key), r.err)
        // Without the broken rules, the service's failures alone are exit 3.
        for code in ["GONE", "GONE200", "LOCKED", "LOCKED200"] { s.ok(["asset", "edit", code, "--quote", "manual"]) }
        let service = s.run(["price", "refresh", "--json"])
        XCTAssertEqual(service.code, .service, service.err)
        XCTAssertFalse(service.out.contains(Self.key), service.out)
    }

    /// The free plan's 8 a minute: the 9th call is refused; nothing more is asked, the others' quotes stay.
    func testA429StopsAskingForTheRunAndSaysHowManySymbolsWaited() throws {
        let symbols = (1...10).map { "S\($0 < 10 ? "0" : "")\($0)" }
        serve(quotes: Dictionary(uniqueKeysWithValues: symbols.map { ($0, Self.quote($0, currency: "EUR", close: "10.5")) }), perMinute: 8)
        let s = twelveData()
        for code in symbols { s.ok(["asset", "add", code, "--name", code, "--type", "stock", "--currency", "EUR", "--quote", "twelvedata"]) }
        let r = s.run(["price", "refresh"])
        XCTAssertEqual(r.code, .service, r.err)
        XCTAssertTrue(r.err.contains("S09: Twelve Data refused for now (HTTP 429: the plan's requests for this minute are used up, "
            + "8 a minute on the free plan); nothing more was asked this run: 2 symbols waited for the next run"), r.err)
        XCTAssertTrue(r.err.contains("S10: Twelve Data gave no quote: not asked after its HTTP 429 earlier in this run"), r.err)
        XCTAssertTrue(r.out.contains("Refreshed 8 of 10 asset prices from Twelve Data."), r.out)
        XCTAssertEqual(server.requests.filter { $0.path.hasPrefix("/td/") }.count, 9)
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.ok(["price", "list", "--json"]).out.utf8)) as? [[String: Any]])
        XCTAssertEqual(json.filter { $0["source"] as? String == "twelvedata" }.count, 8)
    }

    /// Daily closes as traded (asked unadjusted), each on its exchange's day: Auckland's 2024-05-31
    /// begins at 12:00 UTC on the 30th, and is still stored as the 31st.
    func testFetchHistoryStoresDailyClosesOnTheExchangesDays() throws {
        let nzx = #"{"meta":{"symbol":"FPH","interval":"1day","currency":"NZD","exchange_timezone":"Pacific/Auckland","#
            + #""exchange":"NZX","mic_code":"XNZE","type":"Common Stock"},"values":["#
            + #"{"datetime":"2024-05-31","open":"30","high":"31","low":"29","close":"30.25000","volume":"100"},"#
            + #"{"datetime":"2024-05-30","open":"30","high":"31","low":"29","close":"0","volume":"100"},"#
            + #"{"datetime":"2024-05-29","open":"30","high":"31","low":"29","close":"29.75000","volume":"100"}],"status":"ok"}"#
        serve(series: ["FPH": FakeCoinGecko.Reply(status: 200, body: nzx),
                       "QUIET": Self.failure(400, "No data is available on the specified dates. Try setting different start/end dates.", status: 400),
                       "BUSY": Self.failure(429, "You have run out of API credits for the current minute.", status: 200)])
        let s = twelveData()
        s.ok(["asset", "add", "FPH", "--name", "Fisher & Paykel", "--type", "stock", "--currency", "NZD", "--quote", "twelvedata:FPH@XNZE"])
        s.ok(["asset", "add", "QUIET", "--name", "Quiet", "--type", "stock", "--quote", "twelvedata"])
        let r = s.ok(["price", "fetch-history", "FPH", "QUIET", "--days", "5"])
        XCTAssertTrue(r.out.contains("FPH (Fisher & Paykel): 2 daily prices in NZD, 2024-05-29 … 2024-05-31 (Twelve Data)."), r.out)
        XCTAssertTrue(r.out.contains("QUIET (Quiet): Twelve Data has no prices for the last 5 days."), r.out)
        XCTAssertTrue(r.err.contains("1 unusable price of FPH dropped"), r.err)
        let history = s.ok(["price", "history", "FPH", "--json"]).out
        XCTAssertTrue(history.contains("2024-05-31T00:00:00Z") && history.contains(#""30.25""#), history)
        XCTAssertTrue(history.contains("2024-05-29T00:00:00Z") && history.contains(#""29.75""#), history)
        let asked = try XCTUnwrap(server.requests.first { $0.query["symbol"] == "FPH" })
        XCTAssertEqual(asked.path, "/td/time_series")
        XCTAssertEqual(asked.query["interval"], "1day")
        XCTAssertEqual(asked.query["adjust"], "none")
        XCTAssertEqual(asked.query["mic_code"], "XNZE")
        XCTAssertEqual(asked.query["start_date"], "2024-05-27")
        XCTAssertEqual(asked.query["end_date"], "2024-06-02")
        // A 429 (as HTTP 200) stops asking: the next symbol waits, exit 3.
        s.ok(["asset", "edit", "QUIET", "--quote", "twelvedata:BUSY"])
        let before = server.requests.count
        let busy = s.run(["price", "fetch-history", "QUIET", "FPH"])
        XCTAssertEqual(busy.code, .service, busy.err)
        XCTAssertTrue(busy.err.contains("QUIET: Twelve Data refused for now (HTTP 429") && busy.err.contains("2 symbols waited for the next run"), busy.err)
        XCTAssertTrue(busy.err.contains("FPH: Twelve Data gave no quote: not asked after its HTTP 429"), busy.err)
        XCTAssertEqual(server.requests.count, before + 1)
    }

    /// Without `exchange_timezone`, a bar's day is the day it names (UTC), read in any zone: never the day before.
    func testADayWithoutAnExchangeZoneStaysItsDay() throws {
        let bare = #"{"meta":{"symbol":"TDX","interval":"1day","currency":"USD"},"values":["#
            + #"{"datetime":"2024-05-31","close":"12"},{"datetime":"2024-05-30","close":"11"}],"status":"ok"}"#
        serve(series: ["TDX": FakeCoinGecko.Reply(status: 200, body: bare)])
        let s = twelveData()
        s.variables["TZ"] = "America/Los_Angeles"
        s.ok(["asset", "add", "TDX", "--name", "TDX", "--type", "stock", "--quote", "twelvedata"])
        let r = s.ok(["price", "fetch-history", "TDX", "--days", "5"])
        XCTAssertTrue(r.out.contains("2 daily prices in USD, 2024-05-30 … 2024-05-31"), r.out)
    }

    func testWithoutAKeyNothingIsAskedAndTheVariableIsNamed() throws {
        serve(quotes: ["SAP": Self.quote("SAP", currency: "EUR", close: "171.24"),
                       "REFUSED": Self.failure(401, "**apikey** parameter is incorrect or not specified.", status: 401)])
        let s = twelveData(key: nil)
        s.ok(["asset", "add", "SAP", "--name", "SAP", "--type", "stock", "--currency", "EUR", "--quote", "twelvedata"])
        for args in [["price", "refresh"], ["price", "fetch-history", "SAP"]] {
            let r = s.run(args)
            XCTAssertEqual(r.code, .failure, "\(args) → \(r)")
            XCTAssertTrue(r.err.contains("Twelve Data needs an API key: set BITPAL_TWELVEDATA_KEY"), r.err)
        }
        XCTAssertTrue(server.requests.isEmpty)
        // A key the service refuses (401) is a broken rule too.
        let refused = twelveData()
        refused.ok(["asset", "add", "SAP", "--name", "SAP", "--type", "stock", "--currency", "EUR", "--quote", "twelvedata:REFUSED"])
        let r = refused.run(["price", "refresh"])
        XCTAssertEqual(r.code, .failure, r.err)
        XCTAssertTrue(r.err.contains("Twelve Data refused the API key in BITPAL_TWELVEDATA_KEY (HTTP 401)"), r.err)
        // A bad base URL is a usage error, as every service's.
        let bad = online(["BITPAL_TWELVEDATA_URL": "ftp://example.com", "BITPAL_TWELVEDATA_KEY": Self.key])
        bad.ok(["asset", "add", "SAP", "--name", "SAP", "--type", "stock", "--currency", "EUR", "--quote", "twelvedata"])
        XCTAssertEqual(bad.run(["price", "refresh"]).code, .usage)
    }
}

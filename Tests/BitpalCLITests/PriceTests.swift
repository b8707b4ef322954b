import BitpalCLI
import Foundation
import PortfolioCore
import XCTest

/// The price client and `price refresh` / auto-refresh against a fake CoinGecko on 127.0.0.1.
final class PriceTests: FakeServiceTestCase {
    func holdSome(_ s: Sandbox) {
        s.ok(["--offline", "add", "buy", "btc", "1", "30000", "--date", "2024-01-01"])
        s.ok(["--offline", "add", "buy", "shib", "100000000", "0.000001", "--date", "2024-01-01"])
        s.ok(["--offline", "add", "buy", "doge", "10", "0.1", "--date", "2024-01-01"])
        s.ok(["--offline", "watch", "add", "eth"])
    }

    func testJSONDecoderReadsExponentPricesExactly() throws {
        let body = Data(#"{"a":{"usd":8.45e-06},"b":{"usd":0.1234567890123456789},"c":{"usd":1.0e+16},"d":{"usd":67187.3358936566}}"#.utf8)
        let decoded = try JSONDecoder().decode([String: [String: Decimal?]].self, from: body)
        XCTAssertEqual(decoded["a"]?["usd"], dec("0.00000845"))
        XCTAssertEqual(decoded["b"]?["usd"], dec("0.1234567890123456789"))
        XCTAssertEqual(decoded["c"]?["usd"], dec("10000000000000000"))
        XCTAssertEqual(decoded["d"]?["usd"], dec("67187.3358936566"))
    }

    func testRefreshFetchesEveryHeldAndWatchedCoinInOneBatch() throws {
        let s = online(["COINGECKO_API_KEY": "CG-secret-demo-key"])
        holdSome(s)
        let portfolioBefore = s.storeBytes
        let r = s.run(["price", "refresh"])
        XCTAssertEqual(r.code, .success, "\(r)")
        XCTAssertEqual(server.requests.count, 1)
        let request = try XCTUnwrap(server.requests.first)
        XCTAssertEqual(request.path, "/api/v3/simple/price")
        XCTAssertEqual(request.query["ids"], "bitcoin,dogecoin,ethereum,shiba-inu")
        XCTAssertEqual(request.query["vs_currencies"], "usd")
        XCTAssertEqual(request.headers["x-cg-demo-api-key"], "CG-secret-demo-key")
        XCTAssertNil(request.query["x_cg_demo_api_key"])
        XCTAssertEqual(r.out, "Refreshed 3 of 4 prices from 127.0.0.1.\n")
        XCTAssertTrue(r.err.contains("warning: the price service has no price for 'dogecoin'"), r.err)
        XCTAssertEqual(s.storeBytes, portfolioBefore, "refresh must not rewrite the portfolio")
        let quotes = try PriceCache(directory: s.dir).load()
        XCTAssertEqual(quotes.first { $0.coinId == "shiba-inu" }?.price, dec("0.00000845"))
        XCTAssertEqual(quotes.first { $0.coinId == "bitcoin" }?.price, dec("67187.3358936566"))
        XCTAssertEqual(quotes.first { $0.coinId == "bitcoin" }?.change24h, dec("3.63727894677354"))
        XCTAssertEqual(quotes.first { $0.coinId == "bitcoin" }?.sourceUpdatedAt, Date(timeIntervalSince1970: 1711356300))
        XCTAssertNil(quotes.first { $0.coinId == "dogecoin" })
        let cacheText = String(decoding: FileManager.default.contents(atPath: s.dir + "/prices.json") ?? Data(), as: UTF8.self)
        XCTAssertFalse(cacheText.contains("secret") || r.out.contains("secret") || r.err.contains("secret"))
        XCTAssertTrue(s.ok(["price", "history", "shib", "--json"]).out.contains(#""price": "0.00000845""#))
    }

    func testQuietPrintsNothingOnSuccess() {
        let s = online()
        holdSome(s)
        let r = s.run(["price", "refresh", "--quiet"])
        XCTAssertEqual(r, CLIResult(out: "", err: "", code: .success))
    }

    func testProKeyGoesToItsHeader() throws {
        let s = online(["COINGECKO_PRO_API_KEY": "CG-pro-secret"])
        holdSome(s)
        s.ok(["price", "refresh", "--quiet"])
        XCTAssertEqual(server.requests.first?.headers["x-cg-pro-api-key"], "CG-pro-secret")
        XCTAssertNil(server.requests.first?.headers["x-cg-demo-api-key"])
    }

    func testRetriesHonourRetryAfterThenSucceed() {
        let s = online()
        holdSome(s)
        server.enqueue(FakeCoinGecko.Reply(status: 429, body: #"{"status":{"error_code":429,"error_message":"You've exceeded the Rate Limit."}}"#,
                                           headers: ["retry-after": "119"]),
                       FakeCoinGecko.Reply(status: 503, body: "<html>down</html>", headers: ["content-type": "text/html"]))
        let r = s.run(["price", "refresh"])
        XCTAssertEqual(r.code, .success, "\(r)")
        XCTAssertEqual(server.requests.count, 3)
        XCTAssertEqual(s.sleeps, [10, 2], "Retry-After is capped at 10 s; without it the second wait is 2 s")
    }

    func testRateLimitedAfterThreeAttemptsExits3AndTouchesNothing() throws {
        let s = online()
        holdSome(s)
        s.ok(["--offline", "price", "set", "btc", "1"])
        let portfolio = s.storeBytes
        let limited = FakeCoinGecko.Reply(status: 429, body: "{}", headers: ["retry-after": "1"])
        server.enqueue(limited, limited, limited, limited)
        let r = s.run(["price", "refresh"])
        XCTAssertEqual(r.code, .service)
        XCTAssertTrue(r.err.hasPrefix("error: the price service is rate-limiting requests (HTTP 429, 3 attempts)"), r.err)
        XCTAssertEqual(server.requests.count, 3)
        XCTAssertEqual(s.sleeps, [1, 1])
        XCTAssertEqual(s.storeBytes, portfolio)
        XCTAssertFalse(FileManager.default.fileExists(atPath: s.dir + "/prices.json"))
    }

    func testServerErrorAndKeyErrorsAreExplained() {
        let cases: [(FakeCoinGecko.Reply, [String: String], String)] = [
            (.init(status: 500, body: "oops"), [:], "the price service failed (HTTP 500, 3 attempts)"),
            (.init(status: 401, body: #"{"status":{"error_code":10002,"error_message":"API Key Missing."}}"#), [:],
             "set COINGECKO_API_KEY"),
            (.init(status: 401, body: #"{"status":{"error_code":401,"error_message":"Invalid API key"}}"#),
             ["COINGECKO_API_KEY": "CG-wrong-key"], "rejected the API key"),
            (.init(status: 400, body: #"{"timestamp":"x","error_code":10010,"status":{"error_message":"…"}}"#),
             ["COINGECKO_API_KEY": "CG-actually-pro"], "this is a pro key: use COINGECKO_PRO_API_KEY"),
            (.init(status: 400, body: #"{"timestamp":"x","error_code":10011,"status":{"error_message":"…"}}"#),
             ["COINGECKO_PRO_API_KEY": "CG-actually-demo"], "this is a demo key: use COINGECKO_API_KEY"),
            (.init(status: 200, body: #"{"bitcoin":{"usd":6718"#, truncateAfter: nil), [:], "could not read"),
            (.init(status: 200, body: #"{"bitcoin":{"usd":67187.33}}"#, truncateAfter: 12), [:], "price service"),
        ]
        for (reply, env, message) in cases {
            let s = online(env)
            server.fallback = { _ in FakeCoinGecko.Reply(status: 200, body: "{}") }
            holdSome(s)
            server.fallback = { _ in reply }
            let r = s.run(["price", "refresh", "--quiet"])
            XCTAssertEqual(r.code, .service, "\(message): \(r)")
            XCTAssertTrue(r.err.hasPrefix("error: ") && r.err.contains(message), "\(message): \(r.err)")
            XCTAssertEqual(r.err.filter { $0 == "\n" }.count, 1, r.err)
            for secret in env.values { XCTAssertFalse(r.err.contains(secret)) }
            XCTAssertFalse(FileManager.default.fileExists(atPath: s.dir + "/prices.json"))
        }
    }

    func testUnreachableServiceExits3() {
        let s = online()
        holdSome(s)
        server.stop()
        let r = s.run(["price", "refresh"])
        XCTAssertEqual(r.code, .service)
        XCTAssertTrue(r.err.hasPrefix("error: cannot reach the price service at 127.0.0.1"), r.err)
    }

    func testTimeoutIsHonoured() {
        let s = online(["BITPAL_HTTP_TIMEOUT": "1"])
        holdSome(s)
        server.enqueue(FakeCoinGecko.Reply(status: 200, body: "", hang: true))
        let started = Date()
        let r = s.run(["price", "refresh"])
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertEqual(r.code, .service)
        XCTAssertTrue(r.err.contains("did not answer within 1 s"), r.err)
        XCTAssertLessThan(elapsed, 8)
    }

    func testReportsRefreshOnlyWhenPricesAreOlderThanAMinute() {
        let s = online()
        holdSome(s)
        let first = s.run(["holdings", "--json"])
        XCTAssertEqual(first.code, .success)
        XCTAssertEqual(server.requests.count, 1)
        XCTAssertTrue(first.out.contains(#""currentPrice": "67187.33589366""#), first.out)
        s.now = s.now.addingTimeInterval(30)
        s.ok(["summary", "--json"])
        XCTAssertEqual(server.requests.count, 2, "dogecoin has no price, so it is still wanted")
        s.ok(["list"])
        s.ok(["closed"])
        XCTAssertEqual(server.requests.count, 2, "list and closed never fetch")
    }

    func testNoRequestWhenFreshOrOffline() {
        let s = online()
        s.ok(["--offline", "add", "buy", "btc", "1", "30000", "--date", "2024-01-01"])
        s.ok(["--offline", "price", "set", "btc", "60000"])
        s.ok(["holdings"])
        XCTAssertEqual(server.requests.count, 0, "a fresh manual price needs no fetch")
        s.now = s.now.addingTimeInterval(600)
        s.ok(["holdings", "--offline"])
        s.variables["BITPAL_OFFLINE"] = "1"
        s.ok(["summary"])
        s.ok(["widget"])
        XCTAssertEqual(server.requests.count, 0)
        XCTAssertEqual(s.run(["price", "refresh"]).code, .usage)
    }

    func testFailedAutoRefreshWarnsAndStillPrints() {
        let s = online()
        s.ok(["--offline", "add", "buy", "btc", "1", "30000", "--date", "2024-01-01"])
        s.ok(["--offline", "price", "set", "btc", "60000", "--date", "2024-06-01T09:00:00Z"])
        let bad = FakeCoinGecko.Reply(status: 503, body: "down")
        server.enqueue(bad, bad, bad)
        let r = s.run(["holdings", "--json"])
        XCTAssertEqual(r.code, .success)
        XCTAssertTrue(r.err.hasPrefix("warning: could not refresh prices"), r.err)
        XCTAssertTrue(r.out.contains(#""stale": true"#) && r.out.contains(#""currentPrice": "60000""#))
    }

    func testUnknownCoinRefreshesTheCatalogOnce() throws {
        let s = online()
        let r = s.run(["add", "buy", "zbr", "10", "1", "--date", "2024-01-01"])
        XCTAssertEqual(r.code, .success, "\(r)")
        XCTAssertEqual(try s.loadPortfolio().transactions.first?.assetId, "zebra-token")
        XCTAssertEqual(server.requests.map(\.path), ["/api/v3/coins/list"])
        XCTAssertEqual(s.run(["add", "buy", "nothing-like-it", "1", "1", "--date", "2024-01-01"]).code, .failure)
        XCTAssertEqual(server.requests.count, 1, "a fresh cache is not fetched again")
        XCTAssertTrue(s.ok(["coins", "search", "zebra"]).out.contains("zebra-token"))
        XCTAssertTrue(s.ok(["coins", "update"]).out.hasPrefix("Cached 2 coins"))
    }

    func testUnknownCoinWithTheServiceDownSaysBothOnce() {
        let s = online()
        server.fallback = { _ in FakeCoinGecko.Reply(status: 503, body: "down") }
        let csv = "type,coin,amount,price,date\nbuy,nope1,1,1,2024-01-01\nbuy,nope2,1,1,2024-01-01\n"
        let r = s.run(["import", "-"], stdin: csv)
        XCTAssertEqual(r.code, .failure)
        XCTAssertEqual(server.requests.count, 2, "one refresh attempt (2 tries for a 503 fit the 3 s budget: the 2 s wait would not), not one per unknown coin")
        XCTAssertEqual(s.sleeps, [1])
        XCTAssertTrue(r.err.hasPrefix("warning: could not refresh the coin list"), r.err)
        XCTAssertTrue(r.err.contains("error: line 2: Cryptocurrency 'nope1' not found") && r.err.contains("line 3:"), r.err)
    }

    func testWidgetAndWatchUseFetchedPrices() {
        let s = online()
        holdSome(s)
        let w = s.ok(["widget", "--json"]).out
        XCTAssertTrue(w.contains(#""symbol": "BTC""#) && w.contains(#""isEmpty": false"#), w)
        let watch = s.ok(["watch", "--json"]).out
        XCTAssertTrue(watch.contains(#""currentPrice": "3454.6423857""#) && watch.contains(#""priceChange24h": "2.19""#), watch)
    }
}

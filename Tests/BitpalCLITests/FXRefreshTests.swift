import BitpalCLI
import Foundation
import PortfolioCore
import XCTest

/// `fx refresh` against a fake CoinGecko's `/exchange_rates` on 127.0.0.1.
final class FXRefreshTests: FakeServiceTestCase {
    static let rates = #"{"rates":{"btc":{"name":"Bitcoin","unit":"BTC","value":1.0,"type":"crypto"},"#
        + #""usd":{"name":"US Dollar","unit":"$","value":97264.012,"type":"fiat"},"#
        + #""eur":{"name":"Euro","unit":"€","value":89532.437,"type":"fiat"},"#
        + #""xau":{"name":"Gold","unit":"XAU","value":35.12,"type":"commodity"}}}"#

    func euroBook(_ s: Sandbox) {
        s.ok(["--offline", "portfolio", "add", "eu", "--currency", "EUR"])
        s.ok(["--offline", "portfolio", "default", "eu"])
        s.ok(["--offline", "asset", "add", "AAPL", "--name", "Apple", "--type", "stock", "--currency", "USD"])
        s.ok(["--offline", "asset", "add", "HSBA", "--name", "HSBC", "--type", "stock", "--currency", "GBP"])
        s.ok(["--offline", "add", "buy", "AAPL", "10", "180", "--fx-rate", "0.92", "--date", "2024-01-02"])
        s.ok(["--offline", "price", "set", "AAPL", "200"])
    }

    func testOneRequestGivesTheCrossRatesAndReportsUseThem() throws {
        let s = online()
        euroBook(s)
        server.enqueue(.init(status: 200, body: Self.rates, headers: ["content-type": "application/json"]))
        let r = s.run(["--json", "fx", "refresh"])
        XCTAssertEqual(r.code, .success, "\(r)")
        // The ECB's latest day is asked too (ECBRatesTests): here, CoinGecko's part.
        XCTAssertEqual(server.requests.map(\.path), ["/api/v3/exchange_rates", "/fx/v1/latest"])
        let out = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
        let all = try XCTUnwrap(out["refreshed"] as? [[String: String]])
        XCTAssertTrue(all.contains { $0["from"] == "USD" && $0["to"] == "EUR" && $0["source"] == "ecb" }, "\(all)")
        let refreshed = all.filter { $0["source"] == "coingecko" }
        // USD→EUR = 89532.437 ÷ 97264.012, half-up at 18 decimals: the one pair the book needs that the
        // service lists (the book's currencies are USD and GBP; the bases EUR and main's USD).
        XCTAssertEqual(refreshed.map { [$0["from"], $0["to"], $0["rate"], $0["source"]] }, [["USD", "EUR", "0.920509396630688029", "coingecko"]])
        // GBP is not in the reply: no rate, said so, never 1.
        XCTAssertEqual(out["missing"] as? [String], ["GBP"])
        // The report values AAPL (priced in USD) in euros at the fetched rate, without another request.
        let holdings = s.ok(["--offline", "--json", "holdings"]).out
        XCTAssertTrue(holdings.contains(#""currentValue": "1841.02""#), holdings)  // 2000 × 0.920509…
        XCTAssertEqual(server.requests.count, 2)
        // The portfolio file is untouched by a refresh; the rates live in the price cache.
        XCTAssertFalse(String(decoding: s.storeBytes ?? Data(), as: UTF8.self).contains("fxRates"))
        XCTAssertTrue(s.ok(["--offline", "fx"]).out.contains("coingecko"))
    }

    func testAReplyThatIsNotJSONOrHasNoRatesIsAClearFailure() throws {
        let s = online()
        euroBook(s)
        for body in ["<html>oops</html>", #"{"data":{}}"#, #"{"rates":{"usd":{"value":97264.012}"#] {
            server.enqueue(.init(status: 200, body: body, headers: ["content-type": "application/json"]))
            let r = s.run(["fx", "refresh"])
            XCTAssertEqual(r.code, .service, "\(body): \(r)")
            XCTAssertTrue(r.err.contains("error:"), r.err)
        }
        XCTAssertEqual(s.run(["--offline", "fx", "refresh"]).code, .usage)
    }

    func testReportsRefreshTheRatesTheyNeedAtMostOnceAMinute() throws {
        let s = online()
        euroBook(s)
        server.enqueue(.init(status: 200, body: Self.rates, headers: ["content-type": "application/json"]))
        let first = s.run(["--json", "holdings"])
        XCTAssertEqual(first.code, .success, "\(first)")
        XCTAssertEqual(server.requests.map(\.path), ["/api/v3/exchange_rates"])
        XCTAssertTrue(first.out.contains(#""currentValue": "1841.02""#), first.out)
        // Within the minute the cached rates serve; a USD-only book never asks for rates.
        XCTAssertEqual(s.run(["holdings"]).code, .success)
        XCTAssertEqual(server.requests.count, 1)
        let plain = online()
        plain.ok(["--offline", "add", "buy", "btc", "1", "30000", "--date", "2024-01-01"])
        plain.ok(["--offline", "price", "set", "btc", "60000"])
        _ = plain.run(["holdings"])
        XCTAssertEqual(server.requests.filter { $0.path.hasSuffix("/exchange_rates") }.count, 1)
    }

    /// A coin in a EUR portfolio is fetched priced in euros, in the same one request as the rest.
    func testCoinsAreFetchedInTheBaseTheyAreShownIn() throws {
        let s = online()
        s.ok(["--offline", "portfolio", "add", "eu", "--currency", "EUR"])
        s.ok(["--offline", "portfolio", "default", "eu"])
        s.ok(["--offline", "add", "buy", "btc", "0.5", "40000", "--date", "2024-01-02"])
        server.enqueue(.init(status: 200, body: #"{"bitcoin":{"usd":60000,"eur":55000.5,"eur_24h_change":1.5,"last_updated_at":1717243200}}"#,
                             headers: ["content-type": "application/json"]),
                       .init(status: 200, body: Self.rates, headers: ["content-type": "application/json"]))
        let r = s.run(["--json", "holdings"])
        XCTAssertEqual(r.code, .success, "\(r)")
        let first = try XCTUnwrap(server.requests.first)
        XCTAssertTrue(first.path.hasSuffix("/simple/price"))
        XCTAssertEqual(first.query["vs_currencies"], "eur")
        XCTAssertTrue(r.out.contains(#""currentValue": "27500.25""#), r.out)  // 0.5 × €55,000.50, no rate needed
        XCTAssertTrue(r.out.contains(#""currency": "EUR""#), r.out)
    }
}

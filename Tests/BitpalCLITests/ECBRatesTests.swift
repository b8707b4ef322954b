import BitpalCLI
import Foundation
import PortfolioCore
import XCTest

/// The ECB's rates through a fake Frankfurter on 127.0.0.1 (`FakeCoinGecko.frankfurter`): `fx
/// fetch-history`, `fx refresh`, and a missing past rate fetched by `add`.
final class ECBRatesTests: FakeServiceTestCase {
    /// A euro portfolio (the default) holding a dollar stock bought on 2024-05-02 at a typed rate.
    func euroBook(_ s: Sandbox) {
        s.ok(["--offline", "portfolio", "add", "eu", "--currency", "EUR"])
        s.ok(["--offline", "portfolio", "default", "eu"])
        s.ok(["--offline", "asset", "add", "AAPL", "--name", "Apple", "--type", "stock", "--currency", "USD"])
        s.ok(["--offline", "add", "buy", "AAPL", "10", "180", "--fx-rate", "0.92", "--date", "2024-05-02"])
    }

    var fxRequests: [FakeCoinGecko.Request] { server.requests.filter { $0.path.hasPrefix("/fx/") } }

    func storedRate(_ s: Sandbox, on day: String) throws -> String? {
        try s.loadPortfolio().transactions.first { $0.day.map(ISODate.dayText) == day }?.fxRateValue?.text
    }

    func testFetchHistoryKeepsEachWorkingDayAndASaturdayUsesFriday() throws {
        let s = online()
        euroBook(s)
        let r = s.run(["--json", "fx", "fetch-history"])
        XCTAssertEqual(r.code, .success, "\(r)")
        XCTAssertEqual(fxRequests.map(\.path), ["/fx/v1/2024-05-02..2024-06-01"])
        XCTAssertEqual(fxRequests.first?.query["base"], "EUR")
        let out = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
        let fetched = try XCTUnwrap(out["fetched"] as? [[String: Any]])
        // USD into the euro base (main's base is USD itself), one rate a working day.
        XCTAssertEqual(fetched.map { "\($0["from"] ?? "")→\($0["to"] ?? "") \($0["rates"] ?? "") \($0["first"] ?? "")…\($0["last"] ?? "")" },
                       ["USD→EUR 22 2024-05-02…2024-05-31"])
        XCTAssertEqual(out["missing"] as? [String], [])
        // Saturday 2024-05-25 takes Friday's 1 ÷ 1.0824, offline, from the cache.
        s.ok(["--offline", "add", "buy", "AAPL", "1", "190", "--date", "2024-05-25"])
        XCTAssertEqual(try storedRate(s, on: "2024-05-25"), "0.923872875092387288")
        XCTAssertTrue(s.ok(["--offline", "fx"]).out.contains("ecb"))
    }

    func testARangeStartsAtTheWorkingDayBeforeTheOneAsked() throws {
        let s = online()
        euroBook(s)
        s.ok(["fx", "fetch-history", "USD", "--since", "2024-05-04"])  // a Saturday: the service starts on Friday
        XCTAssertEqual(fxRequests.map(\.path), ["/fx/v1/2024-05-04..2024-06-01"])
        let history = s.ok(["--offline", "--json", "fx", "history", "USD", "EUR"]).out
        XCTAssertTrue(history.contains(#""date": "2024-05-03T00:00:00Z""#), history)
        XCTAssertFalse(history.contains("2024-05-02T00:00:00Z"), history)
        s.ok(["--offline", "add", "buy", "AAPL", "1", "190", "--date", "2024-05-04"])
        XCTAssertEqual(try storedRate(s, on: "2024-05-04"), "0.925668795704896788")  // 1 ÷ 1.0803
    }

    func testCrossRatesAreComputedHereFromTheRatesPerEuro() throws {
        let s = online()
        s.ok(["--offline", "asset", "add", "HSBA", "--name", "HSBC", "--type", "stock", "--currency", "GBP"])
        s.ok(["--offline", "add", "buy", "HSBA", "100", "6.5", "--fx-rate", "1.27", "--date", "2024-05-30"])
        s.ok(["fx", "fetch-history"])
        // GBP→USD on 2024-05-31 = 1.0831 ÷ 0.8531, rounded once at 18 decimals (the service would say 1.2696).
        let history = s.ok(["--offline", "--json", "fx", "history", "GBP", "USD"]).out
        XCTAssertTrue(history.contains(#""rate": "1.269604970109014184""#), history)
        s.ok(["--offline", "price", "set", "HSBA", "7"])
        // 100 × £7 × 1.269604970109014184 = $888.72 to the cent.
        XCTAssertTrue(s.ok(["--offline", "--json", "holdings"]).out.contains(#""currentValue": "888.72""#))
    }

    func testACurrencyTheECBDoesNotQuoteIsNamed() throws {
        let s = online()
        s.ok(["--offline", "asset", "add", "HSBC", "--name", "HSBC HK", "--type", "stock", "--currency", "HKD"])
        s.ok(["--offline", "add", "buy", "HSBC", "100", "65", "--fx-rate", "0.128", "--date", "2024-05-30"])
        let r = s.run(["fx", "fetch-history"])
        XCTAssertEqual(r.code, .success, "\(r)")
        XCTAssertTrue(r.err.contains("the ECB publishes no rate for HKD"), r.err)
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.run(["--json", "fx", "fetch-history"]).out.utf8)) as? [String: Any])
        XCTAssertEqual(json["missing"] as? [String], ["HKD"])
    }

    func testAServiceThatFailsOrRefusesWritesNothing() throws {
        let html = FakeCoinGecko.Reply(status: 200, body: "<html>Will be right back</html>", headers: ["content-type": "text/html"])
        let cases: [([FakeCoinGecko.Reply], ExitCode)] = [
            ([.init(status: 404, body: #"{"message":"not found"}"#)], .failure),
            ([.init(status: 400, body: #"{"message":"bad currency pair"}"#)], .service),
            (Array(repeating: .init(status: 429, body: "Too Many Requests\n"), count: 3), .service),
            (Array(repeating: .init(status: 503, body: ""), count: 3), .service),
            ([html], .service),
            ([.init(status: 200, body: #"{"amount":1.0,"base":"EUR","rates":{"2024-05-31":{"USD":1.0831}}}"#, truncateAfter: 40)], .service),
        ]
        for (replies, code) in cases {
            let s = online()
            euroBook(s)
            for reply in replies { server.enqueue(reply) }
            let r = s.run(["fx", "fetch-history"])
            XCTAssertEqual(r.code, code, "\(replies[0].status): \(r)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: s.dir + "/prices.json"), "\(replies[0].status)")
        }
        let s = online()
        euroBook(s)
        XCTAssertEqual(s.run(["--offline", "fx", "fetch-history"]).code, .usage)
        XCTAssertEqual(s.run(["fx", "fetch-history", "--since", "someday"]).code, .usage)
        XCTAssertTrue(fxRequests.count == cases.map(\.0.count).reduce(0, +), "\(fxRequests.map(\.path))")
    }

    func testAddFetchesAMissingPastRateOnceAndOfflineStillRefuses() throws {
        let s = online()
        s.ok(["--offline", "portfolio", "add", "eu", "--currency", "EUR"])
        s.ok(["--offline", "portfolio", "default", "eu"])
        s.ok(["--offline", "asset", "add", "AAPL", "--name", "Apple", "--type", "stock", "--currency", "USD"])
        let refused = s.run(["--offline", "add", "buy", "AAPL", "10", "180", "--date", "2024-03-15"])
        XCTAssertEqual(refused.code, .failure)
        XCTAssertTrue(refused.err.contains("'bitpal fx fetch-history USD --since 2024-03-15'"), refused.err)
        XCTAssertTrue(refused.err.contains("--fx-rate"), refused.err)
        XCTAssertTrue(fxRequests.isEmpty)
        s.ok(["add", "buy", "AAPL", "10", "180", "--date", "2024-03-15"])
        XCTAssertEqual(fxRequests.map(\.path), ["/fx/v1/2024-03-15..2024-06-01"])
        XCTAssertEqual(try storedRate(s, on: "2024-03-15"), "0.924641701340730467")  // 1 ÷ 1.0815
        // Later days are in the cache now: no second request.
        s.ok(["add", "buy", "AAPL", "1", "185", "--date", "2024-04-02"])
        XCTAssertEqual(fxRequests.count, 1)
        // When the service fails, the refusal stays, with the reason.
        for _ in 0..<3 { server.enqueue(.init(status: 503, body: "")) }
        let failed = s.run(["add", "buy", "AAPL", "1", "170", "--date", "2024-02-01"])
        XCTAssertEqual(failed.code, .failure, "\(failed)")
        XCTAssertTrue(failed.err.contains("could not fetch the ECB's exchange rates"), failed.err)
        XCTAssertTrue(failed.err.contains("the ECB's rate service (Frankfurter) failed (HTTP 503"), failed.err)
        XCTAssertTrue(failed.err.contains("fx fetch-history"), failed.err)
        XCTAssertEqual(try s.loadPortfolio().transactions.count, 2)
    }

    /// Value over time needs every past day's rate: a report online fetches the ECB's once from the
    /// first record's day when the table has none, and not again.
    func testHistoryReportsFetchThePastRatesTheyLackOnce() throws {
        let s = online()
        euroBook(s)
        s.ok(["--offline", "price", "set", "AAPL", "190", "--date", "2024-05-31"])
        s.ok(["performance"])
        XCTAssertEqual(fxRequests.map(\.path), ["/fx/v1/2024-05-02..2024-06-01"])
        s.ok(["history"])
        XCTAssertEqual(fxRequests.count, 1)
        // Offline, nothing is asked.
        let before = server.requests.count
        s.ok(["--offline", "performance"])
        XCTAssertEqual(server.requests.count, before)
    }

    /// Both sources answering: `FXRefreshTests.testOneRequestGivesTheCrossRatesAndReportsUseThem`.
    func testRefreshKeepsTheECBsLatestDayWhenThePriceServiceFails() throws {
        let s = online()
        euroBook(s)
        // CoinGecko down: the ECB's rates are still kept and shown, and the exit says the failure.
        for _ in 0..<3 { server.enqueue(.init(status: 503, body: "")) }
        let half = s.run(["fx", "refresh"])
        XCTAssertEqual(half.code, .service, "\(half)")
        XCTAssertTrue(half.out.contains("Refreshed 1 rate") && half.out.contains("ecb"), half.out)
        XCTAssertEqual(server.requests.map(\.path).last, "/fx/v1/latest")
        XCTAssertTrue(s.ok(["--offline", "--json", "fx", "history", "USD", "EUR"]).out.contains(#""date": "2024-05-31T00:00:00Z""#))
    }
}

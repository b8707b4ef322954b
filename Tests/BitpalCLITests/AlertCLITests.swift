import BitpalCLI
import Foundation
import PortfolioCore
import XCTest

/// Alerts (history-performance.md, "Alerts"): edge-triggered firing, re-arming, `--repeat`, the
/// 60-second rule, a failed fetch (exit 3, nothing changes), the states kept in the store.
final class AlertCLITests: FakeServiceTestCase {
    private func btc(_ price: String, change: String = "1.5") -> FakeCoinGecko.Reply {
        .init(status: 200, body: #"{"bitcoin":{"usd":\#(price),"usd_24h_change":\#(change),"last_updated_at":1711356300}}"#)
    }

    private func later(_ s: Sandbox, _ seconds: TimeInterval) { s.now = s.now.addingTimeInterval(seconds) }

    func testAnAlertFiresWhenItTurnsTrueAndReArmsWhenFalse() throws {
        let s = online()
        s.ok(["alert", "add", "btc", "above", "70000"])
        s.ok(["alert", "add", "btc", "below", "60000", "--repeat"])
        s.ok(["alert", "add", "btc", "move", "5"])
        server.enqueue(btc("69999.99"))
        XCTAssertEqual(s.ok(["alert", "check", "--quiet"]).out, "")
        later(s, 300)
        server.enqueue(btc("70000", change: "-5.25"))
        XCTAssertEqual(s.ok(["alert", "check", "--quiet"]).out,
                       "BTC is above $70,000.00: $70,000.00 (-5.25% in 24 h) [alert 1]\nBTC moved -5.25% in 24 h (beyond ±5%): $70,000.00 [alert 3]\n")
        // Still true: nothing fires again.
        later(s, 300)
        server.enqueue(btc("71000", change: "6"))
        XCTAssertEqual(s.run(["alert", "check"], terminal: true).out, "Checked 3 alerts; none fired.\n")
        // Below 60000: the repeating alert fires at every check while true; "above" re-arms.
        later(s, 300)
        server.enqueue(btc("59000"))
        XCTAssertEqual(s.ok(["alert", "check", "--quiet"]).out, "BTC is below $60,000.00: $59,000.00 (+1.50% in 24 h) [alert 2]\n")
        later(s, 300)
        server.enqueue(btc("58000"))
        let r = s.ok(["alert", "check", "--json"])
        XCTAssertEqual(r.out, """
        {
          "checked": 3,
          "fired": [
            {
              "id": 2,
              "assetId": "bitcoin",
              "condition": "below",
              "threshold": "60000",
              "price": "58000",
              "change24h": "1.5000"
            }
          ]
        }

        """)
        // Back above 70000: alert 1 fires again (it was re-armed at 59000).
        later(s, 300)
        server.enqueue(btc("70500"))
        XCTAssertEqual(s.ok(["alert", "check", "--quiet"]).out, "BTC is above $70,000.00: $70,500.00 (+1.50% in 24 h) [alert 1]\n")
        let list = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.ok(["alert", "list", "--json"]).out.utf8)) as? [[String: Any]])
        XCTAssertEqual(list.map { $0["state"] as? String }, ["fired", "armed", "armed"])
        XCTAssertEqual(list.map { $0["lastChecked"] as? String }, Array(repeating: ISODate.format(s.now), count: 3))
        XCTAssertEqual(list.first?["repeat"] as? Bool, false)
        XCTAssertEqual(list.first?["threshold"] as? String, "70000")
    }

    /// A failed fetch: exit 3, nothing fires, no state changes; the crossing fires at the next check.
    func testAFailedFetchChangesNothingAndTheCrossingFiresLater() throws {
        let s = online()
        s.ok(["alert", "add", "btc", "above", "70000"])
        let before = s.storeBytes
        for _ in 0..<3 { server.enqueue(.init(status: 503, body: "{}")) }
        let r = s.run(["alert", "check", "--quiet"])
        XCTAssertEqual(r.code, .service, r.description)
        XCTAssertEqual(r.out, "")
        XCTAssertEqual(s.storeBytes, before)
        later(s, 600)
        server.enqueue(btc("75000"))
        XCTAssertEqual(s.ok(["alert", "check", "--quiet"]).out, "BTC is above $70,000.00: $75,000.00 (+1.50% in 24 h) [alert 1]\n")
    }

    /// Prices follow the reports' 60-second rule: a fresh quote is not fetched again.
    func testAFreshPriceIsNotFetchedAgain() throws {
        let s = online()
        s.ok(["alert", "add", "btc", "above", "1"])
        server.enqueue(btc("50000"))
        XCTAssertEqual(s.ok(["alert", "check", "--quiet"]).out, "BTC is above $1.00: $50,000.00 (+1.50% in 24 h) [alert 1]\n")
        let asked = server.requests.count
        later(s, 30)
        XCTAssertEqual(s.ok(["alert", "check"]).out, "")
        XCTAssertEqual(server.requests.count, asked)
    }

    func testOfflineUsesKnownPricesAndRefusals() throws {
        let s = Sandbox()
        s.ok(["asset", "add", "GOLD", "--name", "Gold", "--type", "commodity", "--currency", "EUR"])
        s.ok(["alert", "add", "gold", "below", "2000"])
        var r = s.run(["alert", "check"], terminal: true)
        XCTAssertEqual(r.out, "Checked 1 alert; none fired.\n")
        XCTAssertEqual(r.err, "warning: alert 1 (GOLD below €2,000.00) cannot be told: no price in EUR is known\n")
        s.ok(["price", "set", "GOLD", "1999.5"])
        XCTAssertEqual(s.ok(["alert", "check", "--quiet"]).out, "GOLD is below €2,000.00: €1,999.50 [alert 1]\n")
        XCTAssertEqual(s.run(["alert", "add", "btc", "sideways", "5"]).code, .usage)
        XCTAssertEqual(s.run(["alert", "add", "btc", "above", "abc"]).code, .usage)
        XCTAssertEqual(s.run(["alert", "add", "btc", "above", "0"]).code, .failure)
        XCTAssertEqual(s.run(["alert", "add", "nosuchcoin", "above", "5"]).code, .failure)
        r = s.run(["alert", "remove", "7"])
        XCTAssertEqual(r.code, .failure)
        XCTAssertEqual(r.err, "error: No alert has the id 7; 'bitpal alert list' shows them\n")
        XCTAssertEqual(s.run(["alert", "remove", "x"]).code, .usage)
        let book = try PortfolioStore(directory: s.dir).load()
        XCTAssertEqual(book.alerts.map(\.state), [.fired])
        XCTAssertEqual(try PortfolioCodec.decode(PortfolioCodec.encode(book), path: "p"), book)
        s.ok(["alert", "remove", "1"])
        XCTAssertEqual(s.run(["alert", "check"], terminal: true).out, "No alerts to check.\n")
    }

    /// true → unknown → true fires again: an unknown check re-arms (history-performance.md).
    func testAnUnknownCheckReArms() throws {
        let s = Sandbox()
        s.ok(["asset", "add", "GOLD", "--name", "Gold", "--type", "commodity"])
        s.ok(["alert", "add", "GOLD", "above", "2000"])
        s.ok(["price", "set", "GOLD", "2100"])
        XCTAssertEqual(s.ok(["alert", "check", "--quiet"]).out, "GOLD is above $2,000.00: $2,100.00 [alert 1]\n")
        // The asset's price cannot be told in its currency (a hand edit of the alert's currency).
        let text = String(decoding: try XCTUnwrap(s.storeBytes), as: UTF8.self).replacingOccurrences(of: #""currency": "USD", "repeat""#, with: #""currency": "EUR", "repeat""#)
        _ = s.write("portfolio.json", text)
        XCTAssertEqual(s.ok(["alert", "check", "--quiet"]).out, "")
        _ = s.write("portfolio.json", text.replacingOccurrences(of: #""currency": "EUR", "repeat""#, with: #""currency": "USD", "repeat""#)
                        .replacingOccurrences(of: #""state": "fired""#, with: #""state": "armed""#))
        XCTAssertEqual(s.ok(["alert", "check", "--quiet"]).out, "GOLD is above $2,000.00: $2,100.00 [alert 1]\n")
        // An asset an alert watches cannot be removed under it.
        let r = s.run(["asset", "remove", "GOLD"])
        XCTAssertEqual(r.err, "error: Alert 1 watches GOLD; remove it first ('bitpal alert remove 1')\n")
    }

    /// A hand-edited huge id does not overflow: the next alert takes the smallest free id.
    func testAHugeIdDoesNotOverflow() throws {
        let s = Sandbox()
        s.ok(["alert", "add", "btc", "above", "1"])
        let text = String(decoding: try XCTUnwrap(s.storeBytes), as: UTF8.self).replacingOccurrences(of: #""id": 1,"#, with: #""id": 9223372036854775807,"#)
        _ = s.write("portfolio.json", text)
        XCTAssertEqual(s.ok(["alert", "add", "btc", "below", "1"]).out.prefix(15), "Added alert 1: ")
        XCTAssertEqual(s.run(["alert", "add", "btc", "move", "0"]).err, "error: The move must be greater than zero percent\n")
    }
}

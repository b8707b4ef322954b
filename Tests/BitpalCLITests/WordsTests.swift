import BitpalCLI
import Foundation
import PortfolioCore
import XCTest

/// "What a person sees": one name for a thing, words that say what is true.
final class WordsTests: XCTestCase {
    func testPortfolioListCountsWhatListShows() throws {
        let s = Sandbox()
        s.ok(["add", "buy", "btc", "1", "100", "--date", "2024-01-01"])
        s.ok(["add", "swap", "btc", "0.5", "eth", "2", "--value", "60", "--date", "2024-02-01"])
        let portfolios = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.ok(["portfolio", "list", "--json"]).out.utf8)) as? [[String: Any]])
        XCTAssertEqual(portfolios.first?["transactionCount"] as? Int, 2)  // the buy and the swap, as 'list' shows them
        XCTAssertEqual(s.ok(["list"]).out.split(separator: "\n").count, 3)  // the header and two lines
    }

    func testAFullySoldBookIsNotEmpty() {
        let s = Sandbox()
        s.ok(["add", "buy", "btc", "1", "100", "--date", "2024-01-01"])
        s.ok(["add", "sell", "btc", "1", "150", "--date", "2024-02-01"])
        for args in [["holdings"], ["holdings", "--lots"]] {
            XCTAssertEqual(s.ok(args).out, "Nothing is held now: every position is closed (see 'bitpal closed').\n", "\(args)")
        }
        XCTAssertTrue(Sandbox().ok(["holdings"]).out.hasPrefix("You hold nothing yet"))
    }

    func testConversionsAreAnnouncedOnlyForPortfoliosWithRows() {
        let s = Sandbox()
        s.ok(["portfolio", "add", "eu", "--currency", "EUR"])
        s.ok(["add", "buy", "btc", "1", "100", "--date", "2024-01-01"])
        s.ok(["add", "sell", "btc", "1", "150", "--date", "2024-02-01"])
        for args in [["closed", "--all"], ["gains", "--all"]] {
            XCTAssertFalse(s.ok(args).out.contains("Figures of 'eu'"), "\(args)")
        }
    }

    func testDateHeadersNameTheirZoneAndHelpListsThePortfolioOption() {
        let s = Sandbox()
        s.ok(["portfolio", "edit", "main", "--cash"])
        s.ok(["cash", "deposit", "100", "--date", "2024-01-01"])
        s.ok(["add", "buy", "btc", "0.001", "50", "--date", "2024-01-02"])
        s.ok(["add", "sell", "btc", "0.001", "60", "--date", "2024-01-03"])
        s.ok(["alert", "add", "btc", "above", "100000"])
        XCTAssertTrue(s.ok(["cash", "history"]).out.hasPrefix("DATE (UTC)"))
        XCTAssertTrue(s.ok(["gains"]).out.hasPrefix("DATE (UTC)"))
        XCTAssertTrue(s.ok(["alert", "list"]).out.contains("LAST CHECKED (UTC)"))
        XCTAssertTrue(s.ok(["help", "holdings"]).out.contains("-p/--portfolio NAME"))
        XCTAssertTrue(s.ok(["cash", "deposit", "5"]).out.hasPrefix("Added deposit $5.00,"))
    }

    func testExplainOfASwapShowsBothLegs() throws {
        let s = Sandbox()
        s.ok(["add", "buy", "btc", "1", "100", "--date", "2024-01-01"])
        s.ok(["add", "swap", "btc", "0.5", "eth", "2", "--value", "60", "--date", "2024-02-01"])
        let sell = try XCTUnwrap(try s.loadPortfolio().transactions.first { $0.type == .sell }).id.uuidString.lowercased()
        let out = s.ok(["explain", sell]).out
        XCTAssertTrue(out.hasPrefix("sell 0.5 BTC (Bitcoin)") && out.contains("\n\nbuy 2 ETH (Ethereum)"), out)
        XCTAssertTrue(out.contains("gain         $60.00 − $50.00 = +$10.00"), out)
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.ok(["explain", sell, "--json"]).out.utf8)) as? [Any])
        XCTAssertEqual(json.count, 2)
    }
}

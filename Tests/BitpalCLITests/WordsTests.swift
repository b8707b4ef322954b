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

    func testACashExchangeIsOneLineInItsPortfolioWithBothCurrencies() {
        let s = Sandbox()
        s.ok(["portfolio", "add", "eu", "--currency", "EUR", "--cash"])
        s.ok(["-p", "eu", "cash", "deposit", "1000", "--date", "2024-01-01"])
        s.ok(["-p", "eu", "cash", "exchange", "500", "EUR", "USD", "--rate", "1.1", "--date", "2024-01-02"])
        let list = s.ok(["list", "--all"]).out
        XCTAssertTrue(list.contains("eu         ") && !list.contains("eu → eu"), list)
        XCTAssertTrue(list.contains("EUR → USD  €500.00 → $550.00"), list)
    }

    /// `income --by year` counts in the reader's calendar, as `gains` does: a Tokyo New Year's dividend is the new year's.
    func testIncomeYearsAreLocal() throws {
        let s = Sandbox(now: "2025-06-01T12:00:00Z")
        s.variables["TZ"] = "Asia/Tokyo"
        s.ok(["asset", "add", "AAPL", "--name", "Apple", "--type", "stock"])
        s.ok(["add", "buy", "AAPL", "1", "100", "--date", "2024-12-01"])
        s.ok(["add", "dividend", "AAPL", "5", "--date", "2025-01-01"])  // 2024-12-31 15:00 UTC
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.ok(["income", "--by", "year", "--json"]).out.utf8)) as? [String: Any])
        XCTAssertEqual((json["rows"] as? [[String: Any]])?.map { $0["group"] as? String }, ["2025"])
        XCTAssertTrue(s.ok(["income", "--year", "2025"]).out.contains("$5.00"))
    }

    func testPriceListNamesRegisteredAssets() {
        let s = Sandbox()
        s.ok(["asset", "add", "VWCE.DE", "--name", "Vanguard FTSE All-World", "--type", "etf", "--currency", "EUR"])
        s.ok(["price", "set", "VWCE.DE", "110"])
        XCTAssertTrue(s.ok(["price", "list"]).out.contains("VWCE.DE  Vanguard FTSE All-World"))
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

/// "How am I doing" has one answer with its gap named: the all-time gain and summary's total P&L differ
/// by what moved in or out, at market value in one, at basis in the other.
final class TwoAnswersTests: XCTestCase {
    func testTheGapBetweenGainAndTotalPnLIsNamed() throws {
        let s = Sandbox()  // 2024-06-01 12:00 UTC
        s.ok(["portfolio", "add", "cold"])
        s.ok(["add", "buy", "btc", "1", "20000", "--date", "2024-01-01"])
        s.ok(["price", "set", "btc", "30000", "--date", "2024-03-01"])
        s.ok(["move", "btc", "0.5", "--to", "cold", "--date", "2024-03-02"])
        s.ok(["price", "set", "btc", "40000", "--date", "2024-05-01"])
        let summary = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.ok(["summary", "--json"]).out.utf8)) as? [String: Any])
        XCTAssertEqual(summary["totalPnL"] as? String, "10000.00")  // 0.5 BTC: 20,000 − 10,000 of basis
        let perf = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.ok(["performance", "--json"]).out.utf8)) as? [String: Any])
        XCTAssertEqual(perf["gain"] as? String, "15000.00")         // the move out counts at 15,000, not 10,000
        XCTAssertEqual(perf["summaryTotalPnL"] as? String, "10000.00")
        XCTAssertEqual(perf["movedAtMarketValue"] as? String, "5000.00")
        XCTAssertTrue(s.ok(["performance"]).out.contains("Summary's P&L  +$10,000.00  the gain is $5,000.00 more: assets moved"))
        let path = s.dir + "/page.html"
        s.ok(["report", "--html", path])
        XCTAssertTrue(try String(contentsOfFile: path, encoding: .utf8).contains("The all-time gain is $5,000.00 more than the summary's total P&amp;L"))
        // Moved out below its basis: the gain is the smaller answer, and the words say so (not "plus -$…").
        let low = Sandbox()
        low.ok(["portfolio", "add", "cold"])
        low.ok(["add", "buy", "btc", "1", "20000", "--date", "2024-01-01"])
        low.ok(["price", "set", "btc", "10000", "--date", "2024-03-01"])
        low.ok(["move", "btc", "0.5", "--to", "cold", "--date", "2024-03-02"])
        low.ok(["price", "set", "btc", "40000", "--date", "2024-05-01"])
        XCTAssertTrue(low.ok(["performance"]).out.contains("Summary's P&L  +$10,000.00  the gain is $5,000.00 less: assets moved"))
        low.ok(["report", "--html", low.dir + "/page.html"])
        XCTAssertTrue(try String(contentsOfFile: low.dir + "/page.html", encoding: .utf8).contains("The all-time gain is $5,000.00 less than the summary's total P&amp;L"))
        // A shorter period has no such line (the summary covers the whole history).
        XCTAssertTrue(try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.ok(["performance", "--since", "2024-02-01", "--json"]).out.utf8)) as? [String: Any])["summaryTotalPnL"] is NSNull)
    }
}

/// A holding never priced is valued at its latest trade's price, marked as such everywhere, with the warning kept.
final class TradePriceTests: XCTestCase {
    func testANeverPricedHoldingIsValuedAtItsLatestTrade() throws {
        let s = Sandbox()  // 2024-06-01 12:00 UTC
        s.ok(["asset", "add", "FLAT", "--name", "Flat", "--type", "real-estate"])
        s.ok(["add", "buy", "FLAT", "1", "200000", "--date", "2024-01-01"])
        s.ok(["add", "buy", "btc", "1", "40000", "--date", "2024-01-01"])
        s.ok(["price", "set", "btc", "50000", "--date", "2024-01-01"])
        let table = s.ok(["holdings"])
        XCTAssertTrue(table.out.contains("$200,000.00 (trade)"), table.out)
        XCTAssertTrue(table.err.contains("FLAT has no price: valued at its latest trade's, $200,000.00 on 2024-01-01"), table.err)
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.ok(["holdings", "--json"]).out.utf8)) as? [String: Any])
        let flat = try XCTUnwrap((json["holdings"] as? [[String: Any]])?.first { $0["assetId"] as? String == "FLAT" })
        XCTAssertEqual(flat["priceSource"] as? String, "trade")
        XCTAssertEqual(flat["currentValue"] as? String, "200000.00")
        XCTAssertEqual(flat["priceStale"] as? Bool, false)
        let summary = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.ok(["summary", "--json"]).out.utf8)) as? [String: Any])
        XCTAssertEqual(summary["totalValue"] as? String, "250000.00")
        XCTAssertEqual(summary["unpricedCount"] as? Int, 0)
        // Performance no longer sees a −100% for the flat: it is worth what it was bought at.
        let perf = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.ok(["performance", "--json"]).out.utf8)) as? [String: Any])
        XCTAssertEqual(perf["gain"] as? String, "10000.00")
        XCTAssertEqual(perf["twr"] as? String, "4.1667")
        // A price set by hand takes over.
        s.ok(["price", "set", "FLAT", "210000"])
        XCTAssertFalse(s.ok(["holdings"]).out.contains("(trade)"))
    }

    /// A trade before a split is worth the split's units: 10 at $100, then 2:1, is 20 at $50 (no gain), and 1:2 is 5 at $200.
    func testATradePriceFollowsTheSplitsAfterIt() throws {
        let s = Sandbox()
        s.ok(["asset", "add", "ZZ", "--name", "Z", "--type", "stock"])
        s.ok(["asset", "add", "YY", "--name", "Y", "--type", "stock"])
        s.ok(["add", "buy", "ZZ", "10", "100", "--date", "2024-01-01"])
        s.ok(["add", "split", "ZZ", "2:1", "--date", "2024-02-01"])
        s.ok(["add", "buy", "YY", "10", "100", "--date", "2024-01-01"])
        s.ok(["add", "split", "YY", "1:2", "--date", "2024-02-01"])
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.ok(["holdings", "--json"]).out.utf8)) as? [String: Any])
        let rows = try XCTUnwrap(json["holdings"] as? [[String: Any]])
        for id in ["ZZ", "YY"] {
            let row = try XCTUnwrap(rows.first { $0["assetId"] as? String == id })
            XCTAssertEqual(row["currentValue"] as? String, "1000.00", id)
            XCTAssertEqual(row["profitLoss"] as? String, "0.00", id)
        }
    }
}

import BitpalCLI
import Foundation
import PortfolioCore
import XCTest

/// Money shown with its currency: the defects the one-model issue measured, each through the CLI.
final class MoneyDefectTests: XCTestCase {
    func json(_ s: Sandbox, _ args: [String]) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.ok(args).out.utf8)) as? [String: Any])
    }

    /// `cash` values each balance in the base at today's rate, and its total is the summary's cash.
    func testCashValuesForeignBalancesAtTodaysRate() throws {
        let s = Sandbox()
        s.ok(["portfolio", "edit", "main", "--cash"])
        s.ok(["cash", "deposit", "1000", "--date", "2024-01-01"])
        s.ok(["cash", "exchange", "500", "USD", "EUR", "--rate", "0.9", "--date", "2024-01-02"])
        s.ok(["fx", "set", "EUR", "USD", "1.1", "--date", "2024-05-01"])
        let cash = try json(s, ["cash", "--json"])
        let balances = try XCTUnwrap(cash["balances"] as? [[String: Any]])
        XCTAssertEqual(balances.first { $0["currency"] as? String == "EUR" }?["value"] as? String, "495.00")
        XCTAssertEqual(cash["total"] as? String, "995.00")
        XCTAssertEqual(try json(s, ["summary", "--json"])["cashBalance"] as? String, "995.00")
        XCTAssertTrue(s.ok(["cash"]).out.contains("Total $995.00"))
    }

    /// A EUR portfolio's value is shown in euros, its dollar cash converted; `summary --all` keeps its FX effect.
    func testAPortfoliosValueIsInItsOwnBaseAndAllKeepsTheFXEffect() throws {
        let s = Sandbox()
        s.ok(["portfolio", "add", "eu", "--currency", "EUR", "--cash"])
        s.ok(["-p", "eu", "cash", "deposit", "1000", "--date", "2024-01-01"])
        s.ok(["fx", "set", "EUR", "USD", "1.1", "--date", "2024-01-01"])
        s.ok(["-p", "eu", "cash", "exchange", "500", "EUR", "USD", "--rate", "1.1", "--date", "2024-01-02"])
        s.ok(["fx", "set", "EUR", "USD", "1.2", "--date", "2024-05-01"])
        let list = s.ok(["portfolio", "list", "--json"]).out
        let portfolios = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(list.utf8)) as? [[String: Any]])
        // €500 + $550 at 1.2 = €458.33.
        XCTAssertEqual(portfolios.first { $0["name"] as? String == "eu" }?["totalValue"] as? String, "958.33")
        XCTAssertTrue(s.ok(["portfolio", "list"]).out.contains("€958.33"))
        let eu = try json(s, ["-p", "eu", "summary", "--json"])
        XCTAssertEqual(eu["fxEffect"] as? String, "-41.67")
        let all = try json(s, ["summary", "--all", "--json"])
        // The --all totals are the portfolios' own, converted: −€41.67 is −$50.00 at 1.2.
        XCTAssertEqual(all["fxEffect"] as? String, "-50.00")
        XCTAssertEqual(all["totalPnL"] as? String, "-50.00")
        XCTAssertTrue(s.ok(["summary", "--all"]).out.contains("FX effect         -$50.00"))
    }

    /// Without a rate, a portfolio in another base is named and counted apart, never dropped in silence.
    func testAPortfolioThatCannotBeConvertedIsNamed() throws {
        let s = Sandbox()
        s.ok(["portfolio", "add", "eu", "--currency", "EUR", "--cash"])
        s.ok(["-p", "eu", "cash", "deposit", "1000", "--date", "2024-01-01"])
        s.ok(["asset", "add", "SAP", "--name", "SAP", "--type", "stock", "--currency", "EUR"])
        s.ok(["-p", "eu", "add", "buy", "SAP", "2", "100", "--date", "2024-01-02"])
        s.ok(["add", "buy", "btc", "0.01", "40000", "--date", "2024-01-01"])
        let r = s.ok(["holdings", "--all"])
        XCTAssertTrue(r.err.contains("no EUR→USD rate is known"), r.err)
        XCTAssertTrue(r.err.contains("SAP in 'eu'"), r.err)
        let holdings = try json(s, ["holdings", "--all", "--json"])
        XCTAssertEqual(holdings["unconvertedPortfolios"] as? [String], ["eu"])
        XCTAssertTrue(s.ok(["summary", "--all"]).err.contains("SAP in 'eu'"))
    }
}

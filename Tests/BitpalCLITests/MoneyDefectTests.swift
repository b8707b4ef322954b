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
        s.euroBookWithDollarCash()
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

    /// A portfolio with nothing open but a realized gain in a base with no rate is named and left out of
    /// the --all totals, never added as if in dollars nor shown at $0.00.
    func testAClosedPortfolioThatCannotBeConvertedIsNamedAndLeftOut() throws {
        let s = Sandbox()
        s.ok(["portfolio", "add", "eu", "--currency", "EUR"])
        s.ok(["-p", "eu", "add", "buy", "btc", "0.01", "50000", "--date", "2024-01-02"])
        s.ok(["-p", "eu", "add", "sell", "btc", "0.01", "60000", "--date", "2024-01-03"])
        s.ok(["add", "buy", "btc", "0.1", "40000", "--date", "2024-01-02"])
        s.ok(["price", "set", "btc", "50000", "--date", "2024-05-01"])
        let all = s.ok(["summary", "--all"])
        XCTAssertTrue(all.out.contains("Realized P&L         $0.00"), all.out)  // eu's €100 is not $100
        XCTAssertTrue(all.err.contains("the figures of 'eu' (EUR) are left out of these totals"), all.err)
        XCTAssertFalse(all.out.contains("converted to USD"), all.out)
        XCTAssertEqual(try json(s, ["summary", "--all", "--json"])["unconvertedPortfolios"] as? [String], ["eu"])
        let closed = s.ok(["closed", "--all"])
        XCTAssertFalse(closed.out.contains("$0.00"), closed.out)
        XCTAssertTrue(closed.err.contains("'eu' (EUR) are left out"), closed.err)
        XCTAssertTrue(s.ok(["-p", "eu", "summary"]).out.contains("Realized P&L    +€100.00"))
    }

    // MARK: The defects the one-model issue measured (its item 6)

    func testAllocationWithoutATargetShowsHeldClassesAtZero() throws {
        let s = Sandbox()
        s.ok(["add", "buy", "btc", "1", "100", "--date", "2024-01-01"])
        s.ok(["price", "set", "btc", "200", "--date", "2024-05-01"])
        let r = s.ok(["allocation", "--json"])
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
        let classes = try XCTUnwrap(json["classes"] as? [[String: Any]])
        XCTAssertEqual(classes.map { $0["class"] as? String }, ["crypto"])
        XCTAssertEqual(classes.first?["target"] as? String, "0")
        XCTAssertTrue(r.err.contains("has no target"), r.err)
        XCTAssertEqual(s.run(["allocation", "--deposit", "100"]).code, .failure)
    }

    func testWidgetCarriesTaxWithheldAndCashInterestHasNoAsset() throws {
        let s = Sandbox()
        s.ok(["portfolio", "edit", "main", "--cash"])
        s.ok(["cash", "deposit", "1000", "--date", "2024-01-01"])
        s.ok(["asset", "add", "AAPL", "--name", "Apple", "--type", "stock"])
        s.ok(["add", "buy", "AAPL", "1", "100", "--date", "2024-01-02"])
        s.ok(["add", "dividend", "AAPL", "10", "--fee", "1.5", "--date", "2024-02-01"])
        s.ok(["cash", "interest", "5", "--date", "2024-02-02"])
        XCTAssertEqual(try json(s, ["widget", "--json"])["taxWithheld"] as? String, "1.50")
        let rows = try XCTUnwrap(try json(s, ["income", "--json"])["rows"] as? [[String: Any]])
        XCTAssertTrue(rows.contains { $0["type"] as? String == "interest" && $0["assetId"] is NSNull })
        XCTAssertTrue(rows.contains { $0["type"] as? String == "dividend" && $0["assetId"] as? String == "AAPL" })
    }

    func testASwapWithoutAFeeIsNoCashMovement() throws {
        let s = Sandbox()
        s.ok(["portfolio", "edit", "main", "--cash"])
        s.ok(["cash", "deposit", "1000", "--date", "2024-01-01"])
        s.ok(["add", "buy", "btc", "1", "100", "--date", "2024-01-02"])
        s.ok(["add", "swap", "btc", "0.5", "eth", "2", "--value", "100", "--date", "2024-02-01"])
        s.ok(["add", "swap", "eth", "1", "btc", "0.1", "--value", "50", "--fee", "2", "--date", "2024-02-02"])
        let rows = try XCTUnwrap(try json(s, ["cash", "history", "--json"])["rows"] as? [[String: Any]])
        XCTAssertEqual(rows.map { $0["amount"] as? String }, ["1000.00", "-100.00", "-2.00"])
    }

    func testBaseCurrencyChangesOnlyWhileUnused() throws {
        let s = Sandbox()
        s.ok(["portfolio", "edit", "main", "--currency", "eur"])
        XCTAssertTrue(s.ok(["portfolio", "list"]).out.contains("EUR"))
        s.ok(["add", "buy", "btc", "1", "100", "--date", "2024-01-01"])
        let r = s.run(["portfolio", "edit", "main", "--currency", "USD"])
        XCTAssertEqual(r.code, .failure)
        XCTAssertTrue(r.err.contains("cannot change"), r.err)
    }

    func testEditAndMoveTakeACurrencyAndARate() throws {
        let s = Sandbox()
        s.ok(["portfolio", "add", "eu", "--currency", "EUR"])
        s.ok(["add", "buy", "btc", "1", "100", "--date", "2024-01-01"])
        let move = s.run(["move", "btc", "0.5", "--to", "eu", "--date", "2024-02-01"])
        XCTAssertEqual(move.code, .failure)
        XCTAssertTrue(move.err.contains("give --fx-rate"), move.err)
        s.ok(["move", "btc", "0.5", "--to", "eu", "--date", "2024-02-01", "--fx-rate", "0.9"])
        XCTAssertTrue(s.ok(["-p", "eu", "holdings", "--json"]).out.contains(#""totalCost": "45.00""#))
        let id = try XCTUnwrap(try s.loadPortfolio().transactions.first { $0.type == .buy }).id.uuidString.lowercased()
        // A move's receiving leg takes a new rate between the two bases, but no currency of its own.
        let incoming = try XCTUnwrap(try s.loadPortfolio().transactions.first { $0.type == .transferIn }).id.uuidString.lowercased()
        s.ok(["edit", incoming, "--fx-rate", "0.5"])
        XCTAssertTrue(s.ok(["-p", "eu", "holdings", "--json"]).out.contains(#""totalCost": "25.00""#))
        XCTAssertEqual(s.run(["edit", incoming, "--currency", "GBP", "--fx-rate", "0.5"]).code, .usage)
        s.ok(["edit", id, "--currency", "EUR", "--fx-rate", "1.1"])
        let buy = try XCTUnwrap(try s.loadPortfolio().transactions.first { $0.type == .buy })
        XCTAssertEqual(buy.currency, "EUR")
        XCTAssertEqual(buy.fxRateValue?.text, "1.1")
        s.ok(["check"])
    }

    func testARegisteredAssetsRecordInAnotherCurrencyIsACheckProblem() throws {
        let s = Sandbox()
        s.ok(["asset", "add", "AAPL", "--name", "Apple", "--type", "stock", "--currency", "USD"])
        s.ok(["add", "buy", "AAPL", "1", "100", "--date", "2024-01-01"])
        let text = try XCTUnwrap(String(data: try XCTUnwrap(s.storeBytes), encoding: .utf8))
        _ = s.write("portfolio.json", text.replacingOccurrences(of: #""type": "buy", "assetId": "AAPL", "amount": "1", "price": "100", "fee": "0", "currency": "USD""#,
                                                                   with: #""type": "buy", "assetId": "AAPL", "amount": "1", "price": "100", "fee": "0", "currency": "EUR", "fxRate": "1.1""#))
        let r = s.run(["check"])
        XCTAssertEqual(r.code, .failure, r.description)
        XCTAssertTrue(r.out.contains("not USD, the currency AAPL trades in"), r.out)
    }

    func testWordsOfRefusals() throws {
        let s = Sandbox()
        let aapl = s.run(["add", "buy", "AAPL", "1", "100"])
        XCTAssertTrue(aapl.err.contains("bitpal asset add AAPL"), aapl.err)
        s.ok(["add", "buy", "btc", "1", "100", "--date", "2024-01-01"])
        let split = s.run(["add", "split", "btc", "1:0"])
        XCTAssertTrue(split.err.contains("needs OLD greater than zero"), split.err)
        let backDated = s.run(["add", "sell", "btc", "5", "100", "--date", "2024-02-01"])
        XCTAssertEqual(backDated.err, "error: You only own 1 BTC (Bitcoin) on 2024-02-01. Cannot sell 5.\n")
        let now = s.run(["add", "sell", "btc", "5", "100"])
        XCTAssertEqual(now.err, "error: You only own 1 BTC (Bitcoin). Cannot sell 5.\n")
        let adjustment = s.run(["add", "adjustment", "btc", "-5"])
        XCTAssertEqual(adjustment.err, "error: You only own 1 BTC (Bitcoin). Cannot remove 5 by an adjustment.\n")
    }

    func testAnImportRowOfAKindWithoutMoneyMayNameTheBase() throws {
        let s = Sandbox()
        s.ok(["asset", "add", "AAPL", "--name", "Apple", "--type", "stock"])
        let csv = s.write("in.csv", "type,asset,amount,price,currency,date\nbuy,AAPL,1,100,USD,2024-01-01\nsplit,AAPL,4,,USD,2024-02-01\n")
        s.ok(["import", csv])
        XCTAssertTrue(s.ok(["holdings", "--json"]).out.contains(#""totalAmount": "4""#))
    }

    /// Tables show quantities to 8 decimals; the confirmation, JSON and the store keep every digit.
    func testTablesShowReadableQuantities() throws {
        let s = Sandbox()
        let added = s.ok(["add", "buy", "btc", "0.30517522607507903", "100", "--date", "2024-01-01"]).out
        XCTAssertTrue(added.contains("0.30517522607507903"), added)
        s.ok(["add", "buy", "eth", "0.000000000000000001", "100", "--date", "2024-01-01"])
        let table = s.ok(["holdings"]).out
        XCTAssertTrue(table.contains(" 0.30517523 ") && !table.contains("0.305175226"), table)
        XCTAssertTrue(table.contains("<0.00000001"), table)
        XCTAssertTrue(s.ok(["holdings", "--json"]).out.contains(#""totalAmount": "0.30517522607507903""#))
        XCTAssertTrue(s.ok(["list"]).out.contains("0.30517523"))
    }
}

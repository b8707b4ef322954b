import BitpalCLI
import Foundation
import PortfolioCore
import XCTest

/// Worked example H through the CLI, and the refusals of cash.
final class CashCLITests: XCTestCase {
    func brokerage() -> Sandbox {
        let s = Sandbox()
        s.ok(["portfolio", "add", "brokerage", "--cash"])
        s.ok(["portfolio", "default", "brokerage"])
        s.ok(["asset", "add", "AAPL", "--name", "Apple Inc.", "--type", "stock"])
        return s
    }

    func testWorkedExampleHThroughTheCLI() throws {
        let s = brokerage()
        s.ok(["cash", "deposit", "10000", "--initial", "--date", "2024-01-01"])
        s.ok(["add", "buy", "AAPL", "10", "180", "--fee", "1", "--date", "2024-01-02"])
        s.ok(["add", "dividend", "AAPL", "2.40", "--fee", "0.36", "--date", "2024-02-15"])
        s.ok(["cash", "withdraw", "1000", "--date", "2024-03-01"])
        s.ok(["cash", "interest", "12.50", "--date", "2024-03-02"])
        let before = s.storeBytes
        let refused = s.run(["add", "buy", "AAPL", "50", "170", "--date", "2024-04-01"])
        XCTAssertEqual(refused.code, .failure)
        XCTAssertEqual(refused.err, "error: Not enough USD cash in 'brokerage': the buy on 2024-04-01 needs 8,500.00, 7,213.54 is available.\n")
        XCTAssertEqual(s.storeBytes, before, "nothing written")
        s.ok(["add", "buy", "AAPL", "40", "170", "--date", "2024-04-01"])
        s.ok(["add", "sell", "AAPL", "20", "190", "--fee", "1", "--date", "2024-05-01"])
        s.ok(["price", "set", "AAPL", "200", "--date", "2024-05-02"])

        let summary = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.ok(["--json", "summary"]).out.utf8)) as? [String: Any])
        XCTAssertEqual(summary["holdingsValue"] as? String, "6000.00")
        XCTAssertEqual(summary["cashBalance"] as? String, "4212.54")
        XCTAssertEqual(summary["totalValue"] as? String, "10212.54")
        XCTAssertEqual(summary["netDeposits"] as? String, "9000.00")
        XCTAssertEqual(summary["income"] as? String, "14.54")
        XCTAssertEqual(summary["totalPnL"] as? String, "1212.54")
        XCTAssertEqual(summary["fxEffect"] as? String, "0.00")
        XCTAssertEqual(summary["unrealizedPnL"] as? String, "839.40")

        let cash = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.ok(["--json", "cash"]).out.utf8)) as? [String: Any])
        XCTAssertEqual(cash["total"] as? String, "4212.54")
        let history = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.ok(["--json", "cash", "history"]).out.utf8)) as? [String: Any])
        let rows = try XCTUnwrap(history["rows"] as? [[String: Any]])
        XCTAssertEqual(rows.map { $0["amount"] as? String }, ["10000.00", "-1801.00", "2.04", "-1000.00", "12.50", "-6800.00", "3799.00"])
        XCTAssertEqual(rows.last?["balance"] as? String, "4212.54")

        XCTAssertEqual(s.ok(["widget"]).out, "$10,212.54 +$1,212.54 (+13.47%)\n")
        let holdings = s.ok(["holdings"]).out
        XCTAssertTrue(holdings.contains("USD    Cash        cash   $4,212.54"), holdings)
        XCTAssertTrue(holdings.contains("$10,212.54"), holdings)
    }

    func testCashNeedsAPortfolioThatTracksIt() {
        let s = Sandbox()
        for args in [["cash"], ["cash", "history"], ["cash", "deposit", "10"]] {
            let r = s.run(args)
            XCTAssertEqual(r.code, .failure, "\(args)")
            XCTAssertEqual(r.err, "error: Portfolio 'main' does not track cash; turn it on with 'bitpal portfolio edit main --cash'\n")
        }
        XCTAssertNil(s.storeBytes)
    }

    func testTurningCashOnChecksTheHistoryAndAnOpeningDepositPaysForIt() throws {
        let s = Sandbox()
        s.ok(["add", "buy", "btc", "1", "30000", "--date", "2024-01-05"])
        let before = s.storeBytes
        let refused = s.run(["portfolio", "edit", "main", "--cash"])
        XCTAssertEqual(refused.code, .failure)
        XCTAssertTrue(refused.err.contains("Not enough USD cash in 'main': the buy on 2024-01-05 needs 30,000.00, 0.00 is available."), refused.err)
        XCTAssertEqual(s.storeBytes, before)
        s.ok(["portfolio", "edit", "main", "--cash", "--opening-deposit", "40000", "--date", "2024-01-01"])
        XCTAssertTrue(s.ok(["cash"]).out.contains("$10,000.00"))
        // A portfolio holding only cash is not "empty" to the widget.
        let cashOnly = Sandbox()
        cashOnly.ok(["portfolio", "edit", "main", "--cash", "--opening-deposit", "100", "--date", "2024-01-01"])
        XCTAssertEqual(cashOnly.ok(["widget"]).out, "$100.00 $0.00 (0.00%)\n")
        // Back-dating a withdrawal before the buy would overdraw it: refused.
        let back = s.run(["cash", "withdraw", "20000", "--date", "2024-01-02"])
        XCTAssertEqual(back.code, .failure)
        XCTAssertTrue(back.err.contains("the buy on 2024-01-05 needs 30,000.00, 20,000.00 is available"), back.err)
        // Turning cash off is refused while cash records exist.
        XCTAssertEqual(s.run(["portfolio", "edit", "main", "--no-cash"]).code, .failure)
        XCTAssertEqual(s.run(["portfolio", "edit", "main", "--opening-deposit", "5"]).code, .usage)
    }

    func testACashTransferIsOneLineAndDeletedWhole() throws {
        let s = Sandbox()
        s.ok(["portfolio", "edit", "main", "--cash"])
        s.ok(["portfolio", "add", "savings", "--cash"])
        s.ok(["cash", "deposit", "100", "--date", "2024-01-01"])
        let added = s.ok(["cash", "transfer", "40", "--to", "savings", "--date", "2024-01-02"]).out
        XCTAssertTrue(added.hasPrefix("Added cash transfer $40.00 from 'main' to 'savings', on 2024-01-02"), added)
        XCTAssertTrue(s.ok(["-p", "savings", "cash"]).out.contains("$40.00"))
        XCTAssertTrue(s.ok(["list", "--type", "transfer"]).out.contains("main → savings"))
        let overdraw = s.run(["cash", "transfer", "61", "--to", "savings"])
        XCTAssertEqual(overdraw.code, .failure)
        let id = String(added.split(separator: "\n")[1].dropFirst(3).prefix(8))
        s.ok(["delete", id])
        XCTAssertTrue(s.ok(["-p", "savings", "cash", "history"]).out.contains("No cash movements yet"))
        XCTAssertTrue(s.ok(["cash"]).out.contains("$100.00"))
    }

    func testCashRecordsSurviveExportAndImport() throws {
        let s = brokerage()
        s.ok(["cash", "deposit", "1000", "--date", "2024-01-01"])
        s.ok(["add", "buy", "AAPL", "2", "100", "--date", "2024-01-01"])
        s.ok(["cash", "interest", "3", "--fee", "0.5", "--date", "2024-01-03"])
        s.ok(["cash", "withdraw", "10", "--date", "2024-01-04"])
        let history = s.ok(["--json", "cash", "history"]).out
        // The whole book (JSON) into an empty store: the portfolio, its cash tracking and every record.
        let json = Sandbox()
        XCTAssertEqual(json.run(["import", "-", "--format", "json"], stdin: s.ok(["export", "--format", "json"]).out).code, .success)
        XCTAssertEqual(json.ok(["-p", "brokerage", "--json", "cash", "history"]).out, history)
        // CSV rows (an empty asset for cash) into a store whose portfolio tracks cash.
        let csv = brokerage()
        XCTAssertEqual(csv.run(["import", "-"], stdin: s.ok(["export"]).out).code, .success)
        XCTAssertEqual(csv.ok(["--json", "cash", "history"]).out, history)
        // An import that would overdraw at any date is refused whole, naming the row.
        let overdraw = csv.run(["import", "-"], stdin: "type,asset,amount,price,date\nwithdrawal,,5000,,2024-01-02\n")
        XCTAssertEqual(overdraw.code, .failure)
        XCTAssertTrue(overdraw.err.contains("Not enough USD cash in 'brokerage'"), overdraw.err)
        XCTAssertEqual(csv.ok(["--json", "cash", "history"]).out, history)
        // A kind that needs an asset still does.
        let bad = csv.run(["import", "-"], stdin: "type,asset,amount,price,date\nbuy,,1,2,2024-01-01\n")
        XCTAssertEqual(bad.code, .failure)
        XCTAssertTrue(bad.err.contains("line 2: missing asset"), bad.err)
    }
}

final class FXCLITests: XCTestCase {
    func testRatesAreRecordedListedAndRefusedWhenWrong() throws {
        let s = Sandbox()
        XCTAssertEqual(s.ok(["fx"]).out, "No exchange rates yet. Record one with 'bitpal fx set EUR USD 1.09'.\n")
        XCTAssertEqual(s.ok(["fx", "set", "eur", "usd", "1.0921", "--date", "2024-01-15"]).out,
                       "Recorded 1 EUR = 1.0921 USD as of 2024-01-15.\n")
        s.ok(["fx", "set", "EUR", "USD", "1.1", "--date", "2024-03-01"])
        let list = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.ok(["--json", "fx"]).out.utf8)) as? [[String: String]])
        XCTAssertEqual(list, [["from": "EUR", "to": "USD", "rate": "1.1", "date": "2024-03-01T00:00:00Z", "source": "manual"]])
        XCTAssertEqual(s.ok(["fx", "history", "USD", "EUR"]).out.split(separator: "\n").count, 3)
        let before = s.storeBytes
        for (args, code) in [(["fx", "set", "EUR", "EUR", "1"], ExitCode.failure), (["fx", "set", "EUR", "XYZ", "1"], .failure),
                             (["fx", "set", "EUR", "USD", "0"], .failure), (["fx", "set", "EUR", "USD", "1,1"], .usage),
                             (["fx", "set", "EUR", "USD", "1.1", "--date", "2099-01-01"], .failure)] {
            XCTAssertEqual(s.run(args).code, code, "\(args)")
        }
        XCTAssertEqual(s.storeBytes, before, "nothing written")
    }
}

final class CurrencyCLITests: XCTestCase {
    /// Example I through the CLI: a EUR portfolio trading in dollars, shown in euros.
    func testAEuroPortfolioBuysInDollarsAtTheRateOfItsDate() throws {
        let s = Sandbox()
        s.ok(["portfolio", "add", "eu", "--currency", "EUR"])
        s.ok(["portfolio", "default", "eu"])
        let missing = s.run(["add", "buy", "btc", "1", "40000", "--fee", "20", "--currency", "USD", "--date", "2024-01-10"])
        XCTAssertEqual(missing.code, .failure)
        XCTAssertEqual(missing.err, "error: No USD→EUR rate on or before 2024-01-10: fetch the ECB's with 'bitpal fx fetch-history USD "
                       + "--since 2024-01-10', give --fx-rate, or record one with 'bitpal fx set USD EUR RATE --date 2024-01-10'\n")
        s.ok(["add", "buy", "btc", "1", "40000", "--fee", "20", "--currency", "USD", "--fx-rate", "0.91", "--date", "2024-01-10"])
        s.ok(["add", "buy", "btc", "0.5", "62000", "--date", "2024-03-10"])
        s.ok(["fx", "set", "USD", "EUR", "0.93", "--date", "2024-05-01"])
        s.ok(["add", "sell", "btc", "0.5", "70000", "--fee", "10", "--currency", "usd", "--date", "2024-05-20"])  // the table's 0.93
        s.ok(["price", "set", "btc", "90000", "--currency", "EUR", "--date", "2024-05-31"])
        let summary = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.ok(["--json", "summary"]).out.utf8)) as? [String: Any])
        XCTAssertEqual(summary["realizedPnL"] as? String, "10067.97")
        XCTAssertEqual(summary["totalOpenCost"] as? String, "44945.47")
        XCTAssertEqual(summary["unrealizedPnL"] as? String, "45054.53")
        let holdings = s.ok(["holdings"]).out
        XCTAssertTrue(holdings.contains("€44,945.47") && holdings.contains("+€45,054.53"), holdings)
        let sell = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.ok(["--json", "list", "--limit", "1"]).out.utf8)) as? [[String: Any]])
        XCTAssertEqual(sell.first?["fxRate"] as? String, "0.93")
        XCTAssertEqual(sell.first?["currency"] as? String, "USD")
    }
}

final class CashExchangeCLITests: XCTestCase {
    /// Cash held in another currency gains or loses with the rate: the FX effect, and the identity
    /// totalPnL = totalValue − netDeposits still holds.
    func testAnExchangeAndTheFXEffect() throws {
        let s = Sandbox()
        s.ok(["portfolio", "edit", "main", "--cash", "--opening-deposit", "1100", "--date", "2024-01-01"])
        let added = s.ok(["cash", "exchange", "1100", "USD", "EUR", "--rate", "0.92", "--fee", "2", "--date", "2024-01-02"]).out
        XCTAssertTrue(added.hasPrefix("Added cash exchange $1,100.00 → €1,010.16, on 2024-01-02"), added)
        XCTAssertTrue(s.ok(["list", "--type", "exchange"]).out.contains("exchange"))
        s.ok(["fx", "set", "EUR", "USD", "1.2", "--date", "2024-05-01"])
        let summary = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.ok(["--json", "summary"]).out.utf8)) as? [String: Any])
        // An exchange is no deposit: net deposits stay the $1,100 paid in. The 1,010.16 € cost what left ($1,100, the
        // $2 fee included), so at today's 1.2 (1,212.19) the FX effect is +112.19, the fee part of it.
        XCTAssertEqual(summary["cashBalance"] as? String, "1212.19")
        XCTAssertEqual(summary["netDeposits"] as? String, "1100.00")
        XCTAssertEqual(summary["fxEffect"] as? String, "112.19")
        XCTAssertEqual(summary["totalPnL"] as? String, "112.19")
        // Nor is it a flow: performance lists the deposit alone, and its gain is the summary's P&L.
        let performance = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.ok(["--json", "performance", "--flows"]).out.utf8)) as? [String: Any])
        XCTAssertEqual((performance["flows"] as? [[String: Any]])?.map { $0["kind"] as? String }, ["deposit"])
        XCTAssertEqual(performance["netFlows"] as? String, "1100.00")
        XCTAssertEqual(performance["gain"] as? String, "112.19")
        // Without a rate for today the cash is not guessed at 1.
        let other = Sandbox()
        other.ok(["portfolio", "edit", "main", "--cash", "--opening-deposit", "100", "--date", "2024-01-01"])
        other.ok(["cash", "exchange", "100", "USD", "GBP", "--rate", "0.8", "--date", "2024-01-02"])
        let r = other.run(["holdings"])
        XCTAssertTrue(r.err.contains("no GBP→USD rate is known"), r.err)
        XCTAssertEqual(other.run(["cash", "exchange", "10", "EUR", "GBP", "--rate", "0.85"]).code, .failure)  // no rate for either leg
    }
}

final class AcrossBasesCLITests: XCTestCase {
    /// `--all` over portfolios of different bases shows one currency, converting at today's rate, and says so.
    func testAllAcrossBasesConvertsAtTodaysRateAndSaysSo() throws {
        let s = Sandbox()
        s.ok(["add", "buy", "btc", "1", "30000", "--date", "2024-01-01"])
        s.ok(["portfolio", "add", "eu", "--currency", "EUR"])
        s.ok(["-p", "eu", "add", "buy", "eth", "2", "2000", "--date", "2024-01-02"])
        s.ok(["price", "set", "btc", "60000", "--date", "2024-05-01"])
        s.ok(["price", "set", "eth", "3000", "--date", "2024-05-01"])
        s.ok(["fx", "set", "EUR", "USD", "1.1", "--date", "2024-05-01"])
        let usd = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.ok(["--json", "summary", "--all"]).out.utf8)) as? [String: Any])
        XCTAssertEqual(usd["currency"] as? String, "USD")
        XCTAssertEqual(usd["totalOpenCost"] as? String, "34400.00")  // 30000 + 4000 € × 1.1
        XCTAssertEqual(usd["totalValue"] as? String, "66000.00")
        let eur = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.ok(["--json", "summary", "--all", "--currency", "eur"]).out.utf8))
                                as? [String: Any])
        XCTAssertEqual(eur["currency"] as? String, "EUR")
        XCTAssertEqual(eur["totalOpenCost"] as? String, "31272.73")  // 30000 ÷ 1.1 + 4000
        XCTAssertTrue(s.ok(["holdings", "--all"]).out.contains("Figures of 'eu' (EUR) are converted to USD at today's rates."))
        XCTAssertEqual(s.run(["summary", "--all", "--currency", "XYZ"]).code, .failure)
    }

    /// A move into a portfolio of another base carries its basis converted at the move date's rate.
    func testAMoveAcrossBasesConvertsTheBasisThatMoves() throws {
        let s = Sandbox()
        s.ok(["add", "buy", "btc", "1", "30000", "--date", "2024-01-01"])
        s.ok(["portfolio", "add", "eu", "--currency", "EUR"])
        XCTAssertEqual(s.run(["move", "btc", "0.5", "--to", "eu", "--date", "2024-02-01"]).code, .failure)  // no rate yet
        s.ok(["fx", "set", "EUR", "USD", "1.2", "--date", "2024-01-15"])
        s.ok(["move", "btc", "0.5", "--to", "eu", "--date", "2024-02-01"])
        let eu = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.ok(["-p", "eu", "--json", "holdings"]).out.utf8)) as? [String: Any])
        let holding = try XCTUnwrap((eu["holdings"] as? [[String: Any]])?.first)
        XCTAssertEqual(holding["totalCost"] as? String, "12500.00")  // $15,000 of basis at 1 ÷ 1.2
        XCTAssertEqual(eu["currency"] as? String, "EUR")
    }

    /// Closed positions and income of a portfolio in another base are shown converted under --all.
    func testClosedAndIncomeAcrossBases() throws {
        let s = Sandbox()
        s.ok(["asset", "add", "SAP", "--name", "SAP", "--type", "stock", "--currency", "EUR"])
        s.ok(["portfolio", "add", "eu", "--currency", "EUR"])
        s.ok(["-p", "eu", "add", "buy", "SAP", "10", "100", "--date", "2024-01-02"])
        s.ok(["-p", "eu", "add", "dividend", "SAP", "20", "--date", "2024-02-01"])
        s.ok(["-p", "eu", "add", "sell", "SAP", "10", "120", "--date", "2024-03-01"])
        s.ok(["fx", "set", "EUR", "USD", "1.1", "--date", "2024-01-01"])
        let closed = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.ok(["--json", "closed", "--all"]).out.utf8)) as? [[String: Any]])
        XCTAssertEqual(closed.first?["realizedPnL"] as? String, "220.00")
        let own = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.ok(["-p", "eu", "--json", "closed"]).out.utf8)) as? [[String: Any]])
        XCTAssertEqual(own.first?["realizedPnL"] as? String, "200.00")
        let income = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.ok(["--json", "income", "--all"]).out.utf8)) as? [String: Any])
        XCTAssertEqual((income["totals"] as? [String: String])?["net"], "22.00")
        XCTAssertTrue(s.ok(["income", "--all"]).out.contains("Figures of 'eu' (EUR) are converted to USD at today's rates."))
    }
}

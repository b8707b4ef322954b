import BitpalCLI
import Foundation
import PortfolioCore
import XCTest

/// Proof that a kind is a row: `spend`, `fee` (in units) and `expense` (`cash fee`), worked to the cent.
final class SpendFeeKindsTests: XCTestCase {
    /// Deposit 10,000; buy 1 BTC at 5,000; spend 0.1 BTC on goods at 7,000 (a $200 gain, $700 leaves);
    /// pay 0.01 BTC as a fee (its $50 basis lost); pay a $10 account fee from cash; BTC then at 8,000.
    func testSpendFeeAndExpenseToTheCent() throws {
        let s = Sandbox()
        s.ok(["portfolio", "edit", "main", "--cash"])
        s.ok(["cash", "deposit", "10000", "--date", "2024-01-01"])
        s.ok(["add", "buy", "btc", "1", "5000", "--date", "2024-01-02"])
        XCTAssertTrue(s.ok(["add", "spend", "btc", "0.1", "7000", "--date", "2024-02-01"]).out.hasPrefix("Added spend 0.1 BTC (Bitcoin) at $7,000.00"))
        s.ok(["add", "fee", "btc", "0.01", "--date", "2024-02-02"])
        s.ok(["cash", "fee", "10", "--date", "2024-02-03", "--note", "account fee"])
        s.ok(["price", "set", "btc", "8000", "--date", "2024-03-01"])
        let summary = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.ok(["summary", "--json"]).out.utf8)) as? [String: Any])
        XCTAssertEqual(summary["cashBalance"] as? String, "4990.00")          // cash untouched by the spend and the unit fee
        XCTAssertEqual(summary["holdingsValue"] as? String, "7120.00")        // 0.89 BTC × 8,000
        XCTAssertEqual(summary["netDeposits"] as? String, "9300.00")          // 10,000 − the 700 spent; the fees are no flow
        XCTAssertEqual(summary["realizedPnL"] as? String, "140.00")           // +200 − 50 − 10
        XCTAssertEqual(summary["unrealizedPnL"] as? String, "2670.00")        // 7,120 − 4,450
        XCTAssertEqual(summary["totalPnL"] as? String, "2810.00")             // = 12,110 − 9,300
        let performance = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.ok(["performance", "--flows", "--json"]).out.utf8)) as? [String: Any])
        XCTAssertEqual((performance["flows"] as? [[String: Any]])?.map { $0["kind"] as? String }, ["deposit", "spend"])
        XCTAssertEqual(performance["netFlows"] as? String, "9300.00")
        // Holding less than the spend or the fee is refused, worded by the kind.
        XCTAssertEqual(s.run(["add", "fee", "btc", "5"]).err, "error: You only own 0.89 BTC (Bitcoin). Cannot pay 5 as a fee.\n")
        XCTAssertEqual(s.run(["add", "spend", "btc", "5", "1"]).err, "error: You only own 0.89 BTC (Bitcoin). Cannot spend 5.\n")
        // An expense needs cash tracked, as every cash record does.
        let other = Sandbox()
        XCTAssertEqual(other.run(["cash", "fee", "1"]).code, .failure)
        // Every kind is in the help of 'add' by its row.
        let help = s.ok(["help", "add"]).out
        XCTAssertTrue(help.contains("  spend ") && help.contains("  fee "), help)
    }
}

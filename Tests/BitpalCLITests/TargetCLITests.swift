import BitpalCLI
import Foundation
import PortfolioCore
import XCTest

/// Worked example K of allocation-plans.md through the CLI, and the refusals of targets.
final class TargetCLITests: XCTestCase {
    /// stock 5000, bond 2000, cash 3000.
    func exampleK() -> Sandbox {
        let s = Sandbox()
        s.ok(["portfolio", "edit", "main", "--cash", "--opening-deposit", "10000", "--date", "2024-01-01"])
        s.ok(["asset", "add", "STK", "--name", "Stocks", "--type", "stock"])
        s.ok(["asset", "add", "BND", "--name", "Bonds", "--type", "bond"])
        s.ok(["add", "buy", "STK", "50", "100", "--date", "2024-01-02"])
        s.ok(["add", "buy", "BND", "20", "100", "--date", "2024-01-02"])
        s.ok(["price", "set", "STK", "100"])
        s.ok(["price", "set", "BND", "100"])
        s.ok(["target", "set", "stock=60", "bond=30", "cash=10"])
        return s
    }

    func classes(_ s: Sandbox, _ args: [String]) throws -> [[String: Any]] {
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.ok(["--json"] + args).out.utf8)) as? [String: Any])
        XCTAssertEqual(json["total"] as? String, "10000.00")
        return try XCTUnwrap(json["classes"] as? [[String: Any]])
    }

    func testWorkedExampleK() throws {
        let s = exampleK()
        let plain = try classes(s, ["allocation"])
        XCTAssertEqual(plain.map { $0["class"] as? String }, ["stock", "bond", "cash"])
        XCTAssertEqual(plain.map { $0["weight"] as? String }, ["50.00", "20.00", "30.00"])
        XCTAssertEqual(plain.map { $0["drift"] as? String }, ["-10.00", "-10.00", "20.00"])
        XCTAssertEqual(plain.map { $0["driftValue"] as? String }, ["-1000.00", "-1000.00", "2000.00"])
        XCTAssertTrue(plain.allSatisfy { $0["suggested"] is NSNull })
        // Cash is over its target even after the deposit: it gets nothing.
        XCTAssertEqual(try classes(s, ["allocation", "--deposit", "3000"]).map { $0["suggested"] as? String }, ["1666.67", "1333.33", "0.00"])
        XCTAssertEqual(try classes(s, ["allocation", "--rebalance"]).map { $0["suggested"] as? String }, ["1000.00", "1000.00", "-2000.00"])
        // The parts add up exactly to the deposit (a third each would not).
        let odd = try classes(s, ["allocation", "--deposit", "100"]).compactMap { ($0["suggested"] as? String).flatMap { Decimal(string: $0) } }
        XCTAssertEqual(odd.reduce(0, +), 100)
        let text = s.ok(["allocation", "--deposit", "3000"]).out
        XCTAssertTrue(text.contains("stock   $5,000.00  50.00%     60%  -10.00 pts   -$1,000.00  $1,666.67"), text)
        let shown = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.ok(["--json", "target"]).out.utf8)) as? [String: Any])
        XCTAssertEqual(shown["by"] as? String, "type")
        XCTAssertEqual((shown["targets"] as? [[String: Any]])?.map { $0["target"] as? String }, ["60", "30", "10"])
        XCTAssertTrue(try String(contentsOfFile: s.storePath, encoding: .utf8)
            .contains("\"targets\": {\"by\": \"type\", \"weights\": {\"stock\": \"60\", \"bond\": \"30\", \"cash\": \"10\"}}"))
        s.ok(["target", "clear"])
        let cleared = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.ok(["--json", "target"]).out.utf8)) as? [String: Any])
        XCTAssertTrue(cleared["targets"] is NSNull)
        XCTAssertEqual(s.run(["allocation", "--deposit", "10"]).code, .failure, "no target: nothing to split by")
    }

    func testByAssetHoldsEveryHeldClassAtZero() throws {
        let s = exampleK()
        s.ok(["target", "set", "--by", "asset", "stk=50", "bitcoin=50"])
        let rows = try classes(s, ["allocation"])
        XCTAssertEqual(rows.map { $0["class"] as? String }, ["STK", "bitcoin", "BND", "cash"])
        XCTAssertEqual(rows.map { $0["target"] as? String }, ["50", "50", "0", "0"])
    }

    func testRefusals() {
        let s = exampleK()
        let before = s.storeBytes
        let notHundred = s.run(["target", "set", "stock=60", "bond=30"])
        XCTAssertEqual(notHundred.code, .failure)
        XCTAssertEqual(notHundred.err, "error: The targets add up to 90, not 100\n")
        XCTAssertEqual(s.run(["target", "set", "shares=100"]).code, .usage, "an unknown asset type")
        XCTAssertEqual(s.run(["target", "set", "--by", "asset", "NOPE=100"]).code, .failure, "an unknown asset")
        XCTAssertEqual(s.run(["target", "set", "stock=abc"]).code, .usage)
        XCTAssertEqual(s.run(["target", "set", "stock=50", "stock=50"]).code, .usage)
        XCTAssertEqual(s.run(["allocation", "--deposit", "10", "--rebalance"]).code, .usage)
        XCTAssertEqual(s.storeBytes, before, "nothing written")
        let plain = Sandbox()
        let cash = plain.run(["target", "set", "stock=90", "cash=10"])
        XCTAssertEqual(cash.code, .failure, "cash in a portfolio that does not track it")
        XCTAssertTrue(cash.err.contains("does not track cash"), cash.err)
    }
}

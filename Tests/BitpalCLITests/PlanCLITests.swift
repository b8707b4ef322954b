import BitpalCLI
import Foundation
import PortfolioCore
import XCTest

/// Worked example L of allocation-plans.md through the CLI, and the rules of plans.
final class PlanCLITests: XCTestCase {
    /// A portfolio worth 50,000 (the tests' clock is 2024-06-01).
    func fifty() -> Sandbox {
        let s = Sandbox()
        s.ok(["asset", "add", "HOME", "--name", "Flat", "--type", "real-estate"])
        s.ok(["add", "buy", "HOME", "1", "50000", "--date", "2024-01-01"])
        s.ok(["price", "set", "HOME", "50000"])
        return s
    }

    func plan(_ s: Sandbox, _ name: String) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.ok(["--json", "plan", "show", name]).out.utf8)) as? [String: Any])
    }

    func testWorkedExampleL() throws {
        let s = fifty()
        s.ok(["plan", "add", "retire", "--target", "1000000", "--by", "2034-06-01", "--monthly", "2000", "--return", "6", "--risk", "HIGH"])
        let p = try plan(s, "RETIRE")
        XCTAssertEqual(p["currentValue"] as? String, "50000.00")
        XCTAssertEqual(p["monthsRemaining"] as? Int, 120)
        XCTAssertEqual(p["projectedTotal"] as? String, "418728.53")
        XCTAssertEqual(p["requiredMonthly"] as? String, "5546.95")
        XCTAssertEqual(p["onTrack"] as? Bool, false)
        XCTAssertEqual(p["progressPercentage"] as? String, "5.00")
        XCTAssertEqual(p["risk"] as? String, "high")
        XCTAssertEqual(p["status"] as? String, "active")
        XCTAssertEqual(p["portfolio"] as? String, "main")
        // One day less than 120 months: 119.
        s.ok(["plan", "edit", "retire", "--by", "2034-05-31"])
        XCTAssertEqual(try plan(s, "retire")["monthsRemaining"] as? Int, 119)
        // Without a return: V + C·n, and (target − V) ÷ n.
        s.ok(["plan", "edit", "retire", "--return", "0", "--by", "2034-06-01"])
        XCTAssertEqual(try plan(s, "retire")["projectedTotal"] as? String, "290000.00")
        XCTAssertEqual(try plan(s, "retire")["requiredMonthly"] as? String, "7916.67")
        let list = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.ok(["--json", "plan"]).out.utf8)) as? [[String: Any]])
        XCTAssertEqual(list.map { $0["name"] as? String }, ["retire"])
    }

    func testAPastDateAndTheRefusals() throws {
        let s = fifty()
        s.ok(["plan", "add", "late", "--target", "10000", "--by", "2020-01-01", "--all"])
        let p = try plan(s, "late")
        XCTAssertEqual(p["daysRemaining"] as? Int, 0)
        XCTAssertEqual(p["monthsRemaining"] as? Int, 0)
        XCTAssertTrue(p["requiredMonthly"] is NSNull)
        XCTAssertTrue(p["portfolio"] is NSNull, "--all")
        XCTAssertEqual(p["onTrack"] as? Bool, true)
        let before = s.storeBytes
        XCTAssertEqual(s.run(["plan", "add", "LATE", "--target", "1", "--by", "2030-01-01"]).code, .failure, "names are unique whatever the case")
        XCTAssertEqual(s.run(["plan", "add", "x", "--by", "2030-01-01"]).code, .usage, "--target is required")
        XCTAssertEqual(s.run(["plan", "add", "x", "--target", "1", "--by", "2030-01-01", "--risk", "wild"]).code, .usage)
        XCTAssertEqual(s.run(["plan", "edit", "late", "--status", "done"]).code, .usage)
        XCTAssertEqual(s.run(["plan", "show", "nope"]).code, .failure)
        XCTAssertEqual(s.storeBytes, before)
        s.ok(["plan", "edit", "late", "--status", "completed"])
        XCTAssertEqual(try plan(s, "late")["status"] as? String, "completed")
        s.ok(["plan", "remove", "late"])
        XCTAssertEqual(s.run(["plan", "show", "late"]).code, .failure)
    }

    func testMonthsKeepTheDayOrTheMonthsLastDay() {
        XCTAssertTrue(ISODate.adding(months: 1, to: (2024, 1, 31)) == (2024, 2, 29))
        XCTAssertTrue(ISODate.adding(months: 2, to: (2024, 1, 31)) == (2024, 3, 31))
        XCTAssertTrue(ISODate.adding(months: 13, to: (2023, 1, 31)) == (2024, 2, 29))
        XCTAssertTrue(ISODate.adding(months: 12, to: (2024, 2, 29)) == (2025, 2, 28))
        XCTAssertTrue(ISODate.adding(months: -1, to: (2024, 3, 31)) == (2024, 2, 29))
    }
}

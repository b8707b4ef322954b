import BitpalCLI
import Foundation
import PortfolioCore
import XCTest

/// Issue "trust at the edges": one reproduction a test, through the CLI.
final class EdgeTests: XCTestCase {
    // MARK: One grammar, one parser

    func testLeadingZerosAndBarePointsAreOneGrammarEverywhere() throws {
        let s = Sandbox()
        s.ok(["add", "buy", "btc", "0000000000000000000001", "100", "--date", "2024-01-01"])
        s.ok(["add", "buy", "btc", ".5", "100.", "--date", "2024-01-02"])
        let csv = s.write("in.csv", "type,coin,amount,price,date\nbuy,btc,0000000000000000000001,100,2024-01-03\nbuy,btc,.5,100.,2024-01-04\n")
        s.ok(["import", csv])
        let amounts = try s.loadPortfolio().transactions.map { $0.amountValue.text }
        XCTAssertEqual(amounts, ["1", "0.5", "1", "0.5"])
    }

    func testTwentyDigitRuleIsWordedTheSameAndExitsOne() {
        let s = Sandbox()
        let big = "1" + String(repeating: "0", count: 20)
        let add = s.run(["add", "buy", "btc", big, "1"])
        XCTAssertEqual(add.code, .failure, "\(add)")
        let csv = s.write("in.csv", "type,coin,amount,price,date\nbuy,btc,\(big),1,2024-01-03\n")
        let imp = s.run(["import", csv])
        XCTAssertEqual(imp.code, .failure, "\(imp)")
        let rule = "Amount '\(big)' has more than 20 digits before the point"
        XCTAssertTrue(add.err.contains(rule), add.err)
        XCTAssertTrue(imp.err.contains(rule), imp.err)
    }

    func testArgumentsRefuseOutsideFormats() {
        let s = Sandbox()
        for bad in ["1,5", "1e3", "$100", " 1", ".", ""] {
            XCTAssertEqual(s.run(["add", "buy", "btc", bad, "1"]).code, .usage, bad)
        }
    }

    // MARK: Exact at the limits

    func testHugeTotalsPrintExactly() {
        let s = Sandbox()
        s.ok(["add", "buy", "btc", "20000000000000000000", "20000000000000000000", "--date", "2024-01-01"])
        let h = s.ok(["holdings", "--json"]).out
        XCTAssertTrue(h.contains(#""totalCost": "400000000000000000000000000000000000000.00""#), h)
    }
}

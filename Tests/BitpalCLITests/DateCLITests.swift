import BitpalCLI
import Foundation
import PortfolioCore
import XCTest

/// Dates through the command line: the range, exit codes, local zones, and how they are shown.
final class DateCLITests: XCTestCase {
    func testDatesOutsideTheRangeAreRefusedAndNeverWritten() throws {
        let s = Sandbox()
        s.ok(["add", "buy", "btc", "1", "100", "--date", "2024-01-01"])
        let before = s.storeBytes
        for date in ["0000-01-01T00:00:00+00:30", "1899-12-31T23:59:59Z", "1899-12-31", "0001-01-01"] {
            let r = s.run(["add", "buy", "btc", "1", "100", "--date", date])
            XCTAssertEqual(r.code, .failure, "\(date): \(r)")
            XCTAssertTrue(r.err.contains("outside the dates bitpal keeps"), r.err)
            XCTAssertEqual(s.storeBytes, before)
        }
        // Malformed is a usage error.
        for date in ["2024-01-01T00:00:00+01:", "2024-13-01", "soon"] {
            XCTAssertEqual(s.run(["add", "buy", "btc", "1", "100", "--date", date]).code, .usage, date)
        }
        // The earliest kept instant works end to end, and every command can read the store afterwards.
        s.ok(["add", "buy", "btc", "1", "100", "--date", "1900-01-01T00:00:00Z"])
        s.ok(["add", "buy", "btc", "1", "100", "--date", "1900-01-01T01:00:00+01:00"])
        XCTAssertEqual(try s.loadPortfolio().transactions.count, 3)
        s.ok(["list"]); s.ok(["list", "--json"]); s.ok(["holdings"]); s.ok(["export"])
        XCTAssertEqual(s.run(["list", "--since", "0000-01-01T00:00:00Z"]).code, .failure)
        XCTAssertEqual(s.run(["price", "set", "btc", "5", "--date", "1800-01-01"]).code, .failure)
    }

    func testImportRefusesDatesOutsideTheRange() throws {
        let s = Sandbox()
        let csv = "type,coin,amount,price,date\nbuy,btc,1,100,0000-01-01T00:00:00+00:30\nbuy,btc,1,100,1900-01-01\n"
        let r = s.run(["import", "-"], stdin: csv)
        XCTAssertEqual(r.code, .failure, "\(r)")
        XCTAssertTrue(r.err.contains("line 2") && r.err.contains("outside the dates"), r.err)
        let json = #"[{"id": "0a4f8e2c-1b3d-4e5f-8a9b-0c1d2e3f4a5b", "coinId": "bitcoin", "type": "buy", "amount": "1", "pricePerCoin": "1", "fee": "0", "date": "9999-12-31T23:30:00-01:00", "notes": null}]"#
        let j = s.run(["import", "-", "--format", "json"], stdin: json)
        XCTAssertEqual(j.code, .failure, "\(j)")
        XCTAssertTrue(j.err.contains("outside the dates"), j.err)
        XCTAssertNil(s.storeBytes)
    }

    func testStoreWithADateOutsideTheRangeIsRefusedWithItsLine() throws {
        let s = Sandbox()
        s.ok(["add", "buy", "btc", "1", "100", "--date", "2024-01-01"])
        let text = try XCTUnwrap(s.storeBytes.map { String(decoding: $0, as: UTF8.self) })
        _ = s.write("portfolio.json", text.replacingOccurrences(of: "2024-01-01T00:00:00Z", with: "1899-12-31T23:59:59Z"))
        let r = s.run(["list"])
        XCTAssertEqual(r.code, .failure)
        XCTAssertTrue(r.err.contains("line 6") && r.err.contains("outside the dates"), r.err)
    }
}

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
        // As a filter, a bound before the range keeps everything after it (no failure).
        XCTAssertEqual(s.ok(["list", "--since", "0000-01-01T00:00:00Z", "--json"]).out.components(separatedBy: "\"id\"").count - 1, 3)
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

    /// Table text with runs of spaces made one, so checks do not depend on column widths.
    func squeezed(_ text: String) -> String {
        text.replacingOccurrences(of: " +", with: " ", options: .regularExpression)
    }

    func jsonDates(_ s: Sandbox, _ args: [String] = ["list", "--json"]) -> [String] {
        s.ok(args).out.split(separator: "\n").filter { $0.contains("\"date\"") }
            .map { String($0.split(separator: "\"")[3]) }
    }

    func testBerlinSeesTheDayItTyped() throws {
        let s = Sandbox()
        s.variables["TZ"] = "Europe/Berlin"
        let added = s.ok(["add", "buy", "btc", "1", "100", "--date", "2024-01-15"]).out
        XCTAssertTrue(added.contains(", on 2024-01-15\n"), added)
        s.ok(["add", "sell", "btc", "1", "120", "--date", "2024-01-15 10:00"])
        XCTAssertEqual(jsonDates(s), ["2024-01-15T09:00:00Z", "2024-01-15"])
        let list = squeezed(s.ok(["list"]).out)
        XCTAssertTrue(list.contains("DATE (Europe/Berlin)"), list)
        XCTAssertTrue(list.contains("2024-01-15 10:00 sell"), list)
        XCTAssertTrue(list.contains("2024-01-15 buy"), list)
        XCTAssertFalse(list.contains("2024-01-14"), list)
        let closed = s.ok(["closed"]).out
        XCTAssertTrue(closed.contains("2024-01-15  2024-01-15"), closed)
        // The same store read in UTC shows the instant in UTC, and the day as the day.
        s.variables["TZ"] = "UTC"
        let utc = squeezed(s.ok(["list"]).out)
        XCTAssertTrue(utc.contains("2024-01-15 buy") && utc.contains("2024-01-15 09:00 sell"), utc)
        s.variables["TZ"] = "Europe/Berlin"
        // An offsetless time with seconds, and the price list in local time.
        s.ok(["price", "set", "btc", "150", "--date", "2024-05-01T08:30:15"])
        let prices = s.ok(["price", "list"]).out
        XCTAssertTrue(prices.contains("TIME (Europe/Berlin)") && prices.contains("2024-05-01 08:30"), prices)
        XCTAssertTrue(s.ok(["price", "list", "--json"]).out.contains("2024-05-01T06:30:15Z"))
    }

    func testSaoPauloDayWithoutAMidnight() throws {
        let s = Sandbox()
        s.variables["TZ"] = "America/Sao_Paulo"
        s.ok(["add", "buy", "btc", "1", "100", "--date", "2018-11-04"])
        s.ok(["add", "buy", "btc", "1", "100", "--date", "2018-11-05T01:59:59Z", "--note", "last second of the 4th"])
        s.ok(["add", "buy", "btc", "1", "100", "--date", "2018-11-05T02:00:00Z", "--note", "the 5th"])
        s.ok(["add", "buy", "btc", "1", "100", "--date", "2018-11-04T02:59:59Z", "--note", "the 3rd"])
        XCTAssertEqual(jsonDates(s, ["list", "--json", "--since", "2018-11-04", "--until", "2018-11-04"]),
                       ["2018-11-05T01:59:59Z", "2018-11-04"])
        let list = squeezed(s.ok(["list"]).out)
        XCTAssertTrue(list.contains("2018-11-04 buy"), list)
        XCTAssertTrue(list.contains("2018-11-04 23:59 buy"), list)
        XCTAssertTrue(list.contains("2018-11-03 23:59 buy"), list)
    }

    func testTodayAndYesterdayAreLocalDays() throws {
        let s = Sandbox(now: "2024-06-01T23:30:00Z")
        s.variables["TZ"] = "Europe/Berlin"   // already 01:30 on June 2 there
        s.ok(["add", "buy", "btc", "1", "100", "--date", "today"])
        s.ok(["add", "buy", "btc", "1", "100", "--date", "yesterday"])
        XCTAssertEqual(jsonDates(s), ["2024-06-02", "2024-06-01"])
        XCTAssertEqual(jsonDates(s, ["list", "--json", "--since", "today"]), ["2024-06-02"])
        XCTAssertEqual(jsonDates(s, ["list", "--json", "--until", "yesterday"]), ["2024-06-01"])
        let list = s.ok(["list"]).out
        XCTAssertTrue(list.contains("2024-06-02  ") && list.contains("2024-06-01  "), list)
        // In UTC it is still June 1: Berlin's June 2 stands (it is today somewhere), but is not UTC's today,
        // and UTC's 'today' is the day Berlin called yesterday.
        s.variables["TZ"] = "UTC"
        s.ok(["add", "buy", "btc", "1", "100", "--date", "today", "--note", "utc"])
        XCTAssertEqual(jsonDates(s, ["list", "--json", "--since", "today", "--until", "today"]), ["2024-06-01", "2024-06-01"])
        XCTAssertEqual(s.run(["add", "buy", "btc", "1", "100", "--date", "2024-06-02"]).err,
                       "error: Transaction date cannot be in the future\n")
        s.ok(["check"])
    }

    func testOffsetlessTimesAndUTC() throws {
        let s = Sandbox()
        s.ok(["add", "buy", "btc", "1", "100", "--date", "2024-01-01T10:00"])
        s.ok(["add", "buy", "btc", "1", "100", "--date", "2024-01-02 10:00:30"])
        XCTAssertEqual(jsonDates(s), ["2024-01-02T10:00:30Z", "2024-01-01T10:00:00Z"])
        XCTAssertTrue(s.ok(["add", "buy", "btc", "1", "100", "--date", "2024-01-03 09:00"]).out.contains("on 2024-01-03 09:00 UTC"))
        XCTAssertEqual(s.run(["add", "buy", "btc", "1", "100", "--date", "2024-01-03 9:00"]).code, .usage)
    }
}

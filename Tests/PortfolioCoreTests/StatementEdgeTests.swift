import Foundation
@testable import PortfolioCore
import XCTest

/// What the review of the statement presets found, each pinned: numbers never read 100× too large,
/// negative amounts never made positive, ids scoped by portfolio, a header low in the file, the
/// CSV's own error shown.
final class StatementEdgeTests: XCTestCase {
    func testACommaThatIsNotAThousandsSeparatorIsNotANumber() {
        XCTAssertEqual(ExchangeNumber.parse("1,234.5"), Decimal(string: "1234.5"))
        XCTAssertEqual(ExchangeNumber.parse("5,983,125.25"), Decimal(string: "5983125.25"))
        // A German Excel's decimal comma: refused (the row is named), never 5772716 ETH.
        for text in ["0,05772716", "10,99", "1,23,456", ",5"] { XCTAssertNil(ExchangeNumber.parse(text), text) }
    }

    func testALoneDecimalMarkOfTheOtherKindIsADecimal() throws {
        var dot = ImportMapping()
        XCTAssertEqual(dot.normalized("0,123"), "0.123")
        XCTAssertEqual(dot.normalized("0,76672417"), "0.76672417")
        XCTAssertEqual(dot.normalized("1,234"), "1234")
        dot.decimalMark = UInt8(ascii: ",")
        XCTAssertEqual(dot.normalized("12.50"), "12.50")
        XCTAssertEqual(dot.normalized("1.234"), "1234")
        XCTAssertEqual(dot.normalized("1.234,5"), "1234.5")
    }

    func testNegativeCashAndDividendsAreCountedNeverMadePositive() {
        var m = ExchangeImport.Mapper()
        m.cash(line: 2, type: "deposit", amount: -1, currency: "EUR", date: "2024-01-01", notes: "", id: nil)
        m.dividend(line: 3, asset: "XYZ", amount: -5, tax: 0, currency: "USD", date: "2024-01-01", notes: "", id: nil)
        m.cashExchange(line: 4, from: (-10, "EUR"), to: (11, "USD"), date: "2024-01-01", notes: "", id: "x")
        XCTAssertTrue(m.rows.isEmpty)
        XCTAssertEqual(m.skipped["deposit (negative)"], 1)
        XCTAssertEqual(m.skipped["dividend reversal (its dividend is not in the file)"], 1)
        XCTAssertEqual(m.problems.count, 1, "\(m.problems)")
    }

    func testIdsAreScopedByPortfolio() throws {
        let file = Array("""
        "Type","SettleDate","ISIN","Description","Amount","CurrencyPrimary","TransactionID"
        "Dividends","20230623","US9220427424","VT(US9220427424) CASH DIVIDEND","137.23","USD","1001"

        """.utf8)
        let a = try StatementImport.rows(file, format: .ibkr, options: StatementOptions(tracksCash: false, portfolio: "main"))
        let b = try StatementImport.rows(file, format: .ibkr, options: StatementOptions(tracksCash: false, portfolio: "joint"))
        let again = try StatementImport.rows(file, format: .ibkr, options: StatementOptions(tracksCash: false, portfolio: "main"))
        XCTAssertNotNil(a.rows.first?.fields[.id])
        XCTAssertNotEqual(a.rows.first?.fields[.id], b.rows.first?.fields[.id])
        XCTAssertEqual(a.rows.first?.fields[.id], again.rows.first?.fields[.id])
    }

    func testAHeaderOnTheThirtiethLineIsRead() throws {
        let preamble = (1...29).map { "note \($0)" }.joined(separator: "\n")
        let table = try StatementTable.read(Array((preamble + "\nDate,Amount\n2024-01-01,5\n").utf8), required: [["Date"], ["Amount"]], what: "test")
        XCTAssertEqual(table.headerLine, 30)
        XCTAssertEqual(table.records.count, 1)
    }

    func testAQuoteLeftOpenIsNamedNotTakenForAMissingHeader() {
        XCTAssertThrowsError(try StatementTable.read(Array("Date,Amount\n\"2024-01-01,5\n".utf8), required: [["Date"], ["Nope"]], what: "test")) { error in
            let text = (error as? ImportFailure)?.problems.joined() ?? ""
            XCTAssertTrue(text.contains("line 2"), text)
        }
    }
}

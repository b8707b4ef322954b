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

    func testALonePointInADecimalCommaFileIsADecimalPoint() {
        // DEGIRO's own export mixes "-27,80" and -2.50 in one file.
        XCTAssertEqual(StatementNumber.parse("-27,80", decimalComma: true), Decimal(string: "-27.8"))
        XCTAssertEqual(StatementNumber.parse("-2.50", decimalComma: true), Decimal(string: "-2.5"))
        XCTAssertEqual(StatementNumber.parse("1.234", decimalComma: true), Decimal(1234))
        XCTAssertEqual(StatementNumber.parse("1.234,56", decimalComma: true), Decimal(string: "1234.56"))
    }

    func testAMappedTaxRowWithoutItsDividendRegistersNothing() throws {
        let mapping = try ImportMapping.read(Array(#"""
        {"date": {"column": "Date", "format": "MM/dd/yyyy"}, "kind": {"column": "Action", "values": {"Foreign Tax Paid": "tax", "Buy": "buy"}},
         "asset": {"column": "Symbol"}, "amount": {"column": "Quantity"}, "price": {"column": "Price"}, "money": {"column": "Amount"},
         "currency": {"value": "USD"}, "register": {"type": "stock"}}
        """#.utf8))
        let rows = try mapping.rows(Array("""
        Date,Action,Symbol,Quantity,Price,Amount
        09/06/2024,Foreign Tax Paid,IBN,,,-$1.30
        09/07/2024,Buy,BND,2,$70.00,-$140.00

        """.utf8))
        XCTAssertEqual(rows.assets.map(\.id), ["BND"])
        XCTAssertEqual(rows.rows.map { $0.fields[.type] }, ["expense", "buy"])
        XCTAssertEqual(rows.rows.first?.fields[.assetId], nil)
    }

    func testAMoneyCodeBeforeOrAfterTheAmountIsRead() {
        let m = ImportMapping()
        XCTAssertEqual(m.normalized("USD 325.37"), "325.37")
        XCTAssertEqual(m.normalized("USD -1.20"), "-1.20")
        XCTAssertEqual(m.normalized("EUR3000"), "3000")
        XCTAssertEqual(m.normalized("89.50 SEK"), "89.50")
    }
}

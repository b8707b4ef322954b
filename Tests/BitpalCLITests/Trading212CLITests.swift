import Foundation
import PortfolioCore
import XCTest

/// `bitpal import history.csv` from Trading 212, recognised by its header, into a EUR portfolio with
/// cash (rows from Export-To-Ghostfolio's sample, quoted in the import-formats research, 3.3).
final class Trading212CLITests: XCTestCase {
    static let history = """
    Action,Time,ISIN,Ticker,Name,No. of shares,Price / share,Currency (Price / share),Exchange rate,Result,Currency (Result),Total,Currency (Total),Withholding tax,Currency (Withholding tax),Notes,ID,Currency conversion fee,Currency (Currency conversion fee)
    Deposit,2023-12-18 11:45:06.326,,,,,,,,,,31.00,"EUR",,,"Transaction ID: PB6XHFHSNDT97F32",30c841b3-068d-44f0-9809-e75638e211cd,,
    Market buy,2023-12-18 14:30:03.613,US17275R1023,CSCO,"Cisco Systems",0.0290530000,49.96,USD,1.09303,,"EUR",1.33,"EUR",,,,EOF7504196256,,
    Dividend (Dividend),2023-12-27 12:05:25,US56035L1044,MAIN,"Main Street Capital",0.1543340000,0.23,USD,Not available,,,0.03,"EUR",0.01,USD,,,,
    Interest on cash,2023-11-06 22:06:41.36,,,,,,,,,,0.01,"EUR",,,"Interest on cash",8ffba791-cfc3-4002-b65d-bd63cf483d9d,,

    """

    func json(_ s: Sandbox, _ args: [String], file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        let out = s.ok(args, file: file, line: line).out
        return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any], out, file: file, line: line)
    }

    func testTheHistoryIntoACashPortfolioInEuros() throws {
        let s = Sandbox(now: "2024-06-01T12:00:00Z")
        s.ok(["portfolio", "add", "t212", "--currency", "EUR", "--cash"])
        s.ok(["portfolio", "default", "t212"])
        let file = s.write("history.csv", Self.history)
        let r = s.ok(["import", file])
        XCTAssertTrue(r.err.contains("Recognised the Trading 212 history (as with --format trading212)"), r.err)
        XCTAssertTrue(r.out.contains("From the Trading 212 history: 1 buy, 1 dividend, 1 interest payment, 1 deposit."), r.out)
        // The dividend's USD tax is converted with the row's figures (0.01 EUR): no fee goes uncounted.
        XCTAssertFalse(r.err.contains("not counted"), r.err)
        let dividend = try XCTUnwrap(try s.loadPortfolio().transactions.first { $0.type == .dividend })
        XCTAssertEqual(dividend.amountValue.text, "0.04")
        XCTAssertEqual(dividend.feeValue?.text, "0.01")
        // 0.01 (interest) + 31.00 − 1.33 + 0.03 (dividend, net) = 29.71.
        let balances = try XCTUnwrap(try json(s, ["cash", "--json"])["balances"] as? [[String: Any]])
        XCTAssertEqual(balances.first { $0["currency"] as? String == "EUR" }?["amount"] as? String, "29.71")
        let holdings = try XCTUnwrap(try json(s, ["holdings", "--json"])["holdings"] as? [[String: Any]])
        let csco = try XCTUnwrap(holdings.first { $0["assetId"] as? String == "US17275R1023" })
        XCTAssertEqual(csco["totalCost"] as? String, "1.33")
        XCTAssertEqual(csco["totalAmount"] as? String, "0.029053")
        // A second import adds nothing.
        let count = try s.loadPortfolio().transactions.count
        XCTAssertTrue(s.ok(["import", file]).out.contains("Imported 0 transactions"))
        XCTAssertEqual(try s.loadPortfolio().transactions.count, count)
    }
}

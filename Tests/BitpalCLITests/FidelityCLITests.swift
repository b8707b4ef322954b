import Foundation
import PortfolioCore
import XCTest

/// `bitpal import History_for_Account.csv` from Fidelity, recognised by its header, into a USD
/// portfolio with cash. The money rows are the research's real CMA rows (3.5; the debit cut to 1000
/// so the cash covers it); the trade, dividend and tax rows are laid out as the file writes them.
final class FidelityCLITests: XCTestCase {
    static let history = """
    ,,,,,,,,,,,
    ,,,,,,,,,,,
    Run Date,Action,Symbol,Security Description,Security Type,Quantity,Price ($),Commission ($),Fees ($),Accrued Interest ($),Amount ($),Settlement Date
    07/05/2023, REDEMPTION PAYOUT US TREASURY BILL (912797GK7) (Cash),912797GK7,UNITED STATES TREAS BILLS,Cash,-1000,,,,,1000,
    06/30/2023, INTEREST EARNED FDIC INSURED DEPOSIT AT JPMORGAN BANK (QPIKQ) (Cash),QPIKQ,FDIC INSURED DEPOSIT AT JPMORGAN BANK,Cash,,,,,,1.23,
    06/01/2023, YOU SOLD TAIWAN SEMICONDUCTOR MANUFACTURING S... (TSM) (Cash),TSM,TAIWAN SEMICONDUCTOR MANUFACTURING SPON,Cash,-2,95.00,,0.01,,189.99,06/05/2023
    06/01/2023, YOU SOLD TAIWAN SEMICONDUCTOR MANUFACTURING S... (TSM) (Cash),TSM,TAIWAN SEMICONDUCTOR MANUFACTURING SPON,Cash,-2,95.00,,0.01,,189.99,06/05/2023
    03/09/2023, FOREIGN TAX PAID TAIWAN SEMICONDUCTOR MANUFACTURING S... (TSM) (Cash),TSM,TAIWAN SEMICONDUCTOR MANUFACTURING SPON,Cash,,,,,,-0.93,
    03/09/2023, DIVIDEND RECEIVED TAIWAN SEMICONDUCTOR MANUFACTURING S... (TSM) (Cash),TSM,TAIWAN SEMICONDUCTOR MANUFACTURING SPON,Cash,,,,,,4.41,
    01/27/2023, DIRECT DEBIT TREASURY DIRECTREAS DRCT (Cash),  , No Description,Cash,,,,,,-1000,
    01/24/2023, YOU BOUGHT TAIWAN SEMICONDUCTOR MANUFACTURING S... (TSM) (Cash),TSM,TAIWAN SEMICONDUCTOR MANUFACTURING SPON,Cash,10,85.50,,0.05,,-855.05,01/26/2023
    01/23/2023,TRANSFERRED FROM VS XYYYYYYY (Cash),  , No Description,Cash,,,,,,3085.92,
    01/19/2023, DIRECT DEPOSIT HOOGLE INC. PAYROLL (Cash),  , No Description,Cash,,,,,,1001.1,
    ,,,,,,,,,,,
    "informational purposes only, and is not intended to provide advice, nor should it be construed as an offer to sell, a solicitation of an offer to buy or a",,,,,,,,,,,
    Date downloaded 07/24/2023 10:28 am,,,,,,,,,,,

    """

    func json(_ s: Sandbox, _ args: [String], file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        let out = s.ok(args, file: file, line: line).out
        return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any], out, file: file, line: line)
    }

    func testTheHistoryIntoACashPortfolioInDollars() throws {
        let s = Sandbox(now: "2024-06-01T12:00:00Z")
        s.ok(["portfolio", "add", "fid", "--currency", "USD", "--cash"])
        s.ok(["portfolio", "default", "fid"])
        let file = s.write("History_for_Account_X8YYYYYYY.csv", Self.history)
        let r = s.ok(["import", file])
        XCTAssertTrue(r.err.contains("Recognised the Fidelity account history (as with --format fidelity)"), r.err)
        XCTAssertTrue(r.out.contains("From the Fidelity account history: 1 buy, 2 sells, 1 dividend, 1 interest payment, 2 deposits, 1 withdrawal; skipped: "), r.out)
        XCTAssertTrue(r.out.contains("1 redemption payout row"), r.out)
        XCTAssertTrue(r.out.contains("Imported 8 transactions"), r.out)

        let txs = try s.loadPortfolio().transactions
        let dividend = try XCTUnwrap(txs.first { $0.type == .dividend })
        XCTAssertEqual(dividend.amountValue.text, "4.41")
        XCTAssertEqual(dividend.feeValue?.text, "0.93")
        XCTAssertEqual(txs.filter { $0.type == .sell }.map { $0.feeValue?.text }, ["0.01", "0.01"])

        // 1001.1 + 3085.92 − 1000 − (855 + 0.05) + (4.41 − 0.93) + 2 × (190 − 0.01) + 1.23 = 2616.66.
        let balances = try XCTUnwrap(try json(s, ["cash", "--json"])["balances"] as? [[String: Any]])
        XCTAssertEqual(balances.first { $0["currency"] as? String == "USD" }?["amount"] as? String, "2616.66")
        // 6 of the 10 shares left, with 6/10 of 855.05.
        let holdings = try XCTUnwrap(try json(s, ["holdings", "--json"])["holdings"] as? [[String: Any]])
        let tsm = try XCTUnwrap(holdings.first { $0["assetId"] as? String == "TSM" })
        XCTAssertEqual(tsm["totalAmount"] as? String, "6")
        XCTAssertEqual(tsm["totalCost"] as? String, "513.03")
        XCTAssertEqual(tsm["type"] as? String, "stock")

        // A second import adds nothing.
        let count = try s.loadPortfolio().transactions.count
        XCTAssertTrue(s.ok(["import", file]).out.contains("Imported 0 transactions; skipped 8 already recorded"))
        XCTAssertEqual(try s.loadPortfolio().transactions.count, count)
    }
}

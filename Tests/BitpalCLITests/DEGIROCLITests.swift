import Foundation
import PortfolioCore
import XCTest

/// `bitpal import Account.csv` / `Transactions.csv` from DEGIRO, recognised by their header, into a
/// EUR portfolio with cash; rows are the real ones quoted in the import-formats research (3.2).
final class DEGIROCLITests: XCTestCase {
    static let transactions = """
    Date,Time,Product,ISIN,Reference exchange,Venue,Quantity,Price,,Local value,,Value EUR,Exchange rate,AutoFX Fee,Transaction and/or third party fees EUR,Total EUR,Order ID,
    07-01-2026,09:31,ISHARES MSCI EM ASIA UCITS ETF USD (ACC),IE00B5L8K969,XET,XETA,9,"213,4500",EUR,"-1921,05",EUR,"-1921,05",,"0,00","-3,00","-1924,05",,b93f205d-c38b-4a67-adb7-c9aa08626746

    """

    static let account = """
    Datum,Tijd,Valutadatum,Product,ISIN,Omschrijving,FX,Mutatie,,Saldo,,Order Id
    19-12-2022,18:33,19-12-2022,,,"Overboeking van uw geldrekening bij flatexDEGIRO Bank 26,45 EUR",,,,EUR,"1,35",
    19-12-2022,18:33,19-12-2022,FLATEX EURO BANKACCOUNT,NLFLATEXACNT,Degiro Cash Sweep Transfer,,EUR,"26,45",EUR,"27,80",
    17-12-2022,09:51,16-12-2022,,,iDEAL Deposit,,EUR,"27,80",EUR,"1,35",
    17-12-2022,09:51,16-12-2022,,,Reservation iDEAL / Sofort Deposit,,EUR,"-27,80",EUR,"-26,45",
    16-12-2022,09:05,15-12-2022,COCA-COLA COMPANY (THE,US1912161007,Dividend,,USD,"0,44",USD,"1,36",
    16-12-2022,09:05,15-12-2022,COCA-COLA COMPANY (THE,US1912161007,Dividendbelasting,,USD,"-0,07",USD,"0,92",
    15-12-2022,16:55,15-12-2022,VICI PROPERTIES INC. C,US9256521090,Valuta Creditering,"1,0624",USD,"33,90",USD,"0,00",5925d76b-eb36-46e3-
    ,,,,,,,,,,,b017-a61a6d03c3e7
    15-12-2022,16:55,15-12-2022,VICI PROPERTIES INC. C,US9256521090,Valuta Debitering,,EUR,"-31,91",EUR,"0,07",5925d76b-eb36-46e3-b017-a61a6d03c3e7
    15-12-2022,16:55,15-12-2022,VICI PROPERTIES INC. C,US9256521090,DEGIRO Transactiekosten en/of kosten van derden,,EUR,"-1,00",EUR,"31,98",5925d76b-eb36-46e3-b017-a61a6d03c3e7
    15-12-2022,16:55,15-12-2022,VICI PROPERTIES INC. C,US9256521090,"Koop 1 @ 33,9 USD",,USD,"-33,90",USD,"-33,90",5925d76b-eb36-46e3-b017-a61a6d03c3e7
    19-11-2025,14:48,19-11-2025,LVMH MOET HENNESSY VUITTON SE,FR0000121014,Transactiebelasting,,EUR,"-1,29",EUR,"3.383,45",7bf17093-06b7-4eec-a871-edd5be3cb4a4
    23-04-2026,12:31,22-04-2026,,,Valuta Creditering,,EUR,"11,36",EUR,"2.555,55",
    23-04-2026,12:31,22-04-2026,,,Valuta Debitering,"1,0951",USD,"-12,44",USD,"0,00",
    23-04-2026,12:31,22-04-2026,JOHNSON & JOHNSON,US4781601046,Dividendbelasting,,USD,"-2,19",USD,"12,44",
    23-04-2026,12:31,22-04-2026,JOHNSON & JOHNSON,US4781601046,Dividend,,USD,"14,63",USD,"14,63",

    """

    func json(_ s: Sandbox, _ args: [String], file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        let out = s.ok(args, file: file, line: line).out
        return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any], out, file: file, line: line)
    }

    func testBothFilesIntoACashPortfolioInEuros() throws {
        let s = Sandbox(now: "2026-06-01T12:00:00Z")
        s.ok(["portfolio", "add", "degiro", "--currency", "EUR", "--cash", "--opening-deposit", "3000", "--date", "2022-01-01"])
        s.ok(["portfolio", "default", "degiro"])
        for day in ["2022-12-15", "2022-12-16", "2026-04-23"] { s.ok(["fx", "set", "USD", "EUR", "0.94", "--date", day]) }
        let trades = s.write("Transactions.csv", Self.transactions), ledger = s.write("Account.csv", Self.account)

        let first = s.ok(["import", trades])
        XCTAssertTrue(first.err.contains("Recognised the DEGIRO export (as with --format degiro)"), first.err)
        XCTAssertTrue(first.out.contains("From the DEGIRO export: 1 buy."), first.out)
        let second = s.ok(["import", ledger])
        XCTAssertTrue(second.out.contains("From the DEGIRO export: 2 dividends, 1 deposit, 1 expense, 2 cash exchanges; skipped: "), second.out)
        XCTAssertTrue(second.out.contains("1 trade row (import Transactions.csv for trades)"), second.out)
        XCTAssertTrue(second.out.contains("1 trade fee row (import Transactions.csv for trades)"), second.out)
        XCTAssertTrue(second.out.contains("Imported 8 transactions"), second.out)

        // EUR: 3000 − 31.91 (to USD) + 27.80 (iDEAL) − 1924.05 (the ETF and its fee) − 1.29 (tax) + 11.36 (from USD) = 1081.91.
        // USD: 33.90 + (0.44 − 0.07) + (14.63 − 2.19) − 12.44 = 34.27.
        let balances = try XCTUnwrap(try json(s, ["cash", "--json"])["balances"] as? [[String: Any]])
        XCTAssertEqual(balances.first { $0["currency"] as? String == "EUR" }?["amount"] as? String, "1081.91")
        XCTAssertEqual(balances.first { $0["currency"] as? String == "USD" }?["amount"] as? String, "34.27")

        // Dividends at 0.94: gross (0.44 + 14.63) × 0.94 = 14.17, tax (0.07 + 2.19) × 0.94 = 2.12, net 12.04.
        let totals = try XCTUnwrap(try json(s, ["income", "--json"])["totals"] as? [String: Any])
        XCTAssertEqual(totals["gross"] as? String, "14.17")
        XCTAssertEqual(totals["taxWithheld"] as? String, "2.12")
        XCTAssertEqual(totals["net"] as? String, "12.04")

        // The transaction costs are in the basis: 1921.05 + 3.00.
        let holdings = try XCTUnwrap(try json(s, ["holdings", "--json"])["holdings"] as? [[String: Any]])
        let etf = try XCTUnwrap(holdings.first { $0["assetId"] as? String == "IE00B5L8K969" })
        XCTAssertEqual(etf["totalCost"] as? String, "1924.05")
        XCTAssertEqual(etf["totalAmount"] as? String, "9")
        XCTAssertEqual(etf["type"] as? String, "etf")

        // Importing either file again adds nothing.
        let count = try s.loadPortfolio().transactions.count
        XCTAssertTrue(s.ok(["import", ledger]).out.contains("Imported 0 transactions"))
        XCTAssertTrue(s.ok(["import", trades, "--format", "degiro"]).out.contains("Imported 0 transactions"))
        XCTAssertEqual(try s.loadPortfolio().transactions.count, count)
    }

    func testWithoutCashTheForeignCostsAreCountedNotLost() throws {
        let s = Sandbox(now: "2026-06-01T12:00:00Z")
        let file = s.write("Transactions.csv", """
        Date,Time,Product,ISIN,Reference exchange,Venue,Quantity,Price,,Local value,,Value EUR,Exchange rate,AutoFX Fee,Transaction and/or third party fees EUR,Total EUR,Order ID,
        15-09-2025,19:33,ADR ON JD.COM INC CLASS A,US47215P1066,NDQ,ARCX,18,"33,7500",USD,"-607,50",USD,"-516,32","1,1766","-1,29","-2,00","-518,32",,fda177bc-4080-4525-862e-f10aadfb4a4f

        """)
        let r = s.ok(["import", file])
        XCTAssertTrue(r.out.contains("From the DEGIRO export: 1 buy; skipped: 1 expense row (the portfolio does not track cash)."), r.out)
        let holdings = try XCTUnwrap(try json(s, ["holdings", "--json"])["holdings"] as? [[String: Any]])
        let jd = try XCTUnwrap(holdings.first { $0["assetId"] as? String == "US47215P1066" })
        XCTAssertEqual(jd["totalCost"] as? String, "607.50")
        XCTAssertEqual(jd["type"] as? String, "stock")
    }
}

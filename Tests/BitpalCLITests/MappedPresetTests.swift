import Foundation
import PortfolioCore
import XCTest

/// Presets written as mappings (`--format schwab`, `--format revolut`), from the research's real rows
/// (import-formats.md 3.4 and 3.6), and `--show-map`, whose output imports as the preset does.
final class MappedPresetTests: XCTestCase {
    /// beancount_reds_importers' Schwab file: a title line above the header, a total line below; with
    /// Export-To-Ghostfolio's real IBN fee and tax rows, and (synthetic) the IBN dividend they belong to
    /// and a tax refund of it four days later.
    static let schwab = """
    "Transactions  for account General Investing ...XXX as of 05/03/2023 02:21:05 PM ET"
    "Date","Action","Symbol","Description","Quantity","Price","Fees & Comm","Amount"
    "04/27/2023","Buy","BND","VANGUARD TOTAL BOND MARKET ETF","45","$73.7789","","-$3320.05"
    "04/18/2023","Sell","BND","VANGUARD TOTAL BOND MARKET ETF","10.065","$73.4049","$0.01","$738.81"
    "04/17/2023 as of 04/15/2023","Bank Interest","","BANK INT 031623-041523 SCHWAB BANK","","","","$0.03"
    "04/10/2023","Reinvest Shares","BND","VANGUARD TOTAL BOND MARKET ETF","0.0249","$73.8993","","-$1.84"
    "04/06/2023","Reinvest Dividend","BND","VANGUARD TOTAL BOND MARKET ETF","","","","$1.84"
    "02/01/2023","Qualified Dividend","GIS","GENERAL MILLS INC","","","","$0.54"
    "01/09/2023","MoneyLink Deposit","","John Smith","","","","$25.00"
    "07/15/2024 as of 07/12/2024","Stock Split","AVGO","BROADCOM INC","9","$170.067","",""
    "09/06/2024","ADR Mgmt Fee","IBN","ICICI BANK LTD FSPONSORED ADR 1 ADR REPS 2 ORD SHS","","","","-$0.50"
    "09/06/2024","Foreign Tax Paid","IBN","ICICI BANK LTD FSPONSORED ADR 1 ADR REPS 2 ORD SHS","","","","-$1.30"
    "09/06/2024","Cash Dividend","IBN","ICICI BANK LTD FSPONSORED ADR 1 ADR REPS 2 ORD SHS","","","","$6.50"
    "09/10/2024","Foreign Tax Paid","IBN","ICICI BANK LTD FSPONSORED ADR 1 ADR REPS 2 ORD SHS","","","","$0.30"
    "Transactions Total","","","","","","","-$1,574.04",

    """

    func testASchwabFileImportsAsItsMappingSays() throws {
        let s = Sandbox(now: "2024-12-01T12:00:00Z")
        // The file starts after the first BND was bought: that buy is recorded by hand.
        s.ok(["asset", "add", "BND", "--name", "Vanguard Total Bond Market", "--type", "etf"])
        s.ok(["add", "buy", "BND", "20", "70", "--date", "2023-01-03"])
        let file = s.write("Schwab.csv", Self.schwab)
        let r = s.ok(["import", file])
        XCTAssertTrue(r.err.contains("Recognised the Charles Schwab transactions (as with --format schwab)"), r.err)
        XCTAssertTrue(r.out.contains("From the Charles Schwab transactions: 2 buys, 1 sell, 3 dividends; skipped: 1 Stock Split row, "
            + "1 deposit row (the portfolio does not track cash), 1 interest row (the portfolio does not track cash), "
            + "1 tax row (positive: a refund), 1 untyped row."), r.out)
        XCTAssertTrue(r.out.contains("Added assets GIS, IBN."), r.out)
        let book = try s.loadPortfolio()
        // BND was registered by hand and stays as it is; GIS is registered with its name, priced by Yahoo.
        XCTAssertEqual(book.asset(id: "BND")?.type, .etf)
        XCTAssertEqual(book.asset(id: "GIS")?.name, "GENERAL MILLS INC")
        XCTAssertEqual(book.asset(id: "GIS")?.quoteSymbol, "GIS")
        let imported = book.transactions.filter { $0.notes != nil }.sorted { $0.date < $1.date }
        XCTAssertEqual(imported.map(\.type), [.dividend, .dividend, .buy, .sell, .buy, .dividend])
        XCTAssertEqual(imported.map(\.amountValue.text), ["0.54", "1.84", "0.0249", "10.065", "45", "6.5"])
        XCTAssertEqual(imported.map { $0.priceValue?.text }, [nil, nil, "73.8993", "73.4049", "73.7789", nil])
        // A trade is the cash that moved: 45 × 73.7789 is 3320.0505, the account paid 3320.05; the sale
        // brought 738.81 after its 0.01 fee. The ADR fee and the foreign tax are the IBN dividend's tax.
        XCTAssertEqual(imported.map { $0.totalValue?.text }, [nil, nil, "1.84", "738.82", "3320.05", nil])
        XCTAssertEqual(imported.map { $0.feeValue?.text }, ["0", "0", "0", "0.01", "0", "1.8"])
        XCTAssertEqual(ISODate.format(imported[0].date).prefix(10), "2023-02-01")
        // 20 + 0.0249 − 10.065 + 45 BND.
        let holdings = s.ok(["holdings", "--json", "--offline"]).out
        XCTAssertTrue(holdings.contains(#""totalAmount" : "54.9599""#) || holdings.contains(#""totalAmount": "54.9599""#), holdings)
        XCTAssertTrue(s.ok(["import", file]).out.contains("Imported 0 transactions; skipped 6 already recorded."))
    }

    func testARevolutTradingStatementImportsAsItsMappingSays() throws {
        let s = Sandbox(now: "2026-01-01T12:00:00Z")
        s.ok(["portfolio", "edit", "main", "--cash"])
        s.ok(["cash", "deposit", "1000", "--date", "2019-01-01"])
        s.ok(["cash", "deposit", "1000", "--currency", "EUR", "--date", "2019-01-01", "--fx-rate", "1.1"])
        s.ok(["fx", "set", "EUR", "USD", "1.1", "--date", "2019-01-01"])
        // Ghostfolio-export's Revolut rows, MSFT bought in EUR beside its USD dividend as there (the comma
        // decimal the locale leaked into the buy kept on a TSLA buy too), and a newer export's ORCL row
        // whose money is written with its currency code.
        let file = s.write("revolut.csv", """
        Date,Ticker,Type,Quantity,Price per share,Total Amount,Currency,FX Rate
        2019-12-02T08:23:08.459586Z,,CASH WITHDRAWAL,,,-$30.93,USD,1.1019
        2019-11-15T23:15:55.878985Z,,CASH TOP-UP,,,$5.22,USD,1.1055
        2023-09-22T13:30:10.514Z,O,BUY - MARKET,1.63453043,$52.07,$85.11,USD,1.0665
        2019-12-13T08:40:00.835101Z,MSFT,DIVIDEND,,,$0.08,USD,1.1179
        2021-09-01T07:40:54.539038Z,,CUSTODY FEE,,,-$0.01,USD,1.18
        2025-06-05T07:26:04.809Z,TSLA,BUY - MARKET,0.56217674,€88.94,€50,EUR,1.0000
        2025-09-08T07:29:03.333Z,TSLA,BUY - MARKET,"0,76672417",€26.09,€20,EUR,1
        2025-09-08T07:29:03.333Z,MSFT,BUY - MARKET,"0,76672417",€26.09,€20,EUR,1
        2025-09-22T17:08:53Z,ORCL,BUY - MARKET,1.53673094,USD 325.37,USD 500,USD,1.1815
        2024-01-05T10:00:00.000Z,AAPL,STOCK SPLIT,4,,,USD,0.0947
        2024-02-05T10:00:00.000Z,MSFT,DIVIDEND,,,$0.00,USD,1.1

        """)
        let r = s.ok(["import", file])
        XCTAssertTrue(r.out.contains("From the Revolut statement: 4 buys, 1 dividend, 1 deposit, 1 withdrawal, 1 expense; skipped: 1 STOCK SPLIT row, "
            + "1 buy row (in EUR: MSFT is kept in USD), 1 dividend row (zero)."), r.out)
        XCTAssertTrue(r.out.contains("Added assets MSFT, O, ORCL, TSLA."), r.out)
        let book = try s.loadPortfolio()
        let buys = book.transactions.filter { $0.type == .buy }.sorted { $0.date < $1.date }
        // A buy is its total; the leaked comma is a decimal comma (0.76672417, not 76672417).
        XCTAssertEqual(buys.map(\.amountValue.text), ["1.63453043", "0.56217674", "0.76672417", "1.53673094"])
        XCTAssertEqual(buys.map { $0.totalValue?.text }, ["85.11", "50", "20", "500"])
        XCTAssertEqual(buys.map(\.currency), ["USD", "EUR", "EUR", "USD"])
        XCTAssertEqual(book.asset(id: "TSLA")?.currency, "EUR")
        // USD cash: 1000 + 5.22 − 30.93 + 0.08 − 0.01 − 85.11 − 500 = 389.25; EUR: 1000 − 50 − 20 = 930.
        let cash = s.ok(["cash", "--json"]).out
        XCTAssertTrue(cash.contains(#""amount": "389.25""#), cash)
        XCTAssertTrue(cash.contains(#""amount": "930.00""#), cash)
    }

    func testShowMapPrintsAMappingThatImportsAsThePreset() throws {
        let s = Sandbox(now: "2024-12-01T12:00:00Z")
        let shown = s.ok(["import", "--format", "schwab", "--show-map"]).out
        XCTAssertTrue(shown.contains(#""money": {"column": "Amount", "signed": true}"#), shown)
        let mapping = s.write("schwab.json", shown)
        s.ok(["asset", "add", "BND", "--name", "Vanguard Total Bond Market", "--type", "etf"])
        s.ok(["add", "buy", "BND", "20", "70", "--date", "2023-01-03"])
        let file = s.write("Schwab.csv", Self.schwab)
        let r = s.ok(["import", file, "--map", mapping])
        XCTAssertTrue(r.out.contains("From the mapped file: 2 buys, 1 sell, 3 dividends;"), r.out)
        XCTAssertTrue(r.out.contains("Imported 6 transactions"), r.out)
        // Presets read by code say so, and name the ones that are mappings.
        let code = s.run(["import", "--format", "ibkr", "--show-map"])
        XCTAssertEqual(code.code, .failure)
        XCTAssertTrue(code.err.contains("the ibkr preset is read by code"), code.err)
        XCTAssertTrue(code.err.contains("presets written as mappings: schwab, revolut"), code.err)
    }
}

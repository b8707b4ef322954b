import Foundation
import PortfolioCore
import XCTest

/// `import --format fidelity`: Fidelity's account history CSV, from the real rows quoted in the
/// import-formats research (section 3.5).
final class FidelityTests: XCTestCase {
    /// beancount_reds_importers' 2025 all-accounts test file (fidelity_csv_all_accounts_transactions_20251204.csv).
    static let allAccounts = """
    Run Date,Account,Account Number,Action,Symbol,Description,Type,Exchange Quantity,Exchange Currency,Currency,Price,Quantity,Exchange Rate,Commission,Fees,Accrued Interest,Amount,Settlement Date
    12/03/2025,"IRA Account","111111111","DIVIDEND RECEIVED VANGUARD BD INDEX FDS TOTAL BND MRKT (BND) (Cash)",BND,"VANGUARD BD INDEX FDS TOTAL BND MRKT",Cash,0,,USD,,0.000,0,,,,713.08,
    12/03/2025,"IRA Account","111111111","REINVESTMENT VANGUARD BD INDEX FDS TOTAL BND MRKT (BND) (Cash)",BND,"VANGUARD BD INDEX FDS TOTAL BND MRKT",Cash,0,,USD,74.29,9.598,0,,,,-713.08,
    11/17/2025,"Brokerage","333333333","YOU BOUGHT WASTE MANAGEMENT INC (WM) (Margin)",WM,"WASTE MANAGEMENT INC",Margin,0,,USD,208.64,18,0,,,,-3755.44,11/18/2025
    11/24/2025,"Brokerage","333333333","YOU SOLD EXEC ON MULT EXCHG DETAILS ON REQUEST AVERAGE PRICE TRADE VALVOLINE INC COM (VVV) (Margin)",VVV,"VALVOLINE INC COM",Margin,0,,USD,30.44,-341,0,,,,10378.37,11/25/2025
    10/09/2025,"Brokerage","333333333","FOREIGN TAX PAID TAIWAN SEMICONDUCTOR MANUFACTURING S... (TSM) (Cash)",TSM,"TAIWAN SEMICONDUCTOR MANUFACTURING SPON",Cash,0,,USD,,0.000,0,,,,-32.93,
    12/03/2025,"CMA","444444444","TRANSFERRED FROM 555555555 (Cash)", ,"No Description",Cash,0,,USD,,0.000,0,,,,37592.63,

    """

    /// The cash-management account's file (History_for_Account_X8YYYYYYY.csv): blank lines above the
    /// header, a legal footer below.
    static let cma = """
    ,,,,,,,,,,,
    ,,,,,,,,,,,
    ,,,,,,,,,,,
    ,,,,,,,,,,,
    ,,,,,,,,,,,
    Run Date,Action,Symbol,Security Description,Security Type,Quantity,Price ($),Commission ($),Fees ($),Accrued Interest ($),Amount ($),Settlement Date
    01/27/2023, DIRECT DEBIT TREASURY DIRECTREAS DRCT (Cash),  , No Description,Cash,,,,,,-10000,
    01/23/2023,TRANSFERRED FROM VS XYYYYYYY (Cash),  , No Description,Cash,,,,,,3085.92,
    01/19/2023, DIRECT DEPOSIT HOOGLE INC. PAYROLL (Cash),  , No Description,Cash,,,,,,1001.1,
    ,,,,,,,,,,,
    "The data and information in this spreadsheet is provided to you solely for your use and is not for distribution. The spreadsheet is provided for",,,,,,,,,,,
    "informational purposes only, and is not intended to provide advice, nor should it be construed as an offer to sell, a solicitation of an offer to buy or a",,,,,,,,,,,
    Date downloaded 01/24/2023 10:28 am,,,,,,,,,,,

    """

    func read(_ text: String, tracksCash: Bool = true) throws -> PresetRows {
        try StatementImport.rows(Array(text.utf8), format: .fidelity, options: StatementOptions(tracksCash: tracksCash))
    }

    func describe(_ rows: [ImportRow]) -> [String] {
        rows.map { r in
            let f = r.fields
            return [f[.type], f[.assetId], f[.amount], f[.currency]].map { $0 ?? "-" }.joined(separator: " ")
                + (f[.price].map { " at \($0)" } ?? "") + " fee \(f[.fee] ?? "0")" + (f[.total].map { " total \($0)" } ?? "") + " \(f[.date] ?? "?")"
        }
    }

    func testABondsAccruedInterestIsNotItsPrice() throws {
        // Synthetic rows (the research has no bond trade): a Treasury (a CUSIP) bought at 99.50 with 12.50 of accrued interest paid to the seller, and
        // sold at 100.25 with 20 received from the buyer: the accrued interest is in Amount, not in the price.
        let text = """
        Run Date,Action,Symbol,Security Description,Security Type,Quantity,Price ($),Commission ($),Fees ($),Accrued Interest ($),Amount ($),Settlement Date
        03/01/2024,YOU BOUGHT UNITED STATES TREAS BDS (Cash),912810TV0,UNITED STATES TREAS BDS,Cash,10000,99.5,,,-12.5,-9962.5,03/04/2024
        06/03/2024,YOU SOLD UNITED STATES TREAS BDS (Cash),912810TV0,UNITED STATES TREAS BDS,Cash,-10000,100.25,,0.05,20,10044.95,06/04/2024

        """
        XCTAssertEqual(describe(try read(text).rows), [
            "buy 912810TV0 10000 USD at 0.995 fee 0 total 9950 2024-03-01",
            "expense - 12.5 USD fee 0 2024-03-01",
            "sell 912810TV0 10000 USD at 1.0025 fee 0.05 total 10025 2024-06-03",
            "interest - 20 USD fee 0 2024-06-03",
        ])
    }

    func testTheAllAccountsExport() throws {
        XCTAssertEqual(StatementImport.recognise(Array(Self.allAccounts.utf8)), .fidelity)
        let result = try read(Self.allAccounts)
        XCTAssertEqual(describe(result.rows), [
            "buy BND 9.598 USD at 74.294644717649510315 fee 0 total 713.08 2025-12-03",
            "buy WM 18 USD at 208.635555555555555556 fee 0 total 3755.44 2025-11-17",
            "sell VVV 341 USD at 30.435102639296187683 fee 0 total 10378.37 2025-11-24",
            "deposit - 37592.63 USD fee 0 2025-12-03",
            "dividend BND 713.08 USD fee 0 2025-12-03",
        ])
        // No TSM dividend in the file: the tax is counted, as every preset counts a dividend's tax
        // without its dividend (DividendGroups).
        XCTAssertEqual(Dictionary(result.skipped, uniquingKeysWith: +), ["dividend tax (its dividend is not in the file)": 1])
        let assets = Dictionary(result.assets.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        XCTAssertEqual(assets.keys.sorted(), ["BND", "VVV", "WM"])
        XCTAssertEqual(assets["WM"]?.type, .stock)
        XCTAssertEqual(assets["WM"]?.currency, "USD")
        XCTAssertEqual(assets["WM"]?.name, "WASTE MANAGEMENT INC")
        XCTAssertEqual(assets["WM"]?.quote, AssetQuoteSource(service: .yahoo, symbol: "WM"))
        // Ids from the row and its place among identical rows: the same on every read, all different.
        XCTAssertEqual(try read(Self.allAccounts).rows.map { $0.fields[.id] }, result.rows.map { $0.fields[.id] })
        XCTAssertEqual(Set(result.rows.compactMap { $0.fields[.id] }).count, 5)
    }

    func testForeignTaxIsJoinedIntoItsDividendAndFeesAddUp() throws {
        // The TSM tax row above with a dividend on its day (laid out as the file's rows; the amount is made up),
        // and a buy with a commission and fees; two identical partial fills stay two.
        let text = """
        Run Date,Action,Symbol,Security Description,Security Type,Quantity,Price ($),Commission ($),Fees ($),Accrued Interest ($),Amount ($),Settlement Date
        10/09/2025, DIVIDEND RECEIVED TAIWAN SEMICONDUCTOR MANUFACTURING S... (TSM) (Cash),TSM,TAIWAN SEMICONDUCTOR MANUFACTURING SPON,Cash,,,,,,156.80,
        10/09/2025, FOREIGN TAX PAID TAIWAN SEMICONDUCTOR MANUFACTURING S... (TSM) (Cash),TSM,TAIWAN SEMICONDUCTOR MANUFACTURING SPON,Cash,,,,,,-32.93,
        10/01/2025, YOU BOUGHT TAIWAN SEMICONDUCTOR MANUFACTURING S... (TSM) (Cash),TSM,TAIWAN SEMICONDUCTOR MANUFACTURING SPON,Cash,5,290.10,0.65,0.02,,-1451.17,10/02/2025
        10/01/2025, YOU BOUGHT TAIWAN SEMICONDUCTOR MANUFACTURING S... (TSM) (Cash),TSM,TAIWAN SEMICONDUCTOR MANUFACTURING SPON,Cash,5,290.10,0.65,0.02,,-1451.17,10/02/2025
        10/01/2025, YOU BOUGHT US TREASURY BILL 0% 01/15/2026 (912797GL5) (Cash),912797GL5,UNITED STATES TREAS BILLS ZERO CPN 0.00000% 01/15/2026,Cash,1000,99.123,,,,-991.23,10/02/2025
        09/30/2025, INTEREST EARNED FDIC INSURED DEPOSIT AT JPMORGAN BANK NOT COVERED BY SIPC (QPIKQ) (Cash),QPIKQ,FDIC INSURED DEPOSIT AT JPMORGAN BANK NOT COVERED BY SIPC,Cash,,,,,,1.23,
        09/29/2025, REDEMPTION PAYOUT US TREASURY BILL (912797GK7) (Cash),912797GK7,UNITED STATES TREAS BILLS,Cash,-1000,,,,,1000,

        """
        XCTAssertEqual(StatementImport.recognise(Array(text.utf8)), .fidelity)
        let result = try read(text)
        XCTAssertEqual(describe(result.rows), [
            "buy TSM 5 USD at 290.1 fee 0.67 total 1450.5 2025-10-01",
            "buy TSM 5 USD at 290.1 fee 0.67 total 1450.5 2025-10-01",
            "buy 912797GL5 1000 USD at 0.99123 fee 0 total 991.23 2025-10-01",
            "interest - 1.23 USD fee 0 2025-09-30",
            "dividend TSM 156.8 USD fee 32.93 2025-10-09",
        ])
        XCTAssertEqual(Set(result.rows.compactMap { $0.fields[.id] }).count, 5)
        XCTAssertEqual(Dictionary(result.skipped, uniquingKeysWith: +), ["redemption payout": 1])
        let assets = Dictionary(result.assets.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        // A CUSIP is kept without a quote source.
        XCTAssertEqual(assets["912797GL5"]?.type, .bond)
        XCTAssertNil(assets["912797GL5"]?.quote)
        XCTAssertEqual(assets["TSM"]?.quote, AssetQuoteSource(service: .yahoo, symbol: "TSM"))
    }

    func testPreambleAndFooterAreLeftOut() throws {
        XCTAssertEqual(StatementImport.recognise(Array(Self.cma.utf8)), .fidelity)
        let result = try read(Self.cma)
        XCTAssertEqual(describe(result.rows), [
            "withdrawal - 10000 USD fee 0 2023-01-27",
            "deposit - 3085.92 USD fee 0 2023-01-23",
            "deposit - 1001.1 USD fee 0 2023-01-19",
        ])
        XCTAssertTrue(result.skipped.isEmpty, "\(result.skipped)")
        // Without cash tracking the money rows have nowhere to go: counted.
        let noCash = try read(Self.cma, tracksCash: false)
        XCTAssertTrue(noCash.rows.isEmpty)
        XCTAssertEqual(Dictionary(noCash.skipped, uniquingKeysWith: +),
                       ["deposit (the portfolio does not track cash)": 2, "withdrawal (the portfolio does not track cash)": 1])
    }

    func testAForeignTaxRefundIsNeverADeposit() throws {
        // A refund on a later day nets into the symbol's dividend before it; one with no dividend in
        // the file is counted (it was a deposit, money "paid in" that inflated the contributions).
        let header = "Run Date,Action,Symbol,Security Description,Security Type,Quantity,Price ($),Commission ($),Fees ($),Accrued Interest ($),Amount ($),Settlement Date\n"
        let later = header + """
        10/09/2025, DIVIDEND RECEIVED TAIWAN SEMICONDUCTOR MANUFACTURING S... (TSM) (Cash),TSM,TAIWAN SEMICONDUCTOR,Cash,,,,,,156.80,
        10/09/2025, FOREIGN TAX PAID TAIWAN SEMICONDUCTOR MANUFACTURING S... (TSM) (Cash),TSM,TAIWAN SEMICONDUCTOR,Cash,,,,,,-32.93,
        11/20/2025, FOREIGN TAX PAID ADJ TAIWAN SEMICONDUCTOR MANUFACTURING S... (TSM) (Cash),TSM,TAIWAN SEMICONDUCTOR,Cash,,,,,,10.00,
        11/20/2025, FOREIGN TAX PAID ADJ VODAFONE GROUP (VOD) (Cash),VOD,VODAFONE GROUP,Cash,,,,,,4.00,

        """
        let result = try read(later)
        XCTAssertEqual(describe(result.rows), ["dividend TSM 156.8 USD fee 22.93 2025-10-09"])
        XCTAssertEqual(Dictionary(result.skipped, uniquingKeysWith: +), ["dividend tax refund (its dividend is not in the file)": 1])
    }

    func testOnlyTheFooterIsLeftOutAndAnUnreadableRowIsCounted() throws {
        // A row with no date and no amount in the middle used to switch the footer on and drop
        // every row below it silently.
        let text = """
        Run Date,Action,Symbol,Security Description,Security Type,Quantity,Price ($),Commission ($),Fees ($),Accrued Interest ($),Amount ($),Settlement Date
        01/27/2023, DIRECT DEBIT TREASURY DIRECTREAS DRCT (Cash),  , No Description,Cash,,,,,,-10000,
        , JOURNALED SPP PURCHASE CREDIT (Cash),  , No Description,Cash,,,,,,,
        01/23/2023,TRANSFERRED FROM VS XYYYYYYY (Cash),  , No Description,Cash,,,,,,3085.92,
        01/19/2023, DIRECT DEPOSIT HOOGLE INC. PAYROLL (Cash),  , No Description,Cash,,,,,,1001.1,
        "The data and information in this spreadsheet is provided to you solely for your use and is not for distribution.",,,,,,,,,,,
        Date downloaded 01/24/2023 10:28 am,,,,,,,,,,,

        """
        let result = try read(text)
        XCTAssertEqual(describe(result.rows), [
            "withdrawal - 10000 USD fee 0 2023-01-27",
            "deposit - 3085.92 USD fee 0 2023-01-23",
            "deposit - 1001.1 USD fee 0 2023-01-19",
        ])
        XCTAssertEqual(Dictionary(result.skipped, uniquingKeysWith: +), ["row without a Run Date or an amount": 1])
    }

    func testABadDateAmongTheRowsIsAProblem() {
        let text = """
        Run Date,Action,Symbol,Security Description,Security Type,Quantity,Price ($),Commission ($),Fees ($),Accrued Interest ($),Amount ($),Settlement Date
        2023-01-19, DIRECT DEPOSIT HOOGLE INC. PAYROLL (Cash),  , No Description,Cash,,,,,,1001.1,

        """
        XCTAssertThrowsError(try read(text)) { error in
            XCTAssertTrue("\(error)".contains("is not a Fidelity date"), "\(error)")
        }
    }
}

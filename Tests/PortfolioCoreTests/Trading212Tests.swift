import Foundation
import PortfolioCore
import XCTest

/// `import --format trading212`: Trading 212's history CSV, from the real rows quoted in the
/// import-formats research (section 3.3).
final class Trading212Tests: XCTestCase {
    /// Export-To-Ghostfolio's samples/trading212-export.csv (2023–24 columns).
    static let history = """
    Action,Time,ISIN,Ticker,Name,No. of shares,Price / share,Currency (Price / share),Exchange rate,Result,Currency (Result),Total,Currency (Total),Withholding tax,Currency (Withholding tax),Notes,ID,Currency conversion fee,Currency (Currency conversion fee)
    Deposit,2023-12-18 11:45:06.326,,,,,,,,,,31.00,"EUR",,,"Transaction ID: PB6XHFHSNDT97F32",30c841b3-068d-44f0-9809-e75638e211cd,,
    Market buy,2023-12-18 14:30:03.613,US17275R1023,CSCO,"Cisco Systems",0.0290530000,49.96,USD,1.09303,,"EUR",1.33,"EUR",,,,EOF7504196256,,
    Market sell,2023-12-26 14:30:05.104,US04634X2027,ASTR,"Astra Space",0.6125400000,1.26,USD,1.10231,-3.08,"EUR",0.70,"EUR",,,,EOF7802023054,,
    Dividend (Dividend),2023-12-27 12:05:25,US56035L1044,MAIN,"Main Street Capital",0.1543340000,0.23,USD,Not available,,,0.03,"EUR",0.01,USD,,,,
    Dividend (Dividend),2024-01-12 14:14:14,IE00B1XNHC34,INRG,"iShares Global Clean Energy UCITS ETF",0.0280492000,630.11,GBX,Not available,,,17.67,"EUR",15.02,USD,,,,
    Interest on cash,2023-11-06 22:06:41.36,,,,,,,,,,0.01,"EUR",,,"Interest on cash",8ffba791-cfc3-4002-b65d-bd63cf483d9d,,
    Stock distribution,2025-01-23 14:46:06.327,US9078181081,PALAF,"Union Pacific",,EOF27002856700,11.0563304000,0.00,USD,,,"EUR",0.00,"EUR",,,,

    """

    func read(_ text: String, tracksCash: Bool = true) throws -> PresetRows {
        try StatementImport.rows(Array(text.utf8), format: .trading212, options: StatementOptions(tracksCash: tracksCash))
    }

    func describe(_ rows: [ImportRow]) -> [String] {
        rows.map { r in
            let f = r.fields
            return [f[.type], f[.assetId], f[.amount], f[.currency]].map { $0 ?? "-" }.joined(separator: " ")
                + " fee \(f[.fee] ?? "0")" + (f[.total].map { " total \($0)" } ?? "") + " \(f[.date] ?? "?")"
                + (f[.linkedId] == nil ? "" : " linked")
        }
    }

    func testADividendsPricePerShareIsAfterTheTax() throws {
        // LFVN on a GBP account (the figures are a real row's; the time, ISIN and name are filled in):
        // 7.138051 × 0.034 USD × 0.78287970 = 0.19 GBP, the Total; the price per share is after the tax.
        // The tax is 0.19 × 0.04 / (7.138051 × 0.034) = 0.0313 GBP, 0.03 to the cent (not 0.04, as when
        // the price was taken for the gross).
        let text = """
        Action,Time,ISIN,Ticker,Name,No. of shares,Price / share,Currency (Price / share),Exchange rate,Result,Currency (Result),Total,Currency (Total),Withholding tax,Currency (Withholding tax),Notes,ID,Currency conversion fee,Currency (Currency conversion fee)
        Dividend (Ordinary),2024-03-15 10:00:00,US53222K2050,LFVN,"LifeVantage",7.1380510000,0.034000,USD,0.78287970,,,0.19,"GBP",0.04,USD,,,,

        """
        XCTAssertEqual(describe(try read(text).rows), ["dividend US53222K2050 0.22 GBP fee 0.03 2024-03-15T10:00:00Z"])
    }

    func testTheHistoryInTheAccountsCurrency() throws {
        XCTAssertEqual(StatementImport.recognise(Array(Self.history.utf8)), .trading212)
        let result = try read(Self.history)
        XCTAssertEqual(describe(result.rows), [
            "deposit - 31 EUR fee 0 2023-12-18T11:45:06Z",
            "buy US17275R1023 0.029053 EUR fee 0 total 1.33 2023-12-18T14:30:03Z",
            "sell US04634X2027 0.61254 EUR fee 0 total 0.7 2023-12-26T14:30:05Z",
            // Withholding tax in USD on a EUR payment, converted with the row's own figures:
            // 0.03 × 0.01 / (0.154334 × 0.23) = 0.00845 EUR, 0.01 to the cent; 0.04 gross.
            "dividend US56035L1044 0.04 EUR fee 0.01 2023-12-27T12:05:25Z",
            // The price is in GBX, the tax in USD: no rate in the row, counted.
            "dividend IE00B1XNHC34 17.67 EUR fee 0 2024-01-12T14:14:14Z",
            "interest - 0.01 EUR fee 0 2023-11-06T22:06:41Z",
        ])
        XCTAssertEqual(Dictionary(result.feesNotCounted, uniquingKeysWith: +), ["USD": 1])
        XCTAssertEqual(Dictionary(result.skipped, uniquingKeysWith: +), ["stock distribution": 1])
        let assets = Dictionary(result.assets.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        XCTAssertEqual(assets["IE00B1XNHC34"]?.type, .etf)
        XCTAssertEqual(assets["IE00B1XNHC34"]?.currency, "EUR")
        XCTAssertEqual(assets["US17275R1023"]?.type, .stock)
        XCTAssertEqual(assets["US17275R1023"]?.currency, "EUR")
        // Ids from the file's own, or the row and its place among identical rows: the same on every read.
        XCTAssertEqual(try read(Self.history).rows.map { $0.fields[.id] }, result.rows.map { $0.fields[.id] })
        XCTAssertEqual(Set(result.rows.compactMap { $0.fields[.id] }).count, 6)
    }

    func testChargesInTheAccountsCurrencyAreTheFee() throws {
        // GhostfolioSidekick's Trading212 fixtures: a buy in pence with stamp duty and a conversion fee in EUR.
        let text = """
        Action,Time,ISIN,Ticker,Name,No. of shares,Price / share,Currency (Price / share),Exchange rate,Currency (Result),Total,Currency (Total),Stamp duty reserve tax,Currency (Stamp duty reserve tax),Notes,ID,Currency conversion fee,Currency (Currency conversion fee)
        Market buy,2023-08-09 15:25:08,GB0007188757,RIO,"Rio Tinto",0.1862569800,4947.00,GBX,86.30197,"EUR",10.75,"EUR",0.05,"EUR",,EOF3224031549,0.02,"EUR"

        """
        let result = try read(text)
        XCTAssertEqual(describe(result.rows), ["buy GB0007188757 0.18625698 EUR fee 0.07 total 10.68 2023-08-09T15:25:08Z"])
        // Registered in the account's currency, the one its trades are recorded in.
        XCTAssertEqual(result.assets.first?.currency, "EUR")
    }

    func testWithdrawalsWhateverTheirSignAndOlderColumns() throws {
        let newer = """
        Action,Time,ISIN,Ticker,Name,No. of shares,Price / share,Currency (Price / share),Exchange rate,Currency (Result),Total,Currency (Total),Withholding tax,Currency (Withholding tax),Charge amount,Currency (Charge amount),Stamp duty reserve tax,Currency (Stamp duty reserve tax),Notes,ID,French transaction tax,Currency (French transaction tax),Currency conversion fee,Currency (Currency conversion fee)
        Withdrawal,2023-11-17 05:49:12.337,,,,,,,,,-1000.00,"EUR",,,,,,,"Sent to Bank Account ********",5d72520a-388c-428a-90bf-6d9fcff55534,,,,

        """
        XCTAssertEqual(describe(try read(newer).rows), ["withdrawal - 1000 EUR fee 0 2023-11-17T05:49:12Z"])
        // The 2021 columns (the account's currency in the header's names); the row laid out from tresor-import#5142's quote.
        let older = """
        Action,Time,ISIN,Ticker,Name,No. of shares,Price / share,Currency (Price / share),Exchange rate,Result (EUR),Total (EUR),Withholding tax,Currency (Withholding tax),Charge amount (EUR),Stamp duty reserve tax (EUR),Finra fee (EUR),Notes,ID,Currency conversion fee (EUR)
        Withdrawal,2021-01-09 19:45:00,,,,,,,,,402.02,,,,,,"Sent to card *2014",,

        """
        XCTAssertEqual(StatementImport.recognise(Array(older.utf8)), .trading212)
        XCTAssertEqual(describe(try read(older).rows), ["withdrawal - 402.02 EUR fee 0 2021-01-09T19:45:00Z"])
        let skipped = try read(newer, tracksCash: false)
        XCTAssertTrue(skipped.rows.isEmpty)
        XCTAssertEqual(Dictionary(skipped.skipped, uniquingKeysWith: +), ["withdrawal (the portfolio does not track cash)": 1])
    }

    func testThe2025ColumnOrder() throws {
        let text = "\u{FEFF}Action,Time,ISIN,Ticker,Name,Notes,ID,No. of shares,Price / share,Currency (Price / share),Exchange rate,Result,Currency (Result),Total,Currency (Total),Withholding tax,Currency (Withholding tax),Stamp duty reserve tax,Currency (Stamp duty reserve tax),Currency conversion from amount,Currency (Currency conversion from amount),Currency conversion to amount,Currency (Currency conversion to amount),Currency conversion fee,Currency (Currency conversion fee),Merchant name,Merchant category,French transaction tax,Currency (French transaction tax)\n"
            + "Dividend adjustment,2025-04-25 11:09:30.186,,,,\"Diageo PLC - Dividend FX conversion (ex-date 24.04.25)\",3851d8fa-f982-4b7b-9fa2-26827ee302da,,,,,,,0.01,\"EUR\",,,,,,,,,,,,,,\n"
        XCTAssertEqual(StatementImport.recognise(Array(text.utf8)), .trading212)
        let result = try read(text)
        XCTAssertTrue(result.rows.isEmpty)
        XCTAssertEqual(Dictionary(result.skipped, uniquingKeysWith: +), ["dividend adjustment": 1])
    }

    func testABadTimeIsAProblem() {
        XCTAssertThrowsError(try read(Self.history.replacingOccurrences(of: "2023-12-27 12:05:25", with: "27.12.2023 12:05"))) { error in
            XCTAssertTrue("\(error)".contains("is not a Trading 212 time"), "\(error)")
        }
    }
}

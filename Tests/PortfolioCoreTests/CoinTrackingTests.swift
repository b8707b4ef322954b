import Foundation
import PortfolioCore
import XCTest

/// `import --format cointracking`: rows copied from real trade-table exports (research notes 5.1).
final class CoinTrackingTests: XCTestCase {
    /// rotki's fixture: a BOM, `-` for empty cells, dd.MM.yyyy dates.
    static let rotki = "\u{FEFF}" + """
    "Type","Buy","Cur.","Sell","Cur.","Fee","Cur.","Exchange","Group","Comment","Date"
    "Withdrawal","-","","0.00136700","ETH","0.0001","ETH","ETH Transaction","","","20.09.2019 13:00:00"
    "Deposit","0.02000000","ETH","-","","","","ETH Transaction","","","20.09.2019 02:01:10"
    "Gift/Tip","0.00100000","BTC","-","","","","no exchange","what is trade group?","Just a small gift from someone","02.09.2019 10:00:10"
    "Income","2","ETH","-","","","","no exchange","","Sign up bonus","03.09.2019 10:00:05"
    "Deposit","0.33676476","BTC","-","","","","BTC Transaction","","","02.09.2019 09:29:00"
    "Deposit","5.00000000","XMR","-","","","","Poloniex","","","15.08.2019 05:57:04"
    "Trade","0.05772716","ETH","10.99000000","EUR","0.02","EUR","Coinbase","","","24.08.2019 23:01:59"
    "Withdrawal","-","","0.05770427","ETH","0.0001","ETH","Coinbase","","","25.08.2019 09:42:35"

    """

    /// Export-To-Ghostfolio's sample: a Tx-ID column and two date formats in one file.
    static let mixed = """
    "Type","Buy","Cur.","Sell","Cur.","Fee","Cur.","Exchange","Group","Comment","Date","Tx-ID"
    "Staking","0.00100000","BTC","","","2.00000000","EUR","Kraken","","","18.01.2025 15:18:55",""
    "Trade","0.00550000","BTC","500.00000000","EUR","19.00000000","EUR","Kraken","","","2025-01-01 10:12:27",""
    "Trade","0.00110000","BTC","100.00000000","EUR","1.00000000","EUR","Pocket Bitcoin","","","2024-12-06 10:12:27",""
    "Trade","200.00000000","EUR","0.00220000","BTC","2.00000000","EUR","Kraken","","","2025-01-11 10:12:27",""
    "Deposit","0.00100000","BTC","","","0.00000000","","","","","2024-12-25 10:12:27",""
    "Withdrawal","","","0.00100000","BTC","0.00000000","","","","","2025-01-11 10:12:27",""

    """

    func read(_ text: String, cash: Bool = true) throws -> PresetRows {
        try StatementImport.rows(Array(text.utf8), format: .coinTracking, options: StatementOptions(tracksCash: cash))
    }

    func skipped(_ p: PresetRows) -> [String: Int] { Dictionary(uniqueKeysWithValues: p.skipped) }
    func kinds(_ p: PresetRows) -> [String: Int] { Dictionary(uniqueKeysWithValues: p.kinds) }

    func testTheRotkiTableReadsByPosition() throws {
        let p = try read(Self.rotki)
        XCTAssertEqual(p.rows.map(presetLine), [
            "transfer-out ETH 0.001367 - - 0.0001 - 2019-09-20T13:00:00Z",
            "transfer-in ETH 0.02 0 - 0 - 2019-09-20T02:01:10Z",
            "reward BTC 0.001 0 - - - 2019-09-02T10:00:10Z",
            "reward ETH 2 0 - - - 2019-09-03T10:00:05Z",
            "transfer-in BTC 0.33676476 0 - 0 - 2019-09-02T09:29:00Z",
            "transfer-in XMR 5 0 - 0 - 2019-08-15T05:57:04Z",
            "buy ETH 0.05772716 190.378324518302996371 10.99 0.02 EUR 2019-08-24T23:01:59Z",
            "transfer-out ETH 0.05770427 - - 0.0001 - 2019-08-25T09:42:35Z",
        ])
        XCTAssertEqual(kinds(p), ["buy": 1, "transfer-in": 3, "transfer-out": 2, "reward": 2])
        XCTAssertEqual(p.skipped.count, 0)
        XCTAssertEqual(StatementImport.recognise(Array(Self.rotki.utf8)), .coinTracking)
        XCTAssertTrue(p.rows[2].fields[.notes]?.contains("Just a small gift from someone") ?? false)
    }

    func testMixedDatesTradesBothWaysAndAFeeInAnotherCurrency() throws {
        let p = try read(Self.mixed)
        XCTAssertEqual(p.rows.map(presetLine), [
            "reward BTC 0.001 0 - - - 2025-01-18T15:18:55Z",
            "buy BTC 0.0055 90909.090909090909090909 500 19 EUR 2025-01-01T10:12:27Z",
            "buy BTC 0.0011 90909.090909090909090909 100 1 EUR 2024-12-06T10:12:27Z",
            "sell BTC 0.0022 90909.090909090909090909 200 2 EUR 2025-01-11T10:12:27Z",
            "transfer-in BTC 0.001 0 - 0 - 2024-12-25T10:12:27Z",
            "transfer-out BTC 0.001 - - 0 - 2025-01-11T10:12:27Z",
        ])
        // The staking row's 2 EUR fee is in neither side's currency.
        XCTAssertEqual(p.feesNotCounted.map { "\($0.0) \($0.1)" }, ["EUR 1"])
    }

    func testUSDatesTheTemplateAndTheOtherTypes() throws {
        let us = """
        "Type","Buy","Cur.","Sell","Cur.","Fee","Cur.","Exchange","Group","Comment","Date"
        "Deposit","5.00000000","XMR","-","","","","Poloniex","","","5/9/2017 21:14"
        "Trade","1","ETH","0.05","BTC","","","Kraken","","","5/10/2017 9:05"
        "Lost","-","","0.5","XMR","","","","","","5/11/2017 10:00"
        "Spend","-","","0.1","XMR","","","","","","5/12/2017 10:00"
        "Margin Profit","0.1","BTC","-","","","","","","","5/13/2017 10:00"
        "Deposit","100","EUR","-","","","","Bank","","","5/14/2017 10:00"

        """
        let p = try read(us, cash: false)
        XCTAssertEqual(p.rows.map(presetLine), [
            "transfer-in XMR 5 0 - 0 - 2017-05-09T21:14:00Z",
            "fee XMR 0.5 - - - - 2017-05-11T10:00:00Z",
        ])
        XCTAssertEqual(skipped(p), ["crypto-to-crypto": 1, "spend (no value in the file)": 1, "margin profit": 1,
                                    "deposit (the portfolio does not track cash)": 1])

        let template = """
        "Type","Buy Amount","Buy Currency","Sell Amount","Sell Currency","Fee","Fee Currency","Exchange","Trade-Group","Comment","Date","Tx-ID"
        "Trade","0.1","BTC","3000","USDT","0.0001","BTC","Binance","","","2024-03-01 12:00:00","abc"
        "Withdrawal","","","0.05","BTC","","","Binance","","","2024-03-02 12:00:00","abc"

        """
        XCTAssertEqual(StatementImport.recognise(Array(template.utf8)), .coinTracking)
        // The fee in BTC is paid in units: 0.0999 BTC for exactly 3000 USDT (dollars at par).
        XCTAssertEqual(try read(template).rows.map(presetLine), [
            "buy BTC 0.0999 30030.03003003003003003 3000 0 USD 2024-03-01T12:00:00Z",
            "transfer-out BTC 0.05 - - 0 - 2024-03-02T12:00:00Z",
        ])
    }

    func testIdsAreStableAndIdenticalRowsKeepTheirOwn() throws {
        let twice = Self.mixed + #""Trade","0.00110000","BTC","100.00000000","EUR","1.00000000","EUR","Pocket Bitcoin","","","2024-12-06 10:12:27","""# + "\n"
        let a = try read(twice), b = try read(twice)
        let ids = a.rows.compactMap { $0.fields[.id] }
        XCTAssertEqual(ids.count, 7)
        XCTAssertEqual(Set(ids).count, 7)
        XCTAssertEqual(ids, b.rows.compactMap { $0.fields[.id] })
    }

    func testABadDateIsAProblem() {
        XCTAssertThrowsError(try read(#""Type","Buy","Cur.","Sell","Cur.","Fee","Cur.","Exchange","Group","Comment","Date""# + "\n"
            + #""Deposit","1","BTC","-","","","","","","","2019-13-40 10:00:00""# + "\n"))
    }

    /// Two withdrawals of one transaction: a wider export listing the other first keeps the ids.
    func testAnOverlappingFileWithAnotherRowOfTheTxIDFirstKeepsTheIds() throws {
        let header = #""Type","Buy","Cur.","Sell","Cur.","Fee","Cur.","Exchange","Group","Comment","Date","Tx-ID""#
        let withdrawal = #""Withdrawal","","","0.5","ETH","","","","","","2025-01-11 10:12:27","0xabc""#
        let a = try read(header + "\n" + withdrawal + "\n")
        let b = try read(header + "\n" + #""Withdrawal","","","0.2","ETH","","","","","","2025-01-11 10:12:27","0xabc""# + "\n" + withdrawal + "\n")
        XCTAssertEqual(a.rows.count, 1)
        XCTAssertEqual(b.rows.count, 2)
        XCTAssertEqual(a.rows.first?.fields[.id], b.rows.last?.fields[.id])
        XCTAssertNotEqual(b.rows.first?.fields[.id], b.rows.last?.fields[.id])
    }

    func read(_ text: String, offset: Int?) throws -> PresetRows {
        try StatementImport.rows(Array(text.utf8), format: .coinTracking, options: StatementOptions(tracksCash: true, utcOffsetSeconds: offset))
    }

    /// An outgoing Spend of money is a withdrawal (as the doc comment says); of crypto, skipped.
    func testASpendOfMoneyIsAWithdrawalAndOfCryptoSkipped() throws {
        let p = try read("""
        "Type","Buy","Cur.","Sell","Cur.","Fee","Cur.","Exchange","Group","Comment","Date"
        "Spend","-","","25","EUR","","","","","","2024-05-01 10:00:00"
        "Donation","-","","0.1","ETH","","","","","","2024-05-02 10:00:00"

        """)
        XCTAssertEqual(p.rows.map(presetLine), ["withdrawal - 25 - - - EUR 2024-05-01T10:00:00Z"])
        XCTAssertEqual(skipped(p), ["donation (no value in the file)": 1])
    }

    /// Local times in the zone --utc-offset names; a day-first file's ambiguous dates read day first.
    func testTheUTCOffsetAndDayFirstSlashedDates() throws {
        let text = """
        "Type","Buy","Cur.","Sell","Cur.","Fee","Cur.","Exchange","Group","Comment","Date"
        "Deposit","1","XMR","-","","","","","","","05/03/2024 10:00"
        "Deposit","2","XMR","-","","","","","","","25/12/2024 10:00"

        """
        XCTAssertEqual(try read(text, offset: 2 * 3600).rows.map(presetLine), [
            "transfer-in XMR 1 0 - 0 - 2024-03-05T08:00:00Z",
            "transfer-in XMR 2 0 - 0 - 2024-12-25T08:00:00Z",
        ])
        XCTAssertEqual(try read(text, offset: nil).rows.first?.fields[.date], "2024-03-05T10:00:00Z")
        // A file whose unambiguous date is month first keeps its ambiguous ones month first.
        let us = text.replacingOccurrences(of: "25/12/2024", with: "12/25/2024")
        XCTAssertEqual(try read(us, offset: nil).rows.map { $0.fields[.date] ?? "" }, ["2024-05-03T10:00:00Z", "2024-12-25T10:00:00Z"])
    }
}

import Foundation
import PortfolioCore
import XCTest

/// `import --format binance-statement`: rows from rotki's Binance statement fixture (research notes 4.1).
final class BinanceStatementTests: XCTestCase {
    static let rotki = """
    User_ID,UTC_Time,Account,Operation,Coin,Change,Remark
    1,2020-11-03 21:12:59,Spot,Buy,EUR,-333.209174,
    1,2020-11-03 21:12:59,Spot,Fee,BNB,-9.009E-05,
    1,2020-11-03 21:12:59,Spot,Buy,ETH,0.0148,
    1,2020-11-03 21:12:59,Spot,Fee,ETH,-8.345E-05,
    1,2020-11-03 21:12:59,Spot,Buy,EUR,-59.089888,
    1,2020-11-03 21:12:59,Spot,Buy,ETH,0.08345,
    1,2021-12-31 00:33:45,Spot,Transfer Between Main and Funding Wallet,USDT,500.00000000,""
    1,2021-12-31 00:33:45,Funding,Transfer Between Main and Funding Wallet,USDT,-500.00000000,""
    1,2023-06-05 19:47:00,Spot,Binance Convert,BUSD,-125.626918
    1,2023-06-05 19:47:00,Spot,Binance Convert,MATIC,140.1195285
    1,2023-07-28 18:48:58,Spot,Transaction Revenue,USDT,26.82490000,""
    1,2023-07-28 18:48:58,Spot,Transaction Sold,SOL,-1.07000000,""
    1,2023-07-28 18:48:58,Spot,Transaction Fee,BNB,-0.00008316,""
    1,2023-09-29 09:56:26,Spot,Transaction Buy,ETH,0.01700000,""
    1,2023-09-29 09:56:26,Spot,Transaction Fee,BNB,-0.00009883,""
    1,2023-09-29 09:56:26,Spot,Transaction Spend,USDT,-28.46106000,""
    1,2020-11-01 09:36:13,Spot,ETH 2.0 Staking Rewards,BETH,4.615E-06,
    1,2020-11-01 23:50:10,Spot,Launchpool Interest,DAR,0.115147055,
    1,2023-01-13 06:01:00,Spot,Simple Earn Flexible Interest,BUSD,0.00003634,Binance Earn
    1,2020-10-28 22:03:03,Spot,Deposit,EUR,245.25,
    1,2020-12-01 20:06:44,Spot,Withdraw,KNC,-0.16,Withdraw fee is included
    1,,Spot,Deposit,BTC,1,
    1,2021-01-01 00:00:00,Spot,Deposit,,1,

    """

    static let expected = [
        // Two fills merged: 333.209174 + 59.089888 EUR for 0.0148 + 0.08345 ETH less the ETH fee 0.00008345.
        "buy ETH 0.09816655 3996.260049884609370503 392.299062 0 EUR 2020-11-03T21:12:59Z",
        "buy MATIC 140.1195285 0.896569659810124183 125.626918 0 USD 2023-06-05T19:47:00Z",
        "sell SOL 1.07 25.07 26.8249 0 USD 2023-07-28T18:48:58Z",
        "buy ETH 0.017 1674.18 28.46106 0 USD 2023-09-29T09:56:26Z",
        "reward BETH 0.000004615 0 - - - 2020-11-01T09:36:13Z",
        "reward DAR 0.115147055 0 - - - 2020-11-01T23:50:10Z",
        "interest - 0.00003634 - - - USD 2023-01-13T06:01:00Z",
        "deposit - 245.25 - - - EUR 2020-10-28T22:03:03Z",
        "transfer-out KNC 0.16 - - 0 - 2020-12-01T20:06:44Z",
    ]

    func read(_ text: String, cash: Bool = true, fileName: String = "", offset: Int? = nil) throws -> PresetRows {
        try StatementImport.rows(Array(text.utf8), format: .binanceStatement,
                                 options: StatementOptions(tracksCash: cash, fileName: fileName, utcOffsetSeconds: offset))
    }

    func testRotkisStatementRowByRow() throws {
        let p = try read(Self.rotki)
        XCTAssertEqual(p.rows.map(presetLine), Self.expected)
        XCTAssertEqual(Dictionary(uniqueKeysWithValues: p.kinds),
                       ["buy": 3, "sell": 1, "reward": 2, "interest": 1, "deposit": 1, "transfer-out": 1])
        XCTAssertEqual(Dictionary(uniqueKeysWithValues: p.skipped),
                       ["internal move (between Binance's wallets)": 2, "row without a time or coin": 2])
        // The BNB fees of three trades are left out, and said.
        XCTAssertEqual(p.feesNotCounted.map(\.0), ["BNB"])
        XCTAssertEqual(p.feesNotCounted.map(\.1), [3])
        XCTAssertEqual(StatementImport.recognise(Array(Self.rotki.utf8)), .binanceStatement)

        // Without cash the money rows are skipped, counted.
        let noCash = try read(Self.rotki, cash: false)
        XCTAssertEqual(Dictionary(uniqueKeysWithValues: noCash.skipped)["deposit (the portfolio does not track cash)"], 1)
        XCTAssertEqual(Dictionary(uniqueKeysWithValues: noCash.skipped)["interest (the portfolio does not track cash)"], 1)
    }

    func testLegsInAnyOrderMakeTheSameTrades() throws {
        let lines = Self.rotki.split(separator: "\n").map(String.init)
        let reversed = try read(([lines[0]] + lines.dropFirst().reversed()).joined(separator: "\n") + "\n")
        XCTAssertEqual(Set(reversed.rows.map(presetLine)), Set(Self.expected))
        XCTAssertEqual(Set(reversed.rows.compactMap { $0.fields[.id] }), Set(try read(Self.rotki).rows.compactMap { $0.fields[.id] }))
    }

    func testOtherTradeShapesFeesAndCryptoToCrypto() throws {
        let p = try read("""
        UTC_Time,Account,Operation,Coin,Change,Remark
        2021-03-01 10:00:00,Spot,Transaction Related,EUR,-100,
        2021-03-01 10:00:00,Spot,Buy,BTC,0.002,
        2021-03-02 10:00:00,Spot,Sell,BTC,-0.001,
        2021-03-02 10:00:00,Spot,Sell,USDT,50,
        2021-03-02 10:00:00,Spot,Fee,BTC,-0.000001,
        2023-08-02 10:00:00,Spot,Transaction Revenue,USDT,100.00000000,
        2023-08-02 10:00:00,Spot,Transaction Sold,ETH,-0.05000000,
        2023-08-02 10:00:00,Spot,Transaction Fee,USDT,-0.10000000,
        2023-08-03 10:00:00,Spot,Transaction Buy,ETH,0.5,
        2023-08-03 10:00:00,Spot,Transaction Spend,BTC,-0.02,
        2023-08-04 10:00:00,Spot,Small assets exchange BNB,SHIB,-1000,
        2023-08-04 10:00:00,Spot,Small assets exchange BNB,BNB,0.001,
        2023-08-05 10:00:00,Spot,Simple Earn Flexible Subscription,ETH,-0.1,
        2023-08-06 10:00:00,Spot,Deposit,ETH,0.3,
        2023-08-07 10:00:00,USDT-Futures,Funding Fee,USDT,-0.01,

        """)
        XCTAssertEqual(p.rows.map(presetLine), [
            "buy BTC 0.002 50000 100 0 EUR 2021-03-01T10:00:00Z",
            // A fee in the sold coin: more units gone.
            "sell BTC 0.001001 49950.04995004995004995 50 0 USD 2021-03-02T10:00:00Z",
            "sell ETH 0.05 2000 100 0.1 USD 2023-08-02T10:00:00Z",
            "transfer-in ETH 0.3 0 - 0 - 2023-08-06T10:00:00Z",
        ])
        XCTAssertEqual(Dictionary(uniqueKeysWithValues: p.skipped), [
            "crypto-to-crypto": 1, "small assets exchange BNB (dust into BNB, crypto-to-crypto)": 2,
            "internal move (between Binance's wallets)": 1, "funding fee": 1,
        ])
        XCTAssertTrue(p.feesNotCounted.isEmpty)
    }

    func testTheNewExportsShortYearsAreInTheFileNamesZone() throws {
        let text = """
        User ID,Time,Account,Operation,Coin,Change,Remark
        1,24-07-25 21:35:00,Spot,Transaction Buy,BTC,0.01000000,""
        1,24-07-25 21:35:00,Spot,Transaction Fee,BTC,-0.00001000,""
        1,24-07-25 21:35:00,Spot,Transaction Spend,USDT,-650.00000000,""

        """
        let p = try read(text, fileName: "Binance-Transaction-History-202604201017(UTC+7).csv")
        XCTAssertEqual(p.rows.map(presetLine), ["buy BTC 0.00999 65065.065065065065065065 650 0 USD 2024-07-25T14:35:00Z"])
        // --utc-offset when the name does not say it; neither is refused, saying how.
        let west = try read(text, fileName: "history.csv", offset: -6 * 3600)
        XCTAssertEqual(west.rows.first?.fields[.date], "2024-07-26T03:35:00Z")
        XCTAssertThrowsError(try read(text, fileName: "history.csv")) { error in
            XCTAssertEqual((error as? ImportFailure)?.problems, [
                "this Binance statement gives times in the zone named only in its file name, e.g. '(UTC+7)'; keep Binance's file name, or give the zone with --utc-offset",
            ])
        }
        XCTAssertEqual(StatementImport.recognise(Array(text.utf8)), .binanceStatement)
    }

    /// Two identical distributions in one second are two rewards with ids of their own (the import
    /// refuses a file whose ids repeat); the same rows exported in another zone keep their ids.
    func testIdenticalRowsKeepTheirOwnIdsAndAnotherZoneKeepsThem() throws {
        let utc = """
        User_ID,UTC_Time,Account,Operation,Coin,Change,Remark
        1,2024-07-25 14:35:00,Spot,Distribution,DOT,0.5,
        1,2024-07-25 14:35:00,Spot,Distribution,DOT,0.5,
        1,2024-07-25 14:40:00,Spot,Transaction Buy,BTC,0.01000000,""
        1,2024-07-25 14:40:00,Spot,Transaction Spend,USDT,-650.00000000,""

        """
        let a = try read(utc)
        let ids = a.rows.compactMap { $0.fields[.id] }
        XCTAssertEqual(ids.count, 3)
        XCTAssertEqual(Set(ids).count, 3)
        let plus7 = """
        User ID,Time,Account,Operation,Coin,Change,Remark
        1,24-07-25 21:35:00,Spot,Distribution,DOT,0.5,
        1,24-07-25 21:35:00,Spot,Distribution,DOT,0.5,
        1,24-07-25 21:40:00,Spot,Transaction Buy,BTC,0.01000000,""
        1,24-07-25 21:40:00,Spot,Transaction Spend,USDT,-650.00000000,""

        """
        let minus5 = plus7.replacingOccurrences(of: "24-07-25 21:", with: "24-07-25 09:")
        XCTAssertEqual(try read(plus7, fileName: "Binance-Transaction-History(UTC+7).csv").rows.compactMap { $0.fields[.id] }, ids)
        XCTAssertEqual(try read(minus5, fileName: "history.csv", offset: -5 * 3600).rows.compactMap { $0.fields[.id] }, ids)
    }
}

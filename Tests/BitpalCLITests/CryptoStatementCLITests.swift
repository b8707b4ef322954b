import Foundation
import PortfolioCore
import XCTest

/// `bitpal import` of Kraken's ledgers.csv and Binance's Transaction History, recognised without
/// `--format`, into the book with hand-computed figures; a re-import adds nothing.
final class CryptoStatementCLITests: XCTestCase {
    /// Real rows (research notes 4.2); the withdrawal pair is moved from 2021-11-03 to 2022-03-01 so
    /// that it follows the BTC buy it spends from.
    static let krakenLedger = """
    "txid","refid","time","type","subtype","aclass","asset","amount","fee","balance"
    "","QCCNPU5-JCHILF-COMBWG","2021-02-10 10:06:39","deposit","","currency","ZEUR",500.0000,0.0000,""
    "","QCCNPU5-JCHILF-COMBWG","2021-02-10 10:08:19","deposit","","currency","ZEUR",500.0000,0.0000,500.0000
    "L3H4BL-PFLZU-JVX2JY","TTWFFE-HZX34-2EEGRM","2022-02-24 08:57:02","trade","","currency","XXBT",0.0474606900,0.0000000000,0.0474667000
    "LU4MDZ-PSSAV-7KKYF2","TTWFFE-HZX34-2EEGRM","2022-02-24 08:57:02","trade","","currency","ZEUR",-1499.9999,2.4000,793.5752
    "","AGB76R3-DWC5SC-UCBGGX","2022-03-01 20:15:19","withdrawal","","currency","XXBT",-0.0307600000,0.0001500000,""
    "LU6WLT-MWUUY-BVWZ6E","AGB76R3-DWC5SC-UCBGGX","2022-03-01 21:02:37","withdrawal","","currency","XXBT",-0.0307600000,0.0001500000,0.0000060100
    "LVOEPI-YP2LX-H2RBFQ","ST5ENW3-ITDUB-JOLAPV","2024-03-11 12:01:02","staking","","currency","BTC.M",0.0000007100,0,0.0100000000
    "L5LDYP-Y2KAB-CYRTJV","Unknown","2024-03-11 16:31:11","earn","","currency","BTC.M",-0.0100000000,0,0.0000000000
    "LBAOX7-N4RCV-V7LXMB","Unknown","2024-03-11 16:31:11","earn","","currency","BTC",0.0100000000,0,0.0100000000
    "LXCWAU-5PRVS-LJJ2XU","Unknown","2024-03-12 09:29:47","earn","","currency","BTC",0.0000000841,0,0.0123456789

    """

    func testAKrakenLedgerIsRecognisedAndImportedOnce() throws {
        let s = Sandbox(now: "2026-11-20T00:00:00Z")
        s.ok(["portfolio", "add", "eu", "--currency", "EUR"])
        let file = s.write("ledgers.csv", Self.krakenLedger)
        let r = s.ok(["-p", "eu", "import", file])
        XCTAssertTrue(r.err.contains("Recognised the Kraken ledger (as with --format kraken-ledger)"), r.err)
        XCTAssertTrue(r.out.hasPrefix("From the Kraken ledger: 1 buy, 1 transfer out, 2 rewards; skipped: "), r.out)
        XCTAssertTrue(r.out.contains("1 deposit row (the portfolio does not track cash)"), r.out)
        XCTAssertTrue(r.out.contains("2 internal move rows"), r.out)
        XCTAssertTrue(r.out.contains("Imported 4 transactions"), r.out)

        let txs = try s.loadPortfolio().transactions.sorted { $0.date < $1.date }
        XCTAssertEqual(txs.map(\.type), [.buy, .transferOut, .reward, .reward])
        let buy = try XCTUnwrap(txs.first)
        XCTAssertEqual(buy.amountValue.text, "0.04746069")
        XCTAssertEqual(buy.totalValue?.text, "1499.9999")
        XCTAssertEqual(buy.feeValue?.text, "2.4")
        XCTAssertEqual(buy.currency, "EUR")
        XCTAssertEqual(txs[1].amountValue.text, "0.03076")
        XCTAssertEqual(txs[1].feeValue?.text, "0.00015")
        XCTAssertEqual(txs.dropFirst(2).map(\.amountValue.text), ["0.00000071", "0.0000000841"])

        // 0.04746069 − 0.03076 − 0.00015 + 0.00000071 + 0.0000000841 BTC; the basis left of
        // 1499.9999 + 2.4 is 1502.3999 × 0.01655069 / 0.04746069 = 523.92 (the rewards cost nothing).
        let h = s.ok(["-p", "eu", "holdings", "--json"]).out
        XCTAssertTrue(h.contains(#""totalAmount": "0.0165514841""#), h)
        XCTAssertTrue(h.contains(#""totalCost": "523.92""#), h)

        let again = s.ok(["-p", "eu", "import", file])
        XCTAssertTrue(again.out.contains("Imported 0 transactions; skipped 4 already recorded"), again.out)
        XCTAssertEqual(try s.loadPortfolio().transactions.count, 4)
    }

    /// Two earn rewards under one refid are two transactions, not one id twice (which the import
    /// refused); a re-import adds nothing.
    func testTwoRewardsOfOneRefidImportOnce() throws {
        let s = Sandbox(now: "2026-11-20T00:00:00Z")
        s.ok(["portfolio", "add", "eu", "--currency", "EUR"])
        let file = s.write("ledgers.csv", """
        "txid","refid","time","type","subtype","aclass","asset","amount","fee","balance"
        "","RX","2024-06-01 00:00:00","earn","reward","currency","DOT",0.5000000000,0,0.5
        "","RX","2024-06-01 00:00:00","earn","reward","currency","ETH",0.0100000000,0,0.01

        """)
        let r = s.ok(["-p", "eu", "import", file, "--format", "kraken-ledger"])
        XCTAssertTrue(r.out.contains("Imported 2 transactions"), r.out)
        XCTAssertEqual(try s.loadPortfolio().transactions.map(\.type), [.reward, .reward])
        let again = s.ok(["-p", "eu", "import", file, "--format", "kraken-ledger"])
        XCTAssertTrue(again.out.contains("Imported 0 transactions; skipped 2 already recorded"), again.out)
    }

    /// The 2025+ layout: short years, times in the zone of the file name.
    static let binanceStatement = """
    User ID,Time,Account,Operation,Coin,Change,Remark
    1,24-07-25 21:30:41,Spot,Deposit,USDT,1000,
    1,24-07-25 21:35:00,Spot,Transaction Buy,BTC,0.01000000,""
    1,24-07-25 21:35:00,Spot,Transaction Fee,BTC,-0.00001000,""
    1,24-07-25 21:35:00,Spot,Transaction Spend,USDT,-650.00000000,""
    1,24-07-26 08:00:00,Spot,Binance Convert,USDT,-100
    1,24-07-26 08:00:00,Spot,Binance Convert,SOL,0.5
    1,24-08-01 09:00:00,Spot,Simple Earn Flexible Interest,SOL,4.615E-06,
    1,24-08-02 10:00:00,Spot,Transaction Revenue,USDT,200.00000000,""
    1,24-08-02 10:00:00,Spot,Transaction Sold,BTC,-0.00300000,""
    1,24-08-02 10:00:00,Spot,Transaction Fee,USDT,-0.20000000,""
    1,24-08-03 10:00:00,Spot,Withdraw,BTC,-0.005,Withdraw fee is included

    """

    func testABinanceStatementIsRecognisedInItsZoneAndImportedOnce() throws {
        let s = Sandbox(now: "2026-11-20T00:00:00Z")
        let file = s.write("Binance-Transaction-History-202604201017(UTC+7).csv", Self.binanceStatement)
        let r = s.ok(["import", file])
        XCTAssertTrue(r.err.contains("Recognised the Binance transaction history (as with --format binance-statement)"), r.err)
        XCTAssertTrue(r.out.hasPrefix("From the Binance transaction history: 2 buys, 1 sell, 1 transfer out, 1 reward; "
            + "skipped: 1 deposit row (the portfolio does not track cash)."), r.out)
        XCTAssertTrue(r.out.contains("Imported 5 transactions"), r.out)

        let txs = try s.loadPortfolio().transactions.sorted { $0.date < $1.date }
        XCTAssertEqual(txs.map(\.type), [.buy, .buy, .reward, .sell, .transferOut])
        let buy = try XCTUnwrap(txs.first)
        // 21:35 at UTC+7; 0.01 BTC less the 0.00001 BTC fee, for exactly 650 USDT (dollars at par).
        XCTAssertEqual(ISODate.format(buy.date), "2024-07-25T14:35:00Z")
        XCTAssertEqual(buy.amountValue.text, "0.00999")
        XCTAssertEqual(buy.totalValue?.text, "650")
        XCTAssertEqual(txs[2].amountValue.text, "0.000004615")
        XCTAssertEqual(txs[3].totalValue?.text, "200")
        XCTAssertEqual(txs[3].feeValue?.text, "0.2")

        // BTC: 0.00999 − 0.003 − 0.005 = 0.00199, its basis 650 × 0.00199 / 0.00999 = 129.48;
        // SOL: 0.5 for 100 plus a reward of 0.000004615 at no cost.
        let h = s.ok(["holdings", "--json"]).out
        XCTAssertTrue(h.contains(#""totalAmount": "0.00199""#), h)
        XCTAssertTrue(h.contains(#""totalCost": "129.48""#), h)
        XCTAssertTrue(h.contains(#""totalAmount": "0.500004615""#), h)
        XCTAssertTrue(h.contains(#""totalCost": "100.00""#), h)

        let again = s.ok(["import", file])
        XCTAssertTrue(again.out.contains("Imported 0 transactions; skipped 5 already recorded"), again.out)
        XCTAssertEqual(try s.loadPortfolio().transactions.count, 5)

        // Renamed without its zone, the file is refused unless --utc-offset gives it.
        let renamed = s.write("history.csv", Self.binanceStatement)
        let refused = s.run(["import", renamed])
        XCTAssertEqual(refused.code, .failure)
        XCTAssertTrue(refused.err.contains("give the zone with --utc-offset"), refused.err)
        XCTAssertTrue(s.ok(["import", renamed, "--utc-offset", "+07:00"]).out.contains("Imported 0 transactions"))
    }
}

import Foundation
import PortfolioCore
import XCTest

/// `bitpal import` of Revolut's crypto statement, recognised without `--format`, into a SEK
/// portfolio (the research's real rows, 3.6; the Send moved a minute after the Receive so that the
/// coins it sends are held), and the trading statement still read by its mapping.
final class RevolutCryptoCLITests: XCTestCase {
    static let crypto = """
    Symbol,Type,Quantity,Price,Value,Fees,Date
    BTC,Buy,0.00056077,"89,162.28 SEK",50.00 SEK,0.00 SEK,"May 5, 2020, 10:10:57 PM"
    BTC,Sell,0.00001082,"86,557.95 SEK",0.93 SEK,0.00 SEK,"Jun 2, 2020, 9:10:31 PM"
    BTC,Send,0.00056077,"137,211.36 SEK",76.94 SEK,0.00 SEK,"Nov 9, 2020, 3:51:00 AM"
    BTC,Receive,0.00056077,"137,211.36 SEK",76.94 SEK,0.00 SEK,"Nov 9, 2020, 3:50:00 AM"
    BTC,Buy,0.00027963,"€35,761.54",€10.00,€0.24,"Mar 8, 2022, 2:08:54 PM"
    ETH,Stake,0.18580349,"24,185.66 SEK","4,493.77 SEK",0.00 SEK,"Feb 2, 2024, 11:03:12 AM"
    ETH,Staking reward,0.00002061,,,,"Jan 15, 2025, 12:23:31 AM"

    """

    func testTheCryptoStatementIsRecognisedAndImportedOnce() throws {
        let s = Sandbox(now: "2026-06-01T12:00:00Z")
        s.ok(["portfolio", "add", "rev", "--currency", "SEK"])
        s.ok(["portfolio", "default", "rev"])
        s.ok(["fx", "set", "EUR", "SEK", "11", "--date", "2022-03-08"])
        let file = s.write("crypto.csv", Self.crypto)
        let r = s.ok(["import", file])
        XCTAssertTrue(r.err.contains("Recognised the Revolut statement (as with --format revolut)"), r.err)
        XCTAssertTrue(r.out.contains("From the Revolut statement: 2 buys, 1 sell, 1 transfer in, 1 transfer out, 1 reward; skipped: "), r.out)
        XCTAssertTrue(r.out.contains("1 stake row (an internal move into or out of staking)"), r.out)
        XCTAssertTrue(r.out.contains("Imported 6 transactions"), r.out)

        let txs = try s.loadPortfolio().transactions.sorted { $0.date < $1.date }
        XCTAssertEqual(txs.map(\.type), [.buy, .sell, .transferIn, .transferOut, .buy, .reward])
        XCTAssertEqual(txs.map(\.assetId), ["bitcoin", "bitcoin", "bitcoin", "bitcoin", "bitcoin", "ethereum"])
        XCTAssertEqual(txs[0].totalValue?.text, "50")
        XCTAssertEqual(txs[0].currency, "SEK")
        XCTAssertEqual(txs[1].totalValue?.text, "0.93")
        XCTAssertEqual(txs[2].priceValue?.text, "137211.36")
        XCTAssertEqual(txs[4].totalValue?.text, "10")
        XCTAssertEqual(txs[4].feeValue?.text, "0.24")
        XCTAssertEqual(txs[4].currency, "EUR")
        XCTAssertEqual(txs[5].amountValue.text, "0.00002061")

        // BTC: 0.00056077 − 0.00001082 + 0.00056077 − 0.00056077 + 0.00027963 = 0.00082958.
        let h = s.ok(["holdings", "--json", "--offline"]).out
        let holdings = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(h.utf8)) as? [String: Any])?["holdings"] as? [[String: Any]], h)
        XCTAssertEqual(holdings.first { $0["assetId"] as? String == "bitcoin" }?["totalAmount"] as? String, "0.00082958")
        let eth = try XCTUnwrap(holdings.first { $0["assetId"] as? String == "ethereum" }, h)
        XCTAssertEqual(eth["totalAmount"] as? String, "0.00002061")
        XCTAssertEqual(eth["totalCost"] as? String, "0.00")

        let again = s.ok(["import", file])
        XCTAssertTrue(again.out.contains("Imported 0 transactions; skipped 6 already recorded"), again.out)
        XCTAssertEqual(try s.loadPortfolio().transactions.count, 6)
    }

    func testTheTradingStatementIsStillReadByItsMapping() throws {
        let s = Sandbox(now: "2026-06-01T12:00:00Z")
        s.ok(["portfolio", "add", "stocks", "--currency", "USD"])
        s.ok(["portfolio", "default", "stocks"])
        let file = s.write("trading.csv", """
        Date,Ticker,Type,Quantity,Price per share,Total Amount,Currency,FX Rate
        2023-09-22T13:30:10.514Z,O,BUY - MARKET,1.63453043,$52.07,$85.11,USD,1.0665
        2019-11-15T23:15:55.878985Z,,CASH TOP-UP,,,$5.22,USD,1.1055

        """)
        let r = s.ok(["import", file])
        XCTAssertTrue(r.err.contains("(as with --format revolut)"), r.err)
        XCTAssertTrue(r.out.contains("Imported 1 transaction"), r.out)
        let buy = try XCTUnwrap(try s.loadPortfolio().transactions.first)
        XCTAssertEqual(buy.assetId, "O")
        XCTAssertEqual(buy.totalValue?.text, "85.11")
        XCTAssertTrue(s.ok(["import", "--format", "revolut", "--show-map"]).out.contains(#""total": {"column": "Total Amount"}"#))
    }
}

import Foundation
import PortfolioCore
import XCTest

/// `bitpal import` of Koinly's universal CSV, CoinTracking's trade table and Crypto.com's app
/// export, recognised without `--format`, into the book with hand-computed figures; a re-import adds nothing.
final class InterchangeCLITests: XCTestCase {
    static let koinly = """
    Date,Sent Amount,Sent Currency,Received Amount,Received Currency,Fee Amount,Fee Currency,Net Worth Amount,Net Worth Currency,Label,Description,TxHash
    2024-01-04 09:00 UTC,,,1.5,ETH,,,,,,From wallet,0xabc
    2024-01-05 10:00 UTC,1000,EUR,0.025,BTC,2.5,EUR,,,,Buy BTC,
    2024-01-07 12:00:30,0.5,ETH,0.02,BTC,,,1200,EUR,,ETH->BTC,0xdef
    2024-01-09 14:00 UTC,,,0.01,ETH,,,25,EUR,staking,Staking reward,
    2024-01-13 18:00 UTC,0.01,BTC,450,EUR,1,EUR,,,,Sell BTC,
    2024-01-14 19:00 UTC,0.1,ETH,0.004,BTC,,,,,,no net worth,

    """

    func testAKoinlyFileIsRecognisedAndImportedOnce() throws {
        let s = Sandbox(now: "2026-11-20T00:00:00Z")
        s.ok(["portfolio", "add", "eu", "--currency", "EUR"])
        let file = s.write("koinly.csv", Self.koinly)
        let r = s.ok(["-p", "eu", "import", file])
        XCTAssertTrue(r.err.contains("Recognised the Koinly universal CSV (as with --format koinly)"), r.err)
        XCTAssertTrue(r.out.hasPrefix("From the Koinly universal CSV: 1 buy, 1 sell, 1 transfer in, 1 reward, 1 swap; "
            + "skipped: 1 crypto-to-crypto trade."), r.out)
        XCTAssertTrue(r.out.contains("Imported 6 transactions"), r.out)

        let txs = try s.loadPortfolio().transactions.sorted { ($0.date, $0.type.rawValue) < ($1.date, $1.type.rawValue) }
        XCTAssertEqual(txs.map(\.type), [.transferIn, .buy, .buy, .sell, .reward, .sell])
        XCTAssertEqual(ISODate.format(txs[2].date), "2024-01-07T12:00:30Z")
        XCTAssertEqual(txs[1].totalValue?.text, "1000")
        XCTAssertEqual(txs[1].feeValue?.text, "2.5")
        XCTAssertEqual(txs[4].priceValue?.text, "2500")

        // Average cost. BTC: 0.025 for 1002.5 + 0.02 for 1200, 0.01 sold: 2202.5 × 0.035 / 0.045 = 1713.06.
        // ETH: 1.5 at 0, 0.5 swapped away, then 0.01 at 25: 1.01 at 25.00.
        let h = s.ok(["-p", "eu", "holdings", "--json"]).out
        XCTAssertTrue(h.contains(#""totalAmount": "0.035""#), h)
        XCTAssertTrue(h.contains(#""totalCost": "1713.06""#), h)
        XCTAssertTrue(h.contains(#""totalAmount": "1.01""#), h)
        XCTAssertTrue(h.contains(#""totalCost": "25.00""#), h)

        let again = s.ok(["-p", "eu", "import", file])
        XCTAssertTrue(again.out.contains("Imported 0 transactions; skipped 6 already recorded"), again.out)
        XCTAssertEqual(try s.loadPortfolio().transactions.count, 6)
    }
}

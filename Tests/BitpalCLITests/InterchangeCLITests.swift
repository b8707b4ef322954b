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

    /// Export-To-Ghostfolio's CoinTracking sample (research 5.1), with its BOM and mixed date formats.
    static let coinTracking = "\u{FEFF}" + """
    "Type","Buy","Cur.","Sell","Cur.","Fee","Cur.","Exchange","Group","Comment","Date","Tx-ID"
    "Staking","0.00100000","BTC","","","2.00000000","EUR","Kraken","","","18.01.2025 15:18:55",""
    "Trade","0.00550000","BTC","500.00000000","EUR","19.00000000","EUR","Kraken","","","2025-01-01 10:12:27",""
    "Trade","0.00110000","BTC","100.00000000","EUR","1.00000000","EUR","Pocket Bitcoin","","","2024-12-06 10:12:27",""
    "Trade","200.00000000","EUR","0.00220000","BTC","2.00000000","EUR","Kraken","","","2025-01-11 10:12:27",""
    "Deposit","0.00100000","BTC","","","0.00000000","","","","","2024-12-25 10:12:27",""
    "Withdrawal","","","0.00100000","BTC","0.00000000","","","","","2025-01-11 10:12:27",""

    """

    func testACoinTrackingTableIsRecognisedAndImportedOnce() throws {
        let s = Sandbox(now: "2026-11-20T00:00:00Z")
        s.ok(["portfolio", "add", "eu", "--currency", "EUR"])
        let file = s.write("CoinTracking_Trade_Table.csv", Self.coinTracking)
        let r = s.ok(["-p", "eu", "import", file])
        XCTAssertTrue(r.err.contains("Recognised the CoinTracking trade table (as with --format cointracking)"), r.err)
        XCTAssertTrue(r.out.hasPrefix("From the CoinTracking trade table: 2 buys, 1 sell, 1 transfer in, 1 transfer out, 1 reward"), r.out)
        XCTAssertTrue(r.out.contains("Imported 6 transactions"), r.out)

        let txs = try s.loadPortfolio().transactions.sorted { ($0.date, $0.type.rawValue) < ($1.date, $1.type.rawValue) }
        XCTAssertEqual(txs.map(\.type), [.buy, .transferIn, .buy, .sell, .transferOut, .reward])
        XCTAssertEqual(ISODate.format(txs[5].date), "2025-01-18T15:18:55Z")
        XCTAssertEqual(txs[2].totalValue?.text, "500")
        XCTAssertEqual(txs[2].feeValue?.text, "19")
        XCTAssertEqual(txs[3].totalValue?.text, "200")

        // Average cost: 0.0011 for 101, 0.001 at 0, 0.0055 for 519: 0.0076 for 620; 0.0032 leaves
        // (sold and sent), 620 × 0.0044 / 0.0076 = 358.95 stays; the reward adds 0.001 at no cost.
        let h = s.ok(["-p", "eu", "holdings", "--json"]).out
        XCTAssertTrue(h.contains(#""totalAmount": "0.0054""#), h)
        XCTAssertTrue(h.contains(#""totalCost": "358.95""#), h)

        let again = s.ok(["-p", "eu", "import", file])
        XCTAssertTrue(again.out.contains("Imported 0 transactions; skipped 6 already recorded"), again.out)
        XCTAssertEqual(try s.loadPortfolio().transactions.count, 6)
    }

    /// rotki's and Export-To-Ghostfolio's rows (research 4.3); the ETH→BTC exchange and the transfer
    /// are written after them for this test.
    static let cryptoCom = """
    Timestamp (UTC),Transaction Description,Currency,Amount,To Currency,To Amount,Native Currency,Native Amount,Native Amount (in USD),Transaction Kind
    2020-07-27 06:59:55,Buy ETH,ETH,1.0,,,EUR,281.14,332.911931,crypto_purchase
    2020-08-03 04:45:34,Crypto Earn,ETH,0.00061475,,,EUR,0.19,0.2249885,crypto_earn_interest_paid
    2021-07-19 18:56:00,EUR -> BTC,EUR,-78.01,BTC,0.003,EUR,79.03,98.39247273,viban_purchase
    2021-08-01 10:00:00,ETH -> BTC,ETH,-0.5,BTC,0.01,EUR,1000.0,1180.0,crypto_exchange
    2021-08-02 10:00:00,Transfer: App wallet -> Exchange,BTC,-0.001,,,EUR,30,35,crypto_to_exchange_transfer

    """

    func testACryptoComExportIsRecognisedAndImportedOnce() throws {
        let s = Sandbox(now: "2026-11-20T00:00:00Z")
        s.ok(["portfolio", "add", "eu", "--currency", "EUR"])
        let file = s.write("crypto_transactions_record.csv", Self.cryptoCom)
        let r = s.ok(["-p", "eu", "import", file])
        XCTAssertTrue(r.err.contains("Recognised the Crypto.com App transaction history (as with --format cryptocom)"), r.err)
        XCTAssertTrue(r.out.hasPrefix("From the Crypto.com App transaction history: 2 buys, 1 reward, 1 swap; skipped: 1 internal move row"), r.out)
        XCTAssertTrue(r.out.contains("Imported 5 transactions"), r.out)

        let txs = try s.loadPortfolio().transactions.sorted { ($0.date, $0.type.rawValue) < ($1.date, $1.type.rawValue) }
        XCTAssertEqual(txs.map(\.type), [.buy, .reward, .buy, .buy, .sell])
        XCTAssertEqual(txs[0].totalValue?.text, "281.14")
        XCTAssertEqual(txs[1].priceValue?.text, "309.068727124847498983")
        XCTAssertEqual(txs[2].totalValue?.text, "78.01")
        XCTAssertEqual(ISODate.format(txs[4].date), "2021-08-01T10:00:00Z")
        XCTAssertEqual(txs[4].totalValue?.text, "1000")

        // Average cost. ETH: 1 for 281.14 and 0.00061475 worth 0.19 (281.33), 0.5 swapped away:
        // 281.33 × 0.50061475 / 1.00061475 = 140.75. BTC: 0.003 for 78.01 and 0.01 for 1000.
        let h = s.ok(["-p", "eu", "holdings", "--json"]).out
        XCTAssertTrue(h.contains(#""totalAmount": "0.50061475""#), h)
        XCTAssertTrue(h.contains(#""totalCost": "140.75""#), h)
        XCTAssertTrue(h.contains(#""totalAmount": "0.013""#), h)
        XCTAssertTrue(h.contains(#""totalCost": "1078.01""#), h)

        let again = s.ok(["-p", "eu", "import", file])
        XCTAssertTrue(again.out.contains("Imported 0 transactions; skipped 5 already recorded"), again.out)
        XCTAssertEqual(try s.loadPortfolio().transactions.count, 5)
    }

    /// In a portfolio that tracks cash, the card and fiat-wallet buys find their money: it is
    /// deposited right before each, and the import is not refused for insufficient cash.
    func testCardBuysImportIntoACashPortfolio() throws {
        let s = Sandbox(now: "2026-11-20T00:00:00Z")
        s.ok(["portfolio", "add", "eu", "--currency", "EUR", "--cash"])
        let file = s.write("crypto_transactions_record.csv", Self.cryptoCom)
        let r = s.ok(["-p", "eu", "import", file])
        XCTAssertTrue(r.out.contains("Imported 7 transactions"), r.out)
        let txs = try s.loadPortfolio().transactions
        XCTAssertEqual(txs.filter { $0.type == .deposit }.count, 2)
        let again = s.ok(["-p", "eu", "import", file])
        XCTAssertTrue(again.out.contains("Imported 0 transactions"), again.out)
    }

    /// A fiat-wallet buy paid with euros the file itself credited (a DOGE sale to the fiat wallet)
    /// deposits nothing: the cash is what the sale left, and no money came in from elsewhere.
    func testAVibanPurchaseSpendsTheFiatTheFileCredited() throws {
        let s = Sandbox(now: "2026-11-20T00:00:00Z")
        s.ok(["portfolio", "add", "eu", "--currency", "EUR", "--cash"])
        let file = s.write("crypto_transactions_record.csv", """
        Timestamp (UTC),Transaction Description,Currency,Amount,To Currency,To Amount,Native Currency,Native Amount,Native Amount (in USD),Transaction Kind
        2021-07-19 18:56:00,EUR -> BTC,EUR,-78.01,BTC,0.003,EUR,79.03,98.39247273,viban_purchase
        2021-05-05 05:34:27,DOGE -> EUR,DOGE,-750.0,EUR,406.22,EUR,406.22,470.713883898,crypto_viban_exchange
        2021-05-01 10:00:00,Deposit DOGE,DOGE,750,,,EUR,300,350,crypto_deposit

        """)
        let r = s.ok(["-p", "eu", "import", file])
        XCTAssertTrue(r.out.contains("Imported 3 transactions"), r.out)
        XCTAssertEqual(try s.loadPortfolio().transactions.filter { $0.type == .deposit }.count, 0)
        let summary = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.ok(["-p", "eu", "--json", "summary"]).out.utf8)) as? [String: Any])
        XCTAssertEqual(summary["cashBalance"] as? String, "328.21")
        // The DOGE that came in (at its 300 EUR), not another 78.01.
        XCTAssertEqual(summary["netDeposits"] as? String, "300.00")
    }
}

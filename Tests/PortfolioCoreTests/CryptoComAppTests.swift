import Foundation
import PortfolioCore
import XCTest

/// `import --format cryptocom`: rows copied from real Crypto.com App exports (research notes 4.3).
final class CryptoComAppTests: XCTestCase {
    /// Export-To-Ghostfolio's 2024–25 sample (with `Transaction Hash`).
    static let recent = """
    Timestamp (UTC),Transaction Description,Currency,Amount,To Currency,To Amount,Native Currency,Native Amount,Native Amount (in USD),Transaction Kind,Transaction Hash
    2025-05-31 08:35:20,Transfer: App wallet -> Exchange,CRO,-12273.72244554,,,EUR,1077.13070172963885744240152779334955,1272.818163455002581754924039178839659092358,crypto_to_exchange_transfer,
    2025-03-31 12:53:56,Balance Conversion,USDC,81.161849,,,EUR,74.28609799425389409045807996501963,87.7820070186964516784074699327253796755388,crypto_wallet_swap_credited,
    2025-03-31 12:53:56,Balance Conversion,USDT,-81.161849,,,EUR,73.53435355708566708793164263509916,86.8936895913243519555715227072365674692016,crypto_wallet_swap_debited,
    2025-01-07 11:43:48,EGLD -> USDC,EGLD,-4.15,USDC,150.865358,EUR,143.33016114556153037260009689941121,169.3696337724427464682749300795884857180596,crypto_exchange,
    2024-11-17 08:54:14,Cardholder CRO Unstake,CRO,12189.8634843,,,EUR,1809.01,2137.6614575876,finance.lockup.dpos_unlock.crypto_wallet,
    2024-11-11 00:33:50,Cardholder CRO Stake Reward,CRO,9.9110424,,,EUR,1.06944518,1.2637363764096568,finance.lockup.dpos_compound_interest.crypto_wallet,
    2024-08-08 06:28:12,Card Cashback,CRO,58.906197,,,EUR,4.38,5.1757354488,referral_card_cashback,
    2024-08-08 06:27:13,USDT -> EUR,USDT,-235.08,,,EUR,-210.0,-248.1516996,card_top_up,

    """

    /// rotki's fixture (older kinds, a BOM).
    static let older = "\u{FEFF}" + """
    Timestamp (UTC),Transaction Description,Currency,Amount,To Currency,To Amount,Native Currency,Native Amount,Native Amount (in USD),Transaction Kind
    2020-12-15 09:25:14,Convert Dust,CRO,193.02779901061902311,,,EUR,10.59,12.8794521,dust_conversion_credited
    2020-12-15 09:25:14,Convert Dust,UNI,-1.3387887,,,EUR,-5.84,-7.1025496,dust_conversion_debited
    2020-08-03 04:45:34,Crypto Earn,ETH,0.00061475,,,EUR,0.19,0.2249885,crypto_earn_interest_paid
    2020-07-31 15:37:07,MCO -> ETH,MCO,-12.32,ETH,0.14445954600007045,EUR,42.13,49.8882395,crypto_exchange
    2020-07-29 09:17:03,Sign-up Bonus Unlocked,MCO,12.32402069,,,USD,50.0,50.0,referral_gift
    2020-07-27 06:59:55,Buy ETH,ETH,1.0,,,EUR,281.14,332.911931,crypto_purchase
    2021-07-19 18:56:00,EUR -> BTC,EUR,-78.01,BTC,0.003,EUR,79.03,98.39247273,viban_purchase
    2021-05-05 05:34:27,DOGE -> EUR,DOGE,-750.0,EUR,406.22,EUR,406.22,470.713883898,crypto_viban_exchange

    """

    func read(_ text: String, cash: Bool = true) throws -> PresetRows {
        try StatementImport.rows(Array(text.utf8), format: .cryptoCom, options: StatementOptions(tracksCash: cash))
    }

    func skipped(_ p: PresetRows) -> [String: Int] { Dictionary(uniqueKeysWithValues: p.skipped) }
    func kinds(_ p: PresetRows) -> [String: Int] { Dictionary(uniqueKeysWithValues: p.kinds) }

    func testRecentKinds() throws {
        let p = try read(Self.recent)
        XCTAssertEqual(p.rows.map(presetLine), [
            // EGLD for USDC: a sale for dollars at par.
            "sell EGLD 4.15 36.353098313253012048 150.865358 0 USD 2025-01-07T11:43:48Z",
            // Rewards at their native value.
            "reward CRO 9.9110424 0.107904409731916796 - - EUR 2024-11-11T00:33:50Z",
            "reward CRO 58.906197 0.074355504566013657 - - EUR 2024-08-08T06:28:12Z",
            // USDT to the card leaves cash.
            "withdrawal - 235.08 - - - USD 2024-08-08T06:27:13Z",
        ])
        XCTAssertEqual(kinds(p), ["sell": 1, "reward": 2, "withdrawal": 1])
        XCTAssertEqual(skipped(p), ["internal move (between Crypto.com's wallets)": 2, "currency conversion (into the same currency)": 1])
        XCTAssertEqual(StatementImport.recognise(Array(Self.recent.utf8)), .cryptoCom)
    }

    func testOlderKindsPairsSwapsAndPurchases() throws {
        let p = try read(Self.older)
        XCTAssertEqual(p.rows.map(presetLine), [
            // Dust: one coin into CRO, valued at the credited leg's 10.59 EUR.
            "sell UNI 1.3387887 7.910135482918252895 10.59 0 EUR 2020-12-15T09:25:14Z",
            "buy CRO 193.02779901061902311 0.054862564119157848 10.59 0 EUR 2020-12-15T09:25:14Z",
            "reward ETH 0.00061475 309.068727124847498983 - - EUR 2020-08-03T04:45:34Z",
            "sell MCO 12.32 3.419642857142857143 42.13 0 EUR 2020-07-31T15:37:07Z",
            "buy ETH 0.14445954600007045 291.638740163141963985 42.13 0 EUR 2020-07-31T15:37:07Z",
            "reward MCO 12.32402069 4.057117499045678736 - - USD 2020-07-29T09:17:03Z",
            // The card money, never in this file, deposited right before its buy.
            "deposit - 281.14 - - - EUR 2020-07-27T06:59:55Z",
            "buy ETH 1 281.14 281.14 0 EUR 2020-07-27T06:59:55Z",
            // The euros that left, not the native value (79.03): out of the 406.22 the DOGE sale
            // (earlier in time, later in the file) put in the fiat wallet, so nothing deposited.
            "buy BTC 0.003 26003.333333333333333333 78.01 0 EUR 2021-07-19T18:56:00Z",
            "sell DOGE 750 0.541626666666666667 406.22 0 EUR 2021-05-05T05:34:27Z",
        ])
        XCTAssertEqual(kinds(p), ["buy": 2, "sell": 1, "reward": 2, "swap": 2, "deposit": 1])
        XCTAssertEqual(p.skipped.count, 0)
        // Without cash there is nowhere to deposit: the buys alone, nothing counted for it.
        let noCash = try read(Self.older, cash: false)
        XCTAssertEqual(noCash.rows.filter { $0.fields[.type] == "deposit" }.count, 0)
        XCTAssertEqual(noCash.skipped.count, 0)
        XCTAssertEqual(p.rows[1].fields[.linkedId], p.rows[0].fields[.id])
    }

    /// A fiat-wallet purchase spends the file's own fiat first (sales to fiat in, purchases out, in
    /// order of time whatever the file's order): only what that balance lacks is deposited.
    func testAVibanPurchaseDepositsOnlyWhatTheFilesFiatBalanceLacks() throws {
        let header = "Timestamp (UTC),Transaction Description,Currency,Amount,To Currency,To Amount,Native Currency,Native Amount,"
            + "Native Amount (in USD),Transaction Kind"
        let rows = [
            "2021-07-20 09:00:00,EUR -> ETH,EUR,-400,ETH,0.2,EUR,400,470,viban_purchase",
            "2021-07-19 18:56:00,EUR -> BTC,EUR,-78.01,BTC,0.003,EUR,79.03,98.39247273,viban_purchase",
            "2021-06-01 10:00:00,USD -> BTC,USD,-50,BTC,0.001,EUR,42,50,viban_purchase",
            "2021-05-05 05:34:27,DOGE -> EUR,DOGE,-750.0,EUR,406.22,EUR,406.22,470.713883898,crypto_viban_exchange",
        ]
        let p = try read(header + "\n" + rows.joined(separator: "\n") + "\n")
        XCTAssertEqual(p.rows.map(presetLine), [
            // 406.22 − 78.01 = 328.21 left: 71.79 of the 400 came from outside the file.
            "deposit - 71.79 - - - EUR 2021-07-20T09:00:00Z",
            "buy ETH 0.2 2000 400 0 EUR 2021-07-20T09:00:00Z",
            // Covered by the DOGE sale's euros: no deposit.
            "buy BTC 0.003 26003.333333333333333333 78.01 0 EUR 2021-07-19T18:56:00Z",
            // Dollars the file never credited: all of it deposited.
            "deposit - 50 - - - USD 2021-06-01T10:00:00Z",
            "buy BTC 0.001 50000 50 0 USD 2021-06-01T10:00:00Z",
            "sell DOGE 750 0.541626666666666667 406.22 0 EUR 2021-05-05T05:34:27Z",
        ])
        // Without cash, nothing is deposited at all.
        XCTAssertEqual(try read(header + "\n" + rows.joined(separator: "\n") + "\n", cash: false).rows.filter { $0.fields[.type] == "deposit" }.count, 0)
    }

    func testDustOfSeveralCoinsAndUnknownKindsAreCounted() throws {
        let text = Self.older.components(separatedBy: "\n").prefix(3).joined(separator: "\n") + "\n"
            + "2020-12-15 09:25:14,Convert Dust,BAT,-2,,,EUR,-0.4,-0.5,dust_conversion_debited\n"
            + "2021-01-01 00:00:00,Reverted,CRO,-1,,,EUR,-0.1,-0.1,reimbursement_reverted\n"
            + "2021-01-02 00:00:00,Something,CRO,1,,,EUR,0.1,0.1,brand_new_kind\n"
        let p = try read(text)
        XCTAssertEqual(p.rows.count, 0)
        XCTAssertEqual(skipped(p), ["dust conversion (1 credited, 2 debited, not paired)": 3, "reimbursement_reverted": 1, "brand_new_kind": 1])
    }

    func testIdsAreStableOnReRead() throws {
        let a = try read(Self.older), b = try read(Self.older)
        let ids = a.rows.compactMap { $0.fields[.id] }
        XCTAssertEqual(ids.count, a.rows.count)
        XCTAssertEqual(Set(ids).count, ids.count)
        XCTAssertEqual(ids, b.rows.compactMap { $0.fields[.id] })
    }

    func testWithoutCashMoneyRowsAreSkipped() throws {
        let p = try read(Self.recent, cash: false)
        XCTAssertEqual(skipped(p)["withdrawal (the portfolio does not track cash)"], 1)
        XCTAssertEqual(skipped(p)["currency conversion (the portfolio does not track cash)"], 1)
    }

    /// A wider export listing another row of the same hash first keeps the ids of the rows it shares.
    func testAnOverlappingFileWithAnotherRowOfTheHashFirstKeepsTheIds() throws {
        let header = "Timestamp (UTC),Transaction Description,Currency,Amount,To Currency,To Amount,Native Currency,Native Amount,"
            + "Native Amount (in USD),Transaction Kind,Transaction Hash"
        let withdrawal = "2025-02-01 10:00:00,Withdraw ETH,ETH,-0.5,,,EUR,1500,1600,crypto_withdrawal,0xabc"
        let a = try read(header + "\n" + withdrawal + "\n")
        let b = try read(header + "\n2025-02-01 10:00:00,Withdraw ETH,ETH,-0.2,,,EUR,600,640,crypto_withdrawal,0xabc\n" + withdrawal + "\n")
        XCTAssertEqual(a.rows.count, 1)
        XCTAssertEqual(b.rows.count, 2)
        XCTAssertEqual(a.rows.first?.fields[.id], b.rows.last?.fields[.id])
        XCTAssertNotEqual(b.rows.first?.fields[.id], b.rows.last?.fields[.id])
    }

    /// A coin topped up to the card is spent at its native value (the money went to the card); a
    /// crypto deposit comes in at its native value.
    func testACardTopUpOfACoinIsASpendAndADepositHasItsNativeValue() throws {
        let header = "Timestamp (UTC),Transaction Description,Currency,Amount,To Currency,To Amount,Native Currency,Native Amount,"
            + "Native Amount (in USD),Transaction Kind"
        let p = try read(header + """

        2024-08-08 06:27:13,CRO -> EUR,CRO,-1000,,,EUR,-80.0,-94.5,card_top_up
        2024-08-09 10:00:00,Deposit ETH,ETH,0.5,,,EUR,1250,1400,crypto_deposit
        2024-08-10 10:00:00,Deposit SOL,SOL,2,,,,,,crypto_deposit

        """)
        XCTAssertEqual(p.rows.map(presetLine), [
            "spend CRO 1000 0.08 80 0 EUR 2024-08-08T06:27:13Z",
            "transfer-in ETH 0.5 2500 - 0 EUR 2024-08-09T10:00:00Z",
            "transfer-in SOL 2 0 - 0 - 2024-08-10T10:00:00Z",
        ])
        XCTAssertTrue(p.rows[2].fields[.notes]?.contains("cost not in the file (0)") ?? false)
        XCTAssertEqual(p.rows.filter { $0.fields[.type] == "deposit" || $0.fields[.type] == "sell" }.count, 0)
    }
}

import Foundation
import PortfolioCore
import XCTest

/// `import --format koinly`: Koinly's universal CSV, columns by name in any order (research notes 5.2).
final class KoinlyUniversalTests: XCTestCase {
    static let header = "Date,Sent Amount,Sent Currency,Received Amount,Received Currency,Fee Amount,Fee Currency,"
        + "Net Worth Amount,Net Worth Currency,Label,Description,TxHash"

    /// Rows written as Koinly's help centre describes them, one per kind of event.
    static let events = """
    2024-01-05 10:00 UTC,1000,EUR,0.025,BTC,2.5,EUR,,,,Buy BTC,
    2024-01-06 11:00 UTC,,,1.5,ETH,,,,,,From wallet,0xabc
    2024-01-07 12:00:30,0.5,ETH,0.02,BTC,0.001,ETH,1200,EUR,,ETH->BTC,0xdef
    2024-01-08 13:00 UTC,0.1,ETH,,,0.0005,ETH,,,,To Ledger,0x111
    2024-01-09 14:00 UTC,,,0.01,ETH,,,25,EUR,staking,Staking reward,
    2024-01-10 15:00 UTC,0.002,BTC,,,,,,,cost,Fee,
    2024-01-11 16:00 UTC,0.001,BTC,,,,,,,gift,Gift to friend,
    2024-01-12 17:00 UTC,0.2,ETH,,,,,300,EUR,gift,Gift with value,
    2024-01-13 18:00 UTC,0.01,BTC,450,EUR,1,EUR,,,,Sell BTC,
    2024-01-14 19:00 UTC,0.1,ETH,0.004,BTC,,,,,,no net worth,
    2024-01-15 20:00 UTC,0.3,ETH,0.3,WETH,,,,,swap,,
    2024-01-16 21:00 UTC,,,0.5,SOL,,,,,airdrop,,
    2024-01-17 22:00 UTC,,,100,EUR,,,,,,Bank,
    2024-01-18 23:00 UTC,,,,,,,,,,empty,
    """

    func read(_ text: String, cash: Bool = true) throws -> PresetRows {
        try StatementImport.rows(Array(text.utf8), format: .koinly, options: StatementOptions(tracksCash: cash))
    }

    func skipped(_ p: PresetRows) -> [String: Int] { Dictionary(uniqueKeysWithValues: p.skipped) }
    func kinds(_ p: PresetRows) -> [String: Int] { Dictionary(uniqueKeysWithValues: p.kinds) }

    func testEachKindOfRowBecomesWhatItIs() throws {
        let p = try read(Self.header + "\n" + Self.events + "\n")
        XCTAssertEqual(p.rows.map(presetLine), [
            "buy BTC 0.025 40000 1000 2.5 EUR 2024-01-05T10:00:00Z",
            "transfer-in ETH 1.5 0 - 0 - 2024-01-06T11:00:00Z",
            // 0.5 ETH and its 0.001 ETH fee leave for 0.02 BTC, worth 1200 EUR.
            "sell ETH 0.501 2395.209580838323353293 1200 0 EUR 2024-01-07T12:00:30Z",
            "buy BTC 0.02 60000 1200 0 EUR 2024-01-07T12:00:30Z",
            "transfer-out ETH 0.1 - - 0.0005 - 2024-01-08T13:00:00Z",
            "reward ETH 0.01 2500 - - EUR 2024-01-09T14:00:00Z",
            "fee BTC 0.002 - - - - 2024-01-10T15:00:00Z",
            "spend ETH 0.2 1500 300 0 EUR 2024-01-12T17:00:00Z",
            "sell BTC 0.01 45000 450 1 EUR 2024-01-13T18:00:00Z",
            "reward SOL 0.5 0 - - - 2024-01-16T21:00:00Z",
            "deposit - 100 - - - EUR 2024-01-17T22:00:00Z",
        ])
        XCTAssertEqual(kinds(p), ["buy": 1, "sell": 1, "transfer-in": 1, "transfer-out": 1, "reward": 2, "swap": 1, "fee": 1, "spend": 1,
                                  "deposit": 1])
        XCTAssertEqual(skipped(p), ["gift (no value in the file)": 1, "crypto-to-crypto": 1, "swap": 1, "row without an amount": 1])
        // The swap's legs are linked by the sell leg's id.
        XCTAssertEqual(p.rows[3].fields[.linkedId], p.rows[2].fields[.id])
        XCTAssertTrue(p.rows[1].fields[.notes]?.contains("0xabc") ?? false)
    }

    func testWithoutCashMoneyRowsAreSkippedAndCounted() throws {
        let p = try read(Self.header + "\n" + Self.events + "\n", cash: false)
        XCTAssertEqual(skipped(p)["deposit (the portfolio does not track cash)"], 1)
        XCTAssertEqual(p.rows.count, 10)
    }

    func testIdsAreStableAndIdenticalRowsKeepTheirOwn() throws {
        let text = Self.header + "\n" + Self.events + "\n2024-01-05 10:00 UTC,1000,EUR,0.025,BTC,2.5,EUR,,,,Buy BTC,\n"
        let a = try read(text), b = try read(text)
        let ids = a.rows.compactMap { $0.fields[.id] }
        XCTAssertEqual(ids.count, a.rows.count)
        XCTAssertEqual(Set(ids).count, ids.count)
        XCTAssertEqual(ids, b.rows.compactMap { $0.fields[.id] })
        // The same rows in a longer file keep their ids.
        let shorter = try read(Self.header + "\n" + Self.events + "\n")
        XCTAssertEqual(Array(ids.prefix(shorter.rows.count)), shorter.rows.compactMap { $0.fields[.id] })
    }

    /// River's export (research 5.2): `Tag`, no net worth, no TxHash; and a nahmii row in another order.
    func testOtherColumnOrdersAndTagRead() throws {
        let river = """
        Date,Sent Amount,Sent Currency,Received Amount,Received Currency,Fee Amount,Fee Currency,Tag
        2024-09-26 19:59:41,3.96,USD,0.00006093,BTC,0.04,USD,Buy

        """
        XCTAssertEqual(try read(river).rows.map(presetLine), ["buy BTC 0.00006093 64992.61447562776957164 3.96 0.04 USD 2024-09-26T19:59:41Z"])
        let nahmii = """
        Date,TxHash,Received Amount,Received Currency,Sent Amount,Sent Currency,Fee Amount,Fee Currency,Description,Tag
        2021-11-11 12:01:31,0xeca4b654ac654c65c46a46c54bc65b4a4c46c5a4c565c4c767c6c8c8a8882341,122.3,LP1,700000.0,NII,0.000536202925,ETH,NiiFi,Liquidity in,

        """
        let p = try read(nahmii)
        XCTAssertEqual(p.rows.count, 0)
        XCTAssertEqual(skipped(p), ["liquidity in": 1])
        XCTAssertEqual(StatementImport.recognise(Array(nahmii.utf8)), .koinly)
        XCTAssertEqual(StatementImport.recognise(Array(river.utf8)), .koinly)
    }

    func testABadDateOrNumberIsAProblem() {
        XCTAssertThrowsError(try read(Self.header + "\n26/09/2024,1,EUR,1,BTC,,,,,,,\n"))
        XCTAssertThrowsError(try read(Self.header + "\n2024-09-26 10:00 UTC,x,EUR,1,BTC,,,,,,,\n"))
    }

    /// A wider export that lists another row of the same transaction first keeps the ids of the rows
    /// the narrower one had: ids are keyed on the hash and the row, not the hash's position.
    func testAnOverlappingFileWithAnotherRowOfTheHashFirstKeepsTheIds() throws {
        let withdrawal = "2024-01-08 13:00 UTC,0.1,ETH,,,,,,,,To Ledger,0xabc"
        let a = try read(Self.header + "\n" + withdrawal + "\n")
        let b = try read(Self.header + "\n2024-01-08 13:00 UTC,0.0005,ETH,,,,,,,cost,Gas,0xabc\n" + withdrawal + "\n" + withdrawal + "\n")
        let outA = a.rows.filter { $0.fields[.type] == "transfer-out" }, outB = b.rows.filter { $0.fields[.type] == "transfer-out" }
        XCTAssertEqual(outA.count, 1)
        XCTAssertEqual(outB.count, 2)
        XCTAssertEqual(outA.first?.fields[.id], outB.first?.fields[.id])
        // Wholly identical rows are numbered: the second keeps an id of its own.
        XCTAssertNotEqual(outB.first?.fields[.id], outB.last?.fields[.id])
        XCTAssertEqual(Set(b.rows.compactMap { $0.fields[.id] }).count, 3)
    }

    /// A crypto deposit with a net worth comes in at that value; without one at 0, with a note.
    func testACryptoDepositComesInAtItsNetWorth() throws {
        let p = try read(Self.header + """

        2024-02-01 10:00 UTC,,,0.5,ETH,,,1250,EUR,,From wallet,0x1
        2024-02-02 10:00 UTC,,,2,SOL,,,,,,From wallet,0x2

        """)
        XCTAssertEqual(p.rows.map(presetLine), [
            "transfer-in ETH 0.5 2500 - 0 EUR 2024-02-01T10:00:00Z",
            "transfer-in SOL 2 0 - 0 - 2024-02-02T10:00:00Z",
        ])
        XCTAssertTrue(p.rows[1].fields[.notes]?.contains("cost not in the file (0)") ?? false)
    }

    /// `interest` is among the reward labels the doc comment names, and the code takes it as one.
    func testInterestIsAReward() throws {
        let p = try read(Self.header + "\n2024-02-03 10:00 UTC,,,0.01,ETH,,,25,EUR,interest,Interest,\n")
        XCTAssertEqual(p.rows.map(presetLine), ["reward ETH 0.01 2500 - - EUR 2024-02-03T10:00:00Z"])
    }
}

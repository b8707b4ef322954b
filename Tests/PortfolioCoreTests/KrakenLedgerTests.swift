import Foundation
import PortfolioCore
import XCTest

/// One import row as `type asset amount price total fee currency date`, empty fields as `-`.
func presetLine(_ r: ImportRow) -> String {
    let f = r.fields
    func v(_ field: TransactionField) -> String { f[field].flatMap { $0.isEmpty ? nil : $0 } ?? "-" }
    return [v(.type), v(.assetId), v(.amount), v(.price), v(.total), v(.fee), v(.currency), v(.date)].joined(separator: " ")
}

/// `import --format kraken-ledger`: rows copied from real ledgers.csv exports (research notes 4.2).
final class KrakenLedgerTests: XCTestCase {
    static let header = #""txid","refid","time","type","subtype","aclass","asset","amount","fee","balance""#

    /// CoinTaxman#97: a deposit written twice (pending, then completed), a EUR→DOT trade, spot→staking moves.
    static let coinTaxman = """
    "","QCCNPU5-JCHILF-COMBWG","2021-02-10 10:06:39","deposit","","currency","ZEUR",500.0000,0.0000,""
    "","QCCNPU5-JCHILF-COMBWG","2021-02-10 10:08:19","deposit","","currency","ZEUR",500.0000,0.0000,500.0000
    "","TOUPQD-AQOLA-AYA2VU","2021-05-11 18:55:10","trade","","currency","ZEUR",-200.0000,0.3200,299.6800
    "","TOUPQD-AQOLA-AYA2VU","2021-05-11 18:55:10","trade","","currency","DOT",6.2500000000,0.0000000000,6.2500000000
    "","BUHHIWP-UBPSTP-CO65OD","2021-05-18 17:52:28","transfer","spottostaking","currency","DOT",-10.4166666600,0.0000000000,0.0000000000
    "","RUI4U34-RQ42JX-Q334OO","2021-05-18 17:52:46","transfer","stakingfromspot","currency","DOT.S",10.4166666600,0.0000000000,10.4166666600
    """

    /// PP-Crypto-Parser: a EUR→BTC trade, a Buy Crypto (spend/receive), a withdrawal written twice.
    static let ppCrypto = """
    "LU4MDZ-PSSAV-7KKYF2","TTWFFE-HZX34-2EEGRM","2022-02-24 08:57:02","trade","","currency","ZEUR",-1499.9999,2.4000,793.5752
    "L3H4BL-PFLZU-JVX2JY","TTWFFE-HZX34-2EEGRM","2022-02-24 08:57:02","trade","","currency","XXBT",0.0474606900,0.0000000000,0.0474667000
    "LITOLA-QGBFJ-GS4SHT","TSS6BTF-K6OZK-DZ6MUU","2020-12-29 16:39:51","spend","","currency","ZEUR",-500.0000,0.0000,10581.8771
    "LT466K-ML25G-HZUBFW","TSS6BTF-K6OZK-DZ6MUU","2020-12-29 16:39:51","receive","","currency","DOT",4633.18411000,0.00000000,4633.18411000
    "","AGB76R3-DWC5SC-UCBGGX","2021-11-03 20:15:19","withdrawal","","currency","XXBT",-0.0307600000,0.0001500000,""
    "LU6WLT-MWUUY-BVWZ6E","AGB76R3-DWC5SC-UCBGGX","2021-11-03 21:02:37","withdrawal","","currency","XXBT",-0.0307600000,0.0001500000,0.0000060100
    """

    /// PP-Crypto-Parser#4 (2024): a staking reward on BTC.M, an earn move BTC.M→BTC, an earn reward.
    static let earn = """
    "LVOEPI-YP2LX-H2RBFQ","ST5ENW3-ITDUB-JOLAPV","2024-03-11 12:01:02","staking","","currency","BTC.M",0.0000007100,0,0.0100000000
    "L5LDYP-Y2KAB-CYRTJV","Unknown","2024-03-11 16:31:11","earn","","currency","BTC.M",-0.0100000000,0,0.0000000000
    "LBAOX7-N4RCV-V7LXMB","Unknown","2024-03-11 16:31:11","earn","","currency","BTC",0.0100000000,0,0.0100000000
    "LXCWAU-5PRVS-LJJ2XU","Unknown","2024-03-12 09:29:47","earn","","currency","BTC",0.0000000841,0,0.0123456789
    """

    func read(_ body: String, cash: Bool = true) throws -> PresetRows {
        try StatementImport.rows(Array((Self.header + "\n" + body + "\n").utf8), format: .krakenLedger, options: StatementOptions(tracksCash: cash))
    }

    func skipped(_ p: PresetRows) -> [String: Int] { Dictionary(uniqueKeysWithValues: p.skipped) }
    func kinds(_ p: PresetRows) -> [String: Int] { Dictionary(uniqueKeysWithValues: p.kinds) }

    func testTradesAreBuysWithTheMoneyLegAsTotalAndItsFee() throws {
        let p = try read(Self.ppCrypto)
        XCTAssertEqual(p.rows.map(presetLine), [
            "buy BTC 0.04746069 31605.100979357864371546 1499.9999 2.4 EUR 2022-02-24T08:57:02Z",
            "buy DOT 4633.18411 0.107917144695551501 500 0 EUR 2020-12-29T16:39:51Z",
            "transfer-out BTC 0.03076 - - 0.00015 - 2021-11-03T21:02:37Z",
        ])
        XCTAssertEqual(kinds(p), ["buy": 2, "transfer-out": 1])
        XCTAssertEqual(skipped(p), ["withdrawal (pending row; the completed one is kept)": 1])
        XCTAssertTrue(p.rows[0].fields[.notes]?.contains("TTWFFE-HZX34-2EEGRM") ?? false)
    }

    func testAGroupsOrderDoesNotMatter() throws {
        let lines = Self.ppCrypto.split(separator: "\n").map(String.init)
        let reversed = try read(lines.reversed().joined(separator: "\n"))
        let forward = try read(Self.ppCrypto)
        XCTAssertEqual(Set(reversed.rows.map(presetLine)), Set(forward.rows.map(presetLine)))
        XCTAssertEqual(Set(reversed.rows.compactMap { $0.fields[.id] }), Set(forward.rows.compactMap { $0.fields[.id] }))
        // The completed withdrawal is kept whichever comes first.
        XCTAssertTrue(reversed.rows.map(presetLine).contains("transfer-out BTC 0.03076 - - 0.00015 - 2021-11-03T21:02:37Z"))
    }

    func testDuplicateDepositsCountOnceAndCashNeedsATrackingPortfolio() throws {
        let p = try read(Self.coinTaxman)
        XCTAssertEqual(p.rows.map(presetLine), [
            "deposit - 500 - - - EUR 2021-02-10T10:08:19Z",
            "buy DOT 6.25 32 200 0.32 EUR 2021-05-11T18:55:10Z",
        ])
        XCTAssertEqual(skipped(p), ["deposit (pending row; the completed one is kept)": 1, "internal move (between Kraken's wallets)": 2])
        let noCash = try read(Self.coinTaxman, cash: false)
        XCTAssertEqual(noCash.rows.map { $0.fields[.type] }, ["buy"])
        XCTAssertEqual(skipped(noCash)["deposit (the portfolio does not track cash)"], 1)
    }

    func testStakingAndEarnRewardsAndMoves() throws {
        let p = try read(Self.earn)
        XCTAssertEqual(p.rows.map(presetLine), [
            "reward BTC 0.00000071 0 - - - 2024-03-11T12:01:02Z",
            "reward BTC 0.0000000841 0 - - - 2024-03-12T09:29:47Z",
        ])
        XCTAssertEqual(skipped(p), ["internal move (between Kraken's wallets)": 2])
        // `Unknown` refids are not one event: each row keeps its own id.
        XCTAssertEqual(Set(p.rows.compactMap { $0.fields[.id] }).count, 2)
    }

    func testCryptoToCryptoKFEEFiatConversionAndFeesOnTheCryptoLeg() throws {
        let p = try read("""
        "T1","RA","2024-05-01 10:00:00","trade","","currency","XETH",-1.0000000000,0.0000000000,1.0
        "T2","RA","2024-05-01 10:00:00","trade","","currency","XXBT",0.0500000000,0.0000000000,1.0
        "T3","RB","2024-05-02 10:00:00","trade","","currency","BTC",-0.0100000000,0.0000100000,1.0
        "T4","RB","2024-05-02 10:00:00","trade","","currency","ZUSD",600.0000,0.9600,1.0
        "T5","RB","2024-05-02 10:00:00","trade","","currency","KFEE",0.00,45.12,1.0
        "T6","RC","2024-05-03 10:00:00","trade","","currency","ZEUR",-100.0000,0.0000,1.0
        "T7","RC","2024-05-03 10:00:00","trade","","currency","ETH28.S",0.0400000000,0.0010000000,1.0
        "T8","RD","2024-05-04 10:00:00","trade","","currency","ZEUR",-92.0000,0.0000,1.0
        "T9","RD","2024-05-04 10:00:00","trade","","currency","ZUSD",100.0000,0.1600,1.0
        "T10","RE","2024-05-05 10:00:00","rollover","","currency","ZUSD",0.0000,0.0200,1.0
        "T11","RF","2024-05-06 10:00:00","deposit","","currency","SOL",2.0000000000,0.0000000000,1.0
        """)
        XCTAssertEqual(p.rows.map(presetLine), [
            // A sale with a fee in BTC: the units gone include it; the USD fee is the fee.
            "sell BTC 0.01001 59940.05994005994005994 600 0.96 USD 2024-05-02T10:00:00Z",
            // A fee in the bought units: fewer units received.
            "buy ETH 0.039 2564.102564102564102564 100 0 EUR 2024-05-03T10:00:00Z",
            "withdrawal - 92 - - - EUR 2024-05-04T10:00:00Z",
            "deposit - 99.84 - - - USD 2024-05-04T10:00:00Z",
            "transfer-in SOL 2 0 - 0 - 2024-05-06T10:00:00Z",
        ])
        XCTAssertEqual(kinds(p), ["sell": 1, "buy": 1, "transfer-in": 1, "cash exchange": 1])
        XCTAssertEqual(skipped(p), ["crypto-to-crypto": 1, "margin": 1])
        XCTAssertEqual(p.feesNotCounted.map(\.0), ["KFEE"])
        XCTAssertEqual(p.feesNotCounted.map(\.1), [1])
    }

    func testTheTradesPresetPointsToTheLedgerPresetAndTheLedgerIsRecognised() throws {
        let bytes = Array((Self.header + "\n" + Self.ppCrypto + "\n").utf8)
        XCTAssertEqual(StatementImport.recognise(bytes), .krakenLedger)
        XCTAssertNil(ExchangeImport.recognise(bytes))
        XCTAssertThrowsError(try ExchangeImport.rows(bytes, exchange: .kraken)) { error in
            XCTAssertEqual((error as? ImportFailure)?.problems, ["this is a Kraken ledgers.csv; import it with --format kraken-ledger"])
        }
        // Newer exports with more columns read the same.
        let wide = #""txid","refid","time","type","subtype","aclass","subclass","asset","wallet","amount","fee","balance","amountusd""#
            + "\n" + #""L1","R1","2025-01-02 03:04:05","earn","reward","currency","crypto","ADA.S","earn / bonded",5.0000000000,0,105.0000000000,4.2"#
            + "\n"
        let p = try StatementImport.rows(Array(wide.utf8), format: .krakenLedger, options: StatementOptions(tracksCash: false))
        XCTAssertEqual(p.rows.map(presetLine), ["reward ADA 5 0 - - - 2025-01-02T03:04:05Z"])
    }

    /// Rows with neither refid nor txid that say the same thing keep ids of their own.
    func testIdenticalRowsWithoutRefidOrTxidKeepTheirOwnIds() throws {
        let row = #""","","2024-03-12 09:29:47","earn","reward","currency","BTC",0.0000000841,0,0.0123456789"#
        let p = try read(row + "\n" + row)
        XCTAssertEqual(p.rows.count, 2)
        XCTAssertEqual(Set(p.rows.compactMap { $0.fields[.id] }).count, 2)
    }

    /// A staking migration under one refid (DOT.S out, DOT28.S in) and a spot-to-staking move at one
    /// instant under two refids sum to zero in one plain asset: moves, not rewards. A reward beside
    /// them still is one.
    func testLegsOfOneAssetThatCancelOutAreMovesNotRewards() throws {
        let p = try read("""
        "L1","RMIG1","2024-05-01 10:00:00","staking","","currency","DOT.S",-10.0000000000,0,0.0000000000
        "L2","RMIG1","2024-05-01 10:00:00","staking","","currency","DOT28.S",10.0000000000,0,10.0000000000
        "L3","RSPOT","2024-05-02 11:00:00","transfer","","currency","ADA",-2.0000000000,0,0.0000000000
        "L4","RSTAK","2024-05-02 11:00:00","staking","","currency","ADA.S",2.0000000000,0,2.0000000000
        "L5","RREW1","2024-05-03 12:00:00","staking","","currency","DOT28.S",0.0100000000,0,10.0100000000
        """)
        XCTAssertEqual(p.rows.map(presetLine), ["reward DOT 0.01 0 - - - 2024-05-03T12:00:00Z"])
        XCTAssertEqual(skipped(p), ["internal move (between Kraken's wallets)": 4])
    }

    /// Rows of one refid handled each on its own (two earn rewards) get ids of their own: by txid,
    /// else by what the row says, the same on a re-read; a lone reward keeps its refid's id.
    func testRewardsSharingARefidKeepTheirOwnIds() throws {
        let withTxids = """
        "LA1","RX","2024-06-01 00:00:00","earn","reward","currency","DOT",0.5000000000,0,1.0
        "LA2","RX","2024-06-01 00:00:00","earn","reward","currency","ETH",0.0100000000,0,1.0
        """
        let p = try read(withTxids)
        XCTAssertEqual(p.rows.map(presetLine), ["reward DOT 0.5 0 - - - 2024-06-01T00:00:00Z", "reward ETH 0.01 0 - - - 2024-06-01T00:00:00Z"])
        let ids = p.rows.compactMap { $0.fields[.id] }
        XCTAssertEqual(ids.count, 2)
        XCTAssertEqual(Set(ids).count, 2)
        // Without txids, and with two identical rows besides.
        let bare = """
        "","RY","2024-06-01 00:00:00","earn","reward","currency","DOT",0.5000000000,0,1.0
        "","RY","2024-06-01 00:00:00","earn","reward","currency","ETH",0.0100000000,0,1.0
        "","RY","2024-06-01 00:00:00","earn","reward","currency","ETH",0.0100000000,0,1.0
        """
        let a = try read(bare), b = try read(bare)
        let bareIDs = a.rows.compactMap { $0.fields[.id] }
        XCTAssertEqual(bareIDs.count, 3)
        XCTAssertEqual(Set(bareIDs).count, 3)
        XCTAssertEqual(bareIDs, b.rows.compactMap { $0.fields[.id] })
        // A reward alone under its refid keeps the refid's id (as imported before): not its txid's.
        let lone = try read(#""LA1","RX","2024-06-01 00:00:00","earn","reward","currency","DOT",0.5000000000,0,1.0"#)
        let loneOtherTxid = try read(#""LB9","RX","2024-06-01 00:00:00","earn","reward","currency","DOT",0.5000000000,0,1.0"#)
        XCTAssertEqual(lone.rows.count, 1)
        XCTAssertEqual(lone.rows.first?.fields[.id], loneOtherTxid.rows.first?.fields[.id])
        XCTAssertNotEqual(lone.rows.first?.fields[.id], ids.first)
    }
}

import Foundation
@testable import PortfolioCore
import XCTest

/// `import --format revolut` on Revolut's crypto statement, from the real rows quoted in the
/// import-formats research (section 3.6, Export-To-Ghostfolio's samples/revolut-crypto-export.csv).
final class RevolutCryptoTests: XCTestCase {
    static let crypto = """
    Symbol,Type,Quantity,Price,Value,Fees,Date
    BTC,Buy,0.00056077,"89,162.28 SEK",50.00 SEK,0.00 SEK,"May 5, 2020, 10:10:57 PM"
    BTC,Sell,0.00001082,"86,557.95 SEK",0.93 SEK,0.00 SEK,"Jun 2, 2020, 9:10:31 PM"
    BTC,Send,0.00056077,"137,211.36 SEK",76.94 SEK,0.00 SEK,"Nov 9, 2020, 3:50:00 AM"
    BTC,Receive,0.00056077,"137,211.36 SEK",76.94 SEK,0.00 SEK,"Nov 9, 2020, 3:50:00 AM"
    BTC,Buy,0.00027963,"€35,761.54",€10.00,€0.24,"Mar 8, 2022, 2:08:54 PM"
    ETH,Stake,0.18580349,"24,185.66 SEK","4,493.77 SEK",0.00 SEK,"Feb 2, 2024, 11:03:12 AM"
    ETH,Staking reward,0.00002061,,,,"Jan 15, 2025, 12:23:31 AM"

    """

    func read(_ text: String) throws -> PresetRows {
        try StatementImport.rows(Array(text.utf8), format: .revolut, options: StatementOptions(tracksCash: true))
    }

    func describe(_ rows: [ImportRow]) -> [String] {
        rows.map { r in
            let f = r.fields
            return [f[.type], f[.assetId], f[.amount], f[.currency]].map { $0 ?? "-" }.joined(separator: " ")
                + (f[.total] == nil ? (f[.price].map { " at \($0)" } ?? "") : "") + " fee \(f[.fee] ?? "-")"
                + (f[.total].map { " total \($0)" } ?? "") + " \(f[.date] ?? "?")"
        }
    }

    func testTheCryptoStatement() throws {
        XCTAssertEqual(StatementImport.recognise(Array(Self.crypto.utf8)), .revolut)
        let result = try read(Self.crypto)
        XCTAssertEqual(describe(result.rows), [
            "buy BTC 0.00056077 SEK fee 0 total 50 2020-05-05T22:10:57Z",
            "sell BTC 0.00001082 SEK fee 0 total 0.93 2020-06-02T21:10:31Z",
            "transfer-out BTC 0.00056077 - fee 0 2020-11-09T03:50:00Z",
            "transfer-in BTC 0.00056077 SEK at 137211.36 fee 0 2020-11-09T03:50:00Z",
            "buy BTC 0.00027963 EUR fee 0.24 total 10 2022-03-08T14:08:54Z",
            // 12:23:31 AM is just after midnight; no value in the row: a reward at 0.
            "reward ETH 0.00002061  at 0 fee - 2025-01-15T00:23:31Z",
        ])
        XCTAssertEqual(Dictionary(result.skipped, uniquingKeysWith: +), ["stake (an internal move into or out of staking)": 1])
        XCTAssertTrue(result.assets.isEmpty, "coins resolve by symbol; nothing is registered")
        XCTAssertEqual(try read(Self.crypto).rows.map { $0.fields[.id] }, result.rows.map { $0.fields[.id] })
        XCTAssertEqual(Set(result.rows.compactMap { $0.fields[.id] }).count, 6)
        // The trading statement's mapping is still what --show-map prints.
        XCTAssertTrue(StatementFormat.revolut.mapping?.contains("Total Amount") == true)
    }

    func testMoneyStringsAndDates() {
        XCTAssertEqual(ExchangeImport.Mapper.revolutMoney("89,162.28 SEK")?.0, Decimal(string: "89162.28"))
        XCTAssertEqual(ExchangeImport.Mapper.revolutMoney("89,162.28 SEK")?.1, "SEK")
        XCTAssertEqual(ExchangeImport.Mapper.revolutMoney("€35,761.54")?.0, Decimal(string: "35761.54"))
        XCTAssertEqual(ExchangeImport.Mapper.revolutMoney("€35,761.54")?.1, "EUR")
        XCTAssertEqual(ExchangeImport.Mapper.revolutMoney("-$1,259.59")?.0, Decimal(string: "-1259.59"))
        XCTAssertNil(ExchangeImport.Mapper.revolutMoney("12.5"))
        XCTAssertEqual(ExchangeImport.Mapper.revolutNumber("0,76672417"), Decimal(string: "0.76672417"))
        XCTAssertEqual(ExchangeImport.Mapper.revolutDate("Nov 9, 2020, 3:50:00 AM"), "2020-11-09T03:50:00Z")
        XCTAssertEqual(ExchangeImport.Mapper.revolutDate("Dec 31, 2021, 12:00:00 PM"), "2021-12-31T12:00:00Z")
        XCTAssertNil(ExchangeImport.Mapper.revolutDate("2020-11-09 03:50:00"))
        XCTAssertNil(ExchangeImport.Mapper.revolutDate("Feb 30, 2021, 1:00:00 PM"))
    }

    func testABadDateIsAProblem() {
        let text = """
        Symbol,Type,Quantity,Price,Value,Fees,Date
        BTC,Buy,0.00056077,"89,162.28 SEK",50.00 SEK,0.00 SEK,"5/5/2020 22:10"

        """
        XCTAssertThrowsError(try read(text)) { error in XCTAssertTrue("\(error)".contains("is not a Revolut date"), "\(error)") }
    }

    /// Local times in the zone --utc-offset names (UTC without it); ids are seeded by the portfolio.
    func testTheUTCOffsetAndIdsSeededByThePortfolio() throws {
        func rows(_ offset: Int?, portfolio: String = "main") throws -> [ImportRow] {
            try StatementImport.rows(Array(Self.crypto.utf8), format: .revolut,
                                     options: StatementOptions(tracksCash: true, portfolio: portfolio, utcOffsetSeconds: offset)).rows
        }
        XCTAssertEqual(try rows(2 * 3600).first?.fields[.date], "2020-05-05T20:10:57Z")
        XCTAssertEqual(try rows(nil).first?.fields[.date], "2020-05-05T22:10:57Z")
        let main = try rows(nil).compactMap { $0.fields[.id] }, other = try rows(nil, portfolio: "other").compactMap { $0.fields[.id] }
        XCTAssertEqual(main.count, other.count)
        XCTAssertTrue(Set(main).isDisjoint(with: other))
    }
}

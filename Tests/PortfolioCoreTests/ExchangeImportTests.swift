import Foundation
import PortfolioCore
import Testing

/// One shipped sample per export variant, and what bitpal must make of it.
struct PresetCase: CustomTestStringConvertible, Sendable {
    let file: String
    let exchange: Exchange
    /// `type coin amount price fee date`, one per imported row, in file order.
    let rows: [String]
    let skipped: [String: Int]
    /// Imported rows whose fee (in another coin) is left out, by coin.
    var feesNotCounted: [String: Int] = [:]
    var testDescription: String { file }
}

let presetCases: [PresetCase] = [
    .init(file: "coinbase-v1.csv", exchange: .coinbase, rows: [
        "buy BTC 0.0030091 9308.431092353195307567 1.99 2021-01-20T14:48:34Z",
        "sell BTC 0.001 50000 1.99 2021-03-01T09:00:00Z",
    ], skipped: ["send": 1]),
    .init(file: "coinbase-v2.csv", exchange: .coinbase, rows: [
        "buy BTC 0.00158 61240.506329113924050633 1.99 2021-11-02T15:04:05Z",
        "buy ETH 0.5 3810.4 28.8 2021-12-14T09:30:12Z",
        "sell ETH 0.5 3810.4 28.39 2021-12-20T09:30:12Z",
    ], skipped: ["convert": 1]),
    .init(file: "coinbase-v3.csv", exchange: .coinbase, rows: [
        "buy ETH 0.00213232 1810.234861559240639304 0.99 2023-04-20T04:05:40Z",
        "buy ADA 210.3 0.3 1 2023-07-14T10:40:14Z",
    ], skipped: ["rewards income": 1, "quoted in EUR": 1]),
    .init(file: "coinbase-v4.csv", exchange: .coinbase, rows: [
        "sell ETH 0.25 3400 12.67 2024-03-19T16:02:44Z",
        "buy BTC 0.0014 71250 1.99 2024-03-14T09:21:07Z",
        "buy ETH 1 3300 10 2024-03-12T09:21:07Z",
    ], skipped: ["staking income": 1, "crypto-to-crypto": 1]),
    .init(file: "coinbase-v5.csv", exchange: .coinbase, rows: [
        "buy SOL 2.5 210.4 3.16 2025-02-03T14:05:11Z",
    ], skipped: ["send": 1]),
    .init(file: "binance-a.csv", exchange: .binance, rows: [
        "buy ETH 0.5 245.1 0.12255 2019-06-12T19:03:10Z",
        "sell ETH 0.2 250 0.05 2019-06-13T19:03:10Z",
    ], skipped: ["crypto-to-crypto": 1]),
    .init(file: "binance-b.csv", exchange: .binance, rows: [
        "buy BTC 0.0028002 35642.11 0 2021-06-05T16:36:56Z",
        "buy ETH 1.25 4786.5 0 2021-11-09T10:12:30Z",
    ], skipped: ["quoted in EUR": 1], feesNotCounted: ["BNB": 1]),
    .init(file: "binance-c-Binance-Spot-Trade-History-202604201027(UTC+7).csv", exchange: .binance, rows: [
        "buy BTC 0.000999 112000 0 2025-10-11T01:01:13Z",
        "sell BTC 0.0005 113500 0.05675 2025-10-11T02:15:40Z",
    ], skipped: [:]),
    .init(file: "binance-d.csv", exchange: .binance, rows: [
        "buy BTC 0.0025 87600 0.219 2025-12-25T14:00:15Z",
        "sell BTC 0.001 88000 0 2025-12-26T14:00:15Z",
    ], skipped: [:], feesNotCounted: ["BNB": 1]),
    .init(file: "kraken-trades-13.csv", exchange: .kraken, rows: [
        "buy BTC 0.01 27150.1 0.7059 2023-05-17T14:02:11.482Z",
        "buy DOT 10 5 0.13 2023-06-03T09:44:03.117Z",
    ], skipped: ["quoted in EUR": 1, "margin": 1]),
    .init(file: "kraken-trades-22.csv", exchange: .kraken, rows: [
        "buy ETH 0.0678 395 0.0696 2020-11-04T09:45:58.416Z",
    ], skipped: [:]),
    .init(file: "kraken-trades-24.csv", exchange: .kraken, rows: [
        "buy SOL 2 112.5 0.585 2025-04-02T11:20:31.553Z",
        "buy BTC 0.001 80000 0.2 2025-04-03T11:20:31.553Z",
    ], skipped: [:]),
]

@Suite struct ExchangeImportTests {
    func bytes(_ name: String) throws -> [UInt8] {
        Array(try #require(FileManager.default.contents(atPath: fixtures.appendingPathComponent("exchanges/\(name)").path)))
    }

    @Test(arguments: presetCases)
    func variant(_ c: PresetCase) throws {
        let preset = try ExchangeImport.rows(try bytes(c.file), exchange: c.exchange, fileName: c.file)
        let summary = preset.rows.map { r in
            let date = ISODate.parseTimestamp(utf8: (r.fields["date"] ?? "").utf8).map(ISODate.format) ?? "?"
            return [r.fields["type"], r.fields["coin"], r.fields["amount"], r.fields["price"], r.fields["fee"]]
                .map { $0 ?? "?" }.joined(separator: " ") + " " + date
        }
        #expect(summary == c.rows)
        #expect(Dictionary(uniqueKeysWithValues: preset.skipped.map { ($0.0, $0.1) }) == c.skipped)
        #expect(Dictionary(uniqueKeysWithValues: preset.feesNotCounted.map { ($0.0, $0.1) }) == c.feesNotCounted)
        // Every mapped row passes the importer's own checks and makes a valid history.
        let plan = try TransactionImport.plan(preset.rows, into: [], now: day("2026-11-22"), allowDuplicates: false) { text in
            guard let coin = CoinCatalog().resolve(text) else { throw PortfolioError.coinNotFound(query: text, suggestions: []) }
            return coin.id
        }
        #expect(plan.added.count == c.rows.count)
    }

    @Test func krakenLedgersAreExplained() throws {
        #expect(throws: ImportFailure(problems: ["this is a Kraken ledgers.csv; export trades.csv (History → Export → Trades) and import that"])) {
            try ExchangeImport.rows(try bytes("kraken-ledgers.csv"), exchange: .kraken)
        }
    }

    @Test func wrongPresetSaysWhatItExpected() throws {
        #expect(throws: ImportFailure(problems: [
            "no Coinbase transaction-history header found (expected Timestamp, Transaction Type, Asset, Quantity Transacted …)",
        ])) { try ExchangeImport.rows(try bytes("kraken-trades-13.csv"), exchange: .coinbase) }
        #expect(throws: ImportFailure(problems: [
            "this Binance export gives times in the zone named only in its file name, e.g. '(UTC+7)'; keep Binance's file name or rename the file to include it",
        ])) { try ExchangeImport.rows(try bytes("binance-c-Binance-Spot-Trade-History-202604201027(UTC+7).csv"), exchange: .binance, fileName: "renamed.csv") }
        let withOffset = try ExchangeImport.rows(try bytes("binance-c-Binance-Spot-Trade-History-202604201027(UTC+7).csv"), exchange: .binance,
                                                 fileName: "renamed.csv", utcOffsetSeconds: -6 * 3600)
        #expect(withOffset.rows.first?.fields["date"] == "2025-10-11T14:01:13Z")
    }

    @Test func utcOffsets() {
        #expect(ExchangeImport.offsetSeconds("+7") == 25_200)
        #expect(ExchangeImport.offsetSeconds("-06:00") == -21_600)
        #expect(ExchangeImport.offsetSeconds("+05:30") == 19_800)
        for bad in [":", "+:", "x", "+7:", "+99", "+1:2:3", "+05:75", "--"] {
            #expect(ExchangeImport.offsetSeconds(bad) == nil, "\(bad)")
        }
    }

    @Test(arguments: [
        ("2.103e-05", "0.00002103"), ("-3.605E-05", "-0.00003605"), ("-€597.49846", "-597.49846"), ("$16,047.61", "16047.61"),
        ("-$400.46053", "-400.46053"), ("€3102.3217898325970226955", "3102.3217898325970226955"), ("1.0e-08", "0.00000001"),
        ("6.0e+05", "600000"),
    ])
    func exchangeNumbersAreExact(_ text: String, _ expected: String) throws {
        let v = try #require(ExchangeNumber.parse(text))
        #expect(v == dec(expected))
    }

    @Test(arguments: ["abc", "1.2.3", "e5", "$", "1e", "1e1000"])
    func badExchangeNumbers(_ text: String) {
        #expect(ExchangeNumber.parse(text) == nil)
    }
}

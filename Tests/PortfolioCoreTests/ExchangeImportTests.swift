import Foundation
import PortfolioCore
import Testing

/// One shipped sample per export variant, and what bitpal must make of it.
struct PresetCase: CustomTestStringConvertible, Sendable {
    let file: String
    let exchange: Exchange
    /// `type coin amount price fee date`, then ` total T` when the row has one and ` linked` for a
    /// swap's leg, one per imported row, in file order.
    let rows: [String]
    let skipped: [String: Int]
    /// What the rows became, by kind (checked when given).
    var kinds: [String: Int]? = nil
    /// Imported rows whose fee (in another coin) is left out, by coin.
    var feesNotCounted: [String: Int] = [:]
    var testDescription: String { file }
}

let presetCases: [PresetCase] = [
    .init(file: "coinbase-v1.csv", exchange: .coinbase, rows: [
        "buy BTC 0.0030091 9308.431092353195307567 1.99 2021-01-20T14:48:34Z total 28.01",
        "transfer-out BTC 0.001 ? 0 2021-02-12T10:58:20Z",
        "sell BTC 0.001 50000 1.99 2021-03-01T09:00:00Z total 50",
    ], skipped: [:], kinds: ["buy": 1, "sell": 1, "transfer-out": 1]),
    .init(file: "coinbase-v2.csv", exchange: .coinbase, rows: [
        "buy BTC 0.00158 61240.506329113924050633 1.99 2021-11-02T15:04:05Z total 96.76",
        "buy ETH 0.5 3810.4 28.8 2021-12-14T09:30:12Z total 1905.2",
        "sell ETH 0.5 3810.4 28.39 2021-12-20T09:30:12Z total 1905.2",
        "transfer-in ETH 0.1 3790 0 2021-12-28T08:00:00Z",
        "sell ETH 0.1 3700 0 2022-01-02T10:00:00Z total 370 linked",
        "buy USDC 370 1 0 2022-01-02T10:00:00Z total 370 linked",
    ], skipped: [:], kinds: ["buy": 2, "sell": 1, "transfer-in": 1, "swap": 1]),
    .init(file: "coinbase-v3.csv", exchange: .coinbase, rows: [
        "buy ETH 0.00213232 1810.234861559240639304 0.99 2023-04-20T04:05:40Z total 3.86",
        "reward ETH 0.00002103 1682.84 ? 2023-05-19T18:14:56Z",
        "buy ADA 210.3 0.3 1 2023-07-14T10:40:14Z total 63.09",
        "buy BTC 0.001 38000 1 2023-12-29T20:30:38Z total 38 in EUR",
    ], skipped: [:], kinds: ["buy": 3, "reward": 1]),
    .init(file: "coinbase-v4.csv", exchange: .coinbase, rows: [
        "sell ETH 0.25 3400 12.67 2024-03-19T16:02:44Z total 850",
        "buy BTC 0.0014 71250 1.99 2024-03-14T09:21:07Z total 99.75",
        "buy ETH 1 3300 10 2024-03-12T09:21:07Z total 3300",
        "reward ETH 0.000412 3480.12 ? 2024-03-10T02:15:33Z",
    ], skipped: ["crypto-to-crypto": 1], kinds: ["buy": 2, "sell": 1, "reward": 1]),
    .init(file: "coinbase-v5.csv", exchange: .coinbase, rows: [
        "buy SOL 2.5 210.4 3.16 2025-02-03T14:05:11Z total 526",
        "transfer-out SOL 0.01 ? 0 2025-02-10T08:30:00Z",
    ], skipped: [:], kinds: ["buy": 1, "transfer-out": 1]),
    .init(file: "binance-a.csv", exchange: .binance, rows: [
        "buy ETH 0.5 245.1 0.12255 2019-06-12T19:03:10Z",
        "sell ETH 0.2 250 0.05 2019-06-13T19:03:10Z",
    ], skipped: ["crypto-to-crypto": 1]),
    .init(file: "binance-b.csv", exchange: .binance, rows: [
        "buy BTC 0.0028002 35642.11 0 2021-06-05T16:36:56Z",
        "buy ETH 1.25 4786.5 0 2021-11-09T10:12:30Z",
        "buy ETH 1 4000 4 2021-11-10T10:12:30Z in EUR",
    ], skipped: [:], feesNotCounted: ["BNB": 1]),
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
        "sell ETH 0.5 1745.32 2.26892 2023-06-02T09:44:03.117Z in EUR",
        "buy DOT 10 5 0.13 2023-06-03T09:44:03.117Z",
    ], skipped: ["margin": 1]),
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
                + (r.fields[.total].map { " total \($0)" } ?? "") + (r.fields[.linkedId] == nil ? "" : " linked")
                + (r.fields[.currency].map { $0 == "USD" ? "" : " in \($0)" } ?? "")
        }
        #expect(summary == c.rows)
        #expect(Dictionary(uniqueKeysWithValues: preset.skipped.map { ($0.0, $0.1) }) == c.skipped)
        #expect(Dictionary(uniqueKeysWithValues: preset.feesNotCounted.map { ($0.0, $0.1) }) == c.feesNotCounted)
        if let kinds = c.kinds { #expect(Dictionary(uniqueKeysWithValues: preset.kinds.map { ($0.0, $0.1) }) == kinds) }
        // Every mapped row passes the importer's own checks, and the whole makes a valid history (Book.admit).
        // Rows in EUR take the rate of their date from the table; some ether is held from before (a
        // sample sells what its file never bought).
        var book = Book(transactions: [record(.buy, "ethereum", "10", price: "1", on: "2019-01-01")])
        book.fxRates = [FXRate(from: "EUR", to: "USD", rate: fixed("1.1"), date: day("2000-01-01"))]
        let plan = try TransactionImport.plan(preset.rows, into: book, portfolio: "main", now: day("2026-11-22"), allowDuplicates: false) { text in
            guard let coin = CoinCatalog().resolve(text) else { throw PortfolioError.coinNotFound(query: text, suggestions: []) }
            return coin.id
        }
        #expect(plan.added.count == c.rows.count)
    }

    /// A Coinbase v4 file with every kind the preset now keeps (a buy in EUR too), and one it still skips.
    static let coinbaseKinds = """

    Transactions
    User,Jane Doe,00000000-0000-4000-8000-000000000000
    ID,Timestamp,Transaction Type,Asset,Quantity Transacted,Price Currency,Price at Transaction,Subtotal,Total (inclusive of fees and/or spread),Fees and/or Spread,Notes
    a1,2024-01-01 10:00:00 UTC,Receive,BTC,1.5,USD,$40000.00,,,,Received 1.5 BTC from an external account
    a2,2024-01-02 10:00:00 UTC,Send,BTC,-0.25,USD,$41000.00,-$10250.00,-$10250.00,$0.00,Sent 0.25 BTC to bc1qexample
    a3,2024-01-03 10:00:00 UTC,Rewards Income,ETH2,0.001,USD,$2300.00,$2.30,$2.30,$0.00,Received 0.001 ETH2 from Coinbase Rewards
    a4,2024-01-04 10:00:00 UTC,Staking Income,SOL,0.02,USD,$100.00,$2.00,$2.00,$0.00,
    a5,2024-01-05 10:00:00 UTC,Learning Reward,GRT,6.4,USD,$0.15,$0.96,$0.96,$0.00,Received 6.4 GRT from Coinbase as a learning reward
    a6,2024-01-06 10:00:00 UTC,Inflation Reward,ATOM,0.5,USD,$10.00,$5.00,$5.00,$0.00,
    a7,2024-01-07 10:00:00 UTC,Convert,BTC,-0.003,USD,$42000.00,$200.00,$200.00,,"Converted 0.003 BTC to 0.1 ETH"
    a8,2024-01-08 10:00:00 UTC,Convert,BTC,-0.001,USD,$42000.00,,,,Converted 0.001 BTC to 0.03 ETH
    a9,2024-01-09 10:00:00 UTC,Buy,BTC,0.01,EUR,€38000,€380,€390,€10,Bought 0.01 BTC for 390 EUR
    b1,2024-01-10 10:00:00 UTC,Convert,ETH,-0.05,USD,$2500.00,$125.00,$126.50,$1.50,"Converted 0.05 ETH to 1,234.5 USDC"

    """

    @Test func coinbaseKeepsSendsReceivesRewardsAndConverts() throws {
        let preset = try ExchangeImport.rows(Array(Self.coinbaseKinds.utf8), exchange: .coinbase)
        let rows = preset.rows
        #expect(rows.map { $0.fields[.type] ?? "?" } == [
            "transfer-in", "transfer-out", "reward", "reward", "reward", "reward", "sell", "buy", "buy", "sell", "buy",
        ])
        #expect(preset.summary == "1 buy, 1 transfer in, 1 transfer out, 4 rewards, 2 swaps; skipped: 1 crypto-to-crypto trade")
        // A buy in EUR keeps its currency (its rate comes with the import).
        #expect(rows[8].fields[.currency] == "EUR" && rows[8].fields[.total] == "380" && rows[8].fields[.fee] == "10")

        // Receive: a transfer-in whose basis is the spot price, said in its note.
        let receive = rows[0].fields
        #expect(receive[.assetId] == "BTC" && receive[.amount] == "1.5" && receive[.price] == "40000" && receive[.fee] == "0")
        #expect(receive[.currency] == "USD" && receive[.notes] == "Coinbase a1; basis: spot price at receipt")
        // Send: a transfer-out of the units, a fee of 0 units, no price and no money.
        let send = rows[1].fields
        #expect(send[.amount] == "0.25" && send[.fee] == "0" && send[.price] == nil && send[.currency] == nil && send[.total] == nil)
        // Rewards at the spot price, without a fee; ETH2 counts as ETH.
        #expect(rows[2...5].map { "\($0.fields[.assetId] ?? "?") \($0.fields[.amount] ?? "?") \($0.fields[.price] ?? "?") \($0.fields[.fee] ?? "-")" }
                == ["ETH 0.001 2300 -", "SOL 0.02 100 -", "GRT 6.4 0.15 -", "ATOM 0.5 10 -"])
        #expect(rows[2].fields[.notes] == "Coinbase a3; ETH2 counted as ETH")
        // Convert: a sell and a buy, both with total = subtotal, price = total ÷ amount rounded half-up,
        // the fee on the sell (empty = 0), linked by the sell's id.
        let sell = rows[6].fields, buy = rows[7].fields
        #expect(sell[.assetId] == "BTC" && sell[.amount] == "0.003" && sell[.total] == "200" && sell[.price] == "66666.666666666666666667" && sell[.fee] == "0")
        #expect(buy[.assetId] == "ETH" && buy[.amount] == "0.1" && buy[.total] == "200" && buy[.price] == "2000" && buy[.fee] == "0")
        #expect(sell[.linkedId] != nil && sell[.linkedId] == sell[.id] && buy[.linkedId] == sell[.id] && buy[.id] == nil)
        #expect(rows[6].location == "line 11" && rows[7].location == "line 11")
        let sell2 = rows[9].fields, buy2 = rows[10].fields
        #expect(sell2[.fee] == "1.5" && sell2[.total] == "125" && sell2[.price] == "2500")
        #expect(buy2[.assetId] == "USDC" && buy2[.amount] == "1234.5" && buy2[.price] == "0.101255569056298096")
        #expect(sell2[.linkedId] != sell[.linkedId])

        // All of it is a valid history, legs included, and re-importing it adds nothing.
        let resolve: (String) throws -> String = { text in
            guard let coin = CoinCatalog().resolve(text) else { throw PortfolioError.coinNotFound(query: text, suggestions: []) }
            return coin.id
        }
        let now = day("2025-01-01")
        var book = Book()
        book.fxRates = [FXRate(from: "EUR", to: "USD", rate: fixed("1.1"), date: day("2024-01-01"))]
        let plan = try TransactionImport.plan(rows, into: book, portfolio: "main", now: now, allowDuplicates: false, resolveAsset: resolve)
        #expect(plan.added.count == 11)
        #expect(plan.added[8].currency == "EUR" && plan.added[8].fxRateValue == fixed("1.1"))
        let legs = plan.added.filter { $0.linkedId != nil }
        #expect(legs.count == 4 && legs[0].type == .sell && legs[0].id == legs[0].linkedId && legs[1].linkedId == legs[0].id)
        #expect(legs[0].totalValue == Fixed18.parse(utf8: "200".utf8) && legs[1].assetId == "ethereum")
        #expect(plan.added[0].type == .transferIn && plan.added[0].priceValue == Fixed18.parse(utf8: "40000".utf8))
        #expect(plan.added[1].type == .transferOut && plan.added[1].feeValue == .zero && plan.added[1].currency == nil)
        #expect(plan.added[2].type == .reward && plan.added[2].assetId == "ethereum" && plan.added[2].feeValue == nil)
        book.transactions = plan.added
        let again = try TransactionImport.plan(rows, into: book, portfolio: "main", now: now, allowDuplicates: false, resolveAsset: resolve)
        #expect(again.added.isEmpty && again.skipped == 11)
    }

    @Test func aConvertOfWhatIsNotHeldIsRefusedAtItsLine() throws {
        let csv = """
        ID,Timestamp,Transaction Type,Asset,Quantity Transacted,Price Currency,Price at Transaction,Subtotal,Total (inclusive of fees and/or spread),Fees and/or Spread,Notes
        c1,2024-01-07 10:00:00 UTC,Convert,BTC,-0.003,USD,$42000.00,$200.00,$200.00,,Converted 0.003 BTC to 0.1 ETH

        """
        let rows = try ExchangeImport.rows(Array(csv.utf8), exchange: .coinbase).rows
        #expect(throws: ImportFailure(problems: ["line 2: You only own 0 bitcoin. Cannot swap 0.003."])) {
            try TransactionImport.plan(rows, into: [], now: day("2025-01-01"), allowDuplicates: false, resolveCoin: { CoinCatalog().resolve($0)?.id ?? $0 })
        }
    }

    @Test func krakenLedgersAreExplained() throws {
        #expect(throws: ImportFailure(problems: ["this is a Kraken ledgers.csv; import it with --format kraken-ledger"])) {
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

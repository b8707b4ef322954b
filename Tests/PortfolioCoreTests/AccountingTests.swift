import Foundation
import PortfolioCore
import Testing

/// One row of the engine table: trades, a price, and what the reports must say to the cent.
struct CostCase: CustomTestStringConvertible, Sendable {
    let name: String
    let trades: [String]
    let coin: String
    let quantity: String
    let averageCost: String   // as displayed (price rounding)
    let costBasis: String     // money
    let realized: String      // money
    var line: Int = #line
    var testDescription: String { name }
}

let costCases: [CostCase] = [
    .init(name: "single buy", trades: ["2024-01-01 buy 2 bitcoin @ 100"], coin: "bitcoin",
          quantity: "2", averageCost: "100", costBasis: "200.00", realized: "0.00"),
    .init(name: "two buys average", trades: ["2024-01-01 buy 0.5 bitcoin @ 30000", "2024-02-01 buy 0.5 bitcoin @ 40000"],
          coin: "bitcoin", quantity: "1", averageCost: "35000", costBasis: "35000.00", realized: "0.00"),
    .init(name: "sell keeps average", trades: ["2024-01-01 buy 0.5 bitcoin @ 30000", "2024-02-01 buy 0.5 bitcoin @ 40000",
                                               "2024-03-01 sell 0.25 bitcoin @ 50000"],
          coin: "bitcoin", quantity: "0.75", averageCost: "35000", costBasis: "26250.00", realized: "3750.00"),
    .init(name: "uneven weights", trades: ["2024-01-01 buy 3 ethereum @ 10", "2024-01-02 buy 1 ethereum @ 20"],
          coin: "ethereum", quantity: "4", averageCost: "12.5", costBasis: "50.00", realized: "0.00"),
    .init(name: "non-terminating average", trades: ["2024-01-01 buy 1 bitcoin @ 100", "2024-01-02 buy 2 bitcoin @ 50"],
          coin: "bitcoin", quantity: "3", averageCost: "66.66666667", costBasis: "200.00", realized: "0.00"),
    .init(name: "fees raise the basis", trades: ["2024-01-01 buy 2 ethereum @ 1000 fee 10"],
          coin: "ethereum", quantity: "2", averageCost: "1005", costBasis: "2010.00", realized: "0.00"),
    .init(name: "worked example A", trades: ["2024-01-01 buy 1 bitcoin @ 30000", "2024-02-01 buy 1 bitcoin @ 40000",
                                             "2024-03-01 sell 0.5 bitcoin @ 50000"],
          coin: "bitcoin", quantity: "1.5", averageCost: "35000", costBasis: "52500.00", realized: "7500.00"),
    .init(name: "worked example B: new cycle after close", trades: [
        "2024-01-01 buy 2 ethereum @ 1000 fee 10", "2024-02-01 sell 2 ethereum @ 1500 fee 15", "2024-03-01 buy 1 ethereum @ 2000"],
          coin: "ethereum", quantity: "1", averageCost: "2000", costBasis: "2000.00", realized: "975.00"),
    .init(name: "18-decimal amounts", trades: ["2024-01-01 buy 0.000000000000000001 ethereum @ 2000",
                                               "2024-01-02 buy 1.123456789012345678 ethereum @ 1000"],
          coin: "ethereum", quantity: "1.123456789012345679", averageCost: "1000", costBasis: "1123.46", realized: "0.00"),
    .init(name: "tiny prices", trades: ["2024-01-01 buy 100000000 shiba-inu @ 0.00000845",
                                        "2024-01-02 sell 50000000 shiba-inu @ 0.00001"],
          coin: "shiba-inu", quantity: "50000000", averageCost: "0.00000845", costBasis: "422.50", realized: "77.50"),
    .init(name: "same-day ties keep insertion order", trades: ["2024-01-01 buy 1 bitcoin @ 100", "2024-01-01 sell 1 bitcoin @ 150",
                                                               "2024-01-01 buy 1 bitcoin @ 200"],
          coin: "bitcoin", quantity: "1", averageCost: "200", costBasis: "200.00", realized: "50.00"),
    .init(name: "out-of-order input is replayed by date", trades: ["2024-03-01 sell 1 bitcoin @ 150", "2024-01-01 buy 2 bitcoin @ 100"],
          coin: "bitcoin", quantity: "1", averageCost: "100", costBasis: "100.00", realized: "50.00"),
]

@Suite struct WeightedAverageTests {
    @Test(arguments: costCases)
    func replay(_ c: CostCase) throws {
        let ledger = try Ledger.replay(c.trades.map(trade))
        let p = try #require(ledger.positions[key(c.coin)])
        let source = SourceLocation(fileID: #fileID, filePath: #filePath, line: c.line, column: 1)
        #expect(DecimalFormatting.exact(p.quantity) == c.quantity, sourceLocation: source)
        #expect(DecimalFormatting.price(p.averageCost ?? .zero) == c.averageCost, sourceLocation: source)
        #expect(DecimalFormatting.money(p.costBasis) == c.costBasis, sourceLocation: source)
        #expect(DecimalFormatting.money(ledger.realizedPnL) == c.realized, sourceLocation: source)
    }

    @Test func exampleAReportsToTheCent() throws {
        let ledger = try Ledger.replay(costCases[6].trades.map(trade))
        let prices = PriceBook(manual: [Quote(coinId: "bitcoin", price: dec("60000"), time: day("2024-03-02"), source: .manual)])
        let reports = Reports(ledger: ledger, prices: prices, now: day("2024-03-02T00:30:00Z"), asset: { AssetLabel.unknown($0) })
        let h = try #require(reports.holdings().holdings.first)
        #expect(DecimalFormatting.money(try #require(h.currentValue)) == "90000.00")
        #expect(DecimalFormatting.money(h.totalCost) == "52500.00")
        #expect(DecimalFormatting.money(try #require(h.profitLoss)) == "37500.00")
        #expect(DecimalFormatting.percent(try #require(h.profitLossPercentage)) == "71.43")
        let s = reports.summary()
        #expect(DecimalFormatting.money(s.totalValue) == "90000.00")
        #expect(DecimalFormatting.money(s.totalOpenCost) == "52500.00")
        #expect(DecimalFormatting.money(s.totalClosedCost) == "17500.00")
        #expect(DecimalFormatting.money(s.unrealizedPnL) == "37500.00")
        #expect(DecimalFormatting.money(s.realizedPnL) == "7500.00")
        #expect(DecimalFormatting.money(s.totalPnL) == "45000.00")
        #expect(DecimalFormatting.percent(try #require(s.totalPnLPercentage)) == "64.29")
        #expect(!s.stale)
    }

    @Test func exampleBClosedCycle() throws {
        let ledger = try Ledger.replay(costCases[7].trades.map(trade))
        let c = try #require(ledger.closed.first)
        #expect(ledger.closed.count == 1)
        #expect(c.totalQuantity.map(DecimalFormatting.exact) == "2")
        #expect(c.avgCostPrice.map(DecimalFormatting.price) == "1005")
        #expect(DecimalFormatting.price(c.avgSellPrice ?? .zero) == "1500")
        #expect(DecimalFormatting.money(c.realizedPnL) == "975.00")
        #expect(DecimalFormatting.percent(try #require(c.realizedPnLPercentage)) == "48.51")
        #expect(c.openedDate == day("2024-01-01") && c.closedDate == day("2024-02-01"))
    }

    @Test func exampleCExactnessLeavesNoDust() throws {
        let ledger = try Ledger.replay(["2024-01-01 buy 0.1 bitcoin @ 10", "2024-01-02 buy 0.2 bitcoin @ 10",
                                        "2024-01-03 sell 0.3 bitcoin @ 20"].map(trade))
        #expect(ledger.positions[key("bitcoin")]?.quantity == 0)
        #expect(ledger.positions[key("bitcoin")]?.costBasis == 0)
        #expect(ledger.openPositions.isEmpty)
        #expect(ledger.closed.count == 1)
        #expect(DecimalFormatting.money(ledger.realizedPnL) == "3.00")
    }

    @Test func exampleDBackDatedSellIsRefused() throws {
        let p = Book(transactions: ["2024-01-10 buy 1 bitcoin @ 100", "2024-02-01 sell 1 bitcoin @ 200"].map(trade))
        let backdated = trade("2024-01-20 sell 0.5 bitcoin @ 150")
        let laterSell = p.transactions[1]
        #expect(throws: PortfolioError.breaksLater(shortfall(.sell, "bitcoin", held: dec("0.5"), requested: 1,
                                                             date: day("2024-02-01"), id: laterSell.id))) {
            _ = try p.adding([backdated], now: day("2024-06-01"))
        }
    }

    @Test func oversellNamesTheHeldAmount() {
        let p = Book(transactions: [trade("2024-01-01 buy 0.5 bitcoin @ 100")])
        let sell = trade("2024-02-01 sell 1 bitcoin @ 100")
        let expected = PortfolioError.insufficientQuantity(shortfall(.sell, "bitcoin", held: dec("0.5"), requested: 1, date: sell.date, id: sell.id))
        #expect(throws: expected) {
            _ = try p.adding([sell], now: day("2024-06-01"))
        }
        #expect(expected.description == "You only own 0.5 bitcoin. Cannot sell 1.")
    }

    @Test func editAndDeleteAreCheckedAgainstLaterSells() throws {
        let buy = trade("2024-01-01 buy 1 bitcoin @ 100")
        let sell = trade("2024-02-01 sell 1 bitcoin @ 200")
        var p = Book(transactions: [buy, sell])
        let now = day("2024-06-01")
        #expect(throws: PortfolioError.breaksLater(shortfall(.sell, "bitcoin", held: 0, requested: 1, date: sell.date, id: sell.id))) {
            _ = try p.deleting([buy.id], now: now)
        }
        var smaller = buy
        smaller.amount = dec("0.5")
        #expect(throws: PortfolioError.breaksLater(shortfall(.sell, "bitcoin", held: dec("0.5"), requested: 1, date: sell.date, id: sell.id))) {
            _ = try p.replacing(at: 0, with: smaller, now: now)
        }
        var bigger = buy
        bigger.amount = 2
        p = try p.replacing(at: 0, with: bigger, now: now)
        #expect(p.transactions[0].amount == 2)
        p = try p.deleting([sell.id], now: now)
        #expect(p.transactions.count == 1)
    }

    @Test func rulesOfOneTransaction() {
        let now = day("2024-06-01")
        var t = trade("2024-01-01 buy 1 bitcoin @ 100")
        t.amount = 0
        #expect(throws: PortfolioError.amountNotPositive) { try ValueRules.check(t, now: now) }
        t.amount = 1
        t.pricePerCoin = 0
        #expect(throws: PortfolioError.priceNotPositive) { try ValueRules.check(t, now: now) }
        t.pricePerCoin = 1
        t.date = day("2024-06-02")
        #expect(throws: PortfolioError.futureDate) { try ValueRules.check(t, now: now) }
    }

    @Test func idPrefixes() throws {
        let a = Transaction(id: UUID(uuidString: "AAAA1111-0000-4000-8000-000000000000")!, coinId: "bitcoin", type: .buy,
                            amount: 1, pricePerCoin: 1, date: day("2024-01-01"))
        let b = Transaction(id: UUID(uuidString: "AAAA2222-0000-4000-8000-000000000000")!, coinId: "bitcoin", type: .buy,
                            amount: 1, pricePerCoin: 1, date: day("2024-01-01"))
        let p = Book(transactions: [a, b])
        #expect(try p.transaction(matching: "aaaa1").id == a.id)
        #expect(try p.transaction(matching: "AAAA2222").id == b.id)
        #expect(throws: PortfolioError.idTooShort("aaa")) { try p.transaction(matching: "aaa") }
        #expect(throws: PortfolioError.ambiguousID(prefix: "aaaa", matches: [a.id.uuidString.lowercased(), b.id.uuidString.lowercased()])) {
            try p.transaction(matching: "aaaa")
        }
        #expect(throws: PortfolioError.transactionNotFound("bbbb")) { try p.transaction(matching: "bbbb") }
    }
}

@Suite struct ReportTests {
    let now = day("2024-06-01T12:00:00Z")

    @Test func unpricedHoldingsComeLastWithCost() throws {
        let ledger = try Ledger.replay(["2024-01-01 buy 1 bitcoin @ 100", "2024-01-01 buy 10 obscure-coin @ 5"].map(trade))
        let prices = PriceBook(manual: [Quote(coinId: "bitcoin", price: 50, time: now, source: .manual)])
        let r = Reports(ledger: ledger, prices: prices, now: now, asset: { AssetLabel.unknown($0) }).holdings()
        #expect(r.holdings.map(\.asset.id) == ["bitcoin", "obscure-coin"])
        #expect(r.holdings[1].currentValue == nil && r.holdings[1].profitLoss == nil)
        #expect(r.holdings[1].totalCost == 50)
        #expect(r.unpricedCount == 1)
        // Totals cover priced holdings (P&L = value − cost); the unpriced cost is carried apart.
        #expect(r.totalValue == 50 && r.totalCost == 100 && r.unrealizedPnL == -50 && r.unpricedCost == 50 && r.openCost == 150)
        let s = Reports(ledger: ledger, prices: prices, now: now, asset: { AssetLabel.unknown($0) }).summary()
        #expect(s.unpricedCount == 1 && s.holdingsCount == 2 && s.topHoldings.count == 1)
        #expect(s.totalOpenCost == 150 && s.unpricedCost == 50)
    }

    @Test func staleAfterAnHour() throws {
        let ledger = try Ledger.replay([trade("2024-01-01 buy 1 bitcoin @ 100")])
        let fresh = PriceBook(manual: [Quote(coinId: "bitcoin", price: 50, time: now.addingTimeInterval(-3599), source: .manual)])
        let old = PriceBook(manual: [Quote(coinId: "bitcoin", price: 50, time: now.addingTimeInterval(-3601), source: .manual)])
        #expect(!Reports(ledger: ledger, prices: fresh, now: now, asset: { AssetLabel.unknown($0) }).holdings().stale)
        let r = Reports(ledger: ledger, prices: old, now: now, asset: { AssetLabel.unknown($0) }).holdings()
        #expect(r.stale)
        #expect(r.pricesAsOf == now.addingTimeInterval(-3601))
    }

    @Test func newestQuoteWinsWhateverItsSource() {
        let book = PriceBook(
            manual: [Quote(coinId: "bitcoin", price: 1, time: day("2024-01-02"), source: .manual)],
            fetched: [Quote(coinId: "bitcoin", price: 2, time: day("2024-01-01"), source: .coingecko),
                      Quote(coinId: "bitcoin", price: 3, time: day("2024-01-03"), source: .coingecko)])
        #expect(book.latest("bitcoin")?.price == 3)
        #expect(book.history("bitcoin").map(\.price) == [2, 1, 3])
        #expect(book.needsRefresh(["bitcoin", "ethereum"], now: day("2024-01-03").addingTimeInterval(30)) == ["ethereum"])
        #expect(book.needsRefresh(["bitcoin"], now: day("2024-01-03").addingTimeInterval(61)) == ["bitcoin"])
    }

    @Test func zeroBasePercentageIsNil() {
        #expect(Percent.of(Decimal(5), Decimal(0)) == nil)
        #expect(Percent.of(Decimal(1), Decimal(3)).map(DecimalFormatting.percent) == "33.33")
        #expect(Percent.of(Exact36(5), Exact36.zero) == nil)
    }

    @Test func sortOrders() throws {
        let ledger = try Ledger.replay(["2024-01-01 buy 1 bitcoin @ 100", "2024-01-01 buy 100 cardano @ 1",
                                        "2024-01-01 buy 5 zz-unpriced @ 1"].map(trade))
        let prices = PriceBook(manual: [Quote(coinId: "bitcoin", price: 90, time: now, source: .manual),
                                        Quote(coinId: "cardano", price: 2, time: now, source: .manual)])
        let r = Reports(ledger: ledger, prices: prices, now: now, asset: { AssetLabel.unknown($0) })
        #expect(r.holdings(sort: .value).holdings.map(\.asset.id) == ["cardano", "bitcoin", "zz-unpriced"])
        #expect(r.holdings(sort: .pnl).holdings.map(\.asset.id) == ["cardano", "bitcoin", "zz-unpriced"])
        #expect(r.holdings(sort: .amount).holdings.map(\.asset.id) == ["cardano", "zz-unpriced", "bitcoin"])
        #expect(r.holdings(sort: .name).holdings.map(\.asset.id) == ["bitcoin", "cardano", "zz-unpriced"])
    }
}

@Suite struct CatalogTests {
    let catalog = CoinCatalog()

    @Test func resolvesIdsAndSymbolsOffline() {
        #expect(catalog.resolve("btc")?.id == "bitcoin")
        #expect(catalog.resolve("BTC")?.id == "bitcoin")
        #expect(catalog.resolve("ethereum")?.id == "ethereum")
        #expect(catalog.resolve("nope-coin") == nil)
    }

    @Test func ambiguousSymbolPicksBestRank() {
        var c = CoinCatalog([Coin(id: "fake-btc", symbol: "btc", name: "Fake", marketCapRank: 900)])
        c.add(CoinCatalog.builtin)
        #expect(c.resolve("btc")?.id == "bitcoin")
    }

    @Test func searchOrder() {
        let results = catalog.search("eth", limit: 3).map(\.id)
        #expect(results.first == "ethereum")
        #expect(catalog.suggestions(for: "bitcoinn").contains("bitcoin"))
        #expect(catalog.search("", limit: 3).isEmpty)
    }

    @Test func builtinMatchesTheDataFile() throws {
        // A copy of shared/data/top-coins.json lives in the repository, so a fresh clone checks it too.
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/top-coins.json")
        let data = try #require(FileManager.default.contents(atPath: url.path))
        struct Entry: Decodable { var id: String; var symbol: String; var name: String; var marketCapRank: Int? }
        let entries = try JSONDecoder().decode([Entry].self, from: data)
        #expect(entries.map(\.id) == CoinCatalog.builtin.map(\.id))
        #expect(entries.map(\.symbol) == CoinCatalog.builtin.map(\.symbol))
        #expect(entries.map(\.marketCapRank) == CoinCatalog.builtin.map(\.marketCapRank))
    }
}

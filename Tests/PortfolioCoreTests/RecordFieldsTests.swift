import Foundation
@testable import PortfolioCore
import Testing

/// Every record kept by a `RecordFields` table: its store line, its JSON object and its reader agree.
@Suite struct RecordFieldsTests {
    static func fixed(_ text: String) throws -> Fixed18 { try #require(Fixed18.parse(utf8: text.utf8)) }

    /// The keys of a one-line object, in order.
    static func keys(_ line: String) throws -> [String] {
        var r = JSONReader(bytes: Array(line.utf8))
        var keys: [String] = []
        try r.beginObject()
        while let k = try r.nextKey() {
            keys.append(k)
            try r.skipValue()
        }
        return keys
    }

    /// `record`'s store line has the table's names in order (but `leftOut`), is the table's object
    /// without those keys, and reads back as `record`.
    static func agree<R: Equatable & Sendable>(_ table: RecordFields<R>, _ record: R, leftOut: Set<String> = []) throws {
        var line = JSONWriter()
        table.write(record, to: &line)
        #expect(try keys(line.text) == table.fields.map(\.name).filter { !leftOut.contains($0) })

        // Both compact, so that only keys and values can differ.
        var compactLine = JSONWriter(pretty: false), compactObject = JSONWriter(pretty: false)
        table.write(record, to: &compactLine)
        JSONValue.object(table.pairs(record, leaving: leftOut)).write(to: &compactObject)
        #expect(compactLine.text == compactObject.text)

        var r = JSONReader(bytes: line.bytes)
        #expect(try table.read(&r) == record)
    }

    /// `text` read by `table`, or the error's message.
    static func read<R: Sendable>(_ table: RecordFields<R>, _ text: String) -> Result<R, JSONReadError> {
        var r = JSONReader(bytes: Array(text.utf8))
        return Result { () throws(JSONReadError) in try table.read(&r) }
    }

    static func message<R: Sendable>(_ table: RecordFields<R>, _ text: String) -> String? {
        guard case let .failure(e) = read(table, text) else { return nil }
        return e.message
    }

    @Test func portfolio() throws {
        var p = Portfolio(name: "growth", baseCurrency: "EUR", description: "long \"term\"", active: false,
                          createdDate: day("2024-05-05T10:00:00.5Z"), trackCash: true, costBasisMethod: .lifo)
        p.targets = Targets(by: .asset, weights: [.init("AAPL", try Self.fixed("60")), .init("GOLD", try Self.fixed("40"))])
        try Self.agree(Portfolio.fields, p)
        // At their defaults, cash, the method and the targets are left out of the store's line.
        try Self.agree(Portfolio.fields, Portfolio(name: "main"), leftOut: ["trackCash", "costBasisMethod", "targets"])
        #expect(Self.message(Portfolio.fields, #"{"baseCurrency": "USD"}"#) == "a portfolio needs a name")
        #expect(Self.message(Portfolio.fields, #"{"name": "a", "costBasisMethod": "newest"}"#)
            == "unknown cost-basis method 'newest' (average, fifo, lifo or hifo)")
        #expect(Self.message(Portfolio.fields, #"{"name": null}"#) == "expected a string")
        #expect(try Self.read(Portfolio.fields, #"{"name": "a", "targets": null, "later": [1]}"#).get() == Portfolio(name: "a"))
    }

    @Test func targets() throws {
        try Self.agree(Targets.fields, Targets(by: .type, weights: [.init("stock", try Self.fixed("60.5")), .init("cash", try Self.fixed("39.5"))]))
        try Self.agree(Targets.fields, Targets(by: .asset, weights: []))
        #expect(Self.message(Targets.fields, #"{"by": "class"}"#) == "targets are by 'type' or by 'asset', not 'class'")
        #expect(Self.message(Targets.fields, #"{"weights": {"AAPL": "x"}}"#) == "the target of 'AAPL' is not a number: 'x'")
    }

    @Test func asset() throws {
        // By hand (the default), the quote source and symbol are left out of the store's line.
        let byHand: Set<String> = ["quoteSource", "quoteSymbol"]
        try Self.agree(Asset.fields, Asset(id: "AAPL", name: "Apple Inc.", type: .stock, market: "NASDAQ", notes: "n", createdDate: day("2024-02-01")),
                       leftOut: byHand)
        try Self.agree(Asset.fields, Asset(id: "GOLD", name: "Gold", type: .commodity, currency: "EUR", createdDate: day("2024-02-01")), leftOut: byHand)
        try Self.agree(Asset.fields, Asset(id: "VWCE.DE", name: "All-World", type: .etf, currency: "EUR", createdDate: day("2024-02-01"),
                                           quote: AssetQuoteSource(service: .yahoo, symbol: "VWCE.DE")))
        // A source without a symbol takes the code; a symbol without a source is by hand.
        #expect(try Self.read(Asset.fields, #"{"id": "SPY", "name": "S", "type": "etf", "quoteSource": "yahoo"}"#).get().quote?.symbol == "SPY")
        #expect(try Self.read(Asset.fields, #"{"id": "SPY", "name": "S", "type": "etf", "quoteSymbol": "X"}"#).get().quote == nil)
        #expect(Self.message(Asset.fields, #"{"id": "X", "name": "X", "type": "etf", "quoteSource": "bloomberg"}"#) == "unknown quote source 'bloomberg'")
        #expect(Self.message(Asset.fields, #"{"id": "X", "name": "X"}"#) == "an asset needs id, name and type")
        #expect(Self.message(Asset.fields, #"{"id": "X", "name": "X", "type": "metal"}"#) == "unknown asset type 'metal'")
    }

    @Test func manualPrice() throws {
        let q = Quote(coinId: "AAPL", price: dec("180.000000000000000001"), time: day("2024-03-01T23:00:00Z"), source: .manual, currency: "EUR")
        try Self.agree(Quote.manualPriceFields, q)
        // Version 1's name of the asset id, and USD when the currency is absent.
        let v1 = try Self.read(Quote.manualPriceFields, #"{"coinId": "bitcoin", "price": "5", "date": "2024-03-01T00:00:00Z"}"#).get()
        #expect(v1 == Quote(coinId: "bitcoin", price: 5, time: day("2024-03-01"), source: .manual, currency: "USD"))
        #expect(Self.message(Quote.manualPriceFields, #"{"price": "5"}"#) == "a manual price needs assetId, price and date")
    }

    @Test func exchangeRate() throws {
        try Self.agree(FXRate.fields, FXRate(from: "USD", to: "EUR", rate: try Self.fixed("0.92"), date: day("2024-02-29T23:00:00Z"), source: .coingecko))
        #expect(Self.message(FXRate.fields, #"{"from": "USD", "to": "USD", "rate": "1", "date": "2024-01-01T00:00:00Z"}"#)
            == "an exchange rate needs two different supported currencies (USD→USD)")
        #expect(Self.message(FXRate.fields, #"{"from": "USD", "to": "EUR", "rate": "0", "date": "2024-01-01T00:00:00Z"}"#)
            == "an exchange rate must be greater than zero")
        #expect(Self.message(FXRate.fields, #"{"from": "USD", "to": "EUR", "rate": "1", "date": "2024-01-01T00:00:00Z", "source": "bank"}"#)
            == "unknown rate source 'bank'")
    }

    @Test func investmentPlan() throws {
        try Self.agree(InvestmentPlan.fields, InvestmentPlan(
            name: "kids", portfolio: "lots", target: try Self.fixed("20000.5"), byDate: day("2035-01-01"), monthly: try Self.fixed("100.25"),
            expectedReturn: try Self.fixed("3.5"), startDate: day("2024-01-01"), risk: .veryHigh, status: .paused, notes: "a\nb"))
        try Self.agree(InvestmentPlan.fields, InvestmentPlan(name: "house", portfolio: nil, target: try Self.fixed("50000"), byDate: day("2030-06-30"),
                                                             startDate: day("2024-01-02")))
        // Without a start, the plan starts at its date.
        let plan = try Self.read(InvestmentPlan.fields, #"{"name": "p", "target": "1", "byDate": "2030-01-01T00:00:00Z"}"#).get()
        #expect(plan.startDate == day("2030-01-01"))
        #expect(Self.message(InvestmentPlan.fields, #"{"name": "p", "target": "1"}"#) == "a plan needs name, target and byDate")
    }

    @Test func watchEntry() throws {
        try Self.agree(WatchEntry.fields, WatchEntry(coinId: "bitcoin", dateAdded: day("2024-05-05T10:00:00.5Z")))
        #expect(Self.message(WatchEntry.fields, #"{"coinId": "bitcoin", "dateAdded": null}"#) == "expected a string")
        #expect(Self.message(WatchEntry.fields, #"{"coinId": "bitcoin"}"#) == "a watchlist entry needs coinId and dateAdded")
    }

    @Test func savingPlanAndAlert() throws {
        try Self.agree(SavingPlan.fields, SavingPlan(name: "etf", portfolio: "main", assetId: "VWCE", amount: try Self.fixed("100"),
                                                     fee: try Self.fixed("1"), frequency: .day, startDay: 19_800, lastExecutedDay: 19_801, notes: "n"))
        try Self.agree(PriceAlert.fields, PriceAlert(id: 3, assetId: "bitcoin", condition: .above, threshold: try Self.fixed("100000"),
                                                     currency: "EUR", repeats: true, lastChecked: day("2024-01-01")))
    }

    /// A command's object: fields left out, values replaced, keys added after a field or at the end.
    @Test func commandPairs() throws {
        let e = WatchEntry(coinId: "bitcoin", dateAdded: day("2024-01-01"))
        let added = WatchEntry.fields.pairs(e, adding: [("symbol", .string("btc"))], after: "coinId")
        #expect(added.map(\.0) == ["coinId", "symbol", "dateAdded"])
        let changed = WatchEntry.fields.pairs(e, leaving: ["dateAdded"], replacing: ["coinId": .string("BTC")], adding: [("n", .null)])
        #expect(changed.map(\.0) == ["coinId", "n"])
        guard case let .string(id) = changed[0].1 else {
            Issue.record("coinId is not a string")
            return
        }
        #expect(id == "BTC")
    }
}

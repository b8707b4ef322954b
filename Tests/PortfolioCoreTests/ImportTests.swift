import Foundation
import PortfolioCore
import Testing

@Suite struct CSVTests {
    func parse(_ s: String) throws -> [[String]] { try CSV.parse(Array(s.utf8)).map(\.fields) }

    @Test func rfc4180Cases() throws {
        #expect(try parse("a,b\n1,2\n") == [["a", "b"], ["1", "2"]])
        #expect(try parse("a,b\r\n1,2\r\n") == [["a", "b"], ["1", "2"]])
        #expect(try parse("a,b\n\"x, y\",\"say \"\"hi\"\"\"\n") == [["a", "b"], ["x, y", "say \"hi\""]])
        #expect(try parse("a\n\"two\nlines\"\n") == [["a"], ["two\nlines"]])
        #expect(try parse("\u{FEFF}a,b\n1,2") == [["a", "b"], ["1", "2"]])
        #expect(try parse("a,b\n\n1,2\n\n") == [["a", "b"], ["1", "2"]])
        #expect(try parse("a,b,\n1,,\n") == [["a", "b", ""], ["1", "", ""]])
        #expect(try parse("a\n\"\"\n") == [["a"]])
    }

    @Test func recordLinesCountEmbeddedNewlines() throws {
        let records = try CSV.parse(Array("h\n\"a\nb\"\nc\n".utf8))
        #expect(records.map(\.line) == [1, 2, 4])
    }

    static let neverClosed = "a quoted field that starts here is never closed"
    @Test(arguments: [
        ("a\n\"open\n", 2, neverClosed),
        ("a\nx\"y\n", 2, "a quote inside an unquoted field (quote the whole field and write \"\" for a quote)"),
        ("a\n\"q\"x\n", 2, "unexpected text after a closing quote (a quote inside a quoted field is written \"\")"),
        ("a\nb\n\"c\nd", 3, neverClosed),
    ])
    func malformedQuotingNamesItsLine(_ text: String, _ line: Int, _ message: String) {
        #expect(throws: CSVError(line: line, message: message)) { try CSV.parse(Array(text.utf8)) }
    }

    @Test func windows1252Fallback() throws {
        let bytes: [UInt8] = Array("a\n".utf8) + [0x80] + Array("5\n".utf8)
        #expect(try CSV.parse(bytes).map(\.fields) == [["a"], ["€5"]])
    }

    @Test func escapeRoundTrips() throws {
        let fields = ["plain", "with,comma", "with \"quote\"", "multi\nline", ""]
        let line = fields.map(CSV.escape).joined(separator: ",") + "\n"
        #expect(try CSV.parse(Array(("h,h,h,h,h\n" + line).utf8)).last?.fields == fields)
    }
}

@Suite struct TransactionImportTests {
    let now = day("2025-01-01")
    let resolve: (String) throws -> String = { text in
        guard let c = CoinCatalog().resolve(text) else { throw PortfolioError.coinNotFound(query: text, suggestions: []) }
        return c.id
    }

    func plan(_ csv: String, into existing: [Transaction] = [], allowDuplicates: Bool = false) throws -> ImportPlan {
        try TransactionImport.plan(TransactionImport.rows(csv: Array(csv.utf8)), into: existing, now: now,
                                   allowDuplicates: allowDuplicates, resolveCoin: resolve)
    }

    @Test func anyColumnOrderAliasesAndUnknownColumns() throws {
        let p = try plan("Date,PricePerCoin,extra,CoinId,TYPE,Amount,Fee,Notes\n2024-01-01,100,zzz,BTC,Buy,1.5,,\"a, b\"\n")
        #expect(p.added.count == 1)
        let t = p.added[0]
        #expect(t.assetId == "bitcoin" && t.type == .buy && t.amount == dec("1.5") && t.pricePerCoin == 100 && t.fee == 0)
        #expect(t.notes == "a, b")
    }

    @Test func missingRequiredColumn() {
        #expect(throws: ImportFailure(problems: [
            "line 1: missing column 'amount' (need type, asset, amount, date; optional id, portfolio, price, total, fee, currency, fxRate, notes, linkedId)",
        ])) {
            try plan("type,coin,price,date\nbuy,btc,1,2024-01-01\n")
        }
        #expect(throws: ImportFailure(problems: ["line 1: column 'asset' appears twice (as 'coin' and 'assetId')"])) {
            try plan("type,coin,amount,price,date,assetId\nbuy,btc,1,1,2024-01-01,btc\n")
        }
    }

    @Test func everyBadLineIsReportedAtOnce() throws {
        let csv = """
        type,coin,amount,price,date
        buy,btc,1,100,2024-01-01
        buy,btc,12abc,100,2024-01-01
        swap,btc,1,100,2024-01-01
        buy,nosuchcoin,1,100,2024-01-01
        buy,btc,1,100,2030-01-01
        sell,eth,1,100,2024-01-01
        buy,btc,0,100,2024-01-01

        """
        do {
            _ = try plan(csv)
            Issue.record("imported a broken file")
        } catch {
            let error = try #require(error as? ImportFailure)
            #expect(error.problems.map { String($0.prefix(7)) } == ["line 3:", "line 4:", "line 5:", "line 6:", "line 7:", "line 8:"])
            #expect(error.problems[0].contains("12abc"))
            #expect(error.problems[4] == "line 7: You only own 0 ethereum. Cannot sell 1.")
        }
    }

    @Test func oversellInsideTheFile() {
        let csv = "type,coin,amount,price,date\nbuy,btc,1,100,2024-01-01\nsell,btc,2,100,2024-01-02\n"
        #expect(throws: ImportFailure(problems: ["line 3: You only own 1 bitcoin. Cannot sell 2."])) { try plan(csv) }
    }

    @Test func duplicatesAreAMultiset() throws {
        let csv = "type,coin,amount,price,date\nbuy,btc,1,100,2024-01-01\nbuy,btc,1,100,2024-01-01\nbuy,eth,2,10,2024-01-01\n"
        let first = try plan(csv)
        #expect(first.added.count == 3 && first.skipped == 0)
        let second = try plan(csv, into: first.added)
        #expect(second.added.isEmpty && second.skipped == 3)
        let partial = try plan(csv, into: [first.added[0]])
        #expect(partial.added.count == 2 && partial.skipped == 1)
        let forced = try plan(csv, into: first.added, allowDuplicates: true)
        #expect(forced.added.count == 3)
    }

    @Test func knownIdsAreSkippedAndDuplicateIdsRefused() throws {
        let id = "0a4f8e2c-1b3d-4e5f-8a9b-0c1d2e3f4a5b"
        let csv = "id,type,coin,amount,price,date\n\(id),buy,btc,1,100,2024-01-01\n"
        let first = try plan(csv)
        #expect(first.added.first?.id.uuidString.lowercased() == id)
        var edited = first.added[0]
        edited.pricePerCoin = 200
        #expect(try plan(csv, into: [edited], allowDuplicates: true).skipped == 1)
        #expect(throws: ImportFailure(problems: ["line 3: id \(id) also appears at line 2"])) {
            try plan(csv + "\(id),buy,btc,2,100,2024-01-01\n")
        }
    }

    @Test func jsonItemsAreNumbered() throws {
        let json = """
        [{"id": "0a4f8e2c-1b3d-4e5f-8a9b-0c1d2e3f4a5b", "coinId": "bitcoin", "type": "buy", "amount": "1", "pricePerCoin": "100",
          "fee": "0", "date": "2024-01-01T00:00:00Z", "notes": null},
         {"coinId": "bitcoin", "type": "buy", "amount": "x", "pricePerCoin": "100", "date": "2024-01-01T00:00:00Z"}]
        """
        let rows = try TransactionImport.rows(json: Array(json.utf8))
        #expect(rows.map(\.location) == ["item 1", "item 2"])
        #expect(throws: ImportFailure(problems: ["item 2: " + LiteralError.notANumber(field: "Amount", text: "x").description])) {
            try TransactionImport.plan(rows, into: [], now: now, allowDuplicates: false, resolveCoin: resolve)
        }
        let good = try TransactionImport.plan(Array(rows.prefix(1)), into: [], now: now, allowDuplicates: false, resolveCoin: resolve)
        #expect(good.added.count == 1)
    }

    @Test func exportThenImportReproducesTransactions() throws {
        let txs = try plan("type,coin,amount,price,date,fee,notes\nbuy,btc,0.000000000000000001,12345.678901234567,2024-01-01T10:00:00.123Z,0.5,\"x,\"\"y\"\"\nz\"\nsell,btc,0.000000000000000001,1,2024-01-02,,\n").added
        let back = try TransactionImport.plan(TransactionImport.rows(csv: TransactionExport.csv(txs)), into: [], now: now,
                                              allowDuplicates: false, resolveCoin: resolve).added
        #expect(back == txs)
        let viaJSON = try TransactionImport.plan(TransactionImport.rows(json: TransactionExport.json(txs)), into: [], now: now,
                                                 allowDuplicates: false, resolveCoin: resolve).added
        #expect(viaJSON == txs)
    }
}

/// Version 2: every kind, portfolios, assets, links, and the whole-book export.
@Suite struct BookImportTests {
    let now = day("2025-01-01")

    static func f(_ text: String) -> Fixed18 {
        guard let v = Fixed18.parse(utf8: text.utf8) else { preconditionFailure("bad test value \(text)") }
        return v
    }

    /// As the CLI resolves an asset: a registered code first (any case), then a coin of the catalog.
    static func resolver(_ book: Book) -> (String) throws -> String {
        { text in
            if let code = Asset.code(text), book.asset(id: code) != nil { return code }
            guard let c = CoinCatalog().resolve(text) else { throw PortfolioError.coinNotFound(query: text, suggestions: []) }
            return c.id
        }
    }

    static let aapl = Asset(id: "AAPL", name: "Apple Inc.", type: .stock, currency: "USD", market: "NASDAQ", createdDate: day("2024-01-01"))

    /// Two portfolios (one inactive), a registered stock, every kind, a swap, a move and manual prices,
    /// admitted by the engine.
    static func everyKind() throws -> Book {
        let f = Self.f
        var book = Book(portfolios: [Portfolio(name: "main"), Portfolio(name: "trading", description: "stocks", active: false,
                                                                        createdDate: day("2024-01-02"))],
                        assets: [aapl])
        let swap = UUID(), move = UUID()
        let txs: [Transaction] = [
            Transaction(type: .buy, assetId: "bitcoin", amount: f("1"), price: f("30000"), fee: f("10"), date: day("2024-01-01"),
                        notes: "first, \"quoted\"\nsecond line"),
            Transaction(type: .buy, assetId: "ethereum", amount: f("10"), price: f("2000"), date: day("2024-02-01")),
            Transaction(id: swap, type: .sell, assetId: "bitcoin", amount: f("0.5"), price: f("60000"), total: f("30000"), fee: f("30"),
                        date: day("2024-03-01"), linkedId: swap),
            Transaction(type: .buy, assetId: "ethereum", amount: f("8"), price: f("3750"), total: f("30000"), fee: .zero,
                        date: day("2024-03-01"), linkedId: swap),
            Transaction(id: move, type: .transferOut, assetId: "ethereum", amount: f("1"), price: nil, fee: .zero, currency: nil,
                        date: day("2024-03-02"), linkedId: move),
            Transaction(portfolio: "trading", type: .transferIn, assetId: "ethereum", amount: f("1"), price: nil, fee: nil, currency: nil,
                        date: day("2024-03-02"), linkedId: move),
            Transaction(type: .transferOut, assetId: "bitcoin", amount: f("0.1"), price: nil, fee: f("0.001"), currency: nil, date: day("2024-04-02")),
            Transaction(type: .transferIn, assetId: "bitcoin", amount: f("0.2"), price: f("25000"), fee: f("5"), date: day("2024-04-03")),
            Transaction(type: .reward, assetId: "ethereum", amount: f("0.01"), price: f("3000"), fee: nil, date: day("2024-04-04")),
            Transaction(portfolio: "trading", type: .buy, assetId: "AAPL", amount: f("10"), price: f("180"), fee: f("1"), date: day("2024-01-02")),
            Transaction(portfolio: "trading", type: .buy, assetId: "AAPL", amount: f("3"), price: f("180.4"), total: f("541.2"), fee: f("1"),
                        date: day("2024-01-03")),
            Transaction(portfolio: "trading", type: .dividend, assetId: "AAPL", amount: f("2.4"), price: nil, fee: f("0.36"), date: day("2024-02-15")),
            Transaction(portfolio: "trading", type: .interest, assetId: "AAPL", amount: f("1"), price: nil, fee: .zero, date: day("2024-02-16")),
            Transaction(portfolio: "trading", type: .split, assetId: "AAPL", amount: f("1"), price: f("3"), fee: nil, currency: nil, date: day("2024-06-10")),
            Transaction(portfolio: "trading", type: .split, assetId: "AAPL", amount: f("4"), price: nil, fee: nil, currency: nil, date: day("2024-06-11")),
            Transaction(portfolio: "trading", type: .adjustment, assetId: "AAPL", amount: f("0.5"), negative: true, price: nil, fee: nil,
                        currency: nil, date: day("2024-08-01")),
            Transaction(portfolio: "trading", type: .adjustment, assetId: "AAPL", amount: f("0.25"), price: nil, fee: nil, currency: nil,
                        date: day("2024-08-02")),
        ]
        book = try book.adding(txs, now: day("2025-01-01"))
        book.manualPrices = [
            Quote(coinId: "AAPL", price: dec("210"), time: day("2024-09-01"), source: .manual),
            Quote(coinId: "bitcoin", price: dec("60000.5"), time: day("2024-09-02T10:00:00Z"), source: .manual),
        ]
        return book
    }

    @Test func csvRoundTripOfEveryKindIsExact() throws {
        let book = try Self.everyKind()
        let ordered = Ledger.chronological(book.transactions)
        let csv = TransactionExport.csv(ordered)
        let text = String(decoding: csv, as: UTF8.self)
        #expect(text.hasPrefix("id,portfolio,type,assetId,amount,price,total,fee,currency,fxRate,date,notes,linkedId\n"))
        #expect(text.contains(",trading,adjustment,AAPL,-0.5,,,,,,2024-08-01T00:00:00Z,,\n"))
        #expect(text.contains(",trading,split,AAPL,1,3,,,,,2024-06-10T00:00:00Z,,\n"))
        #expect(text.contains(",main,reward,ethereum,0.01,3000,,,USD,,2024-04-04T00:00:00Z,,\n"))
        var empty = book
        empty.transactions = []
        let plan = try TransactionImport.plan(TransactionImport.rows(csv: csv), into: empty, portfolio: "main", now: now,
                                              allowDuplicates: false, resolveAsset: Self.resolver(book))
        #expect(plan.added == ordered)
        let swapLegs = plan.added.filter { $0.type == .sell || ($0.type == .buy && $0.linkedId != nil) }
        #expect(swapLegs.count == 2 && swapLegs[0].linkedId == swapLegs[0].id && swapLegs[1].linkedId == swapLegs[0].id)
        // Importing it again adds nothing: every id is known.
        let again = try TransactionImport.plan(TransactionImport.rows(csv: csv), into: book, portfolio: "main", now: now,
                                               allowDuplicates: true, resolveAsset: Self.resolver(book))
        #expect(again.added.isEmpty && again.skipped == ordered.count)
    }

    @Test func kindsReadTheirOwnFields() throws {
        var book = Book(portfolios: [Portfolio(name: "main"), Portfolio(name: "trading")], assets: [Self.aapl])
        book = try book.adding([Transaction(portfolio: "trading", type: .buy, assetId: "AAPL", amount: Self.f("12"), price: Self.f("100"),
                                            date: day("2024-01-01"))], now: now)
        let csv = """
        Type,Asset,Amount,Price,Total,Fee,Currency,Date,Portfolio
        split,aapl,1:3,,,,,2024-06-10,Trading
        adjustment,AAPL,-0.5,,,,,2024-08-01,trading
        adjustment,AAPL,2,,,0,,2024-08-02,trading
        buy,btc,3,,100,,usd,2024-01-05,
        dividend,AAPL,2.40,,,0.36,,2024-02-15,trading
        transfer-in,eth,1,0,,,,2024-01-05,
        reward,eth,0.5,0,,,,2024-01-06,

        """
        let added = try TransactionImport.plan(TransactionImport.rows(csv: Array(csv.utf8)), into: book, portfolio: "main", now: now,
                                               allowDuplicates: false, resolveAsset: Self.resolver(book)).added
        let f = Self.f
        #expect(added.count == 7)
        let split = added[0]
        #expect(split.type == .split && split.portfolio == "trading" && split.assetId == "AAPL" && split.amountValue == f("1") && split.priceValue == f("3"))
        #expect(split.feeValue == nil && split.currency == nil)
        #expect(added[1].negative && added[1].amountValue == f("0.5") && added[1].amount == dec("-0.5") && added[1].feeValue == nil)
        #expect(!added[2].negative && added[2].feeValue == nil)  // a zero fee on a kind without one is no fee
        // A total alone gives the price, total ÷ amount rounded half-up to 18 decimals; the main portfolio by default.
        #expect(added[3].portfolio == "main" && added[3].totalValue == f("100") && added[3].priceValue == f("33.333333333333333333"))
        #expect(added[3].currency == "USD" && added[3].feeValue == .zero)
        #expect(added[4].type == .dividend && added[4].priceValue == nil && added[4].feeValue == f("0.36") && added[4].currency == "USD")
        #expect(added[5].priceValue == .zero && added[5].feeValue == .zero)
        #expect(added[6].type == .reward && added[6].feeValue == nil && added[6].priceValue == .zero)
    }

    @Test func everyRowIsCheckedByItsKind() throws {
        let book = Book(portfolios: [Portfolio(name: "main"), Portfolio(name: "trading")], assets: [Self.aapl])
        let link = "0a4f8e2c-1b3d-4e5f-8a9b-0c1d2e3f4a5b"
        let csv = """
        type,asset,amount,price,fee,currency,total,date,portfolio,linkedId
        dividend,AAPL,2.4,10,,,,2024-02-15,trading,
        transfer-in,btc,1,,,,,2024-01-05,,
        buy,btc,-1,100,,,,2024-01-05,,
        reward,eth,1,10,5,,,2024-01-05,,
        split,AAPL,4,,,GBP,,2024-01-05,trading,
        transfer-out,btc,1,,,,50,2024-01-05,,
        buy,btc,1,100,,,,2024-01-05,nosuch,
        buy,btc,1,100,,EUR,,2024-01-05,,
        buy,btc,1,100,,,,2024-01-05,,\(link)
        buy,MSFT,1,100,,,,2024-01-05,,
        buy,btc,1,,,,,2024-01-05,,
        swap,btc,1,100,,,,2024-01-05,,
        adjustment,AAPL,-0,,,,,2024-01-05,trading,

        """
        do {
            _ = try TransactionImport.plan(TransactionImport.rows(csv: Array(csv.utf8)), into: book, portfolio: "main", now: now,
                                           allowDuplicates: false, resolveAsset: Self.resolver(book))
            Issue.record("imported a broken file")
        } catch {
            #expect(error.problems == [
                "line 2: a dividend has no price (price '10')",
                "line 3: " + PortfolioError.priceMissing(.transferIn).description,
                "line 4: Amount '-1' is negative; only an adjustment's amount may be",
                "line 5: a reward has no fee",
                "line 6: a split has no money, so no currency (currency 'GBP')",
                "line 7: a transfer-out has no total (only a buy or a sell does)",
                "line 8: " + PortfolioError.portfolioNotFound("nosuch").description,
                "line 9: " + PortfolioError.fxRateMissing(from: "EUR", to: "USD", date: day("2024-01-05")).description,
                "line 10: its linked leg (linkedId \(link)) is missing: a link joins two records",
                "line 11: " + PortfolioError.coinNotFound(query: "MSFT", suggestions: []).description,
                "line 12: " + PortfolioError.priceMissing(.buy).description,
                "line 13: type 'swap' is not one of buy, sell, transfer-in, transfer-out, reward, dividend, interest, adjustment, split, deposit, withdrawal, spend, fee, expense "
                    + "(a swap is two rows, a sell and a buy, sharing a linkedId)",
                "line 14: " + PortfolioError.amountNotPositive.description,
            ])
        }
    }

    @Test func wholeBookExportImportsIntoAnEmptyStore() throws {
        let book = try Self.everyKind()
        let bytes = TransactionExport.document(book)
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.hasPrefix("{\n  \"format\": \"bitpal-export\",\n  \"version\": 2,\n  \"portfolios\": ["))
        let doc = try TransactionImport.document(json: bytes)
        #expect(doc.isBook && doc.portfolios == book.portfolios && doc.assets == book.assets && doc.manualPrices == book.manualPrices)
        var fresh = Book()
        let outcome = try TransactionImport.merge(doc, into: &fresh, portfolio: fresh.defaultPortfolio, now: now, allowDuplicates: false,
                                                  resolveAsset: Self.resolver(Book(assets: doc.assets)))
        #expect(fresh.transactions == Ledger.chronological(book.transactions))
        #expect(fresh.portfolios == book.portfolios && fresh.assets == book.assets && fresh.manualPrices == book.manualPrices)
        #expect(outcome.createdPortfolios == ["trading"] && outcome.createdAssets == ["AAPL"] && outcome.addedPrices == 2)
        // The same replay: positions, realized P&L and income agree.
        #expect(fresh.checked(now: now).problems.isEmpty)
        let a = Ledger.replayForgiving(book.transactions), b = Ledger.replayForgiving(fresh.transactions)
        #expect(a.failures.isEmpty && b.failures.isEmpty)
        #expect((try a.ledger.totals(for: nil)) == (try b.ledger.totals(for: nil)) && a.ledger.income == b.ledger.income)
        #expect(Set(a.ledger.positions.keys) == Set(b.ledger.positions.keys))
        for (key, p) in a.ledger.positions {
            #expect(String(describing: p) == b.ledger.positions[key].map { String(describing: $0) }, "\(key)")
        }
        // Again: nothing new, and nothing changes.
        var again = fresh
        let second = try TransactionImport.merge(doc, into: &again, portfolio: "main", now: now, allowDuplicates: false,
                                                 resolveAsset: Self.resolver(fresh))
        #expect(second.plan.added.isEmpty && second.plan.skipped == book.transactions.count && !second.changesStore)
        #expect(second.skippedPrices == 2 && again == fresh)
        // `-p trading` exports that portfolio only.
        let one = try TransactionImport.document(json: TransactionExport.document(book, portfolios: ["trading"]))
        #expect(one.portfolios.map(\.name) == ["trading"] && one.rows.count == book.transactions.filter { $0.portfolio == "trading" }.count)
    }

    @Test func importCreatesWhatTheFileNamesAndRefusesWhatDiffers() throws {
        let json = """
        {"format": "bitpal-export", "version": 2,
         "portfolios": [{"name": "stocks", "baseCurrency": "USD"}],
         "assets": [{"id": "VWCE.DE", "name": "Vanguard FTSE All-World", "type": "etf", "currency": "USD", "createdDate": "2024-01-01T00:00:00Z"}],
         "transactions": [{"portfolio": "stocks", "type": "buy", "assetId": "vwce.de", "amount": "2", "price": "100.5", "date": "2024-03-01T00:00:00Z"}],
         "manualPrices": [{"assetId": "VWCE.DE", "price": "110", "currency": "USD", "date": "2024-04-01T00:00:00Z"}]}
        """
        let doc = try TransactionImport.document(json: Array(json.utf8))
        var book = Book()
        let outcome = try TransactionImport.merge(doc, into: &book, portfolio: "main", now: now, allowDuplicates: false,
                                                  resolveAsset: Self.resolver(Book(assets: doc.assets)))
        #expect(outcome.createdPortfolios == ["stocks"] && outcome.createdAssets == ["VWCE.DE"] && outcome.addedPrices == 1)
        #expect(book.portfolio(named: "stocks") != nil && book.asset(id: "VWCE.DE")?.type == .etf)
        #expect(book.transactions.map { "\($0.portfolio) \($0.assetId) \($0.type.rawValue) \($0.amount)" } == ["stocks VWCE.DE buy 2"])

        // An asset that exists as another type, a portfolio with another base currency: nothing is imported.
        var other = Book(portfolios: [Portfolio(name: "main"), Portfolio(name: "Stocks", baseCurrency: "EUR")],
                         assets: [Asset(id: "VWCE.DE", name: "All-World", type: .mutualFund, createdDate: day("2024-01-01"))])
        let before = other
        #expect(throws: ImportFailure(problems: [
            "portfolio 'stocks' exists with base currency EUR; the file's is USD",
            "asset VWCE.DE exists as mutual-fund in USD; the file has it as etf in USD",
            "item 1: " + PortfolioError.fxRateMissing(from: "USD", to: "EUR", date: day("2024-03-01")).description,
        ])) {
            try TransactionImport.merge(doc, into: &other, portfolio: "main", now: now, allowDuplicates: false, resolveAsset: Self.resolver(other))
        }
        #expect(other == before)

        // A plain CSV does not register assets: one it names must exist.
        #expect(throws: ImportFailure(problems: ["line 2: " + PortfolioError.assetNotFound("VWCE.DE").description])) {
            try TransactionImport.plan(TransactionImport.rows(csv: Array("type,asset,amount,price,date\nbuy,VWCE.DE,1,1,2024-01-01\n".utf8)),
                                       into: Book(), portfolio: "main", now: now, allowDuplicates: false, resolveAsset: { $0 })
        }
    }

    @Test func aStoreFileOrANewerExportIsExplained() {
        for (text, message) in [
            (#"{"format": "bitpal-portfolio", "version": 2}"#, "this is a bitpal store (portfolio.json), not an export"),
            (#"{"format": "bitpal-export", "version": 3}"#, "this export has format version 3, but this bitpal reads up to version 2"),
            (#"{"version": 2, "transactions": []}"#, #"no "format": "bitpal-export" field"#),
            ("\"x\"", "expected an array of transactions or a bitpal export object"),
        ] {
            do {
                _ = try TransactionImport.document(json: Array(text.utf8))
                Issue.record("read \(text)")
            } catch {
                #expect(error.problems.count == 1 && error.problems[0].contains(message), "\(error.problems)")
            }
        }
    }

    @Test func aLinkedTransferInWithoutItsLegIsRefusedByTheEngine() throws {
        let out = "0a4f8e2c-1b3d-4e5f-8a9b-0c1d2e3f4a5b"
        let csv = """
        id,type,asset,amount,price,date,linkedId,portfolio
        \(out),transfer-out,btc,1,,2024-01-02,\(out),main
        ,transfer-in,btc,1,,2024-01-02,\(out),trading
        ,buy,btc,1,100,2024-01-01,,main

        """
        let book = Book(portfolios: [Portfolio(name: "main"), Portfolio(name: "trading")])
        let plan = try TransactionImport.plan(TransactionImport.rows(csv: Array(csv.utf8)), into: book, portfolio: "main", now: now,
                                              allowDuplicates: false, resolveAsset: Self.resolver(book))
        #expect(plan.added[1].priceValue == nil && plan.added[1].feeValue == nil && plan.added[1].currency == nil)
        // Without the buy, the move takes what is not there: the engine's message, at the move's row.
        #expect(throws: ImportFailure(problems: ["line 2: You only own 0 bitcoin. Cannot move 1."])) {
            try TransactionImport.plan(Array(TransactionImport.rows(csv: Array(csv.utf8)).prefix(2)), into: book, portfolio: "main", now: now,
                                       allowDuplicates: false, resolveAsset: Self.resolver(book))
        }
    }
}

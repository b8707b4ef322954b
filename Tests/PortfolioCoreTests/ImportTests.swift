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
        #expect(throws: ImportFailure(problems: ["line 1: missing column 'amount' (need type, coin, amount, price, date; optional fee, notes, id)"])) {
            try plan("type,coin,price,date\nbuy,btc,1,2024-01-01\n")
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

import BitpalCLI
import Foundation
import PortfolioCore
import XCTest

final class CLITests: XCTestCase {
    /// Worked example A from accounting.md, entered through the CLI.
    func exampleA() -> Sandbox {
        let s = Sandbox()
        s.ok(["add", "buy", "bitcoin", "1", "30000", "--date", "2024-01-01"])
        s.ok(["add", "buy", "btc", "1", "40000", "--date=2024-02-01"])
        s.ok(["add", "sell", "BTC", "0.5", "50000", "--date", "2024-03-01"])
        s.ok(["price", "set", "btc", "60000", "--date", "2024-06-01T11:30:00Z"])
        return s
    }

    func testWorkedExampleAInJSONToTheCent() throws {
        let s = exampleA()
        let holdings = s.ok(["holdings", "--json"]).out
        XCTAssertEqual(holdings, """
        {
          "currency": "USD",
          "holdings": [
            {
              "assetId": "bitcoin",
              "symbol": "btc",
              "name": "Bitcoin",
              "type": "crypto",
              "totalAmount": "1.5",
              "avgCost": "35000",
              "totalCost": "52500.00",
              "currentPrice": "60000",
              "currentValue": "90000.00",
              "profitLoss": "37500.00",
              "profitLossPercentage": "71.43",
              "priceUpdatedAt": "2024-06-01T11:30:00Z",
              "priceStale": false,
              "priceSource": "manual"
            }
          ],
          "totals": {
            "totalCost": "52500.00",
            "currentValue": "90000.00",
            "cashBalance": null,
            "totalValue": "90000.00",
            "profitLoss": "37500.00",
            "profitLossPercentage": "71.43",
            "unpricedCount": 0,
            "unpricedCost": "0.00"
          },
          "pricesAsOf": "2024-06-01T11:30:00Z",
          "stale": false,
          "unconvertedPortfolios": []
        }

        """)
        let summary = s.ok(["--json", "summary"]).out
        for field in [#""totalValue": "90000.00""#, #""totalOpenCost": "52500.00""#, #""totalClosedCost": "17500.00""#,
                      #""unrealizedPnL": "37500.00""#, #""realizedPnL": "7500.00""#, #""totalPnL": "45000.00""#, #""income": "0.00""#,
                      #""totalPnLPercentage": "64.29""#, #""holdingsCount": 1"#, #""unpricedCount": 0"#, #""stale": false"#] {
            XCTAssertTrue(summary.contains(field), "missing \(field) in \(summary)")
        }
    }

    func testWorkedExampleBClosedPosition() {
        let s = Sandbox()
        s.ok(["add", "buy", "ethereum", "2", "1000", "--fee", "10", "--date", "2024-01-01"])
        s.ok(["add", "sell", "eth", "2", "1500", "--fee", "15", "--date", "2024-02-01"])
        s.ok(["add", "buy", "eth", "1", "2000", "--date", "2024-03-01"])
        let closed = s.ok(["closed", "--json"]).out
        XCTAssertEqual(closed, """
        [
          {
            "assetId": "ethereum",
            "symbol": "eth",
            "name": "Ethereum",
            "type": "crypto",
            "portfolio": "main",
            "totalQuantity": "2",
            "totalCost": "2010.00",
            "avgCostPrice": "1005",
            "avgSellPrice": "1500",
            "realizedPnL": "975.00",
            "realizedPnLPercentage": "48.51",
            "openedDate": "2024-01-01",
            "closedDate": "2024-02-01"
          }
        ]

        """)
        XCTAssertTrue(s.ok(["holdings", "--json"]).out.contains(#""avgCost": "2000""#))
    }

    func testWorkedExampleCNoDust() {
        let s = Sandbox()
        s.ok(["add", "buy", "btc", "0.1", "10", "--date", "2024-01-01"])
        s.ok(["add", "buy", "btc", "0.2", "10", "--date", "2024-01-02"])
        s.ok(["add", "sell", "btc", "0.3", "20", "--date", "2024-01-03"])
        XCTAssertTrue(s.ok(["holdings", "--json"]).out.contains(#""holdings": []"#))
        XCTAssertTrue(s.ok(["summary", "--json"]).out.contains(#""realizedPnL": "3.00""#))
    }

    func testWorkedExampleDBackDatedSellRefusedAndNothingWritten() throws {
        let s = Sandbox()
        s.ok(["add", "buy", "btc", "1", "100", "--date", "2024-01-10"])
        s.ok(["add", "sell", "btc", "1", "200", "--date", "2024-02-01"])
        let before = s.storeBytes
        let r = s.run(["add", "sell", "btc", "0.5", "150", "--date", "2024-01-20"])
        XCTAssertEqual(r.code, .failure)
        XCTAssertTrue(r.err.hasPrefix("error: This would break the later sell of 1 BTC (Bitcoin) on 2024-02-01"), r.err)
        XCTAssertEqual(r.err.filter { $0 == "\n" }.count, 1)
        XCTAssertEqual(s.storeBytes, before)
    }

    /// Every refusal: one `error:` line, the right exit code, the store byte-for-byte unchanged.
    func testBadInputTable() {
        let cases: [(args: [String], code: ExitCode, message: String)] = [
            (["add", "buy", "btc", "12abc", "1"], .usage, "Amount '12abc' is not a plain decimal number"),
            (["add", "buy", "btc", "1,5", "1"], .usage, "Amount '1,5'"),
            (["add", "buy", "btc", "1e5", "1"], .usage, "Amount '1e5'"),
            (["add", "buy", "btc", "-5", "1"], .usage, "Amount '-5'"),
            (["add", "buy", "btc", " 1", "1"], .usage, "Amount ' 1'"),
            (["add", "buy", "btc", "", "1"], .usage, "Amount ''"),
            (["add", "buy", "btc", "1", "abc"], .usage, "Price 'abc'"),
            (["add", "buy", "btc", "1", "1", "--fee", "x"], .usage, "Fee 'x'"),
            (["add", "buy", "btc", "1", "1", "--date", "2024-02-30"], .usage, "Date '2024-02-30' is not a date"),
            (["add", "buy", "btc", "1", "1", "--date", "last week"], .usage, "is not a date"),
            (["add", "hold", "btc", "1", "1"], .usage, "KIND must be one of buy, sell, transfer-in, transfer-out, reward, dividend, interest, adjustment, split, spend, fee, swap, not 'hold'"),
            (["add", "buy", "btc", "1"], .usage, "missing PRICE"),
            (["add", "buy", "btc", "1", "1", "extra"], .usage, "unexpected argument 'extra'"),
            (["add", "buy", "btc", "1", "1", "--fe", "1"], .usage, "unknown option '--fe' for 'add'. Did you mean '--fee'?"),
            (["add", "buy", "btc", "1", "1", "--fee"], .usage, "option '--fee' needs a value"),
            (["add", "buy", "btc", "1", "1", "--fee", "1", "--fee", "2"], .usage, "given more than once"),
            (["holdigns"], .usage, "unknown command 'holdigns'. Did you mean 'holdings'?"),
            (["price", "sett"], .usage, "Did you mean 'set'?"),
            (["coins"], .usage, "'coins' needs one of: search, update"),
            (["--frobnicate"], .usage, "unknown option '--frobnicate'"),
            (["holdings", "--sort", "size"], .usage, "--sort must be one of value, pnl, name, amount"),
            (["list", "--limit", "-1"], .usage, "--limit '-1' is not a whole number"),
            (["add", "buy", "btc", "0", "1"], .failure, "Amount must be greater than zero"),
            (["add", "buy", "btc", "1", "0"], .failure, "Price must be greater than zero"),
            (["add", "buy", "btc", "0.1234567890123456789", "1"], .failure, "more than 18 fractional digits"),
            (["add", "buy", "btc", "1", "1", "--date", "2030-01-01"], .failure, "Transaction date cannot be in the future"),
            (["add", "buy", "btc", "123456789012345678901", "1"], .failure, "has more than 20 digits before the point"),
            (["price", "set", "btc", "0"], .failure, "Price must be greater than zero"),
            (["price", "set", "btc", "1", "--date", "2030-01-01"], .failure, "Price date cannot be in the future"),
            (["add", "buy", "xyzcoin", "1", "1"], .failure, "Cryptocurrency 'xyzcoin' not found"),
            (["add", "buy", "bitcoinn", "1", "1"], .failure, "Did you mean 'bitcoin'"),
            (["add", "sell", "btc", "5", "1"], .failure, "You only own 1 BTC (Bitcoin). Cannot sell 5."),
            (["edit", "zzzz", "--price", "1"], .failure, "No transaction matches 'zzzz'"),
            (["edit", "ab", "--price", "1"], .failure, "too short"),
            (["delete", "ffffffff"], .failure, "No transaction matches"),
            (["watch", "remove", "solana"], .failure, "SOL (Solana) is not in your watchlist"),
            (["price", "refresh"], .usage, "cannot run offline"),
        ]
        let s = Sandbox()
        s.ok(["add", "buy", "btc", "1", "100", "--date", "2024-01-01"])
        let before = s.storeBytes
        for c in cases {
            let r = s.run(c.args)
            XCTAssertEqual(r.code, c.code, "\(c.args): \(r)")
            XCTAssertTrue(r.err.hasPrefix("error: ") && r.err.contains(c.message), "\(c.args): \(r.err)")
            XCTAssertEqual(r.err.filter { $0 == "\n" }.count, 1, "\(c.args): more than one line: \(r.err)")
            XCTAssertEqual(r.out, "", "\(c.args) printed to stdout")
            XCTAssertEqual(s.storeBytes, before, "\(c.args) changed the store")
        }
    }

    func testCorruptStoreIsNeverOverwritten() {
        let s = Sandbox()
        let garbage = "{\n  \"version\": 1,\n  \"transactions\": [ oops\n"
        _ = s.write("portfolio.json", garbage)
        for args in [["add", "buy", "btc", "1", "1"], ["holdings"], ["list"], ["price", "set", "btc", "1"], ["watch", "add", "eth"]] {
            let r = s.run(args)
            XCTAssertEqual(r.code, .failure, "\(args)")
            XCTAssertTrue(r.err.contains(s.storePath) && r.err.contains("line 3"), r.err)
        }
        XCTAssertEqual(s.storeBytes, Data(garbage.utf8))
    }

    func testAddPrintsTheTransactionWithItsId() throws {
        let s = Sandbox()
        let r = s.ok(["add", "buy", "btc", "0.5", "42000", "--fee", "1.5", "--note", "first\u{1b}[31m", "--date", "2024-01-01T10:00:00Z"])
        XCTAssertTrue(r.out.hasPrefix("Added buy 0.5 BTC (Bitcoin) at $42,000.00, fee $1.50, total $21,001.50, on 2024-01-01 10:00 UTC — first\\u{1b}[31m\nid "), r.out)
        let id = try XCTUnwrap(r.out.split(separator: "\n").last).dropFirst(3)
        XCTAssertEqual(try s.loadPortfolio().transactions.first?.id.uuidString.lowercased(), String(id))
        XCTAssertEqual(try s.loadPortfolio().transactions.first?.notes, "first\u{1b}[31m")
        let json = s.ok(["add", "buy", "btc", "1", "1", "--json", "--date", "2024-01-02"]).out
        XCTAssertTrue(json.contains(#""price": "1""#) && json.contains(#""assetId": "bitcoin""#) && json.hasPrefix("{"))
    }

    /// A bare date is stored as the day itself; read in a zone, it counts from that zone's midnight.
    func testBareDateIsADayCountedFromLocalMidnight() throws {
        let s = Sandbox()
        s.variables["TZ"] = "America/New_York"
        s.ok(["add", "buy", "btc", "1", "1", "--date", "2024-05-01"])
        s.ok(["add", "buy", "btc", "1", "1", "--date", "2024-01-10"])
        let text = try XCTUnwrap(String(data: try XCTUnwrap(s.storeBytes), encoding: .utf8))
        XCTAssertTrue(text.contains(#""date": "2024-05-01""#) && text.contains(#""date": "2024-01-10""#), text)
        var store = PortfolioStore(directory: s.dir)
        store.timeZone = try XCTUnwrap(TimeZone(identifier: "America/New_York"))
        XCTAssertEqual(try store.load().transactions.map { ISODate.format($0.date) }, ["2024-05-01T04:00:00Z", "2024-01-10T05:00:00Z"])
        store.timeZone = try XCTUnwrap(TimeZone(identifier: "Asia/Tokyo"))
        XCTAssertEqual(try store.load().transactions.map { ISODate.format($0.date) }, ["2024-04-30T15:00:00Z", "2024-01-09T15:00:00Z"])
    }

    func testListFiltersAndOrder() throws {
        let s = Sandbox()
        s.ok(["add", "buy", "btc", "1", "100", "--date", "2024-01-01"])
        s.ok(["add", "buy", "eth", "2", "10", "--date", "2024-01-15T12:00:00Z"])
        s.ok(["add", "sell", "btc", "0.5", "200", "--date", "2024-02-01"])
        s.ok(["add", "buy", "btc", "1", "300", "--date", "2024-03-01"])
        func coins(_ args: [String]) -> [String] {
            let out = s.ok(["list", "--json"] + args).out
            return out.components(separatedBy: "\"assetId\": \"").dropFirst().map { String($0.prefix { $0 != "\"" }) }
        }
        func amounts(_ args: [String]) -> [String] {
            let out = s.ok(["list", "--json"] + args).out
            return out.components(separatedBy: "\"amount\": \"").dropFirst().map { String($0.prefix { $0 != "\"" }) }
        }
        XCTAssertEqual(amounts([]), ["1", "0.5", "2", "1"])
        XCTAssertEqual(coins(["eth"]), ["ethereum"])
        XCTAssertEqual(amounts(["--type", "sell"]), ["0.5"])
        XCTAssertEqual(amounts(["--since", "2024-01-15", "--until", "2024-02-01"]), ["0.5", "2"])
        XCTAssertEqual(amounts(["--until", "2024-01-15"]), ["2", "1"])
        XCTAssertEqual(amounts(["--limit", "2"]), ["1", "0.5"])
        XCTAssertEqual(s.run(["list", "--since", "2024-03-01", "--until", "2024-01-01"]).code, .usage)
        XCTAssertEqual(s.ok(["list", "--json", "doge"]).out, "[]\n")
    }

    func testEditAndDelete() throws {
        let s = Sandbox()
        s.ok(["add", "buy", "btc", "1", "100", "--date", "2024-01-01"])
        s.ok(["add", "sell", "btc", "1", "200", "--date", "2024-02-01"])
        let ids = try s.loadPortfolio().transactions.map { $0.id.uuidString.lowercased() }
        var r = s.run(["edit", String(ids[0].prefix(6)), "--amount", "0.5"])
        XCTAssertEqual(r.code, .failure)
        XCTAssertTrue(r.err.contains("This would break the later sell"), r.err)
        r = s.run(["delete", String(ids[0].prefix(8))])
        XCTAssertEqual(r.code, .failure)
        s.ok(["edit", String(ids[0].prefix(6)).uppercased(), "--amount", "2", "--note", "more"])
        XCTAssertEqual(try s.loadPortfolio().transactions[0].amount, 2)
        XCTAssertEqual(try s.loadPortfolio().transactions[0].notes, "more")
        XCTAssertEqual(s.run(["edit", ids[1]]).code, .usage)
        s.ok(["delete", ids[1], String(ids[0].prefix(4))])
        XCTAssertTrue(try s.loadPortfolio().transactions.isEmpty)
    }

    func testHelpVersionAndSuggestions() {
        let s = Sandbox()
        let help = s.ok(["--help"]).out
        for name in ["add", "list", "edit", "delete", "holdings", "closed", "summary", "price set", "price list",
                     "price refresh", "price history", "import", "export", "watch add", "coins search", "widget",
                     "completions", "demo"] {
            XCTAssertTrue(help.contains("  \(name) "), "help lacks \(name)")
        }
        XCTAssertEqual(s.ok([]).out, help)
        XCTAssertEqual(s.ok(["--version"]).out, "bitpal \(CLI.version)\n")
        let add = s.ok(["help", "add"]).out
        XCTAssertTrue(add.hasPrefix("Usage: bitpal add KIND ASSET AMOUNT [PRICE] [--date DATE] [--fee FEE] [--note TEXT]"), add)
        XCTAssertEqual(s.ok(["add", "--help"]).out, add)
        XCTAssertEqual(s.ok(["price", "refresh", "-h"]).out, s.ok(["help", "price", "refresh"]).out)
        XCTAssertEqual(s.run(["help", "nope"]).code, .usage)
        let price = s.ok(["help", "price"]).out
        XCTAssertTrue(price.contains("price refresh") && price.contains("price history") && price.contains("runs 'bitpal price list'"), price)
    }

    func testColourOnlyOnATerminal() {
        let s = exampleA()
        XCTAssertFalse(s.run(["holdings"]).out.contains("\u{1b}["))
        XCTAssertTrue(s.run(["holdings"], terminal: true).out.contains("\u{1b}[32m"))
        XCTAssertFalse(s.run(["holdings", "--no-color"], terminal: true).out.contains("\u{1b}["))
        s.variables["NO_COLOR"] = "1"
        XCTAssertFalse(s.run(["holdings"], terminal: true).out.contains("\u{1b}["))
    }

    func testStalePricesAreMarked() {
        let s = exampleA()
        s.now = s.now.addingTimeInterval(3 * 3600)
        XCTAssertTrue(s.ok(["holdings", "--json"]).out.contains(#""stale": true"#))
        XCTAssertTrue(s.ok(["holdings"]).out.contains("STALE"))
        XCTAssertTrue(s.ok(["widget", "--json"]).out.contains(#""stale": true"#))
    }

    func testWatchlist() {
        let s = Sandbox()
        s.ok(["watch", "add", "eth", "btc", "doge"])
        let dup = s.run(["watch", "add", "sol", "eth"])
        XCTAssertEqual(dup.code, .success)
        XCTAssertEqual(dup.err, "ETH (Ethereum) is already in your watchlist\n")
        XCTAssertEqual(dup.out, "Watching SOL (Solana).\n")
        XCTAssertTrue(s.ok(["watch", "--json"]).out.contains("solana"))
        XCTAssertEqual(s.run(["watch", "add", "sol", "nosuchcoinatall"]).code, .failure)
        s.ok(["watch", "remove", "sol"])
        s.ok(["price", "set", "btc", "100", "--date", "2024-06-01T11:30:00Z"])
        s.ok(["price", "set", "eth", "200", "--date", "2024-06-01T11:30:00Z"])
        let names = s.ok(["watch", "list"]).out.split(separator: "\n").dropFirst().map { String($0.prefix(4)).trimmingCharacters(in: .whitespaces) }
        XCTAssertEqual(names, ["BTC", "ETH", "DOGE"])
        let byPrice = s.ok(["watch", "--sort", "price"]).out.split(separator: "\n").dropFirst().map { String($0.prefix(4)).trimmingCharacters(in: .whitespaces) }
        XCTAssertEqual(byPrice, ["ETH", "BTC", "DOGE"])
        // Manual prices carry no 24h change: still before the unpriced coin.
        let byChange = s.ok(["watch", "--sort", "CHANGE"]).out.split(separator: "\n").dropFirst().map { String($0.prefix(4)).trimmingCharacters(in: .whitespaces) }
        XCTAssertEqual(byChange, ["BTC", "ETH", "DOGE"])
        s.ok(["watch", "remove", "doge"])
        XCTAssertFalse(s.ok(["watch", "--json"]).out.contains("dogecoin"))
    }

    func testCoinsSearch() {
        let s = Sandbox()
        let out = s.ok(["coins", "search", "doge", "--json"]).out
        XCTAssertTrue(out.hasPrefix("[\n  {\n    \"id\": \"dogecoin\""), out)
        XCTAssertEqual(s.run(["coins", "update"]).code, .usage)
    }

    func testDemoNeverTouchesTheUsersData() {
        let s = Sandbox(now: "2026-11-22T02:00:00Z")
        let r = s.ok(["demo"])
        XCTAssertTrue(r.out.contains("$ bitpal holdings") && r.out.contains("$ bitpal summary") && r.out.contains("Bitcoin"))
        // The sample's made-up price history gives days to chart and a performance to measure, the same on every run.
        XCTAssertTrue(r.out.contains("$ bitpal history --chart\nValue of 'main' in USD, daily, 2024-01-05 to 2026-11-22\n"), r.out)
        XCTAssertTrue(r.out.contains("\nTWR "), r.out)
        func chart(_ out: String) -> String { out.components(separatedBy: "$ bitpal history --chart").last ?? "" }
        XCTAssertEqual(chart(s.ok(["demo"]).out), chart(r.out))
        XCTAssertNil(s.storeBytes)
        XCTAssertFalse(FileManager.default.fileExists(atPath: s.dir))
        let keep = s.dir + "/keep"
        s.ok(["demo", "--keep", keep])
        XCTAssertTrue(FileManager.default.fileExists(atPath: keep + "/portfolio.json"))
        XCTAssertEqual(s.run(["demo", "--keep", keep]).code, .failure)
        // Nor into a folder that holds anything else (the user's price cache, say).
        let other = s.dir + "/other"
        try? FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: true)
        _ = s.write("other/notes.txt", "mine")
        XCTAssertEqual(s.run(["demo", "--keep", other]).err, "error: \(other) is not empty; demo only writes to a new or empty folder\n")
    }

    func testGoldenReports() {
        let s = exampleA()
        s.ok(["add", "buy", "ethereum", "2", "1000", "--fee", "10", "--date", "2024-01-01"])
        s.ok(["add", "sell", "ethereum", "2", "1500", "--fee", "15", "--date", "2024-02-01"])
        s.ok(["add", "buy", "shiba-inu", "100000000", "0.00000845", "--date", "2024-04-01", "--note", "tiny"])
        s.ok(["add", "transfer-in", "cardano", "1000", "0.5", "--date", "2024-04-02"])  // received: no trade price to value it at
        s.ok(["price", "set", "shiba-inu", "0.00001", "--date", "2024-06-01T11:00:00Z"])
        let scenario = "example A (BTC 1 @ 30000, 1 @ 40000, sell 0.5 @ 50000; price 60000), a closed ETH cycle, SHIB, unpriced ADA"
        assertGolden("holdings", scenario: scenario, command: "bitpal holdings", output: s.ok(["holdings"]).out)
        assertGolden("summary", scenario: scenario, command: "bitpal summary", output: s.ok(["summary"]).out)
        assertGolden("closed", scenario: scenario, command: "bitpal closed", output: s.ok(["closed"]).out)
        assertGolden("list", scenario: scenario, command: "bitpal list", output: s.ok(["list"]).out
            .split(separator: "\n").map { String($0.dropFirst(10)) }.joined(separator: "\n") + "\n")
        assertGolden("price-list", scenario: scenario, command: "bitpal price list", output: s.ok(["price", "list"]).out)
        assertGolden("widget-large", scenario: scenario, command: "bitpal widget --size large", output: s.ok(["widget", "--size", "large"]).out)
    }

    func testImportExportRoundTripThroughTheCLI() throws {
        let s = exampleA()
        s.ok(["add", "buy", "eth", "0.000000000000000001", "1234.567890123456789", "--date", "2024-01-05", "--note", "a,\"b\"\nc"])
        let csv = s.ok(["export"]).out
        let json = s.ok(["export", "--format", "json"]).out
        let t = Sandbox()
        let file = t.write("backup.csv", csv)
        XCTAssertEqual(t.ok(["import", file]).out, "Imported 4 transactions; skipped 0 already recorded.\n")
        XCTAssertEqual(t.ok(["import", file, "--json"]).out, "{\n  \"imported\": 0,\n  \"skipped\": 4\n}\n")
        let original = Ledger.chronological(try s.loadPortfolio().transactions)
        XCTAssertEqual(try t.loadPortfolio().transactions, original)
        t.ok(["price", "set", "btc", "60000", "--date", "2024-06-01T11:30:00Z"])
        XCTAssertEqual(t.ok(["holdings", "--json"]).out, s.ok(["holdings", "--json"]).out)
        XCTAssertEqual(t.ok(["summary", "--json"]).out, s.ok(["summary", "--json"]).out)
        let u = Sandbox()
        u.ok(["import", u.write("backup.json", json)])
        XCTAssertEqual(try u.loadPortfolio().transactions, original)
        let v = Sandbox()
        v.ok(["import", "-", "--format", "json"].map { $0 }, stdinText: json)
        XCTAssertEqual(try v.loadPortfolio().transactions, original)
        // `list --json` (newest first) imports too; the replay order comes from the dates.
        let w = Sandbox()
        w.ok(["import", "-", "--format", "json"], stdinText: s.ok(["list", "--json"]).out)
        XCTAssertEqual(Set(try w.loadPortfolio().transactions), Set(original))
        w.ok(["price", "set", "btc", "60000", "--date", "2024-06-01T11:30:00Z"])
        XCTAssertEqual(w.ok(["summary", "--json"]).out, s.ok(["summary", "--json"]).out)
    }

    func testImportIsAllOrNothingAndDryRunWritesNothing() throws {
        let s = Sandbox()
        s.ok(["add", "buy", "btc", "1", "100", "--date", "2024-01-01"])
        let before = s.storeBytes
        let bad = s.write("bad.csv", "type,coin,amount,price,date\nbuy,btc,1,100,2024-01-02\nbuy,btc,x,100,2024-01-02\nsell,btc,9,1,2024-01-03\n")
        let r = s.run(["import", bad])
        XCTAssertEqual(r.code, .failure)
        XCTAssertEqual(r.err, """
        error: line 3: Amount 'x' is not a plain decimal number (use digits and an optional '.', e.g. 0.25)
        error: line 4: You only own 2 BTC (Bitcoin) on 2024-01-03. Cannot sell 9.
        error: 2 problems found; nothing was imported

        """)
        XCTAssertEqual(s.storeBytes, before)
        let good = s.write("good.csv", "type,coin,amount,price,date\nbuy,btc,1,100,2024-01-02\n")
        XCTAssertEqual(s.ok(["import", good, "--dry-run"]).out, "Dry run: would import 1 and skip 0 already recorded. Nothing was written.\n")
        XCTAssertEqual(s.storeBytes, before)
        XCTAssertEqual(s.run(["import", s.dir + "/missing.csv"]).code, .failure)
    }

    /// A store with two portfolios and a registered stock (written directly: the commands that make
    /// them are not part of this test), then every kind through `add`.
    static let bookNow = "2025-01-01T00:00:00Z"

    func bookSandbox() throws -> Sandbox {
        let s = Sandbox(now: Self.bookNow)
        let book = Book(portfolios: [Portfolio(name: "main"), Portfolio(name: "trading", description: "stocks")],
                        assets: [Asset(id: "AAPL", name: "Apple Inc.", type: .stock, market: "NASDAQ",
                                       createdDate: try XCTUnwrap(ISODate.parseTimestamp(utf8: "2024-01-01T00:00:00Z".utf8)))])
        _ = s.write("portfolio.json", String(decoding: PortfolioCodec.encode(book), as: UTF8.self))
        s.ok(["add", "buy", "btc", "1", "30000", "--fee", "10", "--date", "2024-01-01"])
        s.ok(["add", "buy", "eth", "10", "2000", "--date", "2024-02-01"])
        s.ok(["add", "swap", "btc", "0.5", "eth", "8", "--value", "30000", "--fee", "30", "--date", "2024-03-01"])
        s.ok(["add", "transfer-out", "btc", "0.1", "--fee", "0.001", "--date", "2024-04-02"])
        s.ok(["add", "transfer-in", "btc", "0.2", "25000", "--date", "2024-04-03"])
        s.ok(["add", "reward", "eth", "0.01", "3000", "--date", "2024-04-04", "--note", "staking, \"weekly\""])
        s.ok(["-p", "trading", "add", "buy", "AAPL", "10", "180", "--fee", "1", "--date", "2024-01-02"])
        s.ok(["-p", "trading", "add", "buy", "aapl", "3", "--total", "541.20", "--date", "2024-01-03"])
        s.ok(["-p", "trading", "add", "dividend", "AAPL", "2.40", "--fee", "0.36", "--date", "2024-02-15"])
        s.ok(["-p", "trading", "add", "split", "AAPL", "1:3", "--date", "2024-06-10"])
        s.ok(["-p", "trading", "add", "adjustment", "AAPL", "-0.5", "--date", "2024-08-01"])
        s.ok(["price", "set", "AAPL", "210", "--date", "2024-05-01"])
        s.ok(["price", "set", "btc", "60000", "--date", "2024-05-01"])
        return s
    }

    func testWholeBookExportImportsIntoAnEmptyStore() throws {
        let s = try bookSandbox()
        let json = s.ok(["export", "--format", "json"]).out
        XCTAssertTrue(json.hasPrefix("{\n  \"format\": \"bitpal-export\",\n  \"version\": 2,"), json)
        let t = Sandbox(now: Self.bookNow)
        XCTAssertEqual(t.ok(["import", t.write("book.json", json)]).out,
                       "Imported 12 transactions; skipped 0 already recorded.\nAdded portfolio 'trading', asset AAPL, 2 manual prices.\n")
        let original = try s.loadPortfolio(), copy = try t.loadPortfolio()
        XCTAssertEqual(copy.transactions, Ledger.chronological(original.transactions))
        XCTAssertEqual(copy.portfolios, original.portfolios)
        XCTAssertEqual(copy.assets, original.assets)
        XCTAssertEqual(copy.manualPrices, original.manualPrices)
        XCTAssertEqual(copy.transactions.filter { $0.linkedId != nil }.count, 2)
        for report in [["holdings", "--all", "--json"], ["summary", "--all", "--json"], ["closed", "--all", "--json"],
                       ["-p", "trading", "holdings", "--json"], ["list", "--all", "--json"]] {
            XCTAssertEqual(t.ok(report).out, s.ok(report).out, "\(report)")
        }
        // Again: everything is known.
        XCTAssertEqual(t.ok(["import", t.dir + "/book.json", "--json"]).out, """
        {
          "imported": 0,
          "skipped": 12,
          "portfoliosCreated": [],
          "assetsCreated": [],
          "manualPricesImported": 0,
          "settingsImported": 0
        }

        """)
        // -p names one portfolio; --all is every one, and not with -p.
        let trading = s.ok(["-p", "trading", "export"]).out.split(separator: "\n")
        XCTAssertEqual(trading.count, 6)
        XCTAssertTrue(trading.dropFirst().allSatisfy { $0.contains(",trading,") }, "\(trading)")
        XCTAssertEqual(s.ok(["export", "--all"]).out, s.ok(["export"]).out)
        XCTAssertEqual(s.run(["-p", "trading", "export", "--all"]).code, .usage)
        // The CSV export into a store that has the portfolio and the asset gives the same transactions.
        let u = Sandbox(now: Self.bookNow)
        _ = u.write("portfolio.json", String(decoding: PortfolioCodec.encode(Book(portfolios: original.portfolios, assets: original.assets)), as: UTF8.self))
        u.ok(["import", u.write("book.csv", s.ok(["export"]).out)])
        XCTAssertEqual(try u.loadPortfolio().transactions, Ledger.chronological(original.transactions))
        // Without them, the CSV names what is missing, and nothing is written.
        let v = Sandbox(now: Self.bookNow)
        let r = v.run(["import", v.write("book.csv", s.ok(["export"]).out)])
        XCTAssertEqual(r.code, .failure)
        XCTAssertTrue(r.err.contains("No portfolio named 'trading'") && r.err.contains("nothing was imported"), r.err)
        XCTAssertNil(v.storeBytes)
    }

    func testImportRefusesAnAssetOfAnotherType() throws {
        let s = try bookSandbox()
        let json = s.ok(["export", "--format", "json"]).out
        let t = Sandbox(now: Self.bookNow)
        let etf = Book(assets: [Asset(id: "AAPL", name: "Apple", type: .etf,
                                      createdDate: try XCTUnwrap(ISODate.parseTimestamp(utf8: "2024-01-01T00:00:00Z".utf8)))])
        _ = t.write("portfolio.json", String(decoding: PortfolioCodec.encode(etf), as: UTF8.self))
        let before = t.storeBytes
        let r = t.run(["import", t.write("book.json", json)])
        XCTAssertEqual(r.code, .failure)
        XCTAssertTrue(r.err.hasPrefix("error: asset AAPL exists as etf in USD; the file has it as stock in USD\n"), r.err)
        XCTAssertEqual(t.storeBytes, before)
    }

    func testCoinbasePresetSaysWhatEachKindBecame() throws {
        let s = Sandbox(now: "2024-06-01T00:00:00Z")
        let csv = """
        ID,Timestamp,Transaction Type,Asset,Quantity Transacted,Price Currency,Price at Transaction,Subtotal,Total (inclusive of fees and/or spread),Fees and/or Spread,Notes
        a1,2024-01-01 10:00:00 UTC,Buy,BTC,0.02,USD,$40000.00,$800.00,$810.00,$10.00,Bought 0.02 BTC for 810 USD
        a2,2024-01-02 10:00:00 UTC,Receive,ETH,2,USD,$2300.00,,,,Received 2 ETH from an external account
        a3,2024-01-03 10:00:00 UTC,Send,BTC,-0.005,USD,$41000.00,-$205.00,-$205.00,$0.00,Sent 0.005 BTC to bc1qexample
        a4,2024-01-04 10:00:00 UTC,Staking Income,ETH,0.01,USD,$2400.00,$24.00,$24.00,$0.00,
        a5,2024-01-05 10:00:00 UTC,Convert,ETH,-1,USD,$2500.00,$2500.00,$2500.00,,Converted 1 ETH to 0.06 BTC
        a6,2024-01-06 10:00:00 UTC,Buy,BTC,0.001,EUR,€38000,€38,€39,€1,Bought 0.001 BTC for 39 EUR

        """
        // The EUR buy needs the rate of its date: refused (nothing imported) until there is one.
        let path = s.write("coinbase.csv", csv)
        let refused = s.run(["import", path, "--format", "coinbase"])
        XCTAssertEqual(refused.code, .failure)
        XCTAssertTrue(refused.err.contains("line 7: No EUR→USD rate on or before"), refused.err)
        XCTAssertNil(s.storeBytes)
        s.ok(["fx", "set", "EUR", "USD", "1.09", "--date", "2024-01-01"])
        let r = s.run(["import", path, "--format", "coinbase"])
        XCTAssertEqual(r.code, .success, "\(r)")
        XCTAssertEqual(r.out, """
        From the Coinbase export: 2 buys, 1 transfer in, 1 transfer out, 1 reward, 1 swap.
        Imported 7 transactions; skipped 0 already recorded.

        """)
        let txs = try s.loadPortfolio().transactions
        XCTAssertEqual(txs.map(\.type), [.buy, .transferIn, .transferOut, .reward, .sell, .buy, .buy])
        XCTAssertEqual(txs[6].currency, "EUR")
        XCTAssertEqual(txs[6].fxRateValue?.text, "1.09")
        XCTAssertEqual(txs[0].totalValue?.text, "800")
        XCTAssertEqual(txs[1].notes, "Coinbase a2; basis: spot price at receipt")
        XCTAssertEqual(txs[4].linkedId, txs[4].id)
        XCTAssertEqual(txs[5].linkedId, txs[4].id)
        XCTAssertEqual(s.ok(["list", "--type", "swap"]).out.split(separator: "\n").count, 2)  // the header and one swap line
        // Twice is once.
        XCTAssertTrue(s.ok(["import", s.dir + "/coinbase.csv", "--format", "coinbase"]).out.contains("Imported 0 transactions; skipped 7 already recorded."))
    }

    func testCompletionScriptsParse() throws {
        let s = Sandbox()
        for shell in ["bash", "zsh", "fish"] {
            let script = s.ok(["completions", shell]).out
            XCTAssertTrue(script.contains("price") && script.contains(shell == "fish" ? "-l fee" : "--fee"), shell)
            let checker = shell == "bash" ? "/bin/bash" : "/usr/bin/\(shell)"
            guard FileManager.default.isExecutableFile(atPath: checker) else { continue }
            let path = s.write("completion.\(shell)", script)
            let r = try runProcess(checker, ["-n", path], env: [:])
            XCTAssertEqual(r.status, 0, "\(shell) -n: \(r.err)")
        }
        XCTAssertEqual(s.run(["completions", "tcsh"]).code, .usage)
    }
}

extension Sandbox {
    @discardableResult
    func ok(_ args: [String], stdinText: String, file: StaticString = #filePath, line: UInt = #line) -> CLIResult {
        let r = run(args, stdin: stdinText)
        XCTAssertEqual(r.code, .success, "\(args) → \(r)", file: file, line: line)
        return r
    }
}

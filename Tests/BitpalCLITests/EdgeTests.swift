import BitpalCLI
import Foundation
import PortfolioCore
import XCTest

/// Issue "trust at the edges": one reproduction a test, through the CLI.
final class EdgeTests: XCTestCase {
    // MARK: One grammar, one parser

    func testLeadingZerosAndBarePointsAreOneGrammarEverywhere() throws {
        let s = Sandbox()
        s.ok(["add", "buy", "btc", "0000000000000000000001", "100", "--date", "2024-01-01"])
        s.ok(["add", "buy", "btc", ".5", "100.", "--date", "2024-01-02"])
        let csv = s.write("in.csv", "type,coin,amount,price,date\nbuy,btc,0000000000000000000001,100,2024-01-03\nbuy,btc,.5,100.,2024-01-04\n")
        s.ok(["import", csv])
        let amounts = try s.loadPortfolio().transactions.map { $0.amountValue.text }
        XCTAssertEqual(amounts, ["1", "0.5", "1", "0.5"])
    }

    func testTwentyDigitRuleIsWordedTheSameAndExitsOne() {
        let s = Sandbox()
        let big = "1" + String(repeating: "0", count: 20)
        let add = s.run(["add", "buy", "btc", big, "1"])
        XCTAssertEqual(add.code, .failure, "\(add)")
        let csv = s.write("in.csv", "type,coin,amount,price,date\nbuy,btc,\(big),1,2024-01-03\n")
        let imp = s.run(["import", csv])
        XCTAssertEqual(imp.code, .failure, "\(imp)")
        let rule = "Amount '\(big)' has more than 20 digits before the point"
        XCTAssertTrue(add.err.contains(rule), add.err)
        XCTAssertTrue(imp.err.contains(rule), imp.err)
    }

    func testArgumentsRefuseOutsideFormats() {
        let s = Sandbox()
        for bad in ["1,5", "1e3", "$100", " 1", ".", ""] {
            XCTAssertEqual(s.run(["add", "buy", "btc", bad, "1"]).code, .usage, bad)
        }
    }

    // MARK: Exact at the limits

    func testLargeValuesAreExactEverywhere() {
        let s = Sandbox()
        let n = "99999999999999999999"
        let add = s.ok(["add", "buy", "btc", n, n, "--date", "2024-01-01", "--fee", "1"]).out
        XCTAssertTrue(add.contains("total $9,999,999,999,999,999,999,800,000,000,000,000,000,002.00"), add)
        s.ok(["add", "buy", "btc", n, n, "--date", "2024-01-02"])
        let h = s.ok(["holdings", "--json"]).out
        XCTAssertTrue(h.contains(#""avgCost": "99999999999999999999""#), h)  // two equal buys (one with a $1 fee)
        XCTAssertTrue(h.contains(#""totalCost": "19999999999999999999600000000000000000003.00""#), h)
        s.ok(["price", "set", "btc", "99999999999999999999.999999999999999999", "--date", "2024-06-01T11:00:00Z"])
        let v = s.ok(["holdings", "--json"]).out
        // 2·(10²⁰−1) × (10²⁰ − 10⁻¹⁸) = 19999999999999999999799999999999999999800.000000000000000002 exactly
        XCTAssertTrue(v.contains(#""currentValue": "19999999999999999999799999999999999999800.00""#), v)
        XCTAssertTrue(v.contains(#""profitLoss": "199999999999999999797.00""#), v)
    }

    func testHugeTotalsPrintExactly() {
        let s = Sandbox()
        s.ok(["add", "buy", "btc", "20000000000000000000", "20000000000000000000", "--date", "2024-01-01"])
        let h = s.ok(["holdings", "--json"]).out
        XCTAssertTrue(h.contains(#""totalCost": "400000000000000000000000000000000000000.00""#), h)
    }

    // MARK: The store is checked when it is read

    /// A store as a hand edit or a merge leaves it: the first buy duplicated, a sell of more than
    /// is held, a zero amount and a date in the future.
    func brokenStore() -> Sandbox {
        let s = Sandbox()
        s.ok(["add", "buy", "btc", "1", "100", "--date", "2024-01-01"])
        s.ok(["add", "sell", "btc", "0.5", "200", "--date", "2024-02-01"])
        s.ok(["add", "buy", "eth", "2", "10", "--date", "2024-01-01"])
        var lines = String(decoding: s.storeBytes ?? Data(), as: UTF8.self).components(separatedBy: "\n")
        let buy = lines.firstIndex { $0.contains(#""amount": "1""#) }!
        lines.insert(lines[buy], at: buy + 1)
        var text = lines.joined(separator: "\n")
        text = text.replacingOccurrences(of: #""type": "sell", "assetId": "bitcoin", "amount": "0.5""#, with: #""type": "sell", "assetId": "bitcoin", "amount": "5""#)
        text = text.replacingOccurrences(of: #""assetId": "ethereum", "amount": "2", "price": "10", "fee": "0", "currency": "USD", "date": "2024-01-01"#,
                                         with: #""assetId": "ethereum", "amount": "0", "price": "10", "fee": "0", "currency": "USD", "date": "2030-01-01"#)
        _ = s.write("portfolio.json", text)
        return s
    }

    func testCheckNamesEveryProblemWithItsLine() {
        let s = brokenStore()
        let r = s.run(["check"])
        XCTAssertEqual(r.code, .failure, "\(r)")
        XCTAssertTrue(r.out.contains("line 11: id "), r.out)
        XCTAssertTrue(r.out.contains("is used by an earlier record too (line 10)"), r.out)
        XCTAssertTrue(r.out.contains("line 12: sell of 5 BTC (Bitcoin) on 2024-02-01 but only 1 is held then"), r.out)
        XCTAssertTrue(r.out.contains("line 13: amount must be greater than zero"), r.out)
        let json = s.run(["check", "--json"])
        XCTAssertTrue(json.out.contains(#""line": 12"#) && json.out.contains(#""ok": false"#), json.out)
    }

    func testReportsLeaveBrokenRecordsOutWithAWarning() {
        let s = brokenStore()
        let h = s.run(["holdings", "--json"])
        XCTAssertEqual(h.code, .success, "\(h)")
        XCTAssertTrue(h.err.contains("breaks 3 rules"), h.err)
        XCTAssertTrue(h.out.contains(#""totalAmount": "1""#), h.out)  // one buy of 1 BTC, no oversell, no ETH
        XCTAssertFalse(h.out.contains("ethereum"), h.out)
        XCTAssertEqual(s.run(["closed", "--json"]).out, "[]\n")  // the duplicate does not close a cycle twice
    }

    func testWritesAreRefusedUntilAChangeRemovesAProblem() throws {
        let s = brokenStore()
        let before = s.storeBytes
        let add = s.run(["add", "buy", "sol", "1", "10"])
        XCTAssertEqual(add.code, .failure)
        XCTAssertTrue(add.err.contains("so nothing was written"), add.err)
        XCTAssertEqual(s.storeBytes, before)
        let id = try XCTUnwrap(try s.loadPortfolio().transactions.first?.id.uuidString.lowercased())
        let ambiguous = s.run(["delete", id])
        XCTAssertEqual(ambiguous.code, .failure)
        XCTAssertTrue(ambiguous.err.contains("name one by its line: @10 or @11"), ambiguous.err)
        s.ok(["delete", "@11"])  // the duplicate goes; the oversell and zero amount stay
        s.ok(["edit", "@11", "--amount", "1"])  // the sell is now valid
        s.ok(["delete", "@12"])
        XCTAssertEqual(s.run(["check"]).code, .success)
        s.ok(["add", "buy", "sol", "1", "10"])
        XCTAssertEqual(try s.loadPortfolio().transactions.count, 3)
    }

    // MARK: Totals that add up

    func testTotalsCoverPricedHoldingsAndSayWhatIsLeftOut() {
        let s = Sandbox()
        // Received, not bought: no trade whose price could stand in for a quote.
        s.ok(["add", "transfer-in", "btc", "1", "100", "--date", "2024-01-01"])
        s.ok(["add", "transfer-in", "eth", "2", "10", "--date", "2024-01-01"])
        let none = s.ok(["summary"]).out
        XCTAssertTrue(none.contains("Total value           —  no prices yet"), none)
        s.ok(["price", "set", "btc", "150", "--date", "2024-05-01"])  // a month old: stale
        let h = s.ok(["holdings", "--json"]).out
        for field in [#""totalCost": "100.00""#, #""currentValue": "150.00""#, #""profitLoss": "50.00""#,
                      #""unpricedCount": 1"#, #""unpricedCost": "20.00""#, #""priceStale": true"#, #""priceStale": null"#] {
            XCTAssertTrue(h.contains(field), "missing \(field) in \(h)")
        }
        let table = s.ok(["holdings"]).out
        XCTAssertTrue(table.contains("$150.00 (stale)"), table)
        XCTAssertTrue(table.contains("TOTAL  1 priced"), table)
        XCTAssertTrue(table.contains("1 holding has no price (cost $20.00, left out of the totals)"), table)
        let summary = s.ok(["summary", "--json"]).out
        XCTAssertTrue(summary.contains(#""totalOpenCost": "120.00""#) && summary.contains(#""unpricedCost": "20.00""#), summary)
    }

    // MARK: Rough edges a new user hit

    func testListLimitCountsWhatTheFiltersMatch() {
        let s = Sandbox()
        s.ok(["add", "buy", "btc", "1", "100", "--date", "2024-01-01"])
        s.ok(["add", "buy", "btc", "1", "100", "--date", "2024-01-02"])
        s.ok(["add", "buy", "eth", "1", "100", "--date", "2024-01-03"])
        let zero = s.ok(["list", "--limit", "0"]).out
        XCTAssertEqual(zero, "")
        XCTAssertEqual(s.ok(["list", "--limit", "0", "--json"]).out, "[]\n")
        let two = s.ok(["list", "btc", "--limit", "1"]).out
        XCTAssertTrue(two.hasSuffix("1 of 2 matching transactions (--limit)\n"), two)
    }

    func testEnumeratedValuesAnyCaseAndCommandLineEdges() {
        let s = Sandbox()
        s.ok(["add", "BUY", "btc", "1", "100", "--date", "2024-01-01"])
        s.ok(["list", "--type", "BUY"])
        s.ok(["holdings", "--sort", "PNL"])
        s.ok(["--", "list"])
        XCTAssertEqual(s.run(["hold"]).err, "error: unknown command 'hold'. Did you mean 'holdings'?\n")
        XCTAssertEqual(s.ok(["price", "--help"]).out, s.ok(["help", "price"]).out)
        let edit = s.ok(["edit", "--help"]).out
        XCTAssertFalse(edit.contains("default now") || edit.contains("default 0"), edit)
        XCTAssertTrue(s.ok(["help", "price", "set"]).out.contains("shiba-inu"))
    }

    func testColorChoices() {
        let s = exampleWithPnL()
        XCTAssertTrue(s.ok(["holdings", "--color", "always"]).out.contains("\u{1b}["))
        XCTAssertTrue(s.ok(["holdings", "--color=ALWAYS"]).out.contains("\u{1b}["))
        XCTAssertFalse(s.run(["holdings", "--color", "never"], terminal: true).out.contains("\u{1b}["))
        XCTAssertTrue(s.run(["holdings"], terminal: true).out.contains("\u{1b}["))
        s.variables["TERM"] = "dumb"
        XCTAssertFalse(s.run(["holdings"], terminal: true).out.contains("\u{1b}["))
        s.variables["NO_COLOR"] = "1"
        XCTAssertTrue(s.run(["holdings", "--color", "always"]).out.contains("\u{1b}["))
        XCTAssertEqual(s.run(["holdings", "--color", "sometimes"]).code, .usage)
    }

    func exampleWithPnL() -> Sandbox {
        let s = Sandbox()
        s.ok(["add", "buy", "btc", "1", "100", "--date", "2024-01-01"])
        s.ok(["price", "set", "btc", "150", "--date", "2024-06-01T11:30:00Z"])
        return s
    }

    // MARK: Bash completion, as a person's shell runs it

    /// Sources the generated script in bash, completes `words` (the last one is being typed) and returns the offers.
    /// The names a book holds come from the bitpal being completed (the built binary, on `home`'s data).
    func complete(_ script: String, _ words: [String], home: String? = nil) throws -> [String] {
        let path = FileManager.default.temporaryDirectory.path + "/bitpal-completion-\(UUID().uuidString).bash"
        try script.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let binary = try bitpalBinary()
        let quoted = ([binary] + words.dropFirst()).map { "'" + $0 + "'" }.joined(separator: " ")
        let program = "source '\(path)'; COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1); _bitpal; printf '%s\\n' \"${COMPREPLY[@]}\""
        var env = ["PATH": "/usr/bin:/bin", "BITPAL_OFFLINE": "1", "TZ": "UTC"]
        env["BITPAL_HOME"] = home ?? FileManager.default.temporaryDirectory.path + "/bitpal-completion-empty-\(UUID().uuidString)"
        let r = try runProcess("/bin/bash", ["--norc", "-c", program], env: env)
        XCTAssertEqual(r.status, 0, r.err)
        return r.out.split(separator: "\n").map(String.init)
    }

    func testBashCompletionWorksAsAShellRunsIt() throws {
        let script = Sandbox().ok(["completions", "bash"]).out
        XCTAssertFalse(script.contains("-o default"))
        XCTAssertEqual(try complete(script, ["bitpal", "--json", "hol"]), ["holdings"])
        XCTAssertEqual(try complete(script, ["bitpal", "--data-dir", "/tmp", "sum"]), ["summary"])
        XCTAssertEqual(try complete(script, ["bitpal", "help", "pri"]), ["price"])
        XCTAssertEqual(try complete(script, ["bitpal", "holdings", "--sort", ""]), ["value", "pnl", "name", "amount"])
        XCTAssertEqual(try complete(script, ["bitpal", "watch", "--sort", ""]), ["name", "price", "change"])
        XCTAssertEqual(try complete(script, ["bitpal", "add", "b"]), ["buy"])
        XCTAssertTrue(try complete(script, ["bitpal", "add", "buy", "bt"]).contains("btc"))
        XCTAssertTrue(try complete(script, ["bitpal", "watch", "add", "btc", "et"]).contains("eth"))
        XCTAssertTrue(try complete(script, ["bitpal", "edit", "abcd", "--coin", "bt"]).contains("btc"))
        for option in ["--amount", "--date", "--fee", "--price"] {
            XCTAssertEqual(try complete(script, ["bitpal", "edit", "abcd", option, "/"]), [], option)
        }
        XCTAssertEqual(try complete(script, ["bitpal", "add", "buy", "btc", "1", "--date", "/"]), [])
        XCTAssertFalse(try complete(script, ["bitpal", "import", "/"]).isEmpty)  // FILE: file names
        XCTAssertEqual(try complete(script, ["bitpal", "price", "re"]), ["refresh"])
    }

    // MARK: Text from servers and files is escaped for the terminal

    func testHostileCoinNamesAndNotesAreEscapedEverywhere() throws {
        let s = Sandbox()
        let hostile = "\u{1b}]0;PWNED\u{07}\u{1b}[2J"
        let coins = """
        {"format": "bitpal-coins", "version": 1, "fetchedAt": "2024-06-01T00:00:00Z", "coins": [
          {"id": "evil-coin", "symbol": "\(hostile.replacingOccurrences(of: "\u{1b}", with: "\\u001b").replacingOccurrences(of: "\u{07}", with: "\\u0007"))", "name": "Evil\\u202eeman", "marketCapRank": null}
        ]}
        """
        _ = s.write("coins.json", coins)
        let outputs = [
            s.run(["add", "buy", "evil-coin", "1", "1", "--date", "2024-01-01", "--note", "hi\u{202e}there"]),
            s.run(["price", "set", "evil-coin", "2", "--date", "2024-06-01T11:00:00Z"]),
            s.run(["watch", "add", "evil-coin"]),
            s.run(["list"]), s.run(["holdings"]), s.run(["widget", "--size", "large"]), s.run(["watch"]),
            s.run(["export"], terminal: true),
        ]
        for r in outputs {
            XCTAssertEqual(r.code, .success, "\(r)")
            for bad in ["\u{1b}", "\u{07}", "\u{202e}"] {
                XCTAssertFalse(r.out.contains(bad) || r.err.contains(bad), "raw \(bad.unicodeScalars.first!.value) in \(r)")
            }
        }
        XCTAssertTrue(outputs[0].out.contains("\\u{1b}]0;PWNED"), outputs[0].out)
        // To a pipe the export stays exact.
        XCTAssertTrue(s.run(["export"]).out.contains("hi\u{202e}there"))
        let id = try XCTUnwrap(try s.loadPortfolio().transactions.first?.id.uuidString.lowercased())
        let deleted = s.run(["delete", id])
        XCTAssertFalse(deleted.out.contains("\u{1b}"), deleted.out)
    }

    func testExchangeExportsAreRecognisedWithoutFormat() throws {
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../PortfolioCoreTests/Fixtures/exchanges").standardized.path
        for (file, exchange) in [("coinbase-v2.csv", "Coinbase"), ("binance-a.csv", "Binance"), ("kraken-trades-24.csv", "Kraken")] {
            let s = Sandbox(now: "2026-11-20T00:00:00Z")
            let r = s.run(["import", fixtures + "/" + file, "--json"])
            XCTAssertEqual(r.code, .success, "\(file): \(r)")
            XCTAssertTrue(r.err.contains("Recognised the \(exchange) export (as with --format \(exchange.lowercased()))"), r.err)
            XCTAssertTrue(r.out.hasPrefix(#"{"imported": "#) || r.out.contains(#""imported""#), r.out)
            XCTAssertFalse(try s.loadPortfolio().transactions.isEmpty, file)
        }
    }

    func testDemoSaysHowToInstall() {
        let out = Sandbox(now: "2026-11-20T00:00:00Z").ok(["demo"]).out
        XCTAssertTrue(out.contains("mkdir -p ~/.local/bin && cp"), out)
    }

    // MARK: Found by an independent review

    func testAnUnreadablePriceCacheNeverBlocksAReport() throws {
        let s = exampleWithPnL()
        _ = s.write("prices.json", "{\"format\": \"bitpal-prices\", \"version\": 1, \"latest\": [")
        let h = s.run(["holdings", "--json"])
        XCTAssertEqual(h.code, .success, "\(h)")
        XCTAssertTrue(h.err.contains("prices.json cannot be read") && h.err.contains("using manual prices only"), h.err)
        XCTAssertTrue(h.out.contains(#""currentPrice": "150""#), h.out)  // the manual price still counts
        XCTAssertEqual(s.run(["price", "list"]).code, .success)
        XCTAssertEqual(s.run(["check"]).code, .failure)
        // A write of fetched quotes moves the broken file aside and starts afresh.
        let cache = PriceCache(directory: s.dir)
        let setAside = try cache.append([Quote(coinId: "bitcoin", price: 1, time: s.now, source: .coingecko)])
        XCTAssertNotNil(setAside)
        XCTAssertEqual(try cache.load().count, 1)
        XCTAssertTrue(FileManager.default.fileExists(atPath: s.dir + "/prices.json.unreadable"))
    }

    func testNothingPricedShowsNoValueAnywhere() {
        let s = Sandbox()
        s.ok(["add", "transfer-in", "btc", "1", "100", "--date", "2024-01-01"])  // no trade: nothing to value it at
        XCTAssertEqual(s.ok(["widget"]).out, "— (no prices yet)\n")
        let summary = s.ok(["summary"]).out
        XCTAssertTrue(summary.contains("Total P&L             —  no prices yet"), summary)
    }

    func testMalformedArgumentsAreUsageErrorsWithSuggestions() {
        let s = Sandbox()
        XCTAssertEqual(s.run(["delete", "@abc"]).code, .usage)
        XCTAssertEqual(s.run(["edit", "@", "--amount", "1"]).code, .usage)
        XCTAssertEqual(s.run(["delete", "@99"]).code, .failure)  // well-formed, no such record
        XCTAssertEqual(s.run(["completions", "BASH"]).code, .success)
        XCTAssertTrue(s.run(["holdings", "--sort", "pn"]).err.contains("Did you mean 'pnl'?"))
        XCTAssertTrue(s.run(["HOLDINGS"]).err.contains("Did you mean 'holdings'?"))
        let long = String(repeating: "7", count: 5000)
        let r = s.run(["add", "buy", "btc", long, "1"])
        XCTAssertEqual(r.code, .failure)
        XCTAssertLessThan(r.err.count, 300, r.err)
        XCTAssertTrue(r.err.contains("(5000 characters)"), r.err)
    }

    func testImportedDatesMayNotDependOnTheDayOfTheImport() {
        let s = Sandbox()
        let r = s.run(["import", "-"], stdin: "type,coin,amount,price,date\nbuy,btc,1,100,today\n")
        XCTAssertEqual(r.code, .failure)
        XCTAssertTrue(r.err.contains("line 2: Date 'today' depends on the day of the import"), r.err)
    }

    func testThePriceCacheIsReadExactlyOrRefused() {
        for bad in ["-5", "0", String(repeating: "1", count: 120)] {
            let s = exampleWithPnL()
            let quote = #"{"coinId": "bitcoin", "price": "\#(bad)", "change24h": null, "marketCap": null, "time": "2024-06-01T11:59:00Z", "sourceUpdatedAt": null, "source": "coingecko"}"#
            _ = s.write("prices.json", #"{"format": "bitpal-prices", "version": 1, "latest": [\#(quote)], "quotes": [\#(quote)]}"#)
            let h = s.run(["holdings", "--json"])
            XCTAssertEqual(h.code, .success, "\(h)")
            XCTAssertTrue(h.err.contains("prices.json cannot be read"), "\(bad.prefix(10)): \(h.err)")
            XCTAssertTrue(h.out.contains(#""currentPrice": "150""#), h.out)  // the manual price, not the bad one
        }
    }

    func testVersionAnywhereAndJSONExportToAFile() throws {
        let s = exampleWithPnL()
        XCTAssertEqual(s.ok(["list", "--version"]).out, "bitpal \(CLI.version)\n")
        let path = s.dir + "/out.json"
        let r = s.ok(["--json", "export", "--output", path])
        XCTAssertTrue(r.out.hasPrefix("{") && r.out.contains(#""exported": 1"#), r.out)
        let written = try String(contentsOfFile: path, encoding: .utf8)
        // --json with --output writes JSON there too: the whole-book export.
        XCTAssertTrue(written.hasPrefix("{\n  \"format\": \"bitpal-export\",\n  \"version\": 2,"), written)
    }

    func testCheckFlagsAFutureManualPriceAndRangeErrorsQuoteTheText() {
        let s = exampleWithPnL()
        let text = String(decoding: s.storeBytes ?? Data(), as: UTF8.self).replacingOccurrences(of: "2024-06-01T11:30:00Z", with: "2031-01-01T00:00:00Z")
        _ = s.write("portfolio.json", text)
        let r = s.run(["check"])
        XCTAssertEqual(r.code, .failure)
        XCTAssertTrue(r.out.contains("the manual price of BTC (Bitcoin) is dated 2031-01-01, in the future"), r.out)
        XCTAssertTrue(s.run(["add", "buy", "btc", "1", "1", "--date", "1899-12-31"]).err.contains("Date '1899-12-31' is outside"))
    }

    func testALocalTimeTheClocksSkippedIsRefusedNotMoved() {
        let s = Sandbox()
        s.variables["TZ"] = "America/Sao_Paulo"
        let r = s.run(["add", "buy", "btc", "1", "1", "--date", "2018-11-04 00:30"])
        XCTAssertEqual(r.code, .failure)
        XCTAssertTrue(r.err.contains("does not exist in America/Sao_Paulo: the clocks skipped it"), r.err)
        s.ok(["add", "buy", "btc", "1", "1", "--date", "2018-11-04 01:30"])
        s.ok(["add", "buy", "btc", "1", "1", "--date", "2018-11-04"])  // a bare day starts at 01:00 that day
        s.variables["TZ"] = "Europe/Berlin"
        s.ok(["add", "buy", "btc", "1", "1", "--date", "2023-10-29 02:30"])  // a repeated hour: the first one
    }
}

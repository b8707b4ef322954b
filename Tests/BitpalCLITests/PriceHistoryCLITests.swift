import BitpalCLI
import Foundation
import PortfolioCore
import XCTest

/// `price import`, `fx import` and the price cache they fill (offline).
final class PriceImportCLITests: XCTestCase {
    func cached(_ s: Sandbox) throws -> [Quote] { try PriceCache(directory: s.dir).load() }

    func testLedgerPricesWithTimesQuotedSymbolsDollarsAndComments() throws {
        let s = Sandbox()
        let file = s.write("prices.journal", """
        ; prices I keep by hand
        # from pricehist
        * 2024
        P 2024-01-15 BTC 42000.00 USD

        P 2024-01-16 12:00:00 "BTC" $42,500.50
        P 2024/01/17 "ETH" 2,500 USD ; closing

        """)
        let r = s.run(["price", "import", file])
        XCTAssertEqual(r, CLIResult(out: "Imported 3 prices of 2 assets, 2024-01-15 … 2024-01-17: 3 added, 0 already in the price cache.\n",
                                    err: "", code: .success))
        let quotes = try cached(s)
        XCTAssertEqual(quotes.map(\.coinId), ["bitcoin", "bitcoin", "ethereum"])
        XCTAssertEqual(quotes.map(\.price), [dec("42000"), dec("42500.5"), dec("2500")])
        XCTAssertEqual(quotes.map { ISODate.format($0.time) }, ["2024-01-15T00:00:00Z", "2024-01-16T12:00:00Z", "2024-01-17T00:00:00Z"])
        XCTAssertTrue(quotes.allSatisfy { $0.source == .imported && $0.currency == "USD" })
        XCTAssertFalse(String(decoding: s.storeBytes ?? Data(), as: UTF8.self).contains("42000"),
                       "imported prices live in the price cache, not portfolio.json")
        let history = s.ok(["price", "history", "btc", "--json"]).out
        XCTAssertTrue(history.contains(#""source": "imported""#) && history.contains(#""price": "42500.5""#), history)
    }

    func testBeancountAndBothCSVsAreRecognisedFromTheContent() throws {
        let cases: [(String, String, String)] = [
            ("beancount", "2024-01-15 price BTC 42000.00 USD\n  source: \"manual\"\n2024-01-16 price BTC 43000 USD\n", "beancount"),
            ("bitpal csv", "date,asset,price,currency\n2024-01-15,btc,\"$42,000.00\",\n2024-01-16,bitcoin,43000,USD\n", "csv"),
            ("pricehist csv", "date,base,quote,amount,source,type\n2024-01-15,BTC,USD,42000.00,coingecko,price\n2024-01-16,BTC,USD,43000,coingecko,price\n", "csv"),
        ]
        for (name, text, format) in cases {
            let s = Sandbox()
            let r = s.run(["--json", "price", "import", "-"], stdin: text)
            XCTAssertEqual(r.code, .success, "\(name): \(r)")
            let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any], name)
            XCTAssertEqual(json["format"] as? String, format, name)
            XCTAssertEqual(json["quotes"] as? Int, 2, name)
            XCTAssertEqual(json["assets"] as? [String], ["bitcoin"], name)
            XCTAssertEqual(json["from"] as? String, "2024-01-15T00:00:00Z", name)
            XCTAssertEqual(json["until"] as? String, "2024-01-16T00:00:00Z", name)
            XCTAssertEqual(json["dryRun"] as? Bool, false, name)
            XCTAssertEqual(try cached(s).map(\.price), [dec("42000"), dec("43000")], name)
        }
    }

    func testABareDayIsLocalMidnight() throws {
        let s = Sandbox()
        s.variables["TZ"] = "Europe/Berlin"
        s.ok(["price", "import", "-"], stdin: "P 2024-01-15 BTC 42000 USD\nP 2023-07-15 BTC 30000 USD\n")
        XCTAssertEqual(try cached(s).map { ISODate.format($0.time) }, ["2023-07-14T22:00:00Z", "2024-01-14T23:00:00Z"])
    }

    func testEveryBadLineIsListedAndNothingIsWritten() throws {
        let s = Sandbox()
        s.ok(["price", "import", "-"], stdin: "P 2024-01-01 BTC 40000 USD\n")
        let before = FileManager.default.contents(atPath: s.dir + "/prices.json")
        let text = """
        P 2024-01-15 BTC 42000 USD
        P 2024-01-15 BTC 42,00 USD
        P 2024-13-01 BTC 1 USD
        P 2024-01-15 NOTACOINATALL 1 USD
        P 2024-01-15 EUR 1.09 USD
        this is not a price
        P 2030-01-15 BTC 1 USD
        P 2024-01-15 BTC 1 XYZ

        """
        let r = s.run(["price", "import", "-"], stdin: text)
        XCTAssertEqual(r.code, .failure)
        XCTAssertEqual(r.out, "")
        let lines = r.err.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 8, r.err)
        XCTAssertEqual(lines.prefix(7).map { $0.split(separator: ":").prefix(2).joined(separator: ":") },
                       ["error: line 2", "error: line 3", "error: line 4", "error: line 5", "error: line 6", "error: line 7", "error: line 8"])
        XCTAssertTrue(lines[2].contains("'NOTACOINATALL' not found"), lines[2])
        XCTAssertTrue(lines[3].contains("EUR is a currency: import exchange rates with 'bitpal fx import'"), lines[3])
        XCTAssertTrue(lines[5].contains("in the future"), lines[5])
        XCTAssertTrue(lines[6].contains("Unsupported currency 'XYZ'"), lines[6])
        XCTAssertEqual(lines[7], "error: 7 problems found; nothing was imported")
        XCTAssertEqual(FileManager.default.contents(atPath: s.dir + "/prices.json"), before)
    }

    /// A file of thousands of bad lines (a cron job fed the wrong file) gives a short message: the
    /// first 20 problems in file order, then one line with how many there are.
    func testManyBadLinesListTheFirstTwentyAndTheCount() throws {
        let s = Sandbox()
        s.ok(["price", "import", "-"], stdin: "P 2024-01-01 BTC 40000 USD\n")
        let before = FileManager.default.contents(atPath: s.dir + "/prices.json")
        // 5,000 lines: good ones and two kinds of bad ones (unreadable; an unknown commodity), mixed.
        var text = ""
        for i in 1...5000 {
            switch i % 3 {
            case 0: text += "P 2024-01-\(String(format: "%02d", i % 28 + 1)) BTC \(i) USD\n"
            case 1: text += "P 2024-13-01 BTC \(i) USD\n"
            default: text += "P 2024-01-15 NOTACOIN\(i) 1 USD\n"
            }
        }
        let r = s.run(["price", "import", "-"], stdin: text)
        XCTAssertEqual(r.code, .failure)
        XCTAssertEqual(r.out, "")
        let lines = r.err.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 21, r.err)
        let bad = (1...5000).filter { $0 % 3 != 0 }
        for (line, number) in zip(lines.prefix(20), bad) { XCTAssertTrue(line.hasPrefix("error: line \(number): "), line) }
        XCTAssertTrue(lines[0].contains("'2024-13-01' is not a date"), lines[0])
        XCTAssertTrue(lines[1].contains("'NOTACOIN2' not found"), lines[1])
        XCTAssertEqual(lines[20], "error: \(bad.count) problems found (the first 20 listed); nothing was imported")
        XCTAssertEqual(FileManager.default.contents(atPath: s.dir + "/prices.json"), before)
        // `fx import` and `import` list the same way.
        let rates = s.run(["fx", "import", "-"], stdin: String(repeating: "P 2024-13-01 EUR 1.09 USD\n", count: 30))
        XCTAssertEqual(rates.err.split(separator: "\n").count, 21, rates.err)
        XCTAssertTrue(rates.err.hasSuffix("error: 30 problems found (the first 20 listed); nothing was imported\n"), rates.err)
        let rows = "type,coin,amount,price,date\n" + String(repeating: "buy,bitcoin,-1,100,2024-01-01\n", count: 25)
        let trades = s.run(["import", "-"], stdin: rows)
        XCTAssertEqual(trades.err.split(separator: "\n").count, 21, trades.err)
        XCTAssertTrue(trades.err.hasSuffix("error: 25 problems found (the first 20 listed); nothing was imported\n"), trades.err)
    }

    func testReimportingIsIdempotentAndADryRunWritesNothing() throws {
        let s = Sandbox()
        let file = s.write("p.csv", "date,asset,price\n2024-01-15,btc,42000\n2024-01-16,btc,43000\n2024-01-16,eth,2500\n")
        let dry = s.run(["price", "import", file, "--dry-run"])
        XCTAssertEqual(dry.out, "Dry run: read 3 prices of 2 assets, 2024-01-15 … 2024-01-16; 3 would be added, 0 already in the price cache. Nothing was written.\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: s.dir + "/prices.json"))
        s.ok(["price", "import", file])
        let bytes = FileManager.default.contents(atPath: s.dir + "/prices.json")
        let again = s.ok(["price", "import", file])
        XCTAssertEqual(again.out, "Imported 3 prices of 2 assets, 2024-01-15 … 2024-01-16: 0 added, 3 already in the price cache.\n")
        XCTAssertEqual(FileManager.default.contents(atPath: s.dir + "/prices.json"), bytes)
        XCTAssertEqual(try cached(s).count, 3)
        // A corrected price replaces the quote of the same day.
        s.ok(["price", "import", "-"], stdin: "date,asset,price\n2024-01-16,btc,43100\n")
        XCTAssertEqual(try cached(s).filter { $0.coinId == "bitcoin" }.map(\.price), [dec("42000"), dec("43100")])
    }

    func testRegisteredAssetsTakeTheirCurrencyAndReportsUseImportedPrices() throws {
        let s = Sandbox()
        s.ok(["asset", "add", "AAPL", "--name", "Apple", "--type", "stock", "--currency", "USD"])
        s.ok(["add", "buy", "AAPL", "10", "150", "--date", "2024-01-02"])
        s.ok(["price", "import", "-"], stdin: "P 2024-05-31 AAPL 190.25\n")
        XCTAssertEqual(try cached(s).first?.currency, "USD")
        XCTAssertTrue(s.ok(["--json", "holdings"]).out.contains(#""currentPrice": "190.25""#))
        XCTAssertTrue(s.ok(["price", "history", "aapl"]).out.contains("$190.25"))
        let r = s.run(["price", "import", "-"], stdin: "P 2024-05-31 AAPL 170 EUR\n")
        XCTAssertEqual(r.code, .failure)
        XCTAssertTrue(r.err.hasPrefix("error: line 1: "), r.err)
    }

    func testAnUnrecognisableFileSaysHowToChoose() {
        let s = Sandbox()
        let r = s.run(["price", "import", "-"], stdin: "hello\n")
        XCTAssertEqual(r.code, .failure)
        XCTAssertTrue(r.err.contains("cannot tell the format") && r.err.contains("--format"), r.err)
        let forced = s.run(["price", "import", "-", "--format", "beancount"], stdin: "P 2024-01-15 BTC 1 USD\n")
        XCTAssertTrue(forced.err.hasPrefix("error: line 1: not a price directive"), forced.err)
        XCTAssertEqual(s.run(["price", "import", "-", "--format", "gnucash"]).code, .usage)
        XCTAssertEqual(s.run(["price", "import", s.dir + "/missing.journal"]).code, .failure)
    }

    func testFXImportStoresRatesWhereFetchedRatesLive() throws {
        let s = Sandbox()
        s.ok(["portfolio", "add", "eu", "--currency", "EUR"])
        let r = s.run(["fx", "import", "-"], stdin: "P 2024-01-15 EUR 1.09 USD\nP 2024-01-16 EUR $1.0950\n2024-01-17,x\n")
        XCTAssertEqual(r.code, .failure, "a line of another format is malformed")
        let ok = s.run(["fx", "import", "-"], stdin: "P 2024-01-15 EUR 1.09 USD\nP 2024-01-16 EUR $1.0950\nP 2024-01-16 GBP 1.17 EUR\n")
        XCTAssertEqual(ok.out, "Imported 3 rates of 2 currency pairs, 2024-01-15 … 2024-01-16: 3 added, 0 already in the price cache.\n")
        let quotes = try cached(s)
        XCTAssertEqual(quotes.map(\.coinId), ["fx:EUR/USD", "fx:EUR/USD", "fx:GBP/EUR"])
        XCTAssertEqual(quotes.map(\.currency), ["USD", "USD", "EUR"])
        let history = s.ok(["--json", "fx", "history", "EUR", "USD"]).out
        let rows = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(history.utf8)) as? [[String: String]])
        XCTAssertEqual(rows.map { $0["rate"] }, ["1.09", "1.095"])
        XCTAssertEqual(rows.map { $0["source"] }, ["imported", "imported"])
        XCTAssertTrue(s.ok(["fx"]).out.contains("imported"))
        // A rate without a second currency is into the portfolio's base; a coin is not a currency.
        s.ok(["-p", "eu", "fx", "import", "-"], stdin: "date,asset,price\n2024-01-20,USD,0.92\n")
        XCTAssertEqual(try cached(s).last?.coinId, "fx:USD/EUR")
        let bad = s.run(["fx", "import", "-"], stdin: "P 2024-01-15 BTC 42000 USD\nP 2024-01-15 USD 1 USD\n")
        XCTAssertEqual(bad.code, .failure)
        XCTAssertTrue(bad.err.contains("line 1: 'BTC' is not a currency") && bad.err.contains("line 2: an exchange rate needs two different currencies"),
                      bad.err)
    }

    func testHelpAndCompletionsKnowTheNewCommands() {
        let s = Sandbox()
        let help = s.ok(["help", "price"]).out
        XCTAssertTrue(help.contains("import") && help.contains("fetch-history"), help)
        XCTAssertTrue(s.ok(["help", "fx"]).out.contains("import"))
        XCTAssertTrue(s.ok(["price", "import", "--help"]).out.contains("--dry-run"))
        XCTAssertTrue(s.ok(["completions", "bash"]).out.contains("fetch-history"))
    }
}

/// `price fetch-history` against the fake's `/coins/{id}/market_chart` on 127.0.0.1.
final class PriceFetchHistoryTests: FakeServiceTestCase {
    func testFetchesADailyYearInEveryBaseThatHoldsTheCoin() throws {
        let s = online()
        s.ok(["--offline", "portfolio", "add", "eu", "--currency", "EUR"])
        s.ok(["--offline", "-p", "eu", "add", "buy", "btc", "1", "40000", "--date", "2024-01-02"])
        s.ok(["--offline", "add", "buy", "btc", "1", "40000", "--date", "2024-01-02"])
        let r = s.run(["price", "fetch-history", "btc", "eth"])
        XCTAssertEqual(r.code, .success, "\(r)")
        XCTAssertEqual(r.out, """
        BTC (Bitcoin): 366 daily prices in EUR, 2023-06-02 … 2024-06-01.
        BTC (Bitcoin): 366 daily prices in USD, 2023-06-02 … 2024-06-01.
        ETH (Ethereum): 366 daily prices in USD, 2023-06-02 … 2024-06-01.

        """)
        let requests = server.requests
        XCTAssertEqual(requests.map(\.path), ["/api/v3/coins/bitcoin/market_chart", "/api/v3/coins/bitcoin/market_chart",
                                              "/api/v3/coins/ethereum/market_chart"])
        XCTAssertEqual(requests.map { $0.query["vs_currency"] }, ["eur", "usd", "usd"])
        XCTAssertEqual(requests.map { $0.query["days"] }, ["365", "365", "365"])
        XCTAssertTrue(requests.allSatisfy { $0.query["interval"] == nil }, "the free plan refuses an interval")
        let quotes = try PriceCache(directory: s.dir).load()
        let usd = quotes.filter { $0.coinId == "bitcoin" && $0.currency == "USD" }
        XCTAssertEqual(usd.count, 366)
        XCTAssertEqual(usd.first.map { ISODate.format($0.time) }, "2023-06-02T00:00:00Z")
        XCTAssertEqual(usd.first?.price, dec("59635"))
        // The day's last point wins: today's is the current price, not the one at midnight.
        XCTAssertEqual(usd.last?.price, dec("60001.25"))
        XCTAssertEqual(usd.last.map { ISODate.format($0.time) }, "2024-06-01T12:00:00Z")
        XCTAssertEqual(quotes.first { $0.currency == "EUR" }?.price, dec("59635.5"))
        // Market caps were matched by timestamp (the fake sends one every other day), never by position.
        XCTAssertEqual(usd[1].marketCap, dec("59999636"))  // 364 days back: even
        XCTAssertNil(usd[0].marketCap)  // 365 days back: odd, no cap sent
        // Fetching again changes nothing.
        let bytes = FileManager.default.contents(atPath: s.dir + "/prices.json")
        s.ok(["price", "fetch-history", "btc", "eth"])
        XCTAssertEqual(FileManager.default.contents(atPath: s.dir + "/prices.json"), bytes)
        // Reports read the newest quote.
        XCTAssertTrue(s.ok(["--offline", "--json", "holdings"]).out.contains(#""currentPrice": "60001.25""#))
    }

    func testACoinNoPortfolioHoldsIsFetchedInTheDefaultBaseAndJSON() throws {
        let s = online()
        let r = s.run(["--json", "price", "fetch-history", "ethereum", "--days", "30"])
        XCTAssertEqual(r.code, .success, "\(r)")
        XCTAssertEqual(server.requests.first?.query["days"], "30")
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
        XCTAssertEqual(json["days"] as? Int, 30)
        let fetched = try XCTUnwrap(json["fetched"] as? [[String: Any]])
        XCTAssertEqual(fetched.count, 1)
        XCTAssertEqual(fetched[0]["assetId"] as? String, "ethereum")
        XCTAssertEqual(fetched[0]["currency"] as? String, "USD")
        XCTAssertEqual(fetched[0]["quotes"] as? Int, 31)
        XCTAssertEqual(fetched[0]["from"] as? String, "2024-05-02T00:00:00Z")
    }

    func testBeyondTheFreePlansYearIsExplained() throws {
        let s = online()
        let tooMany = s.run(["price", "fetch-history", "btc", "--days", "400"])
        XCTAssertEqual(tooMany.code, .failure)  // a well-formed number the rule refuses
        XCTAssertTrue(tooMany.err.contains("ask for 1 to 365"), tooMany.err)
        XCTAssertEqual(s.run(["price", "fetch-history", "btc", "--days", "0"]).code, .failure)
        let huge = s.run(["price", "fetch-history", "btc", "--days", "99999999999999999999"])
        XCTAssertEqual(huge.code, .failure)
        XCTAssertTrue(huge.err.contains("more than 365 days of history"), huge.err)
        XCTAssertEqual(s.run(["price", "fetch-history", "btc", "--days", "ten"]).code, .usage)
        XCTAssertTrue(server.requests.isEmpty)
        // A pro key's plan reaches further back: 400 days are asked for.
        let pro = online(["COINGECKO_PRO_API_KEY": "CG-pro-key-1234567890"])
        _ = pro.run(["price", "fetch-history", "btc", "--days", "400"])
        XCTAssertEqual(server.requests.last?.query["days"], "400")
        XCTAssertEqual(server.requests.last?.headers["x-cg-pro-api-key"], "CG-pro-key-1234567890")
        // The service itself refusing the range (401, error 10012) is exit 3 with the plan's limit.
        server.enqueue(FakeCoinGecko.marketChart(FakeCoinGecko.Request(path: "/api/v3/coins/bitcoin/market_chart",
                                                                        query: ["vs_currency": "usd", "days": "max"], headers: [:]),
                                                 now: FakeCoinGecko.chartNow))
        let r = s.run(["price", "fetch-history", "btc"])
        XCTAssertEqual(r.code, .service)
        XCTAssertEqual(r.err.filter { $0 == "\n" }.count, 1, r.err)
        XCTAssertTrue(r.err.hasPrefix("error: the price service refused 365 days of history (HTTP 401)") && r.err.contains("at most 365 days"), r.err)
        XCTAssertFalse(FileManager.default.fileExists(atPath: s.dir + "/prices.json"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: s.dir + "/.network-failure"), "the service answered: reports need not wait")
        // A key the service wants is still explained as a key.
        server.enqueue(.init(status: 401, body: #"{"status":{"error_code":10002,"error_message":"API Key Missing."}}"#))
        XCTAssertTrue(s.run(["price", "fetch-history", "btc"]).err.contains("set COINGECKO_API_KEY"))
    }

    func testAnUnknownCoinFailsAloneAndAnUnknownCurrencyIsARefusal() throws {
        let s = online()
        server.fallback = { request in
            request.path.contains("/bitcoin/") ? FakeCoinGecko.Reply(status: 404, body: #"{"error":"coin not found"}"#)
                : FakeCoinGecko.marketChart(request, now: FakeCoinGecko.chartNow)
        }
        let r = s.run(["price", "fetch-history", "btc", "eth", "--days", "2"])
        XCTAssertEqual(r.code, .failure)
        XCTAssertEqual(r.err, "error: the price service does not know the coin 'bitcoin' (HTTP 404); find its id with 'bitpal coins search'\n")
        XCTAssertEqual(r.out, "ETH (Ethereum): 3 daily prices in USD, 2024-05-30 … 2024-06-01.\n")
        XCTAssertEqual(try PriceCache(directory: s.dir).load().map(\.coinId), ["ethereum", "ethereum", "ethereum"])
        let c = online()
        c.ok(["--offline", "portfolio", "add", "ch", "--currency", "CHF"])
        c.ok(["--offline", "-p", "ch", "add", "buy", "eth", "1", "3000", "--date", "2024-01-02"])
        server.fallback = { FakeCoinGecko.marketChart($0, now: FakeCoinGecko.chartNow) }
        let bad = c.run(["price", "fetch-history", "eth"])
        XCTAssertEqual(bad.code, .service)
        XCTAssertTrue(bad.err.contains("HTTP 400") && bad.err.contains("invalid vs_currency"), bad.err)
    }

    func testAFailureLaterKeepsWhatWasFetchedBefore() throws {
        let s = online()
        server.fallback = { request in
            request.path.contains("/ethereum/") ? FakeCoinGecko.Reply(status: 503, body: "down")
                : FakeCoinGecko.marketChart(request, now: FakeCoinGecko.chartNow)
        }
        let r = s.run(["price", "fetch-history", "btc", "eth", "--days", "2"])
        XCTAssertEqual(r.code, .service)
        XCTAssertEqual(r.out, "BTC (Bitcoin): 3 daily prices in USD, 2024-05-30 … 2024-06-01.\n")
        XCTAssertTrue(r.err.hasPrefix("error: the price service failed (HTTP 503, 3 attempts)"), r.err)
        XCTAssertEqual(try PriceCache(directory: s.dir).load().map(\.coinId), ["bitcoin", "bitcoin", "bitcoin"])
        // With --json, what was cached before the failure is said too.
        let j = s.run(["price", "fetch-history", "btc", "eth", "--days", "2", "--json"])
        XCTAssertEqual(j.code, .service)
        let out = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(j.out.utf8)) as? [String: Any], j.description)
        XCTAssertEqual((out["fetched"] as? [[String: Any]])?.map { $0["assetId"] as? String }, ["bitcoin"])
        XCTAssertEqual((out["failed"] as? [[String: Any]])?.map { $0["assetId"] as? String }, ["ethereum"])
    }

    func testTruncatedAndAbsurdRepliesAreHandled() throws {
        let s = online()
        server.enqueue(.init(status: 200, body: #"{"prices":[[1717200000000,60000.5],[1717243200000,6"#))
        let truncated = s.run(["price", "fetch-history", "btc", "--days", "1"])
        XCTAssertEqual(truncated.code, .service)
        XCTAssertTrue(truncated.err.contains("could not read"), truncated.err)
        XCTAssertFalse(FileManager.default.fileExists(atPath: s.dir + "/prices.json"))
        server.enqueue(.init(status: 200, body: #"{"market_caps":[]}"#))
        XCTAssertEqual(s.run(["price", "fetch-history", "btc", "--days", "1"]).code, .service)
        // Points bitpal cannot use are dropped with one warning; the rest are kept.
        server.enqueue(.init(status: 200, body: #"{"prices":[[1717113600000,null],[1717200000000,"60000"],[1e400,5],[253402300800000,1],"#
            + #"[1717286400000,1],[1717157000000,-3],[1717158000000,1e400],"odd",[1717160000000],[1717160000000,1,2],"#
            + #"[1717200000000.0,61000.5],[1717243200000,62000.25]],"market_caps":[[1717243200000,"x"],{}]}"#))
        let r = s.run(["price", "fetch-history", "btc", "--days", "1"])
        XCTAssertEqual(r.code, .success, "\(r)")
        XCTAssertEqual(r.err, "warning: ignored 10 of 12 price points of 'bitcoin' in USD from the price service (an unusable time or price)\n")
        // The two usable points share a day: its last one is kept.
        let quotes = try PriceCache(directory: s.dir).load()
        XCTAssertEqual(quotes.map(\.price), [dec("62000.25")])
        XCTAssertNil(quotes.first?.marketCap)
    }

    func testOfflineIsAUsageError() {
        let s = Sandbox()
        XCTAssertEqual(s.run(["price", "fetch-history", "btc"]).code, .usage)
        let o = online()
        o.ok(["--offline", "asset", "add", "AAPL", "--name", "Apple", "--type", "stock"])
        let r = o.run(["price", "fetch-history", "AAPL"])
        XCTAssertEqual(r.code, .failure)
        XCTAssertTrue(r.err.contains("registered asset"), r.err)
    }

    /// A cron, end to end: `price refresh` every 4 hours over 12 days keeps the last week whole and
    /// the last quote of each earlier day.
    func testRefreshesOverTwelveDaysKeepTheLastWeekAndOneQuoteADay() throws {
        let s = online()
        s.ok(["--offline", "add", "buy", "btc", "1", "30000", "--date", "2024-01-01"])
        let start = s.now
        for step in 0..<(12 * 6) {
            s.now = start.addingTimeInterval(TimeInterval(step * 4 * 3600))
            s.ok(["price", "refresh", "--quiet"])
        }
        let quotes = try PriceCache(directory: s.dir).load().filter { $0.coinId == "bitcoin" }
        let cutoff = s.now.addingTimeInterval(-PriceCache.recentSeconds)
        XCTAssertEqual(quotes.filter { $0.time >= cutoff }.count, 7 * 6 + 1)
        // Each earlier day's last refresh; of the day the week began in, its last one before then.
        XCTAssertEqual(quotes.filter { $0.time < cutoff }.map { ISODate.format($0.time) },
                       ["2024-06-01T20:00:00Z", "2024-06-02T20:00:00Z", "2024-06-03T20:00:00Z", "2024-06-04T20:00:00Z",
                        "2024-06-05T20:00:00Z", "2024-06-06T04:00:00Z"])
    }
}

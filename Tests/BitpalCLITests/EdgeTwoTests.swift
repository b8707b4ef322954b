import BitpalCLI
import Foundation
import PortfolioCore
import XCTest

/// Issue "trust at the edges, part two": one reproduction a test, through the CLI. Each fails
/// without its fix.
final class EdgeTwoTests: XCTestCase {
    // MARK: Data lost or the store bricked

    /// 1. No output is written over a file bitpal keeps: not by name, not through a link, not through a hard link.
    func testNoOutputIsWrittenOverAFileBitpalKeeps() throws {
        let s = Sandbox()
        s.ok(["add", "buy", "btc", "1", "100", "--date", "2024-01-01"])
        s.ok(["price", "set", "btc", "120", "--date", "2024-05-01"])
        let link = s.dir + "/../bitpal-link-\(UUID().uuidString).json"
        let hard = s.dir + "/../bitpal-hard-\(UUID().uuidString).json"
        defer { unlink(link); unlink(hard) }
        XCTAssertEqual(symlink(s.storePath, link), 0)
        XCTAssertEqual(Glibc.link(s.storePath, hard), 0)
        let targets = [s.storePath, s.dir + "/./portfolio.json", link, hard, s.dir + "/prices.json"]
        s.refuses(targets.flatMap { [["report", "--html", $0], ["export", "--output", $0], ["export", "--format", "json", "--output", $0]] },
                  saying: "one of the files bitpal keeps")
        s.ok(["check"])
        // Anywhere else is fine.
        s.ok(["report", "--html", s.dir + "/page.html"])
        s.ok(["export", "--output", s.dir + "/backup.csv"])
    }

    /// 2. A due date whose successor cannot be stored is refused; nothing unreadable is written.
    func testANextDueDatePastTheLastStorableDayIsRefused() throws {
        let s = Sandbox()
        s.ok(["saving", "add", "w", "--asset", "btc", "--amount", "100", "--every", "week", "--start", "2024-06-01"])
        s.refuses(["9999-12-31", "9999-12-28"].map { ["saving", "edit", "w", "--next", $0] }, saying: "past 9999-12-31")
        s.ok(["saving", "edit", "w", "--next", "9999-12-01"])  // its successor, 9999-12-0x + 7, is still a day
        s.ok(["saving", "list"])
        s.ok(["saving", "remove", "w"])
    }

    /// 3. A split that would round a position to zero is refused, keeping its basis.
    func testASplitThatRoundsAPositionToZeroIsRefused() throws {
        let s = Sandbox()
        s.ok(["asset", "add", "ZZ", "--name", "Zed", "--type", "stock"])
        s.ok(["add", "buy", "ZZ", "30", "10", "--date", "2024-01-01"])
        let r = s.run(["add", "split", "ZZ", "1:99999999999999999999", "--date", "2024-02-01"])
        XCTAssertEqual(r.code, .failure, r.description)
        XCTAssertTrue(r.err.contains("would round the 30 units held to zero"), r.err)
        XCTAssertEqual(try s.loadPortfolio().transactions.count, 1)
        // A ratio that leaves something is fine.
        s.ok(["add", "split", "ZZ", "1:3", "--date", "2024-02-01"])
        XCTAssertTrue(s.ok(["holdings", "--json"]).out.contains(#""totalAmount": "10""#))
    }

    /// 4. `--next` on or before the last recorded date is refused: a due date is never recorded twice.
    func testNextBeforeTheLastRecordedDateIsRefused() throws {
        let s = Sandbox()  // 2024-06-01 12:00 UTC
        s.ok(["saving", "add", "d", "--asset", "btc", "--amount", "10", "--every", "day", "--start", "2024-05-28"])
        for day in 28...31 { s.ok(["price", "set", "btc", "100", "--date", "2024-05-\(day)"]) }
        s.ok(["price", "set", "btc", "100", "--date", "2024-06-01"])
        s.ok(["saving", "run"])
        XCTAssertEqual(try s.loadPortfolio().transactions.count, 5)
        s.refuses(["2024-05-28", "2024-06-01"].map { ["saving", "edit", "d", "--next", $0] }, saying: "never recorded twice")
        s.ok(["saving", "run"])
        XCTAssertEqual(try s.loadPortfolio().transactions.count, 5)
        s.ok(["saving", "edit", "d", "--next", "2024-06-05"])
    }

    // MARK: A link broken by an edit

    /// 5. The receiving leg of a move takes no asset, price or fee of its own; its amount and asset change with the other leg.
    func testAMovesReceivingLegTakesNothingOfItsOwn() throws {
        let s = Sandbox()
        s.ok(["portfolio", "add", "t"])
        s.ok(["add", "buy", "btc", "1", "40000", "--date", "2024-01-01"])
        s.ok(["add", "buy", "eth", "1", "2000", "--date", "2024-01-01"])
        s.ok(["move", "btc", "0.5", "--to", "t", "--date", "2024-02-01"])
        let incoming = try XCTUnwrap(try s.loadPortfolio().transactions.first { $0.type == .transferIn })
        let id = incoming.id.uuidString.lowercased()
        s.refuses([["edit", id, "--price", "1"], ["edit", id, "--fee", "1"]], saying: "takes no price or fee of its own")
        // The asset changes on both legs: 0.5 ETH leave 'main' (which holds 1) and arrive in 't' with ETH's basis.
        s.ok(["edit", id, "--asset", "eth"])
        let legs = try s.loadPortfolio().transactions.filter { $0.linkedId != nil }
        XCTAssertEqual(Set(legs.map(\.assetId)), ["ethereum"])
        let t = s.ok(["-p", "t", "holdings", "--json"]).out
        XCTAssertTrue(t.contains(#""totalCost": "1000.00""#), t)
        s.ok(["edit", id, "--amount", "0.25"])
        XCTAssertEqual(Set(try s.loadPortfolio().transactions.filter { $0.linkedId != nil }.map(\.amountValue.text)), ["0.25"])
        s.ok(["check"])
    }

    /// 6. The legs of a cash transfer change together: an edit of one leg's amount changes both (or neither).
    func testACashTransfersLegsChangeTogether() throws {
        let s = Sandbox()
        s.ok(["portfolio", "add", "a", "--cash"])
        s.ok(["portfolio", "add", "b", "--cash"])
        s.ok(["-p", "a", "cash", "deposit", "1000", "--date", "2024-01-01"])
        s.ok(["-p", "a", "cash", "transfer", "100", "--to", "b", "--date", "2024-02-01"])
        let deposit = try XCTUnwrap(try s.loadPortfolio().transactions.first { $0.type == .deposit && $0.portfolio == "b" })
        let id = deposit.id.uuidString.lowercased()
        let r = s.run(["edit", id, "--amount", "5000"])
        XCTAssertEqual(r.code, .failure, r.description)  // 'a' has 1,000
        XCTAssertTrue(r.err.contains("Not enough USD cash in 'a'"), r.err)
        s.ok(["edit", id, "--amount", "250"])
        let cash = s.ok(["cash", "--all", "--json"]).out
        XCTAssertEqual(Set(try s.loadPortfolio().transactions.filter { $0.linkedId != nil }.map(\.amountValue.text)), ["250"])
        XCTAssertTrue(cash.contains("1000"), cash)
        s.ok(["check"])
    }

    /// 7. `check` sees what the replay and the contracts call broken, in links and in the records that are not transactions.
    func testCheckSeesBrokenLinksAndSettings() throws {
        let s = Sandbox()
        s.ok(["portfolio", "add", "t"])
        s.ok(["asset", "add", "ZZ", "--name", "Zed", "--type", "stock"])
        s.ok(["add", "buy", "btc", "2", "100", "--date", "2024-01-01"])
        s.ok(["add", "buy", "ZZ", "2", "100", "--date", "2024-01-01"])
        let good = try XCTUnwrap(String(data: try XCTUnwrap(s.storeBytes), encoding: .utf8))
        func broken(_ transactions: [String], settings: String = "", expect: String, file: StaticString = #filePath, line: UInt = #line) {
            var text = good
            if !transactions.isEmpty {
                let marker = "\"transactions\": ["
                let at = text.range(of: marker)!
                text.replaceSubrange(at, with: marker + "\n" + transactions.joined(separator: ",\n") + ",")
            }
            if !settings.isEmpty {
                text = text.replacingOccurrences(of: "\"transactions\": [", with: settings + ",\n  \"transactions\": [")
            }
            _ = s.write("portfolio.json", text)
            let r = s.run(["check"])
            XCTAssertEqual(r.code, .failure, "\(expect)\n\(r)", file: file, line: line)
            XCTAssertTrue(r.out.contains(expect), "\(expect)\n\(r.out)", file: file, line: line)
        }
        let a = "11111111-1111-4111-8111-111111111111", b = "22222222-2222-4222-8222-222222222222", c = "33333333-3333-4333-8333-333333333333"
        func leg(_ id: String, _ type: String, _ portfolio: String = "main", asset: String? = "bitcoin", amount: String = "1",
                 price: String? = "100", total: String? = nil, currency: String? = "USD", link: String = "11111111-1111-4111-8111-111111111111") -> String {
            func q(_ v: String?) -> String { v.map { "\"\($0)\"" } ?? "null" }
            return """
                {"id": "\(id)", "portfolio": "\(portfolio)", "type": "\(type)", "assetId": \(q(asset)), "amount": "\(amount)", \
                "price": \(q(price)), "total": \(q(total)), "fee": null, "currency": \(q(currency)), "date": "2024-03-01T00:00:00Z", \
                "notes": null, "linkedId": "\(link)"}
                """
        }
        broken([leg(a, "sell")], expect: "its linked leg")
        broken([leg(a, "sell"), leg(b, "buy", asset: "ethereum"), leg(c, "buy", asset: "ethereum")], expect: "3 records share linkedId")
        broken([leg(a, "sell"), leg(b, "buy")], expect: "into itself")
        broken([leg(a, "transfer-out", price: nil, currency: nil), leg(b, "transfer-in", price: nil, currency: nil)], expect: "both in 'main'")
        broken([leg(a, "transfer-out", price: nil, currency: nil), leg(b, "transfer-in", "t", asset: "ethereum", price: nil, currency: nil)],
               expect: "name different assets")
        broken([leg(a, "transfer-out", price: nil, currency: nil), leg(b, "transfer-in", "t", amount: "0.5", price: nil, currency: nil)],
               expect: "differ in amount")
        broken([], settings: #""savingPlans": [{"name": "w", "portfolio": "gone", "assetId": "bitcoin", "amount": "10", "fee": "0", "frequency": "week", "startDate": "2024-01-01", "nextDueDate": "2024-01-01", "lastExecuted": null, "from": "outside", "method": "automatic", "active": true, "notes": null}]"#,
               expect: "saving plan 'w' names portfolio 'gone'")
        _ = s.write("portfolio.json", good.replacingOccurrences(of: "\"manualPrices\": []", with:
            #""manualPrices": [{"assetId": "NOPE", "price": "1", "currency": "USD", "date": "2024-01-01T00:00:00Z"}]"#))
        XCTAssertTrue(s.run(["check"]).out.contains("the manual price of NOPE is for an asset that is not registered"))
        // The store back as it was, then targets summing to 150 and a removal that leaves a target pointing at nothing.
        _ = s.write("portfolio.json", good)
        s.ok(["target", "set", "--by", "asset", "ZZ=60", "bitcoin=40"])
        let removal = s.run(["asset", "remove", "ZZ", "--force"])
        XCTAssertNotEqual(removal.code, .success, removal.description)
        let withTarget = try XCTUnwrap(String(data: try XCTUnwrap(s.storeBytes), encoding: .utf8))
        _ = s.write("portfolio.json", withTarget.replacingOccurrences(of: "\"60\"", with: "\"110\""))
        let r = s.run(["check"])
        XCTAssertEqual(r.code, .failure, r.description)
        XCTAssertTrue(r.out.contains("the target of 'main' adds up to 150, not 100"), r.out)
    }

    /// 7. A bad price cache is a problem `check` names, as the reports do.
    func testCheckReadsThePriceCachesLatestList() throws {
        let s = Sandbox()
        for latest in [#""price": "0""#, #""price": "-1""#, #""price": "abc""#] {
            _ = s.write("prices.json", """
                {"format": "bitpal-prices", "version": 1, "latest": [{"coinId": "bitcoin", \(latest), "time": "2024-01-01T00:00:00Z", "source": "coingecko"}], "quotes": []}
                """)
            let r = s.run(["check"])
            XCTAssertEqual(r.code, .failure, "\(latest) \(r)")
            XCTAssertTrue(r.out.contains("prices.json"), r.out)
        }
        _ = s.write("prices.json", """
            {"format": "bitpal-prices", "version": 1, "latest": [], "quotes": [{"coinId": "fx:XYZ/USD", "price": "1", "time": "2024-01-01T00:00:00Z", "source": "coingecko"}]}
            """)
        XCTAssertEqual(s.run(["check"]).code, .failure)
    }

    /// 8. A truncated store is refused by the listings too.
    func testATruncatedStoreIsRefusedByEveryListing() throws {
        let s = Sandbox()
        s.ok(["saving", "add", "w", "--asset", "btc", "--amount", "100", "--every", "week", "--start", "2024-06-01"])
        s.ok(["alert", "add", "btc", "above", "100000"])
        s.ok(["target", "set", "crypto=100"])
        for i in 0..<20 { s.ok(["add", "buy", "btc", "1", "100", "--date", "2024-01-\(String(format: "%02d", i + 1))"]) }
        let bytes = try XCTUnwrap(s.storeBytes)
        _ = s.write("portfolio.json", String(decoding: bytes.prefix(bytes.count * 2 / 3), as: UTF8.self))
        for args in [["saving", "list"], ["alert", "list"], ["target", "show"], ["holdings"]] {
            let r = s.run(args)
            XCTAssertEqual(r.code, .failure, "\(args) \(r)")
            XCTAssertTrue(r.err.contains("is not a valid bitpal file"), r.err)
        }
    }

    /// 12. A confirmed buy is never dated before its due date.
    func testConfirmBeforeTheDueDateIsRefused() throws {
        let s = Sandbox()
        s.ok(["saving", "add", "m", "--asset", "btc", "--amount", "100", "--every", "month", "--start", "2024-05-15", "--manual"])
        let r = s.run(["saving", "confirm", "m", "--price", "60000", "--date", "2024-05-10"])
        XCTAssertEqual(r.code, .failure, r.description)
        XCTAssertTrue(r.err.contains("cannot be dated before it"), r.err)
        s.ok(["saving", "confirm", "m", "--price", "60000", "--date", "2024-05-16"])
    }

    // MARK: Accepted that should be refused

    /// 9. CASH is a portfolio's cash, never an asset's code.
    func testCashIsNoAssetCode() {
        let s = Sandbox()
        let r = s.run(["asset", "add", "CASH", "--name", "Cash", "--type", "other"])
        XCTAssertEqual(r.code, .failure, r.description)
        XCTAssertTrue(r.err.contains("asset CASH uses the name of a portfolio's cash"), r.err)
        XCTAssertNil(s.storeBytes)
    }

    /// 10. A projection is exact or refused, never NaN.
    func testAPlanWhoseProjectionCannotBeComputedIsRefused() {
        let s = Sandbox()
        let r = s.run(["plan", "add", "far", "--target", "1000000", "--by", "9999-12-31", "--return", "10", "--monthly", "100"])
        XCTAssertEqual(r.code, .failure, r.description)
        XCTAssertTrue(r.err.contains("grows past what bitpal computes"), r.err)
        s.ok(["plan", "add", "far", "--target", "1000000", "--by", "2100-12-31", "--return", "10", "--monthly", "100"])
        let shown = s.ok(["plan", "show", "far", "--json"]).out
        XCTAssertFalse(shown.contains("NaN"), shown)
        XCTAssertEqual(s.run(["plan", "edit", "far", "--by", "9999-12-31"]).code, .failure)
    }

    /// 11. Plan names take the rule of every other name.
    func testPlanNamesTakeTheRuleOfEveryName() {
        let s = Sandbox()
        for bad in ["a\u{1B}[31mb", "bell\u{07}", "del\u{7F}", "rlo\u{202E}x", "iso\u{2066}x", "two words", ""] {
            XCTAssertEqual(s.run(["plan", "add", bad, "--target", "100", "--by", "2030-01-01"]).code, .usage, bad.debugDescription)
            XCTAssertEqual(s.run(["saving", "add", bad, "--asset", "btc", "--amount", "10", "--every", "week"]).code, .usage, bad.debugDescription)
        }
        XCTAssertNil(s.storeBytes)
        s.ok(["plan", "add", "house_2030", "--target", "100", "--by", "2030-01-01"])
    }

    /// 15. The first write of a version-1 store keeps a fresh backup, under a free name when the usual one is taken.
    func testMigrationAlwaysKeepsAFreshBackup() throws {
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("PortfolioCoreTests/Fixtures/portfolio-v1.json")
        let v1 = try Data(contentsOf: fixture)
        let s = Sandbox()
        try FileManager.default.createDirectory(atPath: s.dir + "/portfolio.v1.json", withIntermediateDirectories: true)  // a folder in the way
        _ = s.write("portfolio.json", String(decoding: v1, as: UTF8.self))
        let r = s.ok(["add", "buy", "ethereum", "1", "2000", "--date", "2024-01-15"])
        XCTAssertTrue(r.err.contains("kept as \(s.dir)/portfolio.v1.2.json"), r.err)
        XCTAssertEqual(FileManager.default.contents(atPath: s.dir + "/portfolio.v1.2.json"), v1)
        var isDir: ObjCBool = false
        XCTAssertTrue(FileManager.default.fileExists(atPath: s.dir + "/portfolio.v1.json", isDirectory: &isDir) && isDir.boolValue)
        XCTAssertTrue(try XCTUnwrap(String(data: try XCTUnwrap(s.storeBytes), encoding: .utf8)).contains("\"version\": 3"))
    }

    // MARK: Exit codes and words

    /// 16. Help lists only what `add` takes; a rule is exit 1; the record's own rule is named; exponents are
    /// numbers bitpal does not read; an echoed input is cut.
    func testExitCodesAndWords() throws {
        let s = Sandbox()
        let help = s.ok(["help", "add"]).out
        XCTAssertFalse(help.contains("  deposit "), help)
        XCTAssertTrue(help.contains("bitpal cash deposit"), help)
        let deposit = s.run(["add", "deposit", "5"])
        XCTAssertEqual(deposit.code, .usage)
        XCTAssertTrue(deposit.err.contains("bitpal cash deposit AMOUNT"), deposit.err)

        s.ok(["portfolio", "edit", "main", "--cash"])
        s.ok(["cash", "deposit", "100", "--date", "2024-01-01"])
        let id = try XCTUnwrap(try s.loadPortfolio().transactions.first).id.uuidString.lowercased()
        let edit = s.run(["edit", id, "--asset", "btc"])
        XCTAssertEqual(edit.code, .failure)
        XCTAssertEqual(edit.err, "error: A deposit or withdrawal is cash alone and names no asset\n")

        let file = s.write("p.journal", "P 2024-01-15 BTC 1e5 USD\n")
        let imported = s.run(["price", "import", file])
        XCTAssertEqual(imported.code, .failure)
        XCTAssertTrue(imported.err.contains("'1e5' is not a plain decimal number"), imported.err)

        let long = String(repeating: "x", count: 100_000)
        let echoed = s.run(["add", "buy", long, "1", "1"])
        XCTAssertNotEqual(echoed.code, .success)
        XCTAssertLessThan(echoed.err.utf8.count, 1200, "an echoed input is cut")
        XCTAssertTrue(echoed.err.contains("characters, cut"), echoed.err)
    }
}

/// The items of "trust at the edges, part two" that need the fake price service on 127.0.0.1.
final class EdgeTwoServiceTests: FakeServiceTestCase {
    /// 13. A price below what bitpal keeps, and points outside the window asked for, are not stored.
    func testMarketChartPointsOutsideTheWindowOrTooSmallAreDropped() throws {
        let s = online()
        let now = FakeCoinGecko.chartNow
        server.enqueue(FakeCoinGecko.Reply(status: 200, body: """
            {"prices": [[0, 100], [\(now - 400 * 86_400_000), 50000], [\(now - 86_400_000), 1e-30], [\(now - 2 * 86_400_000), 61000]],
             "market_caps": [], "total_volumes": []}
            """))
        let r = s.run(["price", "fetch-history", "btc", "--days", "365"])
        XCTAssertEqual(r.code, .success, r.description)
        XCTAssertTrue(r.err.contains("ignored 3 of 4 price points"), r.err)
        let quotes = try PriceCache(directory: s.dir).load()
        XCTAssertEqual(quotes.map(\.price), [61000])
    }

    /// 14. A key the server echoes as a coin's name is never stored or shown.
    func testAnEchoedKeyIsNeverStored() throws {
        let key = "CG-abcdefghijklmnopqrstuvwx"
        let s = online(["COINGECKO_API_KEY": key])
        server.fallback = { _ in
            FakeCoinGecko.Reply(status: 200, body: #"[{"id":"bitcoin","symbol":"btc","name":"Bitcoin"},{"id":"leak","symbol":"lk","name":"\#(key)"}]"#)
        }
        s.ok(["coins", "update"])
        let stored = try XCTUnwrap(String(data: try XCTUnwrap(FileManager.default.contents(atPath: s.dir + "/coins.json")), encoding: .utf8))
        XCTAssertFalse(stored.lowercased().contains("abcdefghijkl"), stored)
        XCTAssertTrue(stored.contains("bitcoin"), stored)
        XCTAssertFalse(s.run(["--offline", "coins", "search", "lk"]).out.contains("abcdefgh"))
    }
}

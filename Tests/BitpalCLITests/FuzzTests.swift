import BitpalCLI
import Foundation
import PortfolioCore
import XCTest

/// Thousands of generated inputs through the parsers and the CLI in-process: never a trap,
/// only exit 0–3 with a message, and the store unchanged whenever the command failed.
final class FuzzTests: XCTestCase {
    func testGeneratedArgumentVectors() throws {
        let s = Sandbox()
        s.ok(["add", "buy", "btc", "1", "100", "--date", "2024-01-01"])
        s.ok(["add", "sell", "btc", "0.5", "200", "--date", "2024-02-01"])
        s.ok(["asset", "add", "AAPL", "--name", "Apple", "--type", "stock"])
        s.ok(["portfolio", "add", "trading", "--cash", "--opening-deposit", "1000", "--date", "2024-01-01"])
        s.ok(["add", "buy", "AAPL", "10", "100", "--date", "2024-01-02"])
        var g = SplitMix(seed: 42)
        let words = ["add", "buy", "sell", "btc", "eth", "bitcoin", "list", "edit", "delete", "holdings", "closed", "summary",
                     // The kinds, assets, portfolios and their options.
                     "transfer-in", "transfer-out", "reward", "dividend", "interest", "adjustment", "split", "swap", "move",
                     "income", "asset", "portfolio", "default", "show", "AAPL", "aapl", "GOLD", "trading", "main", "-p",
                     "cash", "balance", "deposit", "withdraw", "transfer", "--cash", "--no-cash", "--opening-deposit", "--initial",
                     "--portfolio", "--all", "--by-portfolio", "--to", "--from", "--total", "--value", "--currency", "EUR",
                     "--name", "--with-transactions", "--active", "--inactive", "--by", "--year", "month", "4:1", "1:0", "-0.5",
                     "price", "set", "refresh", "history", "watch", "remove", "coins", "search", "widget", "export", "help",
                     "completions", "bash", "--json", "--date", "--fee", "--note", "--limit", "--sort", "--since", "--until",
                     "--type", "--size", "--format", "--output", "--dry-run", "--quiet", "--", "-", "-5", "0", "1", "0.5",
                     "1e5", "12abc", "1,5", "2024-01-01", "2030-01-01", "2024-02-30", "", " ", "\u{1b}[31m", "\n", "é", "🚀",
                     String(repeating: "9", count: 45), "0.0000000000000000001", "--data-dir", "--offline", "--help", "-h",
                     "--version", "--no-color", "value", "pnl", "name", "csv", "json", "small", "large", "--fee=1", "--json=1",
                     // Dates at and past the limits, local forms, broken offsets.
                     "1900-01-01T00:00:00Z", "1900-01-01T00:00:00.001Z", "1899-12-31T23:59:59.999Z", "9999-12-31T23:59:59.999Z",
                     "0000-01-01T00:00:00+00:30", "1900-01-01", "1899-12-31", "9999-12-31", "0001-01-01", "today", "yesterday",
                     "2024-01-01 10:00", "2024-01-01T10:00:30.5", "2024-01-01T00:00:00+01:", "2024-01-01T00:00:00+01",
                     "1900-01-01T00:30:00+01:00",
                     // Huge and tiny numbers, at and past the limits.
                     String(repeating: "9", count: 20), String(repeating: "9", count: 21), String(repeating: "9", count: 166),
                     String(repeating: "1", count: 167), "99999999999999999999.999999999999999999", "0.000000000000000001",
                     "0." + String(repeating: "0", count: 200) + "1", "00000000000000000000001", "1" + String(repeating: "0", count: 400)]
        let ids = try s.loadPortfolio().transactions.map { String(UUIDText.lowercased($0.id).prefix(6)) }
        for _ in 0..<3000 {
            let n = Int(g.next() % 7)
            var args = (0..<n).map { _ in words[Int(g.next() % UInt64(words.count))] }
            if g.next() % 5 == 0 { args.insert(ids[Int(g.next() % UInt64(ids.count))], at: min(1, args.count)) }
            if let i = args.firstIndex(of: "--data-dir") { args.remove(at: i) }
            if let i = args.firstIndex(of: "--output") { args.remove(at: i) }
            let before = s.storeBytes
            let r = s.run(args)
            if r.code != .success {
                XCTAssertTrue(r.err.hasPrefix("error: "), "\(args): \(r.err)")
                XCTAssertEqual(s.storeBytes, before, "\(args) failed but changed the store")
            }
        }
        XCTAssertNoThrow(try s.loadPortfolio())
        // Whatever was accepted, every command can read the store and the JSON round-trips.
        for command in [["list"], ["list", "--json"], ["holdings"], ["closed"], ["summary"], ["export"], ["export", "--format", "json"]] {
            XCTAssertEqual(s.run(command).code, .success, "\(command)")
        }
        let exported = s.ok(["export", "--format", "json"]).out
        let copy = Sandbox()
        XCTAssertEqual(copy.run(["import", "-", "--format", "json"], stdin: exported).code, .success)
        XCTAssertEqual(copy.ok(["export", "--format", "json"]).out, exported)
    }

    func testMalformedCSVAndJSONImports() throws {
        var g = SplitMix(seed: 7)
        let pieces = ["type,coin,amount,price,date\n", "buy,btc,1,100,2024-01-01\n", "sell,btc,5,1,2024-01-02\n", "\"", "\"\"", ",",
                      "\r\n", "\n", "x", "buy", "1e5", "-1", "\u{FEFF}", "🚀", "\u{0}", "2024-13-01", "0.0000000000000000001",
                      "[", "]", "{", "}", "\"amount\":", "null", "\"coinId\": \"bitcoin\"", "\\u12", "\\\"",
                      "buy,btc,1,100,1900-01-01T00:00:00Z\n", "buy,btc,1,100,0000-01-01T00:00:00+00:30\n", "9999-12-31T23:59:59.999Z",
                      "1899-12-31", "2024-01-01 10:00", "today", String(repeating: "9", count: 166), "0.000000000000000001",
                      "99999999999999999999.999999999999999999", "\"date\": \"1900-01-01T00:30:00+01:00\"", "1-2.3.4e+-", "\"a\":1,\"a\":2"]
        let s = Sandbox()
        s.ok(["add", "buy", "btc", "1", "100", "--date", "2024-01-01"])
        let before = s.storeBytes
        for i in 0..<1500 {
            let n = Int(g.next() % 12)
            let text = (0..<n).map { _ in pieces[Int(g.next() % UInt64(pieces.count))] }.joined()
            let format = i % 2 == 0 ? "csv" : "json"
            let r = s.run(["import", "-", "--format", format, "--dry-run"], stdin: text)
            XCTAssertTrue([.success, .failure].contains(r.code), "\(text.debugDescription) → \(r)")
            if r.code == .failure { XCTAssertTrue(r.err.hasPrefix("error: "), r.err) }
            XCTAssertEqual(s.storeBytes, before)
            for exchange in Exchange.allCases where i % 10 == 0 {
                _ = try? ExchangeImport.rows(Array(text.utf8), exchange: exchange)
            }
        }
    }

    func testMalformedStoreFilesAreRefusedNotTrapped() throws {
        let fixture = URL(fileURLWithPath: "\(#filePath)").deletingLastPathComponent()
            .appendingPathComponent("../PortfolioCoreTests/Fixtures/portfolio-v1.json").standardized
        let good = try XCTUnwrap(FileManager.default.contents(atPath: fixture.path))
        var g = SplitMix(seed: 99)
        for _ in 0..<2000 {
            var bytes = Array(good)
            for _ in 0..<Int(g.next() % 4 + 1) {
                let at = Int(g.next() % UInt64(bytes.count))
                switch g.next() % 3 {
                case 0: bytes[at] = UInt8(truncatingIfNeeded: g.next())
                case 1: bytes.remove(at: at)
                default: bytes = Array(bytes.prefix(at))
                }
                if bytes.isEmpty { break }
            }
            do {
                _ = try PortfolioCodec.decode(bytes, path: "fuzz")
            } catch {
                XCTAssertFalse(error.description.isEmpty)
            }
        }
    }

    func testServerBodiesNeverTrap() throws {
        var g = SplitMix(seed: 5)
        let pieces = ["{", "}", "\"bitcoin\":", "{\"usd\":", "67187.33", "8.45e-06", "1e400", "null", "[]", "\"x\"", ",", "-",
                      "\"usd_24h_change\":", "\"last_updated_at\":", "1711356300", "true", "<html>", "\u{0}", "9999999999999999999999999999999999999999999"]
        for _ in 0..<2000 {
            let body = (0..<Int(g.next() % 10)).map { _ in pieces[Int(g.next() % UInt64(pieces.count))] }.joined()
            let status = [200, 200, 200, 429, 500, 401, 400, 404][Int(g.next() % 8)]
            let client = CoinGeckoClient(
                config: PriceServiceConfig(environment: ["BITPAL_API_URL": "http://127.0.0.1:9/api/v3"]),
                transport: StubTransport(response: HTTPResponse(status: status, headers: ["retry-after": "abc"], body: Data(body.utf8))),
                sleep: { _ in })
            do {
                let result = try client.prices(for: ["bitcoin", "ethereum"], now: Date(timeIntervalSince1970: 0))
                for q in result.quotes { XCTAssertGreaterThan(q.price, 0) }
            } catch {
                XCTAssertFalse(error.description.isEmpty)
            }
        }
    }
}

extension FuzzTests {
    /// Well-shaped price replies with hostile numbers go all the way: through the client into the
    /// cache, read back, and out through every formatter (tables and JSON). Nothing traps, every
    /// command succeeds, and the cache stays readable.
    func testHostileNumbersReachTheCacheAndTheFormattersSafely() throws {
        var g = SplitMix(seed: 11)
        let numbers = ["67187.33", "8.45e-06", "1e400", "-1e400", "1e-400", "1e12", "1e20", "-1", "0", "0.0", "1E+2",
                       "123456789012345678901234567890123456789012", "0.000000000000000000000000000001", "1e-30", "1e15",
                       "999999999999999.999999999999999999", "-0", "2.5e-31", "-12.5", "1e308", "4.9e-324", "17e-1"]
        var priced = 0
        for round in 0..<60 {
            func pick() -> String { numbers[Int(g.next() % UInt64(numbers.count))] }
            let body = #"{"bitcoin": {"usd": \#(pick()), "usd_24h_change": \#(pick()), "usd_market_cap": \#(pick()), "#
                + #""last_updated_at": \#(pick())}, "ethereum": {"usd": \#(pick()), "last_updated_at": \#(pick())}}"#
            let s = Sandbox(offline: false)
            s.variables["BITPAL_API_URL"] = "http://127.0.0.1:9/api/v3"
            s.ok(["--offline", "add", "buy", "btc", "1", "30000", "--date", "2024-01-01"])
            s.ok(["--offline", "watch", "add", "eth"])
            s.transport = StubTransport(response: HTTPResponse(status: 200, headers: [:], body: Data(body.utf8)))
            for args in [["price", "refresh"], ["holdings"], ["holdings", "--json"], ["summary", "--json"], ["price", "list"],
                         ["price", "--json"], ["watch"], ["widget", "--size", "large", "--json"], ["check"]] {
                let r = s.run(args)
                XCTAssertEqual(r.code, .success, "round \(round) \(args) with \(body): \(r)")
                XCTAssertFalse(r.out.contains("e+") || r.out.contains("e-") || r.out.contains("NaN"), "round \(round) \(args): \(r.out)")
                if args == ["holdings", "--json"] && r.out.contains(#""currentPrice": ""#) { priced += 1 }
            }
        }
        XCTAssertGreaterThan(priced, 5, "the replies should reach the cache in some rounds")
    }
}

/// Answers every request with the same response.
struct StubTransport: HTTPTransport {
    var response: HTTPResponse
    func send(_ request: HTTPRequest) throws(TransportError) -> HTTPResponse { response }
}

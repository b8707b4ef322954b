import BitpalCLI
import Foundation
import PortfolioCore
import XCTest

/// `history` and `performance` through the CLI: worked example M, periods, partial rows, cash
/// portfolios, the chart's fit, and no network beyond the reports' 60-second rule.
final class PerformanceCLITests: XCTestCase {
    /// Worked example M of history-performance.md, recorded as a user would.
    func exampleM(now: String = "2025-01-15T12:00:00Z") -> Sandbox {
        let s = Sandbox(now: now)
        s.ok(["add", "buy", "btc", "1", "40000", "--date", "2024-01-01"])
        s.ok(["add", "buy", "btc", "1", "50000", "--date", "2024-07-01"])
        for (day, price) in [("2024-01-01", "40000"), ("2024-06-30", "45000"), ("2024-07-01", "50000"), ("2024-12-31", "60000")] {
            s.ok(["price", "set", "btc", price, "--date", day])
        }
        return s
    }

    func json(_ s: Sandbox, _ args: [String], file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        let r = s.ok(["--json"] + args, file: file, line: line)
        return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any], r.out, file: file, line: line)
    }

    /// A percentage string of the JSON as a number, within 0.01 points of `expected`.
    func assertPercent(_ value: Any?, _ expected: Double, file: StaticString = #filePath, line: UInt = #line) {
        guard let text = value as? String, let v = Double(text) else { return XCTFail("not a percentage string: \(String(describing: value))", file: file, line: line) }
        XCTAssertEqual(text.split(separator: ".").last?.count, 4, "4 decimals: \(text)", file: file, line: line)
        XCTAssertEqual(v, expected, accuracy: 0.01, file: file, line: line)
    }

    func testExampleMToTheCentAndTheBasisPoint() throws {
        let s = exampleM()
        let p = try json(s, ["performance", "--period", "2024"])
        XCTAssertEqual(p.keys.sorted(), ["days", "endValue", "flows", "gain", "irr", "movedAtMarketValue", "netFlows", "since", "startValue",
                                         "summaryTotalPnL", "twr", "twrAnnualized", "until"])
        XCTAssertEqual(p["since"] as? String, "2024-01-01")
        XCTAssertEqual(p["until"] as? String, "2024-12-31")
        XCTAssertEqual(p["days"] as? Int, 366)
        XCTAssertEqual(p["startValue"] as? String, "0.00")
        XCTAssertEqual(p["endValue"] as? String, "120000.00")
        XCTAssertEqual(p["netFlows"] as? String, "90000.00")
        XCTAssertEqual(p["gain"] as? String, "30000.00")
        assertPercent(p["twr"], 42.1053)
        XCTAssertTrue(p["twrAnnualized"] is NSNull)
        assertPercent(p["irr"], 47.69)
        let flows = try XCTUnwrap(p["flows"] as? [[String: Any]])
        XCTAssertEqual(flows.map { $0.keys.sorted() }, [["amount", "date", "kind", "transactionId"], ["amount", "date", "kind", "transactionId"]])
        XCTAssertEqual(flows.map { $0["amount"] as? String }, ["40000.00", "50000.00"])
        XCTAssertEqual(flows.map { $0["date"] as? String }, ["2024-01-01", "2024-07-01"])
        XCTAssertEqual(flows.map { $0["kind"] as? String }, ["buy", "buy"])
        let ids = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.ok(["--json", "list"]).out.utf8)) as? [[String: Any]])
        XCTAssertEqual(Set(flows.compactMap { $0["transactionId"] as? String }), Set(ids.compactMap { $0["id"] as? String }))

        let text = s.ok(["performance", "--period", "2024", "--flows"])
        XCTAssertEqual(text.err, "")
        XCTAssertTrue(text.out.hasPrefix("Performance of 'main' from 2024-01-01 to 2024-12-31 (366 days), in USD:\n"), text.out)
        for line in ["Start value        $0.00  at the end of 2023-12-31", "End value    $120,000.00  at the end of 2024-12-31",
                     "Gain         +$30,000.00  end − start − net flows", "TWR              +42.11%", "IRR              +47.69%"] {
            XCTAssertTrue(text.out.contains(line), "\(line)\n\(text.out)")
        }
        XCTAssertTrue(text.out.contains("2024-07-01  buy   \(String((flows[1]["transactionId"] as? String ?? "").prefix(8)))  BTC    +$50,000.00"), text.out)
    }

    func testHistoryRowsOfExampleM() throws {
        let s = exampleM()
        let h = try json(s, ["history"])
        XCTAssertEqual(h.keys.sorted(), ["currency", "interval", "rows"])
        XCTAssertEqual(h["interval"] as? String, "month")
        XCTAssertEqual(h["currency"] as? String, "USD")
        let rows = try XCTUnwrap(h["rows"] as? [[String: Any]])
        XCTAssertEqual(rows.first?.keys.sorted(), ["cash", "date", "holdingsValue", "netInvested", "partial", "pnl", "totalValue"])
        XCTAssertEqual(rows.map { $0["date"] as? String }.last, "2025-01-15", "the last row is today")
        XCTAssertEqual(rows.count, 13)
        let june = try XCTUnwrap(rows.first { $0["date"] as? String == "2024-06-30" })
        XCTAssertEqual(june["totalValue"] as? String, "45000.00")
        XCTAssertEqual(june["netInvested"] as? String, "40000.00")
        XCTAssertEqual(june["pnl"] as? String, "5000.00")
        XCTAssertTrue(june["cash"] is NSNull, "no cash tracked")
        XCTAssertEqual(june["partial"] as? Bool, false)
        // Weeks end on Sunday; net invested counts the flows before --since.
        let weeks = try XCTUnwrap(try json(s, ["history", "--interval", "week", "--since", "2024-07-02", "--until", "2024-07-20"])["rows"] as? [[String: Any]])
        XCTAssertEqual(weeks.map { $0["date"] as? String }, ["2024-07-07", "2024-07-14", "2024-07-20"])
        XCTAssertEqual(weeks.map { $0["netInvested"] as? String }, ["90000.00", "90000.00", "90000.00"])
        // The table: one line a row, columns aligned on the right.
        let table = s.ok(["history", "--since", "2024-05-01", "--until", "2024-08-01"]).out
        XCTAssertEqual(table, """
        DATE           HOLDINGS  TOTAL VALUE  NET INVESTED          P&L
        2024-05-31   $40,000.00   $40,000.00    $40,000.00        $0.00
        2024-06-30   $45,000.00   $45,000.00    $40,000.00   +$5,000.00
        2024-07-31  $100,000.00  $100,000.00    $90,000.00  +$10,000.00
        2024-08-01  $100,000.00  $100,000.00    $90,000.00  +$10,000.00

        """)
    }

    func testPartialRowsAreMarked() throws {
        let s = Sandbox(now: "2024-01-05T12:00:00Z")
        s.ok(["add", "buy", "btc", "1", "100", "--date", "2024-01-01"])
        s.ok(["add", "buy", "eth", "2", "10", "--date", "2024-01-02"])
        s.ok(["price", "set", "btc", "100", "--date", "2024-01-01"])
        s.ok(["price", "set", "eth", "11", "--date", "2024-01-04"])
        let rows = try XCTUnwrap(try json(s, ["history", "--interval", "day"])["rows"] as? [[String: Any]])
        XCTAssertEqual(rows.map { $0["partial"] as? Bool }, [false, true, true, false, false])
        let text = s.ok(["history", "--interval", "day"]).out
        let lines = text.split(separator: "\n")
        XCTAssertTrue(lines[2].hasSuffix("partial") && lines[3].hasSuffix("partial") && !lines[1].hasSuffix("partial"), text)
        XCTAssertTrue(text.contains("partial: 2 rows leave out a holding with no price on that day (ETH (Ethereum))"), text)
        let perf = s.ok(["performance"])
        XCTAssertTrue(perf.err.hasPrefix("warning: 2 days of the period left out something held for want of a price or rate (ETH (Ethereum))"), perf.err)
    }

    func testPeriods() throws {
        let s = exampleM(now: "2025-06-01T12:00:00Z")
        func span(_ args: [String]) throws -> String {
            let p = try json(s, ["performance"] + args)
            return "\(p["since"] as? String ?? "?") \(p["until"] as? String ?? "?") \(p["days"] as? Int ?? -1)"
        }
        XCTAssertEqual(try span([]), "2024-01-01 2025-06-01 518")
        XCTAssertEqual(try span(["--period", "max"]), "2024-01-01 2025-06-01 518")
        XCTAssertEqual(try span(["--period", "ytd"]), "2025-01-01 2025-06-01 152")
        XCTAssertEqual(try span(["--period", "1y"]), "2024-06-02 2025-06-01 365")
        XCTAssertEqual(try span(["--period", "3Y"]), "2022-06-02 2025-06-01 1096")
        XCTAssertEqual(try span(["--period", "2024"]), "2024-01-01 2024-12-31 366")
        XCTAssertEqual(try span(["--period", "2025"]), "2025-01-01 2025-06-01 152")
        XCTAssertEqual(try span(["--since", "2024-07-01", "--until", "2024-12-31"]), "2024-07-01 2024-12-31 184")
        XCTAssertEqual(try span(["--since", "2024-07-01"]), "2024-07-01 2025-06-01 336")
        XCTAssertEqual(try span(["--until", "2024-06-30"]), "2024-01-01 2024-06-30 182")
        // Over more than 366 days, TWR is also given a year.
        let max = try json(s, ["performance"])
        let twr = try XCTUnwrap(Double(max["twr"] as? String ?? ""))
        assertPercent(max["twrAnnualized"], (pow(1 + twr / 100, 365.0 / 518) - 1) * 100)
        // From the second half: V_start is the value at the end of June 30 (45000).
        let half = try json(s, ["performance", "--since", "2024-07-01", "--until", "2024-12-31"])
        XCTAssertEqual(half["startValue"] as? String, "45000.00")
        XCTAssertEqual(half["gain"] as? String, "25000.00")
        assertPercent(half["twr"], (100_000.0 / 95_000 * 1.2 - 1) * 100)

        XCTAssertEqual(s.run(["performance", "--period", "2030"]).code, .failure)
        XCTAssertTrue(s.run(["performance", "--period", "2030"]).err.hasPrefix("error: The period starts on 2030-01-01, after today (2025-06-01)"))
        for bad in [["--period", "lastyear"], ["--period", "0y"], ["--period", "1899"], ["--period", "2024", "--since", "2024-01-01"],
                    ["--since", "2024-05-01", "--until", "2024-04-01"], ["--since", "soon"]] {
            let r = s.run(["performance"] + bad)
            XCTAssertEqual(r.code, .usage, "\(bad): \(r)")
            XCTAssertTrue(r.err.hasPrefix("error: "), "\(bad): \(r.err)")
        }
        XCTAssertEqual(s.run(["history", "--interval", "year"]).code, .usage)
        XCTAssertEqual(s.run(["history", "--ascii"]).code, .usage)
        XCTAssertEqual(s.run(["--json", "history", "--chart"]).code, .usage)
    }

    func testACashPortfolioFlows() throws {
        let s = Sandbox(now: "2024-06-01T12:00:00Z")
        s.ok(["portfolio", "add", "brokerage", "--cash"])
        s.ok(["portfolio", "default", "brokerage"])
        s.ok(["asset", "add", "AAPL", "--name", "Apple Inc.", "--type", "stock"])
        s.ok(["cash", "deposit", "10000", "--initial", "--date", "2024-01-01"])
        s.ok(["add", "buy", "AAPL", "10", "180", "--fee", "1", "--date", "2024-01-02"])
        s.ok(["add", "dividend", "AAPL", "2.40", "--fee", "0.36", "--date", "2024-02-15"])
        s.ok(["cash", "withdraw", "1000", "--date", "2024-03-01"])
        s.ok(["cash", "interest", "12.50", "--date", "2024-03-02"])
        s.ok(["add", "buy", "AAPL", "40", "170", "--date", "2024-04-01"])
        s.ok(["add", "sell", "AAPL", "20", "190", "--fee", "1", "--date", "2024-05-01"])
        s.ok(["price", "set", "AAPL", "200", "--date", "2024-05-31"])
        let p = try json(s, ["performance"])
        let flows = try XCTUnwrap(p["flows"] as? [[String: Any]])
        XCTAssertEqual(flows.map { $0["kind"] as? String }, ["deposit", "withdrawal"], "trades and income stay inside")
        XCTAssertEqual(flows.map { $0["amount"] as? String }, ["10000.00", "-1000.00"])
        XCTAssertEqual(p["endValue"] as? String, "10212.54", "worked example H's total value")
        XCTAssertEqual(p["gain"] as? String, "1212.54", "= total P&L of example H")
        let rows = try XCTUnwrap(try json(s, ["history"])["rows"] as? [[String: Any]])
        XCTAssertEqual(rows.last?["cash"] as? String, "4212.54")
        XCTAssertEqual(rows.last?["netInvested"] as? String, "9000.00")
        XCTAssertEqual(rows.last?["pnl"] as? String, "1212.54")
        let header = s.ok(["history"]).out.split(separator: "\n").first ?? ""
        XCTAssertTrue(header.contains("HOLDINGS") && header.contains("CASH  TOTAL VALUE"), "a CASH column: \(header)")
    }

    func testQuotesFromThePriceCacheHistory() throws {
        let s = Sandbox(now: "2024-01-10T12:00:00Z")
        s.ok(["add", "buy", "btc", "2", "100", "--date", "2024-01-01"])
        let quotes = (1...9).map { d in
            Quote(coinId: "bitcoin", price: Decimal(100 + d), time: ISODate.startOfDay((2024, 1, Int64(d)), in: TimeZone(identifier: "UTC")!),
                  source: .coingecko)
        }
        try PriceCache(directory: s.dir).append(quotes)
        let rows = try XCTUnwrap(try json(s, ["history", "--interval", "day"])["rows"] as? [[String: Any]])
        XCTAssertEqual(rows.map { $0["totalValue"] as? String }, ["202.00", "204.00", "206.00", "208.00", "210.00", "212.00", "214.00",
                                                                  "216.00", "218.00", "218.00"])
    }

    func testChartFitsTheTerminalAndASCIIIsASCII() throws {
        let s = exampleM()
        for columns in [40, 64, 80, 100, 157] {
            s.variables["COLUMNS"] = String(columns)
            for ascii in [false, true] {
                let r = s.ok(["history", "--chart"] + (ascii ? ["--ascii"] : []))
                let lines = r.out.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
                XCTAssertGreaterThan(lines.count, 12)
                for line in lines { XCTAssertLessThanOrEqual(line.count, columns, "\(columns) ascii \(ascii): '\(line)'") }
                XCTAssertTrue(lines.contains { $0.count >= columns - 2 }, "the chart uses the width (\(columns)):\n\(r.out)")
                if ascii {
                    XCTAssertTrue(r.out.unicodeScalars.allSatisfy(\.isASCII), r.out)
                    XCTAssertTrue(r.out.contains("*") && r.out.contains("* total value   - net invested"), r.out)
                } else {
                    XCTAssertTrue(r.out.unicodeScalars.contains { (0x2801...0x28FF).contains($0.value) }, "braille dots:\n\(r.out)")
                    XCTAssertTrue(r.out.contains("─ net invested"), r.out)
                }
                XCTAssertTrue(r.out.contains("$120k") && r.out.contains("$40k"), "money on the y axis:\n\(r.out)")
                XCTAssertTrue(r.out.contains("2024-01-01") && r.out.contains("2025-01-15"), "dates on the x axis:\n\(r.out)")
            }
        }
        s.variables["COLUMNS"] = nil
        XCTAssertLessThanOrEqual(s.ok(["history", "--chart"]).out.split(separator: "\n").map(\.count).max() ?? 0, 80, "80 without COLUMNS")
        XCTAssertTrue(s.ok(["history", "--chart"]).out.hasPrefix("Value of 'main' in USD, daily, 2024-01-01 to 2025-01-15\n"))
    }

    func testNoNetworkWhileTheNewestQuoteIsFresh() throws {
        let s = Sandbox(now: "2024-06-01T12:00:00Z", offline: false)
        let calls = CountingTransport()
        s.transport = calls
        s.ok(["--offline", "add", "buy", "btc", "1", "100", "--date", "2024-01-01"])
        s.ok(["--offline", "price", "set", "btc", "120"])  // now: fresh for 60 seconds
        s.ok(["history"])
        s.ok(["performance"])
        XCTAssertEqual(calls.count, 0)
        s.now = s.now.addingTimeInterval(600)
        let r = s.run(["performance"])
        XCTAssertEqual(r.code, .success, "\(r)")
        XCTAssertGreaterThan(calls.count, 0, "an old quote is refreshed, as holdings does")
        XCTAssertTrue(r.err.contains("warning: could not refresh prices"), r.err)
        let before = calls.count
        s.variables["BITPAL_OFFLINE"] = "1"
        s.now = s.now.addingTimeInterval(600)
        s.ok(["history"])
        XCTAssertEqual(calls.count, before, "never offline")
    }

    func testHelpAndNothingYet() throws {
        let s = Sandbox()
        XCTAssertTrue(s.ok(["help", "performance"]).out.contains("bitpal performance --period ytd"))
        XCTAssertTrue(s.ok(["history", "--help"]).out.contains("--interval"))
        XCTAssertTrue(s.ok(["help"]).out.contains("history"))
        XCTAssertEqual(s.ok(["history"]).out, "No transactions yet in 'main': record one with 'bitpal add buy bitcoin 0.5 42000'.\n")
        let p = try json(s, ["performance"])
        XCTAssertEqual(p["days"] as? Int, 1)
        XCTAssertEqual(p["irr"] as? String, "0.0000")
    }

    // MARK: Found by an independent review

    /// A holding never priced in the period is left out of every day; it does not turn the TWR into one
    /// whole-period return (the chain of daily returns goes on).
    func testANeverPricedHoldingDoesNotFlattenTheTWR() throws {
        let s = Sandbox(now: "2025-02-01T12:00:00Z")
        s.ok(["asset", "add", "AAA", "--name", "A", "--type", "stock"])
        for (day, price) in [("2025-01-01", "100"), ("2025-01-10", "200"), ("2025-01-11", "50"), ("2025-01-20", "100")] {
            s.ok(["price", "set", "AAA", price, "--date", day])
        }
        s.ok(["add", "buy", "AAA", "1", "100", "--date", "2025-01-01"])
        s.ok(["add", "sell", "AAA", "1", "200", "--date", "2025-01-10"])
        s.ok(["add", "buy", "AAA", "1", "50", "--date", "2025-01-11"])
        func twr() throws -> String? {
            let r = s.run(["performance", "--since", "2025-01-01", "--until", "2025-01-31", "--json"])
            return (try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])?["twr"] as? String
        }
        XCTAssertEqual(try twr(), "300.0000")
        s.ok(["asset", "add", "FLAT", "--name", "Flat", "--type", "real-estate"])
        s.ok(["add", "transfer-in", "FLAT", "1", "1", "--date", "2025-01-01"])  // no trade: no price to infer
        // Day 1: 100 ÷ (0 + 101) − 1, then ×2 (to 200, sold), ×2 (50 to 100): 400/101 − 1 = 296.0396%.
        XCTAssertEqual(try twr(), "296.0396")
        let r = s.run(["performance", "--since", "2025-01-01", "--until", "2025-01-31"])
        XCTAssertTrue(r.err.hasPrefix("warning: 31 days of the period left out something held"), r.err)
    }

    /// A flat line, a huge COLUMNS, an --until before 1970 or before the first transaction: each answers.
    func testEdgesOfTheChartAndThePeriod() throws {
        let s = Sandbox()
        s.ok(["asset", "add", "TOK", "--name", "Tok", "--type", "other"])
        s.ok(["add", "buy", "TOK", "330000", "--total", "1000", "--date", "2024-05-01"])
        s.ok(["price", "set", "TOK", "0.00303030303030303", "--date", "2024-05-01"])
        XCTAssertTrue(s.ok(["history", "--chart"]).out.hasPrefix("Value of 'main' in USD, daily"))
        s.variables["COLUMNS"] = "99999999999"
        let wide = s.ok(["history", "--chart"]).out
        XCTAssertLessThanOrEqual(wide.split(separator: "\n").map(\.count).max() ?? 0, 1000)
        s.variables["COLUMNS"] = nil
        var r = s.run(["performance", "--until", "2024-04-30"])
        XCTAssertEqual(r.code, .failure)
        XCTAssertTrue(r.err.hasPrefix("error: The period ends on 2024-04-30, before it starts on 2024-05-01"), r.err)
        let old = Sandbox()
        old.ok(["price", "set", "btc", "112", "--date", "1960-12-31"])
        old.ok(["price", "set", "btc", "50", "--date", "1961-01-01"])
        old.ok(["add", "buy", "btc", "1", "100", "--date", "1960-01-01"])
        r = old.ok(["performance", "--since", "1960-01-01", "--until", "1960-12-31", "--json"])
        XCTAssertTrue(r.out.contains("\"until\": \"1960-12-31\""), r.out)
        XCTAssertTrue(r.out.contains("\"endValue\": \"112.00\""), r.out)
    }

    /// `--currency` shows every portfolio in one currency, as `summary --all --currency` does.
    func testCurrencyOption() throws {
        let s = Sandbox()
        s.ok(["add", "buy", "btc", "1", "100", "--date", "2024-05-01"])
        s.ok(["price", "set", "btc", "110", "--date", "2024-05-02"])
        s.ok(["fx", "set", "USD", "EUR", "0.9", "--date", "2024-04-01"])
        let r = s.ok(["performance", "--all", "--currency", "EUR", "--json"])
        XCTAssertTrue(r.out.contains("\"endValue\": \"99.00\""), r.out)
        XCTAssertEqual(s.run(["history", "--currency", "XYZ"]).code, .failure)  // as summary --currency XYZ
    }
}

/// Counts requests and answers each with a server error (so a refresh fails, as offline reports expect).
final class CountingTransport: HTTPTransport, @unchecked Sendable {
    private let lock = NSLock()
    private var calls = 0
    var count: Int { lock.withLock { calls } }

    func send(_ request: HTTPRequest) throws(TransportError) -> HTTPResponse {
        lock.withLock { calls += 1 }
        return HTTPResponse(status: 500, headers: [:], body: Data())
    }
}

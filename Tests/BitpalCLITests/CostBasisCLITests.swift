import BitpalCLI
import Foundation
import PortfolioCore
import XCTest

/// Worked example J through the CLI: methods, gains, compare, explain and holdings --lots.
final class CostBasisCLITests: XCTestCase {
    func exampleJ(method: String? = nil) -> Sandbox {
        let s = Sandbox()
        if let method { s.ok(["portfolio", "edit", "main", "--method", method]) }
        s.ok(["add", "buy", "btc", "1", "30000", "--date", "2024-01-01"])
        s.ok(["add", "buy", "btc", "1", "50000", "--date", "2024-02-01"])
        s.ok(["add", "buy", "btc", "1", "40000", "--date", "2024-03-01"])
        s.ok(["add", "sell", "btc", "1.5", "60000", "--date", "2024-04-01"])
        s.ok(["price", "set", "btc", "70000", "--date", "2024-05-01"])
        return s
    }

    func json(_ s: Sandbox, _ args: [String]) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.ok(["--json"] + args).out.utf8)) as? [String: Any])
    }

    func ids(_ s: Sandbox) throws -> [String] {
        let list = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.ok(["--json", "list"]).out.utf8)) as? [[String: Any]])
        return list.sorted { ($0["date"] as? String ?? "") < ($1["date"] as? String ?? "") }.compactMap { $0["id"] as? String }
    }

    func testCompareShowsExampleJSideBySide() throws {
        let s = exampleJ()
        let c = try json(s, ["compare"])
        XCTAssertEqual(c["since"] as? NSNull, NSNull())
        let methods = try XCTUnwrap(c["methods"] as? [[String: Any]])
        XCTAssertEqual(methods.map { $0["method"] as? String }, ["average", "fifo", "lifo", "hifo"])
        XCTAssertEqual(methods.map { $0["realized"] as? String }, ["30000.00", "35000.00", "25000.00", "20000.00"])
        XCTAssertEqual(methods.map { $0["openBasis"] as? String }, ["60000.00", "65000.00", "55000.00", "50000.00"])
        XCTAssertEqual(methods.map { $0["unrealized"] as? String }, ["45000.00", "40000.00", "50000.00", "55000.00"])
        XCTAssertEqual(methods.map { $0["current"] as? Bool }, [true, false, false, false])
        XCTAssertEqual(methods[0]["shortTerm"] as? NSNull, NSNull(), "no terms under average")
        XCTAssertEqual(methods[1]["shortTerm"] as? String, "35000.00")
        XCTAssertEqual(methods[1]["longTerm"] as? String, "0.00")
        let before = s.storeBytes
        let text = s.ok(["compare"]).out
        XCTAssertEqual(s.storeBytes, before, "compare writes nothing")
        XCTAssertTrue(text.contains("average *  +$30,000.00"), text)
        XCTAssertEqual(text.components(separatedBy: "+$75,000.00").count - 1, 4, "realized + unrealized is the same under every method:\n\(text)")
        let year = try json(s, ["compare", "--year", "2024"])
        XCTAssertEqual(year["since"] as? String, "2024-01-01")
        XCTAssertEqual(year["until"] as? String, "2024-12-31")
    }

    func testGainsUnderFIFOWithTheSaleOf2025() throws {
        let s = exampleJ(method: "FIFO")
        s.now = ISODate.parseTimestamp(utf8: "2025-06-01T12:00:00Z".utf8) ?? s.now
        s.ok(["add", "sell", "btc", "1", "80000", "--date", "2025-04-02"])
        let ids = try ids(s)
        let g = try json(s, ["gains"])
        let rows = try XCTUnwrap(g["rows"] as? [[String: Any]])
        guard rows.count == 2 else { return XCTFail("\(rows)") }
        XCTAssertEqual(rows.map { $0["gain"] as? String }, ["35000.00", "35000.00"])
        XCTAssertEqual(rows.map { $0["term"] as? String }, ["short", "long"])
        XCTAssertEqual(rows.map { $0["basis"] as? String }, ["55000.00", "45000.00"])
        XCTAssertEqual(rows.map { $0["proceeds"] as? String }, ["90000.00", "80000.00"])
        let lots = try XCTUnwrap(rows[1]["lots"] as? [[String: Any]])
        XCTAssertEqual(lots.map { $0["transactionId"] as? String }, [ids[1], ids[2]])
        XCTAssertEqual(lots.map { $0["acquiredDate"] as? String }, ["2024-02-01", "2024-03-01"])
        XCTAssertEqual(lots.map { $0["basis"] as? String }, ["25000.00", "20000.00"])
        XCTAssertEqual(lots.map { $0["quantity"] as? String }, ["0.5", "0.5"])
        let totals = try XCTUnwrap(g["totals"] as? [[String: Any]])
        XCTAssertEqual(totals.map { $0["year"] as? Int }, [2024, 2025])
        XCTAssertEqual(totals.map { $0["shortTerm"] as? String }, ["35000.00", "0.00"])
        XCTAssertEqual(totals.map { $0["longTerm"] as? String }, ["0.00", "35000.00"])
        let only = try json(s, ["gains", "--year", "2025"])
        XCTAssertEqual((only["rows"] as? [Any])?.count, 1)
        let text = s.ok(["gains"]).out
        XCTAssertTrue(text.contains("2025   +$35,000.00        $0.00  +$35,000.00"), text)
        XCTAssertTrue(text.contains("TOTAL  +$70,000.00  +$35,000.00  +$35,000.00"), text)
        XCTAssertEqual(s.ok(["gains", "--year", "2023"]).out,
                       "No realized gains or losses in 2023: they come from sells, swaps, network fees and losses.\n")
    }

    func testExplainASaleAndABuy() throws {
        let s = exampleJ(method: "hifo")
        let ids = try ids(s)
        let sale = try json(s, ["explain", String(ids[3].prefix(8))])
        XCTAssertEqual(sale["method"] as? String, "hifo")
        XCTAssertEqual(sale["basis"] as? String, "70000.00")
        XCTAssertEqual(sale["gain"] as? String, "20000.00")
        XCTAssertEqual(sale["pool"] as? NSNull, NSNull())
        let lots = try XCTUnwrap(sale["lots"] as? [[String: Any]])
        XCTAssertEqual(lots.map { $0["transactionId"] as? String }, [ids[1], ids[2]])
        XCTAssertEqual(lots.map { $0["unitCost"] as? String }, ["50000", "40000"])
        XCTAssertEqual(lots.map { $0["term"] as? String }, ["short", "short"])
        let text = s.ok(["explain", String(ids[3].prefix(6))]).out
        XCTAssertTrue(text.contains("  basis        $50,000.00 + $20,000.00 = $70,000.00"), text)
        XCTAssertTrue(text.contains("  gain         $90,000.00 − $70,000.00 = +$20,000.00"), text)
        let buy = try json(s, ["explain", ids[2]])
        XCTAssertEqual((buy["lot"] as? [String: Any])?["basis"] as? String, "40000.00")
        XCTAssertEqual((buy["remaining"] as? [String: Any])?["quantity"] as? String, "0.5")
        XCTAssertEqual((buy["remaining"] as? [String: Any])?["basis"] as? String, "20000.00")
        // Under average: the pool.
        s.ok(["portfolio", "edit", "main", "--method", "average"])
        let pooled = try json(s, ["explain", ids[3]])
        XCTAssertEqual((pooled["pool"] as? [String: Any])?["quantity"] as? String, "3")
        XCTAssertEqual((pooled["pool"] as? [String: Any])?["basis"] as? String, "120000.00")
        XCTAssertEqual(pooled["basis"] as? String, "60000.00")
        XCTAssertTrue(s.ok(["explain", ids[3]]).out.contains("  basis        $120,000.00 × 1.5 ÷ 3 = $60,000.00"))
        let unknown = s.run(["explain", "ffffffff"])
        XCTAssertEqual(unknown.code, .failure)
    }

    func testHoldingsLots() throws {
        let s = exampleJ(method: "lifo")
        let ids = try ids(s)
        let h = try json(s, ["holdings", "--lots"])
        let holding = try XCTUnwrap((h["holdings"] as? [[String: Any]])?.first)
        let lots = try XCTUnwrap(holding["lots"] as? [[String: Any]])
        XCTAssertEqual(lots.map { $0["transactionId"] as? String }, [ids[0], ids[1]])
        XCTAssertEqual(lots.map { $0["quantity"] as? String }, ["1", "0.5"])
        XCTAssertEqual(lots.map { $0["unitCost"] as? String }, ["30000", "50000"])
        XCTAssertEqual(lots.map { $0["basis"] as? String }, ["30000.00", "25000.00"])
        XCTAssertEqual(lots.map { $0["ageDays"] as? Int }, [152, 121])  // the tests' clock: 2024-06-01
        let text = s.ok(["holdings", "--lots"]).out
        XCTAssertTrue(text.contains("BTC    2024-01-01  152d  short         1  $30,000.00  $30,000.00   $70,000.00  +$40,000.00"), text)
        s.ok(["portfolio", "edit", "main", "--method", "average"])
        let pool = try XCTUnwrap(((try json(s, ["holdings", "--lots"])["holdings"] as? [[String: Any]])?.first?["lots"]) as? [[String: Any]])
        XCTAssertEqual(pool.count, 1)
        XCTAssertEqual(pool[0]["transactionId"] as? NSNull, NSNull())
        XCTAssertEqual(pool[0]["basis"] as? String, "60000.00")
    }

    func testLotsSplitByMovesListInOneOrder() throws {
        let s = Sandbox()
        s.ok(["portfolio", "edit", "main", "--method", "fifo"])
        for name in ["zeta", "alpha"] { s.ok(["portfolio", "add", name, "--method", "fifo"]) }
        s.ok(["add", "buy", "btc", "1", "30000", "--date", "2024-01-01"])
        s.ok(["add", "buy", "btc", "1", "31000", "--date", "2024-01-01"])
        s.ok(["move", "btc", "1.5", "--from", "main", "--to", "zeta", "--date", "2024-02-01"])
        s.ok(["move", "btc", "0.2", "--from", "zeta", "--to", "alpha", "--date", "2024-02-02"])
        // The first lot now lies in alpha and zeta with one date and one recording order: the portfolio decides.
        let first = s.ok(["--json", "holdings", "--all", "--lots"]).out
        for _ in 0..<5 { XCTAssertEqual(s.ok(["--json", "holdings", "--all", "--lots"]).out, first) }
        let text = s.ok(["holdings", "--all", "--lots"]).out
        let rows = text.split(separator: "\n").dropFirst().prefix(4).map { String($0.prefix(9)).trimmingCharacters(in: .whitespaces) }
        XCTAssertEqual(rows, ["alpha", "zeta", "main", "zeta"], text)
    }

    func testMethodOptionsAndTheStoredField() throws {
        let s = Sandbox()
        s.ok(["portfolio", "add", "taxable", "--method", "HIFO"])
        XCTAssertTrue(try String(contentsOfFile: s.dir + "/portfolio.json", encoding: .utf8).contains("\"costBasisMethod\": \"hifo\""))
        let list = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.ok(["--json", "portfolio", "list"]).out.utf8)) as? [[String: Any]])
        XCTAssertEqual(list.map { $0["costBasisMethod"] as? String }, ["average", "hifo"])
        XCTAssertTrue(s.ok(["portfolio", "list"]).out.contains("taxable  USD       hifo"))
        let bad = s.run(["portfolio", "add", "x", "--method", "fifo2"])
        XCTAssertEqual(bad.code, .usage)
        XCTAssertTrue(bad.err.contains("fifo2"), bad.err)
        XCTAssertEqual(s.run(["portfolio", "edit", "main", "--method", "best"]).code, .usage)
        // A hand-edited unknown method: a clear error, the file left alone.
        let path = s.dir + "/portfolio.json"
        let text = try String(contentsOfFile: path, encoding: .utf8).replacingOccurrences(of: "\"hifo\"", with: "\"newest\"")
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let r = s.run(["holdings"])
        XCTAssertNotEqual(r.code, .success)
        XCTAssertTrue(r.err.contains("unknown cost-basis method 'newest'"), r.err)
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), text)
    }

    func testPeriodRefusals() {
        let s = exampleJ()
        XCTAssertEqual(s.run(["gains", "--year", "24"]).code, .usage)
        XCTAssertEqual(s.run(["gains", "--year", "2024", "--since", "2024-01-01"]).code, .usage)
        XCTAssertEqual(s.run(["gains", "--since", "2024-06-01", "--until", "2024-01-01"]).code, .usage)
        XCTAssertEqual(s.run(["compare", "--year", "x"]).code, .usage)
    }
    /// A move brings its lots, with their first acquisitions, into a portfolio of another base and method.
    func testAMoveBringsItsLotsAcrossBases() throws {
        let s = Sandbox()
        s.ok(["portfolio", "edit", "main", "--method", "fifo"])
        s.ok(["portfolio", "add", "eu", "--currency", "EUR", "--method", "hifo"])
        s.ok(["fx", "set", "EUR", "USD", "1.25", "--date", "2024-01-01"])
        s.ok(["add", "buy", "btc", "1", "30000", "--date", "2024-01-01"])
        s.ok(["add", "buy", "btc", "1", "50000", "--date", "2024-02-01"])
        s.ok(["move", "btc", "1.5", "--to", "eu", "--date", "2024-03-01"])
        s.ok(["-p", "eu", "add", "sell", "btc", "0.5", "60000", "--date", "2024-04-01"])
        let ids = try ids(s)
        // A linked record is explained leg by leg, the one named first.
        func explained(_ id: String) throws -> [String: Any] {
            let any = try JSONSerialization.jsonObject(with: Data(s.ok(["--json", "explain", id]).out.utf8))
            return try XCTUnwrap((any as? [[String: Any]])?.first ?? any as? [String: Any])
        }
        let moveIn = try XCTUnwrap(ids.first { id in (try? explained(id))?["type"] as? String == "transfer-in" })
        let e = try explained(moveIn)
        let lots = try XCTUnwrap(e["lots"] as? [[String: Any]])
        XCTAssertEqual(lots.map { $0["transactionId"] as? String }, [ids[0], ids[1]], "the lots of their first acquisitions")
        XCTAssertEqual(lots.map { $0["acquiredDate"] as? String }, ["2024-01-01", "2024-02-01"])
        XCTAssertEqual(lots.map { $0["basis"] as? String }, ["24000.00", "20000.00"], "converted at the move's rate: 1 USD = 0.8 EUR")
        // HIFO in 'eu' sold the dearer lot (0.5 at 40000 EUR a unit): the first lot is what is left.
        XCTAssertEqual((e["remaining"] as? [String: Any])?["quantity"] as? String, "1")
        XCTAssertEqual((e["remaining"] as? [String: Any])?["basis"] as? String, "24000.00")
        let gains = try json(s, ["-p", "eu", "gains"])
        let row = try XCTUnwrap((gains["rows"] as? [[String: Any]])?.first)
        XCTAssertEqual(row["basis"] as? String, "20000.00")
        XCTAssertEqual(row["gain"] as? String, "10000.00")
        XCTAssertEqual((row["lots"] as? [[String: Any]])?.first?["transactionId"] as? String, ids[1])
    }
}

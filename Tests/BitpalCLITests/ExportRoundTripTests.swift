import BitpalCLI
import Foundation
import PortfolioCore
import XCTest

/// The export is the whole book: random books of every kind, link and record go through `export`
/// and `import` into an empty folder, and every report, every listing and `check` come out the same.
final class ExportRoundTripTests: XCTestCase {
    /// Random commands of every kind (many are refused, as a person's would be: that is part of the book's shape).
    static func randomBook(seed: UInt64) -> Sandbox {
        var g = SplitMix64(seed: seed)
        let s = Sandbox()
        s.ok(["portfolio", "edit", "main", "--cash"])
        s.ok(["portfolio", "add", "eu", "--currency", "EUR", "--cash"])
        s.ok(["portfolio", "add", "lots", "--method", g.pick(["fifo", "lifo", "hifo"])])
        s.ok(["asset", "add", "AAPL", "--name", "Apple", "--type", "stock"])
        s.ok(["fx", "set", "EUR", "USD", "1.1", "--date", "2024-01-01"])
        s.ok(["cash", "deposit", "100000", "--date", "2024-01-01"])
        s.ok(["-p", "eu", "cash", "deposit", "50000", "--date", "2024-01-01"])
        let assets = ["btc", "eth", "AAPL"]
        func day() -> String { String(format: "2024-%02d-%02d", 1 + g.below(5), 2 + g.below(27)) }
        func amount() -> String { g.pick(["0.1", "0.5", "1", "2", "3.25"]) }
        func price() -> String { g.pick(["100", "150.5", "2000", "41000", "9.99"]) }
        for _ in 0..<30 {
            let p = g.pick(["main", "eu", "lots"])
            let a = g.pick(assets)
            let command: [String] = switch g.below(14) {
            case 0, 1, 2: ["-p", p, "add", "buy", a, amount(), price(), "--date", day(), "--fee", g.pick(["0", "1.5"])]
            case 3, 4: ["-p", p, "add", "sell", a, amount(), price(), "--date", day()]
            case 5: ["-p", p, "add", "dividend", a, "12.5", "--fee", "1.25", "--date", day()]
            case 6: ["-p", p, "add", "reward", a, "0.01", price(), "--date", day()]
            case 7: ["-p", p, "add", "split", a, g.pick(["2", "1:2"]), "--date", day()]
            case 8: ["-p", p, "move", a, amount(), "--to", g.pick(["main", "eu", "lots"]), "--date", day()]
            case 9: ["-p", p, "add", "swap", a, amount(), g.pick(assets), amount(), "--value", "1000", "--date", day()]
            case 10: ["cash", "exchange", "500", "USD", "EUR", "--rate", "0.9", "--date", day()]
            case 11: ["-p", g.pick(["main", "eu"]), "cash", "transfer", "100", "--to", g.pick(["main", "eu"]), "--date", day()]
            case 12: ["price", "set", a, price(), "--date", day()]
            default: ["-p", p, "add", "adjustment", a, g.pick(["0.5", "-0.1"]), "--date", day()]
            }
            _ = s.run(command)
        }
        s.ok(["target", "set", "crypto=60", "stock=30", "cash=10"])
        s.ok(["plan", "add", "house", "--target", "200000", "--by", "2030-01-01", "--return", "5", "--monthly", "500"])
        // A saving plan run into 'main' (it tracks cash): its deposits linked to its buys.
        s.ok(["price", "set", "btc", "60000", "--date", "2024-05-25"])
        s.ok(["price", "set", "btc", "61000", "--date", "2024-06-01"])
        s.ok(["saving", "add", "weekly", "--asset", "btc", "--amount", "50", "--every", "week", "--start", "2024-05-25"])
        s.ok(["saving", "run"])
        s.ok(["alert", "add", "btc", "above", "70000"])
        s.ok(["watch", "add", "solana"])
        return s
    }

    static let reports: [[String]] = [
        ["holdings", "--all", "--json"], ["summary", "--all", "--json"], ["cash", "--all", "--json"], ["closed", "--all", "--json"],
        ["income", "--all", "--json"], ["gains", "--all", "--json"], ["list", "--all", "--json"], ["-p", "eu", "holdings", "--json"],
        ["-p", "lots", "holdings", "--lots", "--json"], ["allocation", "--json"], ["plan", "list", "--json"], ["saving", "list", "--json"],
        ["alert", "list", "--json"], ["target", "show", "--json"], ["fx", "list", "--json"], ["portfolio", "list", "--json"],
        ["asset", "list", "--json"], ["watch", "list", "--json"], ["check", "--json"],
    ]

    /// A report's output to compare: `check` names the file it read, and records of one instant may list in either
    /// order (the export writes them in date order), so `list` is compared as a set of records.
    static func comparable(_ out: String, _ args: [String], dir: String) -> String {
        let text = out.replacingOccurrences(of: dir, with: "DIR")
        guard args.contains("list"), let data = text.data(using: .utf8),
              let records = try? JSONSerialization.jsonObject(with: data) as? [[String: Any]] else { return text }
        let sorted = records.sorted { ($0["id"] as? String ?? "") < ($1["id"] as? String ?? "") }
        return (try? JSONSerialization.data(withJSONObject: sorted, options: [.sortedKeys])).map { String(decoding: $0, as: UTF8.self) } ?? text
    }

    func testARandomBookSurvivesExportAndImportWhole() throws {
        var links = Set<String>()
        var records = 0
        for seed in UInt64(1)...6 {
            let s = Self.randomBook(seed: seed)
            let book = try s.loadPortfolio()
            records += book.transactions.count
            for (i, t) in book.transactions.enumerated() {
                guard let link = t.linkedId, let j = book.transactions.indices.first(where: { $0 != i && book.transactions[$0].linkedId == link }),
                      let kind = LinkKind.of(t, book.transactions[j]) else { continue }
                links.insert(kind.name)
            }
            let exported = s.dir + "/../bitpal-export-\(UUID().uuidString).json"
            defer { unlink(exported) }
            s.ok(["export", "--all", "--format", "json", "--output", exported])
            let fresh = Sandbox()
            fresh.ok(["import", exported])
            for args in Self.reports {
                let before = s.run(args), after = fresh.run(args)
                XCTAssertEqual(before.code, after.code, "seed \(seed) \(args)")
                XCTAssertEqual(Self.comparable(before.out, args, dir: s.dir), Self.comparable(after.out, args, dir: fresh.dir), "seed \(seed) \(args)")
            }
            // A second import adds nothing.
            let again = fresh.ok(["import", exported]).out
            XCTAssertTrue(again.hasPrefix("Imported 0 transactions"), again)
        }
        // The random books hold every link kind, and enough records to mean something.
        XCTAssertEqual(links, Set(LinkKind.table.map(\.name)))
        XCTAssertGreaterThan(records, 6 * 15)
    }

    /// Every link kind round-trips through CSV too (the transactions alone).
    func testEveryLinkKindRoundTripsThroughCSV() throws {
        let s = Sandbox()
        s.ok(["portfolio", "edit", "main", "--cash"])
        s.ok(["portfolio", "add", "b", "--cash"])
        s.ok(["fx", "set", "EUR", "USD", "1.1", "--date", "2024-01-01"])
        s.ok(["cash", "deposit", "10000", "--date", "2024-01-01"])
        s.ok(["add", "buy", "btc", "1", "1000", "--date", "2024-01-02"])
        s.ok(["add", "swap", "btc", "0.5", "eth", "4", "--value", "600", "--date", "2024-01-03"])
        s.ok(["move", "eth", "1", "--to", "b", "--date", "2024-01-04"])
        s.ok(["cash", "transfer", "100", "--to", "b", "--date", "2024-01-05"])
        s.ok(["cash", "exchange", "500", "USD", "EUR", "--rate", "0.9", "--date", "2024-01-06"])
        s.ok(["price", "set", "btc", "60000", "--date", "2024-05-25"])
        s.ok(["saving", "add", "weekly", "--asset", "btc", "--amount", "50", "--every", "week", "--start", "2024-05-25"])
        s.ok(["saving", "run"])
        XCTAssertEqual(try s.loadPortfolio().transactions.filter { $0.notes?.contains("weekly") ?? false }.compactMap(\.linkedId).count, 4)
        let csv = s.dir + "/../bitpal-export-\(UUID().uuidString).csv"
        defer { unlink(csv) }
        s.ok(["export", "--all", "--output", csv])
        let fresh = Sandbox()
        fresh.ok(["portfolio", "edit", "main", "--cash"])
        fresh.ok(["portfolio", "add", "b", "--cash"])
        fresh.ok(["fx", "set", "EUR", "USD", "1.1", "--date", "2024-01-01"])
        fresh.ok(["price", "set", "btc", "60000", "--date", "2024-05-25"])  // a CSV holds the transactions alone
        fresh.ok(["import", csv])
        for args in [["holdings", "--all", "--json"], ["cash", "--all", "--json"], ["list", "--all", "--json"], ["check"]] {
            XCTAssertEqual(Self.comparable(s.run(args).out, args, dir: s.dir), Self.comparable(fresh.run(args).out, args, dir: fresh.dir), "\(args)")
        }
    }
}

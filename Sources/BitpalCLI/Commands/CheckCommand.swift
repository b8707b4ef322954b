import Foundation
import PortfolioCore

extension Context {
    /// The ledger of the stored history, leaving out (with one warning) the records that break a rule.
    /// Without `replaying`, only the record-by-record rules are checked (for listings) and the ledger is empty.
    @discardableResult
    func checkedLedger(_ book: Book, replaying: Bool = true, cashMovements: Bool = false) throws -> Ledger {
        try session().checkedLedger(book, replaying: replaying, cashMovements: cashMovements, names: names)
    }
}

struct CheckCommand: Command {
    static let spec = CommandSpec(
        name: "check", summary: "Check every file bitpal keeps and name each problem with its line", group: "Other",
        details: """
        Reads portfolio.json, the price cache (prices.json) and the coin list (coins.json) and checks
        the rules a hand edit or a merge can break: a file bitpal cannot read, a duplicated id, a zero
        amount or price, a date in the future, a sell of more than is held. Exit 0 when all is well,
        1 when anything is wrong. While the store breaks a rule, reports leave the records out (with a
        warning) and changes are refused, except a delete or edit that removes a problem: name the
        record by its id or by @LINE ('bitpal delete @12').
        """,
        examples: ["bitpal check", "bitpal check --json"])

    init(parsing a: inout ArgumentList) throws {}

    struct FileReport {
        var path: String
        var summary: String
        var problems: [(line: Int?, rule: String, message: String)]
    }

    func run(_ context: Context) throws -> ExitCode {
        let session = try context.session()
        let store = session.repository.store
        var reports: [FileReport] = []
        var portfolioReport = FileReport(path: store.path, summary: "", problems: [])
        do throws(StoreError) {
            let portfolio = try store.load()
            let problems = portfolio.checked(now: context.now, cashMovements: false).problems
            let lines = problems.isEmpty ? [] : try store.transactionLines()
            let n = portfolio.transactions.count
            portfolioReport.summary = FileManager.default.fileExists(atPath: store.path)
                ? "\(n) transaction\(n == 1 ? "" : "s")" : "not present"
            for p in problems {
                portfolioReport.problems.append((p.index < lines.count ? lines[p.index] : nil, p.rule.rawValue,
                                                 PortfolioStore.describe(p, lines: lines, names: context.names)))
            }
            for p in portfolio.settingProblems() {
                portfolioReport.problems.append((nil, "setting", TextEscaping.escaped(p.description)))
            }
            // Manual prices are written by 'price set', which refuses a future date: one here came from a hand edit.
            for q in portfolio.manualPrices where q.time > context.now {
                portfolioReport.problems.append((nil, "future date", "the manual price of \(context.coinLabel(q.coinId)) "
                    + "is dated \(Human.whenLabelled(q.time, in: context.timeZone)), in the future, so it outranks every "
                    + "newer quote (fix its date in portfolio.json, or remove that entry)"))
            }
        } catch {
            portfolioReport.problems.append((Self.line(of: error), "unreadable", error.description))
        }
        reports.append(portfolioReport)
        let cache = session.prices.priceCache
        // Read a piece at a time: a cache of decades of daily prices is hundreds of megabytes.
        var outOfOrder: Int?
        var cacheReport = Self.readable(cache.path) {
            guard let verified = try cache.verify() else { return nil }
            outOfOrder = verified.outOfOrderLine
            return "\(verified.quotes) quotes"
        }
        if let line = outOfOrder {
            cacheReport.problems.append((line, "order", "line \(line): a quote out of the order the file declares (by asset, currency and "
                + "time), so reports of value over time may miss quotes; the next 'price import', 'price refresh' or 'fx refresh' "
                + "writes the file in order again"))
        }
        reports.append(cacheReport)
        let coins = session.resolver.catalogCache
        reports.append(Self.readable(coins.path) { try coins.load().map { "\($0.coins.count) coins" } })

        let total = reports.reduce(0) { $0 + $1.problems.count }
        if context.json {
            context.printJSON(.object([
                ("ok", .bool(total == 0)),
                ("problems", .array(reports.flatMap { f in f.problems.map { p in
                    JSONValue.object([("file", .string(f.path)), ("line", p.line.map { .number(String($0)) } ?? .null),
                                      ("rule", .string(p.rule)), ("message", .string(p.message))])
                } })),
            ]))
        } else {
            for f in reports {
                if f.problems.isEmpty {
                    context.out("ok       \(f.path)\(f.summary.isEmpty ? "" : " (\(f.summary))")\n")
                } else {
                    context.out("PROBLEM  \(f.path): \(f.problems.count) problem\(f.problems.count == 1 ? "" : "s")\n")
                    for p in f.problems { context.out("  \(TextEscaping.escaped(p.message))\n") }
                }
            }
            if total > 0 {
                context.out("\nFix a record with 'bitpal edit ID|@LINE …' or remove it with 'bitpal delete ID|@LINE';"
                    + " a cache file (prices.json, coins.json) can simply be deleted.\n")
            }
        }
        return total == 0 ? .success : .failure
    }

    /// A cache file: fine when missing or readable.
    static func readable(_ path: String, _ load: () throws -> String?) -> FileReport {
        do {
            let summary = try load()
            return FileReport(path: path, summary: summary ?? "not present", problems: [])
        } catch let e as StoreError {
            return FileReport(path: path, summary: "", problems: [(line(of: e), "unreadable", e.description)])
        } catch {
            return FileReport(path: path, summary: "", problems: [(nil, "unreadable", "\(error)")])
        }
    }

    static func line(of error: StoreError) -> Int? {
        guard case let .malformed(detail) = error.reason, detail.hasPrefix("line ") else { return nil }
        return Int(detail.dropFirst(5).prefix(while: \.isNumber))
    }
}

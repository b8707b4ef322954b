import Foundation
import PortfolioCore

struct DemoCommand: Command {
    static let spec = CommandSpec(
        name: "demo", summary: "Show bitpal on a sample portfolio (never touches your data)",
        options: [OptionSpec("--keep", "DIR", "keep the sample in DIR (a new or empty folder) to explore with --data-dir DIR")],
        group: "Getting started",
        details: "Builds a sample portfolio (buys, partial and full sells, fees, manual prices) in a temporary\nfolder, prints holdings, closed positions and the summary, then removes the folder. Offline.",
        examples: ["bitpal demo", "bitpal demo --keep /tmp/bitpal-demo && bitpal --data-dir /tmp/bitpal-demo list"])

    var keep: String?

    init(parsing a: inout ArgumentList) throws {
        keep = a.popOption("--keep")
    }

    /// The sample trades: (day, coin, type, amount, price, fee, note).
    static let trades: [(String, String, TransactionType, String, String, String, String?)] = [
        ("2024-01-05", "bitcoin", .buy, "0.5", "30000", "0", "first stack"),
        ("2024-02-01", "ethereum", .buy, "4", "2200", "5", nil),
        ("2024-02-20", "solana", .buy, "40", "95", "0", nil),
        ("2024-03-01", "cardano", .buy, "5000", "0.45", "2.5", nil),
        ("2024-03-10", "bitcoin", .buy, "0.3", "42000", "12", nil),
        ("2024-04-01", "dogecoin", .buy, "20000", "0.08", "0", "meme money"),
        ("2024-05-01", "pepe", .buy, "100000000", "0.0000012", "1", nil),
        ("2024-05-15", "ethereum", .sell, "1.5", "3500", "4", nil),
        ("2024-06-01", "bitcoin", .sell, "0.2", "65000", "8", "partial take-profit"),
        ("2024-11-12", "solana", .sell, "40", "180", "4", "closed the position"),
        ("2024-12-05", "dogecoin", .sell, "20000", "0.39", "0", nil),
        ("2025-02-01", "dogecoin", .buy, "10000", "0.31", "0", "back in"),
    ]

    static let prices: [(String, String)] = [
        ("bitcoin", "97250.5"), ("ethereum", "3412.75"), ("cardano", "0.7321"), ("dogecoin", "0.2875"),
        ("pepe", "0.00001876"), ("solana", "168.4"),
    ]

    static func samplePortfolio(now: Date, zone: TimeZone) throws -> Book {
        var p = Book()
        for (day, coin, type, amount, price, fee, note) in trades {
            guard let parts = ISODate.parseDay(utf8: day.utf8) else { continue }
            p.transactions.append(Transaction(
                coinId: coin, type: type, amount: try Decimal(parsing: amount), pricePerCoin: try Decimal(parsing: price),
                fee: try Decimal(parsing: fee), date: ISODate.startOfDay(parts, in: zone),
                notes: note))
        }
        for (coin, price) in prices {
            p.manualPrices.append(Quote(coinId: coin, price: try Decimal(parsing: price), time: now, source: .manual))
        }
        p.watchlist = [WatchEntry(coinId: "polkadot", dateAdded: now)]
        return p
    }

    func run(_ context: Context) throws -> ExitCode {
        let folder: String
        if let keep {
            folder = try DataLocation.resolve(explicit: keep, environment: context.environment.variables)
            if FileManager.default.fileExists(atPath: folder + "/portfolio.json") {
                throw CommandFailure("\(folder) already holds a portfolio; demo only writes to a new or empty folder")
            }
        } else {
            folder = FileManager.default.temporaryDirectory.path + "/bitpal-demo-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        }
        defer { if keep == nil { try? FileManager.default.removeItem(atPath: folder) } }
        let store = PortfolioStore(directory: folder)
        let sample = try Self.samplePortfolio(now: context.now, zone: context.timeZone)
        try store.update(now: context.now) { portfolio in
            portfolio.add(sample.transactions)
            portfolio.manualPrices = sample.manualPrices
            portfolio.watchlist = sample.watchlist
            return (true, ())
        }
        var globals = context.globals
        globals.dataDir = folder
        globals.offline = true
        let demo = Context(environment: context.environment, console: context.console, globals: globals)
        if context.json {
            let reports = try demo.reports(refresh: false, all: false)
            demo.printJSON(.object([
                ("holdings", ReportJSON.holdings(reports.holdings())),
                ("closed", ReportJSON.closed(reports.closed())),
                ("summary", ReportJSON.summary(reports.summary())),
            ]))
            return .success
        }
        let bold = context.style.bold
        demo.out(bold("A sample portfolio: \(sample.transactions.count) trades in 6 coins, priced by hand (offline).") + "\n\n")
        demo.out(bold("$ bitpal holdings") + "\n")
        _ = try HoldingsCommand(sort: .value).run(demo)
        demo.out("\n" + bold("$ bitpal closed") + "\n")
        _ = try ClosedCommand().run(demo)
        demo.out("\n" + bold("$ bitpal summary") + "\n")
        _ = try SummaryCommand().run(demo)
        if keep != nil {
            demo.out("\nKept in \(folder). Explore it with: bitpal --data-dir \(folder) list\n")
        } else {
            demo.out("""

            That folder is gone again; your own data was never touched.
            To use bitpal for real, put it on your PATH (from this checkout):
              mkdir -p ~/.local/bin && cp "$(swift build -c release --show-bin-path)/bitpal" ~/.local/bin/
            then start with: bitpal add buy bitcoin 0.5 42000

            """)
        }
        return .success
    }
}

extension HoldingsCommand {
    init(sort: HoldingsSort, all: Bool = false, byPortfolio: Bool = false) {
        self.sort = sort
        self.all = all
        self.byPortfolio = byPortfolio
    }
}

extension ClosedCommand {
    init(all: Bool = false) { self.all = all }
}

extension SummaryCommand {
    init(all: Bool = false) { self.all = all }
}

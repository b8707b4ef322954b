import Foundation
import PortfolioCore

struct DemoCommand: Command {
    static let spec = CommandSpec(
        name: "demo", summary: "Show bitpal on a sample portfolio (never touches your data)",
        options: [OptionSpec("--keep", "DIR", "keep the sample in DIR (a new or empty folder) to explore with --data-dir DIR")],
        group: "Getting started",
        details: """
        Builds a sample book (coins, a registered stock with a dividend and a split, a reward, a transfer,
        a swap, a second portfolio fed by a move, a portfolio with cash, one in euros, manual prices and a
        made-up daily price history) in a temporary folder, prints the latest transactions, holdings by
        portfolio, income, closed positions, the cost-basis methods compared, the summary, the value over
        time as a chart and its performance, then removes the folder. Offline.
        """,
        examples: ["bitpal demo", "bitpal demo --keep /tmp/bitpal-demo && bitpal --data-dir /tmp/bitpal-demo list"])

    var keep: String?

    init(parsing a: inout ArgumentList) throws {
        keep = a.popOption("--keep")
    }

    /// One sample record: (portfolio, day, kind, asset, amount, price, fee, note); `swap`/`move` rows are two linked legs.
    typealias Row = (portfolio: String, day: String, kind: String, asset: String, amount: String, price: String?, fee: String?, note: String?)

    /// The sample book: coins in `main`, a registered stock with a dividend and a split, a staking
    /// reward, coins received from an old wallet, a swap, a closed cycle, and a `trading` portfolio
    /// that a move fed, and a `brokerage` portfolio that tracks cash (an ETF bought with deposited
    /// cash, its dividend, interest on the cash, a withdrawal).
    static let rows: [Row] = [
        ("main", "2024-01-05", "buy", "bitcoin", "0.5", "42000", "12", "first stack"),
        ("main", "2024-01-15", "buy", "AAPL", "10", "185.20", "1", nil),
        ("main", "2024-02-10", "buy", "ethereum", "4", "2300", "8", nil),
        ("main", "2024-02-15", "dividend", "AAPL", "2.40", nil, "0.36", "Q1 dividend"),
        ("main", "2024-03-01", "reward", "ethereum", "0.05", "3400", nil, "staking"),
        ("main", "2024-03-20", "transfer-in", "ethereum", "0.5", "1800", "0", "from an old wallet"),
        ("main", "2024-04-01", "buy", "dogecoin", "20000", "0.08", "0", "meme money"),
        ("main", "2024-04-02", "move", "bitcoin", "0.1", nil, nil, "trading stake"),
        ("trading", "2024-04-05", "buy", "solana", "10", "140", "2", nil),
        ("main", "2024-05-20", "swap", "ethereum>solana", "1>22", "3750", "5", nil),
        ("trading", "2024-06-01", "sell", "solana", "5", "165", "1", nil),
        ("main", "2024-06-10", "split", "AAPL", "4", nil, nil, "4-for-1"),
        ("main", "2024-08-15", "dividend", "AAPL", "10", nil, "1.50", nil),
        ("main", "2024-11-12", "sell", "bitcoin", "0.1", "88000", "10", "partial take-profit"),
        ("main", "2024-12-05", "sell", "dogecoin", "20000", "0.39", "0", "closed the position"),
        ("brokerage", "2024-01-02", "deposit", "", "5000", nil, nil, "initial capital"),
        ("brokerage", "2024-01-03", "buy", "VOO", "8", "435.10", "0", nil),
        ("brokerage", "2024-03-27", "dividend", "VOO", "14.02", nil, "2.10", nil),
        ("brokerage", "2024-06-30", "interest", "", "6.25", nil, "0", "cash sweep"),
        ("brokerage", "2024-09-02", "withdrawal", "", "500", nil, nil, nil),
        ("eu", "2024-02-20", "buy", "ethereum", "1.5", "2150", "4", "bought in euros"),
        ("eu", "2024-07-08", "buy", "bitcoin", "0.02", "52000", "2", nil),
    ]

    static let prices: [(String, String)] = [
        ("bitcoin", "97250.5"), ("ethereum", "3412.75"), ("solana", "168.4"), ("dogecoin", "0.2875"), ("AAPL", "229.87"), ("VOO", "530.60"),
    ]

    /// Prices each asset had on some days (its trades' prices), the path of its sample history runs through.
    static let anchors: [String: [(String, Double)]] = [
        "bitcoin": [("2024-01-02", 44000), ("2024-01-05", 42000), ("2024-04-02", 66000), ("2024-07-08", 52000), ("2024-11-12", 88000)],
        "ethereum": [("2024-01-02", 2300), ("2024-02-10", 2300), ("2024-03-01", 3400), ("2024-05-20", 3750)],
        "solana": [("2024-01-02", 100), ("2024-04-05", 140), ("2024-06-01", 165)],
        "dogecoin": [("2024-01-02", 0.09), ("2024-04-01", 0.08), ("2024-12-05", 0.39)],
        "AAPL": [("2024-01-02", 185), ("2024-01-15", 185.2), ("2024-06-09", 196)],  // a 4-for-1 split on 2024-06-10
        "VOO": [("2024-01-02", 434), ("2024-01-03", 435.1)],
    ]

    /// A daily price history of the sample's assets from 2024-01-02 to today (local days), each a random
    /// walk pinned to the prices of its trades and ending at its price today: what `price import` or
    /// `price fetch-history` would leave in the cache, so that `history` and `performance` have days to
    /// show. The same on every run of a day (the stretches before the last trade, on every day).
    static func sampleHistory(now: Date, zone: TimeZone) throws -> [Quote] {
        let today = ISODate.dayNumber(of: now, in: zone)
        var quotes: [Quote] = []
        for (asset, final) in prices {
            guard let end = Double(final) else { continue }
            // The pins, in order: the trades' prices, then today's (after a split, before it in old units).
            var pins = (anchors[asset] ?? []).compactMap { d, p in ISODate.dayNumber(ofDay: d).map { ($0, p) } }
            let split = asset == "AAPL" ? ISODate.dayNumber(ofDay: "2024-06-10") : nil
            if let split { pins.append((split, 196.0 / 4)) }
            pins.append((today, end))
            pins.sort { $0.0 < $1.0 }
            for (a, b) in zip(pins, pins.dropFirst()) where b.0 > a.0 {
                // Each stretch its own seed: every stretch but the last (to today) is the same on every day.
                var g = SplitMix64(seed: UInt64(bitPattern: a.0) &* 0x9E37_79B9 &+ asset.utf8.reduce(UInt64(0)) { $0 &* 31 &+ UInt64($1) })
                // A Brownian bridge in log price from pin to pin, about 2.5% a day.
                let n = Int(b.0 - a.0)
                var walk = [0.0]
                for _ in 0..<n { walk.append((walk.last ?? 0) + (Double(g.below(2001)) - 1000) / 1000 * 0.043) }
                for i in 0..<n {
                    let t = Double(i) / Double(n)
                    let log = Foundation.log(a.1) + (Foundation.log(b.1) - Foundation.log(a.1)) * t + walk[i] - walk[n] * t
                    let price = exp(log)
                    let text = String(format: price < 1 ? "%.4f" : "%.2f", price)
                    guard let value = DecimalLiteral.parse(utf8: text.utf8)?.value else { continue }
                    let day = a.0 + Int64(i)
                    quotes.append(Quote(coinId: asset, price: value, time: ISODate.start(ofDay: day, in: zone).addingTimeInterval(20 * 3600),
                                        source: .imported, currency: "USD"))
                }
            }
        }
        return quotes
    }

    static func samplePortfolio(now: Date, zone: TimeZone) throws -> Book {
        var p = Book(portfolios: [Portfolio(name: "main", description: "long term", createdDate: now),
                                  Portfolio(name: "trading", description: "short term", createdDate: now),
                                  Portfolio(name: "brokerage", description: "ETFs and cash", createdDate: now, trackCash: true),
                                  Portfolio(name: "eu", baseCurrency: "EUR", description: "in euros", createdDate: now)],
                     assets: [Asset(id: "AAPL", name: "Apple Inc.", type: .stock, market: "NASDAQ", createdDate: now),
                              Asset(id: "VOO", name: "Vanguard S&P 500 ETF", type: .etf, market: "NYSE Arca", createdDate: now)])
        func fixed(_ text: String) throws -> Fixed18 { try ValueRules.fixed(text, field: "sample") }
        for r in rows {
            guard let parts = ISODate.parseDay(utf8: r.day.utf8) else { continue }
            let date = RecordDate.day(ISODate.days(fromCivil: parts.0, parts.1, parts.2), in: zone)
            switch r.kind {
            case "swap":
                let assets = r.asset.split(separator: ">").map(String.init), amounts = try r.amount.split(separator: ">").map { try fixed(String($0)) }
                let value = try fixed(r.price ?? "0")
                p.transactions += try Transaction.swap(portfolio: r.portfolio, from: assets[0], amount: amounts[0], to: assets[1],
                                                       amount: amounts[1], value: value, fee: try fixed(r.fee ?? "0"),
                                                       currencies: ("USD", "USD"), date: date, notes: r.note)
            case "move":
                p.transactions += Transaction.move(r.asset, amount: try fixed(r.amount), from: r.portfolio, to: "trading", date: date, notes: r.note)
            default:
                guard let type = TransactionType(rawValue: r.kind) else { continue }
                let rule = KindRule.of(type)
                p.transactions.append(Transaction(
                    portfolio: r.portfolio, type: type, assetId: r.asset, amount: try fixed(r.amount), price: try r.price.map(fixed),
                    fee: rule.fee == .none ? nil : try fixed(r.fee ?? "0"),
                    currency: rule.hasCurrency ? (p.portfolio(named: r.portfolio)?.baseCurrency ?? "USD") : nil, date: date.date, day: date.day, notes: r.note))
            }
        }
        for (asset, price) in prices {
            p.manualPrices.append(Quote(coinId: asset, price: try Decimal(parsing: price), time: now, source: .manual))
        }
        p.watchlist = [WatchEntry(coinId: "polkadot", dateAdded: now)]
        // Rates through the history (so every past day of 'eu' converts), and today's.
        p.fxRates = try [("2024-01-02", "1.10"), ("2024-07-01", "1.07"), ("2025-07-01", "1.17")].compactMap { day, rate in
            try ISODate.parseDay(utf8: day.utf8).map { FXRate(from: "EUR", to: "USD", rate: try fixed(rate), date: ISODate.startOfDay($0, in: zone)) }
        } + [FXRate(from: "EUR", to: "USD", rate: try fixed("1.08"), date: now)]
        return p
    }

    func run(_ context: Context) throws -> ExitCode {
        let folder: String
        if let keep {
            folder = try DataLocation.resolve(explicit: keep, environment: context.environment.variables)
            if FileManager.default.fileExists(atPath: folder + "/portfolio.json") {
                throw CommandFailure("\(folder) already holds a portfolio; demo only writes to a new or empty folder")
            }
            if let contents = try? FileManager.default.contentsOfDirectory(atPath: folder), !contents.isEmpty {
                throw CommandFailure("\(folder) is not empty; demo only writes to a new or empty folder")
            }
        } else {
            folder = FileManager.default.temporaryDirectory.path + "/bitpal-demo-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        }
        defer { if keep == nil { try? FileManager.default.removeItem(atPath: folder) } }
        let store = PortfolioStore(directory: folder)
        let sample = try Self.samplePortfolio(now: context.now, zone: context.timeZone)
        try store.update(now: context.now) { book in
            book.portfolios = sample.portfolios
            book.assets = sample.assets
            book.add(sample.transactions)
            book.manualPrices = sample.manualPrices
            book.watchlist = sample.watchlist
            book.fxRates = sample.fxRates
            return (true, ())
        }
        // Today's quotes are the manual prices; the days before come from the sample history.
        try PriceCache(directory: folder).append(try Self.sampleHistory(now: context.now, zone: context.timeZone).filter {
            ISODate.dayNumber(of: $0.time, in: context.timeZone) < ISODate.dayNumber(of: context.now, in: context.timeZone)
        }, now: context.now, timeZone: context.timeZone)
        var globals = context.globals
        globals.dataDir = folder
        globals.offline = true
        let demo = Context(environment: context.environment, console: context.console, globals: globals)
        if context.json {
            let reports = try demo.reports(refresh: false, all: true)
            demo.printJSON(.object([
                ("holdings", ReportJSON.holdings(reports.holdings(byPortfolio: true), currency: reports.baseCurrency)),
                ("closed", ReportJSON.closed(reports.closed())),
                ("summary", ReportJSON.summary(reports.summary(), currency: reports.baseCurrency)),
            ]))
            return .success
        }
        let bold = context.style.bold
        demo.out(bold("A sample book: 4 coins, a stock and an ETF in four portfolios (one with cash, one in euros), priced by hand (offline).") + "\n\n")
        demo.out(bold("$ bitpal list --all --limit 8") + "\n")
        _ = try ListCommand(limit: 8, all: true).run(demo)
        demo.out("\n" + bold("$ bitpal holdings --all --by-portfolio") + "\n")
        _ = try HoldingsCommand(sort: .value, all: true, byPortfolio: true).run(demo)
        demo.out("\n" + bold("$ bitpal income") + "\n")
        _ = try IncomeCommand(all: false).run(demo)
        demo.out("\n" + bold("$ bitpal closed") + "\n")
        _ = try ClosedCommand().run(demo)
        demo.out("\n" + bold("$ bitpal compare") + "\n")
        _ = try CompareCommand(period: Period(), currency: nil).run(demo)
        demo.out("\n" + bold("$ bitpal summary --all") + "\n")
        _ = try SummaryCommand(all: true).run(demo)
        demo.out("\n" + bold("$ bitpal history --chart") + "\n")
        var chart = try ArgumentList(["--chart"], command: "history", usage: "", options: HistoryCommand.spec.options)
        _ = try HistoryCommand(parsing: &chart).run(demo)
        demo.out("\n" + bold("$ bitpal performance") + "\n")
        var max = try ArgumentList([], command: "performance", usage: "", options: PerformanceCommand.spec.options)
        _ = try PerformanceCommand(parsing: &max).run(demo)
        if keep != nil {
            demo.out("\nKept in \(folder). Explore it with: bitpal --data-dir \(folder) list, or see it as a page: "
                     + "bitpal --data-dir \(folder) report --html report.html\n")
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

extension CompareCommand {
    init(period: Period, currency: String?) {
        self.period = period
        self.currency = currency
    }
}

extension HoldingsCommand {
    init(sort: HoldingsSort, all: Bool = false, byPortfolio: Bool = false, lots: Bool = false) {
        self.sort = sort
        self.all = all
        self.byPortfolio = byPortfolio
        self.lots = lots
    }
}

extension ClosedCommand {
    init(all: Bool = false) { self.all = all }
}

extension ListCommand {
    init(limit: Int, all: Bool) {
        self.limit = limit
        self.all = all
    }
}

extension IncomeCommand {
    init(all: Bool) { self.all = all }
}

extension SummaryCommand {
    init(all: Bool = false) { self.all = all }
}

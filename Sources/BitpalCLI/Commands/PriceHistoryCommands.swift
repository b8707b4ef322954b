import Foundation
import PortfolioCore

/// `price import` and `fx import`: one reader of price files, two kinds of commodity.
enum PriceFileCommand {
    static let formatOption = OptionSpec("--format", "FORMAT", "ledger, beancount or csv (default: recognised from the content)",
                                         choices: PriceFileFormat.allCases.map(\.rawValue))
    static let dryRunOption = OptionSpec("--dry-run", nil, "check and report without writing")

    /// What `price import` and `fx import` take: the file, its format, and whether to write.
    struct Arguments {
        var source: String
        var format: PriceFileFormat?
        var dryRun: Bool

        init(parsing a: inout ArgumentList) throws {
            source = try a.popPositional("FILE (or - for standard input)")
            if let text = a.popOption("--format") {
                guard let f = PriceFileFormat(rawValue: text.lowercased()) else {
                    throw UsageError.invalidChoice(option: "--format", value: text, choices: PriceFileFormat.allCases.map(\.rawValue))
                }
                format = f
            }
            dryRun = a.popFlag("--dry-run")
        }

        func run(kind: PriceImportKind, context: Context) throws -> ExitCode {
            try PriceFileCommand.run(source: source, format: format, dryRun: dryRun, kind: kind, context: context)
        }
    }

    static let formats = """
    Formats (recognised from the content unless --format says):
      ledger/hledger  P 2024-01-15 BTC 42000.00 USD   P 2024-01-15 12:00:00 "BTC" $42,000.00
      beancount       2024-01-15 price BTC 42000.00 USD
      csv             date,asset,price[,currency]   or pricehist's date,base,quote,amount,source,type
    Blank lines and comment lines (first character ';', '#' or '*') are skipped. Amounts are exact; ','
    may only separate thousands; '$' is USD, '€' EUR, '£' GBP, '¥' JPY. A day without a time is its
    first instant in your time zone (TZ), as a bare --date is. If any line is malformed or names
    something unknown, nothing is written and the first 20 such lines are listed with how many there
    are (exit 1). Re-importing a file changes nothing: a quote of the same commodity, currency and
    time replaces the cached one.
    """

    /// The bytes of FILE, or of standard input for `-`.
    static func read(_ source: String, context: Context) throws -> [UInt8] {
        if source == "-" { return try context.environment.readStandardInput() }
        let path = try DataLocation.resolve(explicit: source, environment: context.environment.variables)
        guard let bytes = try FileSystem.read(path, allowStreams: true) else { throw CommandFailure("cannot read \(source): no such file") }
        return bytes
    }

    static func run(source: String, format: PriceFileFormat?, dryRun: Bool, kind: PriceImportKind, context: Context) throws -> ExitCode {
        let session = try context.session()
        let bytes = try read(source, context: context)
        let summary: PriceImportSummary
        do {
            let book = try session.repository.loadSettings()
            summary = try session.prices.importPrices(bytes, format: format, kind: kind, book: book, portfolio: try context.portfolio(in: book),
                                               dryRun: dryRun, names: context.names)
        } catch let failure as ImportFailure {
            return ImportProblems.report(failure, context: context)
        }
        let m = summary.merge
        if context.json {
            context.printJSON(.object([
                ("format", .string(summary.format.rawValue)), ("quotes", .number(String(summary.count))),
                ("assets", .array(summary.assets.map { .string($0) })),
                ("from", ReportJSON.date(summary.from)), ("until", ReportJSON.date(summary.until)),
                ("added", .number(String(m.added))), ("alreadyCached", .number(String(m.unchanged))),
                ("notKept", .number(String(m.notKept))), ("dryRun", .bool(dryRun)),
            ]))
            return .success
        }
        if let broken = m.setAside, dryRun {
            context.warn("\(broken.cacheDescription); an import would move it aside and start a new price cache")
        }
        guard let from = summary.from, let until = summary.until else {
            context.out("Nothing to import: the file states no \(kind == .prices ? "prices" : "rates").\n")
            return .success
        }
        let n = summary.count, k = summary.assets.count
        let zone = context.timeZone
        let span = Human.day(from, in: zone) == Human.day(until, in: zone)
            ? Human.day(from, in: zone) : "\(Human.day(from, in: zone)) … \(Human.day(until, in: zone))"
        let what = kind == .prices
            ? "\(n) price\(n == 1 ? "" : "s") of \(k) asset\(k == 1 ? "" : "s")"
            : "\(n) rate\(n == 1 ? "" : "s") of \(k) currency pair\(k == 1 ? "" : "s")"
        var counts = dryRun ? "\(m.added) would be added" : "\(m.added) added"
        counts += ", \(m.unchanged) already in the price cache"
        if m.notKept > 0 {
            counts += ", \(m.notKept) not kept (before the last 7 days the cache keeps the last quote of each day)"
        }
        if dryRun {
            context.out("Dry run: read \(what), \(span); \(counts). Nothing was written.\n")
        } else {
            context.out("Imported \(what), \(span): \(counts).\n")
        }
        return .success
    }
}

struct PriceImportCommand: Command {
    static let spec = CommandSpec(
        name: "price import", summary: "Import price history from ledger, beancount or CSV price files", arguments: "FILE|-",
        options: [PriceFileCommand.formatOption, PriceFileCommand.dryRunOption],
        group: "Prices",
        details: PriceFileCommand.formats + "\n" + """

        Each commodity is an ASSET: a registered code, else a coin id or symbol (a currency is refused:
        rates go through 'bitpal fx import'). A price without a currency is in the asset's currency (a
        registered asset) or the portfolio's base. Imported prices live in the price cache (source
        'imported'), beside fetched ones; manual prices stay in portfolio.json.
        """,
        examples: ["bitpal price import prices.journal", "bitpal price import prices.beancount --dry-run",
                   "pricehist fetch coingecko BTC/USD -s 2024-01-01 -o csv | bitpal price import -"])

    var file: PriceFileCommand.Arguments

    init(parsing a: inout ArgumentList) throws { file = try PriceFileCommand.Arguments(parsing: &a) }

    func run(_ context: Context) throws -> ExitCode { try file.run(kind: .prices, context: context) }
}

struct FXImportCommand: Command {
    static let spec = CommandSpec(
        name: "fx import", summary: "Import exchange-rate history from ledger, beancount or CSV price files", arguments: "FILE|-",
        options: [PriceFileCommand.formatOption, PriceFileCommand.dryRunOption],
        group: "Cash and currencies",
        details: PriceFileCommand.formats + "\n" + """

        Here the commodities are currencies: 'P 2024-01-15 EUR 1.09 USD' is one euro = 1.09 dollars. A
        rate without a second currency is into the portfolio's base. Imported rates live in the price
        cache (source 'imported') beside fetched ones; 'fx history' lists them with the rates typed by hand.
        """,
        examples: ["bitpal fx import rates.journal", "bitpal fx import eurusd.csv --dry-run"])

    var file: PriceFileCommand.Arguments

    init(parsing a: inout ArgumentList) throws { file = try PriceFileCommand.Arguments(parsing: &a) }

    func run(_ context: Context) throws -> ExitCode { try file.run(kind: .rates, context: context) }
}

struct PriceFetchHistoryCommand: Command {
    static let spec = CommandSpec(
        name: "price fetch-history", summary: "Fetch daily prices of coins and quoted assets for the last N days (default 365)", arguments: "ASSET...",
        options: [OptionSpec("--days", "N", "how many days back (default 365): coins 1 to 365 (the free and demo plans' limit; 3650 with a pro key), quoted assets up to 3650"),
                  OptionSpec("--since", "DATE", "from this day on, in place of --days")],
        group: "Prices",
        details: """
        One request per coin and currency to the price service's /coins/{id}/market_chart, in the base
        currency of every portfolio with transactions in the coin (the default portfolio's when none has
        any). Of each day (in your time zone) the last point is kept: beyond 90 days the service gives one
        at 00:00 UTC a day; for fewer days its hourly or 5-minute points thin to one a day; the last point
        is the current price. The quotes go to the price cache; fetching again replaces them. Exit 3 when
        the service cannot be reached or refuses (a 401: the free and demo plans reach back at most 365
        days), 1 for a coin the service does not know (the other coins are still fetched).
        A registered asset with a quote source ('asset edit CODE --quote yahoo', or twelvedata) takes
        its daily closes from it: as traded (Yahoo's split adjustment undone, Twelve Data's asked for
        unadjusted), one a day of its exchange, dated that day; a split Yahoo reports and the book
        lacks is a warning with the command that records it. After Twelve Data's 429 (the minute's
        requests used up) it is asked nothing more this run. BITPAL_TWELVEDATA_KEY holds its key.
        """,
        examples: ["bitpal price fetch-history btc eth", "bitpal price fetch-history solana --days 30", "bitpal price fetch-history VWCE.DE",
                   "bitpal price fetch-history VWCE.DE --since 2020-01-01"])

    var coins: [String]
    var days: Int
    var since: DateArgument?

    init(parsing a: inout ArgumentList) throws {
        coins = [try a.popPositional("ASSET")] + a.popRemaining()
        let text = a.popOption("--days")
        days = try text.map { text in
            do { return try ArgumentList.positiveInt(text, field: "--days") } catch is CommandFailure { throw PriceError.historyDays(Int.max) }
        } ?? PriceError.maxHistoryDays
        // Up to 10 years for an asset with a quote source; a coin's limit (365) is the price service's, said when asked.
        if !(1...3650).contains(days) { throw PriceError.historyDays(days) }
        since = try a.popOption("--since").map { text throws(UsageError) in try ArgumentList.date(text, field: "--since") }
        if since != nil && text != nil { throw UsageError.conflict("give --days or --since, not both") }
    }

    func run(_ context: Context) throws -> ExitCode {
        if context.offline {
            throw UsageError.conflict("'price fetch-history' fetches prices, so it cannot run offline (--offline or BITPAL_OFFLINE)")
        }
        let session = try context.session()
        _ = try session.service.networkSettings()
        let book = try session.repository.loadBook()
        // --since D: the days from D's first instant to now (at least one).
        var days = self.days
        var from = context.now.addingTimeInterval(-Double(days) * 86_400)
        if let since {
            from = try since.start(in: context.timeZone, now: context.now)
            if from > context.now { throw PortfolioError.futureDate }
            days = max(1, Int((context.now.timeIntervalSince(from) / 86_400).rounded(.up)))
        }
        var ids: [String] = []
        var quoted: [Asset] = []
        for text in coins {
            let asset = try session.resolver.resolveAsset(text, in: book)
            if Asset.isRegisteredID(asset.id) {
                guard let registered = book.asset(id: asset.id), registered.quote != nil else {
                    throw CommandFailure("\(TextEscaping.escaped(asset.id)) is a registered asset priced by hand: give it a quote source "
                        + "('bitpal asset edit \(TextEscaping.escaped(asset.id)) --quote yahoo', or --quote twelvedata), "
                        + "or import its prices with 'bitpal price import'")
                }
                if !quoted.contains(registered) { quoted.append(registered) }
            } else if !ids.contains(asset.id) {
                ids.append(asset.id)
            }
        }
        let defaultBase = book.portfolio(named: book.defaultPortfolio)?.baseCurrency ?? book.portfolios.first?.baseCurrency ?? "USD"
        var fetched: [JSONValue] = [], failed: [JSONValue] = []
        var code = ExitCode.success
        let histories = quoted.isEmpty ? []
            : try session.prices.fetchAssetHistories(quoted, since: from, purpose: .explicit)
        for (asset, result) in zip(quoted, histories) {
            let got: Prices.AssetHistory
            switch result {
            case let .success(history): got = history
            case var .failure(error):
                // Twelve Data's 429: it is asked nothing more this run; the symbols that wait are counted.
                if case let .rateLimited(name, _) = error {
                    error = .rateLimited(service: name, waiting: quoted.drop { $0 != asset }.filter { $0.quote?.service == .twelvedata }.count)
                }
                failed.append(.object([("assetId", .string(asset.id)), ("error", .string(error.description))]))
                context.console.error("error: \(TextEscaping.escaped(asset.id)): \(error)\n")
                code = error.isBrokenRule ? .failure : (code == .failure ? .failure : .service)
                continue
            }
            let source = asset.quote?.service.name ?? ""
            if got.dropped > 0 { context.warn("\(got.dropped) unusable price\(got.dropped == 1 ? "" : "s") of \(TextEscaping.escaped(asset.id)) dropped") }
            // A split the source knows and the book lacks, for an asset held across it, is said with the command that records it.
            let held = book.transactions.filter { $0.assetId == asset.id }
            for split in got.splits {
                let before = held.contains { ISODate.dayNumber(of: $0.date, in: context.timeZone) < split.day && $0.type != .split }
                let recorded = held.contains { $0.type == .split && ISODate.dayNumber(of: $0.date, in: context.timeZone) == split.day }
                guard before && !recorded else { continue }
                let ratio = split.old == 1 ? DecimalFormatting.exact(split.new) : "\(DecimalFormatting.exact(split.new)):\(DecimalFormatting.exact(split.old))"
                context.warn("\(source) reports a \(DecimalFormatting.exact(split.new)):\(DecimalFormatting.exact(split.old)) split of "
                    + "\(TextEscaping.escaped(asset.id)) on \(ISODate.dayText(split.day)) that the book lacks; record it with "
                    + "'bitpal add split \(TextEscaping.escaped(asset.id)) \(ratio) --date \(ISODate.dayText(split.day))'")
            }
            fetched.append(.object([
                ("assetId", .string(asset.id)), ("currency", .string(asset.currency)), ("quotes", .number(String(got.quotes.count))),
                ("from", ReportJSON.date(got.quotes.first?.time)), ("until", ReportJSON.date(got.quotes.last?.time)),
            ]))
            guard !context.json else { continue }
            if let first = got.quotes.first, let last = got.quotes.last {
                context.out("\(context.coinLabel(asset.id)): \(got.quotes.count) daily price\(got.quotes.count == 1 ? "" : "s") in \(asset.currency), "
                    + "\(Human.day(first.time, in: context.timeZone)) … \(Human.day(last.time, in: context.timeZone)) (\(source)).\n")
            } else {
                context.out("\(context.coinLabel(asset.id)): \(source) has no prices for the last \(days) day\(days == 1 ? "" : "s").\n")
            }
        }
        for id in ids {
            let holders = Set(book.transactions.filter { $0.assetId == id }.map(\.portfolio))
            let bases = Set(book.portfolios.filter { holders.contains($0.name) }.map(\.baseCurrency))
            let currencies = bases.isEmpty ? [defaultBase] : bases.sorted()
            let quotes: [Quote]
            do {
                quotes = try session.prices.fetchHistory(coin: id, currencies: currencies, days: days, purpose: .explicit)
            } catch let error as PriceError {
                failed.append(.object([("assetId", .string(id)), ("error", .string(error.description))]))
                guard error == .unknownCoin(id) else {
                    // The service failed: what is cached so far is said (JSON too) before the error.
                    if context.json { context.printJSON(.object([("days", .number(String(days))), ("fetched", .array(fetched)), ("failed", .array(failed))])) }
                    throw error
                }
                context.console.error("error: \(error)\n")
                code = .failure
                continue
            }
            for currency in currencies {
                let these = quotes.filter { $0.currency == currency }
                fetched.append(.object([
                    ("assetId", .string(id)), ("currency", .string(currency)), ("quotes", .number(String(these.count))),
                    ("from", ReportJSON.date(these.first?.time)), ("until", ReportJSON.date(these.last?.time)),
                ]))
                // Said as each coin is done: a later coin's failure does not hide what is already in the cache.
                guard !context.json else { continue }
                let zone = context.timeZone
                if let first = these.first, let last = these.last {
                    context.out("\(context.coinLabel(id)): \(these.count) daily price\(these.count == 1 ? "" : "s") in \(currency), "
                        + "\(Human.day(first.time, in: zone)) … \(Human.day(last.time, in: zone)).\n")
                } else {
                    context.out("\(context.coinLabel(id)): the price service has no prices in \(currency) for the last \(days) day\(days == 1 ? "" : "s").\n")
                }
            }
        }
        if context.json {
            context.printJSON(.object([("days", .number(String(days))), ("fetched", .array(fetched)), ("failed", .array(failed))]))
        }
        return code
    }
}

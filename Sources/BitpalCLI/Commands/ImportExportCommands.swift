import Foundation
import PortfolioCore

/// Formats `bitpal import` reads: bitpal's own, an exchange's trade history, a broker's or exchange's statement.
enum ImportFormat: Hashable {
    case csv, json
    case exchange(Exchange)
    case statement(StatementFormat)

    static var allCases: [ImportFormat] {
        [.csv, .json] + Exchange.allCases.map { .exchange($0) } + StatementFormat.allCases.map { .statement($0) }
    }

    init?(rawValue: String) {
        guard let format = Self.allCases.first(where: { $0.rawValue == rawValue }) else { return nil }
        self = format
    }

    var rawValue: String {
        switch self {
        case .csv: "csv"
        case .json: "json"
        case let .exchange(e): e.rawValue
        case let .statement(s): s.rawValue
        }
    }

    /// How the summary names the file: `the Kraken export`, `the Interactive Brokers Flex Query`.
    var title: String {
        switch self {
        case let .exchange(e): "the \(e.rawValue.capitalized) export"
        case let .statement(s): "the \(s.title)"
        default: "the file"
        }
    }
}

struct ImportCommand: Command {
    static let spec = CommandSpec(
        name: "import", summary: "Import transactions from CSV, JSON or a broker's or exchange's export, all or nothing", arguments: "FILE|-",
        options: [
            OptionSpec("--format", "FORMAT", "csv, json, an exchange's trades or a statement (see above); default: recognised from the header, else from the extension",
                       choices: ImportFormat.allCases.map(\.rawValue)),
            OptionSpec("--dry-run", nil, "check and report without writing"),
            OptionSpec("--utc-offset", "±HH:MM", "the time zone of a Binance export whose file name does not say it, of a CoinTracking table or Revolut crypto statement (else UTC)"),
            OptionSpec("--allow-duplicates", nil, "import rows identical to recorded ones too"),
            OptionSpec("--map", "MAPPING", "a JSON file saying which column of any CSV holds what (see the manual: ImportExport)"),
            OptionSpec("--show-map", nil, "print the mapping of the --format preset (schwab, revolut) as JSON, a starting point for --map"),
        ],
        group: "Transactions",
        details: """
        CSV: a header row; columns in any order, case-insensitive: type (any kind), asset (or coin,
        coinId, assetId), amount, date; price (or pricePerCoin) where the kind needs one; optional
        portfolio (must exist; default --portfolio), total, fee, currency, notes, id, linkedId. RFC
        4180 quoting, UTF-8 with or without BOM, LF or CRLF. An adjustment's amount may be negative;
        a split's is NEW (price OLD) or NEW:OLD. JSON: an array of transactions as 'list --json'
        prints them, or a whole-book 'export --format json', whose portfolios and assets are created
        when missing (one that exists with another type or currency fails the import).
        Every row is checked as 'add' checks it, and the merged history must be valid; if anything
        fails nothing is written and the failing rows are listed as 'line N: message' (the first 20,
        then how many there are). Re-importing is idempotent: rows with a known id, or identical to a
        recorded transaction, are skipped.
        Coinbase: buys and sells, Send (transfer-out), Receive (transfer-in at the spot price),
        rewards and staking income (reward at the spot price) and Convert (a swap at its subtotal).
        Exchanges' trade histories: coinbase, binance, kraken. Statements, a broker's or an exchange's
        whole history: ibkr (Flex Query), kraken-ledger, binance-statement, degiro, trading212,
        cryptocom, schwab, fidelity, revolut, koinly, cointracking. The rows of one event are grouped
        (a dividend and its tax, a trade's legs, a currency conversion), stocks and funds are
        registered on the way, cash rows need a portfolio that tracks cash (else they are counted),
        and the summary says what each row became and what was skipped, by kind.
        Any other CSV: --map MAPPING.json names its columns ({"delimiter": ";", "decimalMark": ",",
        "date": {"column": "Datum", "format": "dd.MM.yyyy", "timeZone": "Europe/Berlin"}, "kind":
        {"column": "Vorgang", "values": {"Kauf": "buy"}}, "asset": {"column": "Titel"}, "amount":
        {"column": "Menge"}, "price": {"column": "Kurs"}, ...}); its rows are then imported as above.
        """,
        examples: ["bitpal import trades.csv", "bitpal import export.json --dry-run", "bitpal import flex-query.csv --dry-run",
                   "bitpal import konto.csv --map mapping.json", "bitpal import --format schwab --show-map > schwab.json",
                   "bitpal import Coinbase-statement.csv --format coinbase", "cat trades.csv | bitpal import -"])

    var source: String
    var format: ImportFormat?
    var dryRun: Bool
    var allowDuplicates: Bool
    var utcOffset: Int?
    var mapPath: String?
    var showMap: Bool

    init(parsing a: inout ArgumentList) throws {
        showMap = a.popFlag("--show-map")
        // `--show-map` prints a preset's mapping: it reads no file.
        source = showMap ? (a.popOptionalPositional() ?? "") : try a.popPositional("FILE (or - for standard input)")
        format = a.popOption("--format").flatMap(ImportFormat.init(rawValue:))
        mapPath = a.popOption("--map")
        if mapPath != nil && format != nil { throw UsageError.conflict("give --format or --map, not both") }
        dryRun = a.popFlag("--dry-run")
        allowDuplicates = a.popFlag("--allow-duplicates")
        utcOffset = try a.popOption("--utc-offset").map { text in
            guard let seconds = ExchangeImport.offsetSeconds(text) else {
                throw UsageError.conflict("--utc-offset '\(TextEscaping.escaped(text))' is not an offset such as +7, -06:00 or +05:30")
            }
            return seconds
        }
    }

    func run(_ context: Context) throws -> ExitCode {
        if showMap {
            guard case let .statement(preset)? = format, let mapping = preset.mapping else {
                let mapped = StatementFormat.allCases.filter { $0.mapping != nil }.map(\.rawValue).joined(separator: ", ")
                throw CommandFailure(format.map { "the \($0.rawValue) preset is read by code (its rows group into events or have two sides), not a mapping; "
                    + "presets written as mappings: \(mapped)" } ?? "--show-map prints a preset's mapping: give --format (\(mapped))")
            }
            context.out(mapping + "\n")
            return .success
        }
        let session = try context.session()
        let bytes: [UInt8]
        if source == "-" {
            bytes = try context.environment.readStandardInput()
        } else {
            let path = try DataLocation.resolve(explicit: source, environment: context.environment.variables)
            guard let read = try FileSystem.read(path, allowStreams: true) else { throw CommandFailure("cannot read \(source): no such file") }
            bytes = read
        }
        var mapping: ImportMapping?
        if let mapPath {
            let path = try DataLocation.resolve(explicit: mapPath, environment: context.environment.variables)
            guard let text = try FileSystem.read(path) else { throw CommandFailure("cannot read \(mapPath): no such file") }
            do { mapping = try ImportMapping.read(text) } catch { return report(error, context: context) }
        }
        var format = self.format ?? (source.lowercased().hasSuffix(".json") ? .json : .csv)
        if self.format == nil, mapping == nil, format == .csv {
            let recognised = StatementImport.recognise(bytes).map { ImportFormat.statement($0) } ?? ExchangeImport.recognise(bytes).map { .exchange($0) }
            if let recognised {
                context.note("Recognised \(recognised.title) (as with --format \(recognised.rawValue)).")
                format = recognised
            }
        }
        let book = try session.repository.loadBook()
        let target = try context.portfolio(in: book)
        let portfolio = target.name
        let fileName = (source as NSString).lastPathComponent
        let parsed = Result { () throws(ImportFailure) -> (ImportDocument, PresetRows?) in
            if let mapping {
                let mapped = try mapping.rows(bytes, tracksCash: target.trackCash,
                                              idSeed: portfolio + "\u{1F}" + (mapping.columns.values.sorted() + [mapping.groupColumn ?? ""]).joined(separator: "|"))
                return (ImportDocument(rows: mapped.rows, assets: mapped.assets.filter { book.asset(id: $0.id) == nil }), mapped)
            }
            switch format {
            case .csv: return (ImportDocument(rows: try TransactionImport.rows(csv: bytes)), nil)
            case .json: return (try TransactionImport.document(json: bytes), nil)
            case let .exchange(exchange):
                let preset = try ExchangeImport.rows(bytes, exchange: exchange, fileName: fileName, utcOffsetSeconds: utcOffset)
                return (ImportDocument(rows: preset.rows), preset)
            case let .statement(statement):
                let preset = try StatementImport.rows(bytes, format: statement,
                                                      options: StatementOptions(tracksCash: target.trackCash, portfolio: portfolio, fileName: fileName,
                                                                               utcOffsetSeconds: utcOffset))
                // The assets the file names are registered unless the book has them (as they are).
                return (ImportDocument(rows: preset.rows, assets: preset.assets.filter { book.asset(id: $0.id) == nil }), preset)
            }
        }
        let document: ImportDocument, preset: PresetRows?
        switch parsed {
        case let .success(read): (document, preset) = read
        case let .failure(failure):
            // A file of another format than the one named is named by what it looks like.
            if let named = self.format, failure.count == failure.problems.count,
               let looks = StatementImport.recognise(bytes).map({ ImportFormat.statement($0) }) ?? ExchangeImport.recognise(bytes).map({ .exchange($0) }),
               looks != named {
                return report(ImportFailure(problems: failure.problems + ["this looks like \(looks.title) (--format \(looks.rawValue))"]), context: context)
            }
            return report(failure, context: context)
        }
        // Resolve assets before taking the lock: this may fetch the coin list once. A registered
        // code (the store's) comes first, then a coin id or symbol. A whole-book export names every
        // asset by the id bitpal stored: those are kept as they are (no catalog, no network).
        let registered = Set(book.assets.map(\.id) + document.assets.map(\.id))
        var assetIDs: [String: String] = [:]
        var assetErrors: [String: Error] = [:]
        for text in Set(document.rows.compactMap { $0.fields[.assetId]?.trimmedSpaces }) where !text.isEmpty && assetIDs[text] == nil {
            if document.isBook {
                assetIDs[text] = text  // an id as stored: a registered code must be registered, the rest are coin ids
            } else if let code = Asset.code(text), registered.contains(code) {
                assetIDs[text] = code
            } else {
                do { assetIDs[text] = try session.resolver.resolveCoin(text).id } catch { assetErrors[text] = error }
            }
        }
        let resolve: (String) throws -> String = { text in
            if let id = assetIDs[text] { return id }
            throw assetErrors[text] ?? PortfolioError.coinNotFound(query: text, suggestions: [])
        }
        let outcome: ImportOutcome
        do {
            outcome = try session.repository.commitImport(document, portfolio: portfolio, allowDuplicates: allowDuplicates, dryRun: dryRun,
                                               names: context.names, resolveAsset: resolve)
        } catch {
            if let failure = error as? ImportFailure { return report(failure, context: context) }
            throw error
        }
        let plan = outcome.plan
        for (coin, count) in preset?.feesNotCounted ?? [] {
            context.note("\(count) imported row\(count == 1 ? "'s fee was" : "s' fees were") paid in \(TextEscaping.escaped(coin)) and \(count == 1 ? "is" : "are") not counted")
        }
        if context.json {
            var fields: [(String, JSONValue)] = [("imported", .number(String(plan.added.count))), ("skipped", .number(String(plan.skipped)))]
            if let preset {
                fields.append(("kinds", .object(preset.kinds.map { ($0.0, .number(String($0.1))) })))
                fields.append(("notImported", .object(preset.skipped.map { ($0.0, .number(String($0.1))) })))
                if !document.isBook { fields.append(("assetsCreated", .array(outcome.createdAssets.map { .string($0) }))) }
            }
            if document.isBook {
                fields.append(("portfoliosCreated", .array(outcome.createdPortfolios.map { .string($0) })))
                fields.append(("assetsCreated", .array(outcome.createdAssets.map { .string($0) })))
                fields.append(("manualPricesImported", .number(String(outcome.addedPrices))))
                fields.append(("settingsImported", .number(String(outcome.addedSettings))))
            }
            context.printJSON(.object(fields))
            return .success
        }
        if let preset {
            context.out("From \(mapping == nil ? format.title : "the mapped file"): \(preset.summary).\n")
        }
        var created: [String] = []
        if !outcome.createdPortfolios.isEmpty {
            created.append("portfolio\(outcome.createdPortfolios.count == 1 ? "" : "s") " + outcome.createdPortfolios.map { "'\(TextEscaping.escaped($0))'" }.joined(separator: ", "))
        }
        if !outcome.createdAssets.isEmpty {
            created.append("asset\(outcome.createdAssets.count == 1 ? "" : "s") " + outcome.createdAssets.map(TextEscaping.escaped).joined(separator: ", "))
        }
        if outcome.addedPrices > 0 { created.append("\(outcome.addedPrices) manual price\(outcome.addedPrices == 1 ? "" : "s")") }
        if outcome.addedSettings > 0 {
            created.append("\(outcome.addedSettings) setting\(outcome.addedSettings == 1 ? "" : "s") (rates, plans, saving plans, alerts, targets)")
        }
        if dryRun {
            context.out("Dry run: would import \(plan.added.count) and skip \(plan.skipped) already recorded. Nothing was written.\n")
            if !created.isEmpty { context.out("It would also add " + created.joined(separator: ", ") + ".\n") }
        } else {
            context.out("Imported \(plan.added.count) transaction\(plan.added.count == 1 ? "" : "s"); skipped \(plan.skipped) already recorded.\n")
            if !created.isEmpty { context.out("Added " + created.joined(separator: ", ") + ".\n") }
        }
        return .success
    }

    func report(_ failure: ImportFailure, context: Context) -> ExitCode { ImportProblems.report(failure, context: context) }
}

struct ExportCommand: Command {
    static let spec = CommandSpec(
        name: "export", summary: "Write every transaction, oldest first, exact, with ids",
        options: [
            OptionSpec("--format", "FORMAT", "csv (default): the transactions; json: the whole book (portfolios, assets, transactions, manual prices)",
                       choices: ["csv", "json"]),
            OptionSpec("--output", "FILE", "write to FILE (atomically, mode 0600) instead of stdout"),
            OptionSpec("--all", nil, "every portfolio, inactive ones too (the default unless --portfolio names one)"),
        ],
        group: "Transactions",
        details: """
        CSV: a header row of the transaction fields (id, portfolio, type, assetId, amount, price, total,
        fee, currency, date, notes, linkedId), one transaction per line, exactly as stored; importing it
        needs its portfolios and assets to exist. JSON: {"format": "bitpal-export", "version": 2,
        "portfolios", "assets", "transactions", "manualPrices"}; importing it creates the portfolios and
        assets it names. Importing an export into an empty store reproduces the same transactions and reports.
        """,
        examples: ["bitpal export > backup.csv", "bitpal export --format json --output backup.json", "bitpal -p trading export"])

    var json: Bool
    var output: String?
    var all: Bool

    init(parsing a: inout ArgumentList) throws {
        json = a.popOption("--format") == "json"
        output = a.popOption("--output")
        all = a.popFlag("--all")
    }

    func run(_ context: Context) throws -> ExitCode {
        let book = try context.session().repository.loadBook()
        var names: Set<String>?
        if all {
            if context.globals.portfolio != nil { throw UsageError.conflict("--all exports every portfolio; leave out --portfolio") }
        } else if context.portfolioOption != nil {
            names = [try context.portfolio(in: book).name]
        }
        let ordered = Ledger.chronological(book.transactions.filter { names?.contains($0.portfolio) ?? true })
        let bytes = json || context.json ? TransactionExport.document(book, portfolios: names) : TransactionExport.csv(ordered)
        if let output {
            let path = try DataLocation.resolve(explicit: output, environment: context.environment.variables)
            try KeptFiles.refuseOutput(path, dataDirectory: try context.dataDirectory())
            try FileSystem.writeAtomically(bytes, to: path)
            if context.json {  // stdout stays one JSON document: what was written where
                context.printJSON(.object([("exported", .number(String(ordered.count))), ("output", .string(path))]))
            } else {
                context.note("Exported \(ordered.count) transaction\(ordered.count == 1 ? "" : "s") to \(path).")
            }
        } else if context.environment.stdoutIsTerminal {
            // On a terminal, a note holding escape sequences is shown, not run; a file or a pipe gets the exact bytes.
            context.out(TextEscaping.escapedKeepingLines(String(decoding: bytes, as: UTF8.self)))
        } else {
            context.console.print(bytes: bytes)
        }
        return .success
    }
}

/// How every import (`import`, `price import`, `fx import`) lists what stopped it: the first
/// problems, then one line with how many there are, so a file of millions of bad lines makes a
/// short message (cron mails it), not hundreds of megabytes.
enum ImportProblems {
    static func report(_ failure: ImportFailure, context: Context) -> ExitCode {
        let listed = failure.problems.prefix(ImportFailure.listed)
        for p in listed { context.console.error("error: \(p)\n") }
        let n = max(failure.count, failure.problems.count)
        let shown = n > listed.count ? " (the first \(listed.count) listed)" : ""
        context.console.error("error: \(n) problem\(n == 1 ? "" : "s") found\(shown); nothing was imported\n")
        return .failure
    }
}

import Foundation
import PortfolioCore

/// Formats `bitpal import` reads.
enum ImportFormat: String, CaseIterable {
    case csv, json, coinbase, binance, kraken
}

struct ImportCommand: Command {
    static let spec = CommandSpec(
        name: "import", summary: "Import transactions from CSV or JSON, all or nothing", arguments: "FILE|-",
        options: [
            OptionSpec("--format", "FORMAT", "csv, json, or an exchange export: coinbase, binance, kraken (default: from the extension; stdin is csv)",
                       choices: ImportFormat.allCases.map(\.rawValue)),
            OptionSpec("--dry-run", nil, "check and report without writing"),
            OptionSpec("--utc-offset", "±HH:MM", "the time zone of a Binance export whose file name does not say it"),
            OptionSpec("--allow-duplicates", nil, "import rows identical to recorded ones too"),
        ],
        group: "Transactions",
        details: """
        CSV: a header row; columns in any order, case-insensitive: type, coin (or coinId), amount,
        price (or pricePerCoin), date; optional fee, notes, id. RFC 4180 quoting, UTF-8 with or
        without BOM, LF or CRLF. JSON: an array of transactions as 'list --json' prints them.
        Every row is checked as 'add' checks it, and the merged history must be valid; if anything
        fails nothing is written and every failing row is listed as 'line N: message'. Re-importing
        is idempotent: rows with a known id, or identical to a recorded trade, are skipped.
        """,
        examples: ["bitpal import trades.csv", "bitpal import export.json --dry-run",
                   "bitpal import Coinbase-statement.csv --format coinbase", "cat trades.csv | bitpal import -"])

    var source: String
    var format: ImportFormat?
    var dryRun: Bool
    var allowDuplicates: Bool
    var utcOffset: Int?

    init(parsing a: inout ArgumentList) throws {
        source = try a.popPositional("FILE (or - for standard input)")
        format = a.popOption("--format").flatMap(ImportFormat.init(rawValue:))
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
        let bytes: [UInt8]
        if source == "-" {
            bytes = try context.environment.readStandardInput()
        } else {
            let path = try DataLocation.resolve(explicit: source, environment: context.environment.variables)
            guard let read = try FileSystem.read(path, allowStreams: true) else { throw CommandFailure("cannot read \(source): no such file") }
            bytes = read
        }
        var format = self.format ?? (source.lowercased().hasSuffix(".json") ? .json : .csv)
        if self.format == nil, format == .csv, let exchange = ExchangeImport.recognise(bytes),
           let preset = ImportFormat(rawValue: exchange.rawValue) {
            context.note("Recognised a \(exchange.rawValue.capitalized) export (as with --format \(exchange.rawValue)).")
            format = preset
        }
        let parsed = Result { () throws(ImportFailure) -> PresetRows in
            switch format {
            case .csv: return PresetRows(rows: try TransactionImport.rows(csv: bytes), skipped: [])
            case .json: return PresetRows(rows: try TransactionImport.rows(json: bytes), skipped: [])
            case .coinbase, .binance, .kraken:
                return try ExchangeImport.rows(bytes, exchange: Exchange(rawValue: format.rawValue) ?? .coinbase,
                                               fileName: (source as NSString).lastPathComponent, utcOffsetSeconds: utcOffset)
            }
        }
        let rows: [ImportRow], skippedKinds: [(String, Int)], uncountedFees: [(String, Int)]
        switch parsed {
        case let .success(preset): (rows, skippedKinds, uncountedFees) = (preset.rows, preset.skipped, preset.feesNotCounted)
        case let .failure(failure): return report(failure, context: context)
        }
        // Resolve coins before taking the lock: this may fetch the coin list once.
        var coinIDs: [String: String] = [:]
        var coinErrors: [String: Error] = [:]
        for text in Set(rows.compactMap { $0.fields[.coin]?.trimmedSpaces }) where !text.isEmpty {
            do { coinIDs[text.lowercased()] = try context.resolveCoin(text).id } catch { coinErrors[text.lowercased()] = error }
        }
        let resolve: (String) throws -> String = { text in
            if let id = coinIDs[text.lowercased()] { return id }
            throw coinErrors[text.lowercased()] ?? PortfolioError.coinNotFound(query: text, suggestions: [])
        }
        let now = context.now
        let zone = context.timeZone
        let plan: ImportPlan
        do {
            plan = try context.store().update(now: now, names: context.names) { portfolio in
                let plan = try TransactionImport.plan(rows, into: portfolio.transactions, now: now,
                                                      allowDuplicates: allowDuplicates, timeZone: zone, resolveCoin: resolve)
                if dryRun || plan.added.isEmpty { return (false, plan) }
                portfolio.transactions.append(contentsOf: plan.added)
                return (true, plan)
            }
        } catch {
            if let failure = error as? ImportFailure { return report(failure, context: context) }
            throw error
        }
        for (kind, count) in skippedKinds {
            context.note("skipped \(count) \(kind) row\(count == 1 ? "" : "s") (not a buy or sell bitpal can record yet)")
        }
        for (coin, count) in uncountedFees {
            context.note("\(count) imported row\(count == 1 ? "'s fee was" : "s' fees were") paid in \(TextEscaping.escaped(coin)) and \(count == 1 ? "is" : "are") not counted")
        }
        if context.json {
            context.printJSON(.object([("imported", .number(String(plan.added.count))), ("skipped", .number(String(plan.skipped)))]))
        } else if dryRun {
            context.out("Dry run: would import \(plan.added.count) and skip \(plan.skipped) already recorded. Nothing was written.\n")
        } else {
            context.out("Imported \(plan.added.count) transaction\(plan.added.count == 1 ? "" : "s"); skipped \(plan.skipped) already recorded.\n")
        }
        return .success
    }

    func report(_ failure: ImportFailure, context: Context) -> ExitCode {
        for p in failure.problems { context.console.error("error: \(p)\n") }
        let n = failure.problems.count
        context.console.error("error: \(n) problem\(n == 1 ? "" : "s") found; nothing was imported\n")
        return .failure
    }
}

struct ExportCommand: Command {
    static let spec = CommandSpec(
        name: "export", summary: "Write every transaction, oldest first, exact, with ids",
        options: [
            OptionSpec("--format", "FORMAT", "csv (default) or json", choices: ["csv", "json"]),
            OptionSpec("--output", "FILE", "write to FILE (atomically, mode 0600) instead of stdout"),
        ],
        group: "Transactions",
        details: "Importing an export into an empty store reproduces the same transactions and reports.",
        examples: ["bitpal export > backup.csv", "bitpal export --format json --output backup.json"])

    var json: Bool
    var output: String?

    init(parsing a: inout ArgumentList) throws {
        json = a.popOption("--format") == "json"
        output = a.popOption("--output")
    }

    func run(_ context: Context) throws -> ExitCode {
        let portfolio = try context.store().load()
        let ordered = Ledger.chronological(portfolio.transactions)
        let bytes = json || context.json ? TransactionExport.json(ordered) : TransactionExport.csv(ordered)
        if let output {
            let path = try DataLocation.resolve(explicit: output, environment: context.environment.variables)
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

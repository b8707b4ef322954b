import Foundation
import PortfolioCore

/// `alert add|list|remove|check` (history-performance.md, "Alerts").
enum AlertText {
    static let conditions = PriceAlert.Condition.allCases.map(\.rawValue)

    static func threshold(_ a: PriceAlert) -> String {
        a.condition == .move ? "±\(a.threshold.text)%" : Human.money(Money(Exact36(a.threshold), CurrencyCode(a.currency)))
    }

    static func json(_ a: PriceAlert) -> JSONValue { PriceAlert.fields.object(a) }

    static func describe(_ a: PriceAlert, context: Context) -> String {
        "\(context.assetLabel(a.assetId).symbol.uppercased()) \(a.condition == .move ? "moves beyond" : a.condition.rawValue) \(threshold(a))"
    }
}

struct AlertAddCommand: Command {
    static let spec = CommandSpec(
        name: "alert add", summary: "Be told when a price crosses a level or moves a lot in a day",
        arguments: "ASSET above|below PRICE  |  ASSET move PCT",
        options: [OptionSpec("--repeat", nil, "fire at every check while true (default: only when it turns true)")],
        group: "Prices",
        details: """
        'above' holds when the price is at or above PRICE, 'below' at or below; 'move' when the 24-hour
        change is PCT percent or more either way. 'bitpal alert check' (from cron) prints an alert when
        its condition turns true, and arms it again when it turns false. A coin's price is in the default
        portfolio's base currency, a registered asset's in its own.
        """,
        examples: ["bitpal alert add btc above 100000", "bitpal alert add eth below 2000 --repeat", "bitpal alert add btc move 5"])

    var asset: String
    var condition: PriceAlert.Condition
    var threshold: Fixed18
    var repeats: Bool

    init(parsing a: inout ArgumentList) throws {
        asset = try a.popPositional("ASSET")
        condition = try PriceAlert.Condition(rawValue: ArgumentList.choice(try a.popPositional("CONDITION").lowercased(),
                                                                            of: AlertText.conditions, option: "CONDITION")) ?? .above
        threshold = try ArgumentList.fixed(try a.popPositional(condition == .move ? "PCT" : "PRICE"), field: condition == .move ? "Percent" : "Price")
        repeats = a.popFlag("--repeat")
    }

    func run(_ context: Context) throws -> ExitCode {
        guard threshold.units > 0 else {
            if condition == .move { throw CommandFailure("The move must be greater than zero percent") }
            throw PortfolioError.priceNotPositive
        }
        let session = try context.session()
        let settings = try session.repository.loadSettings()
        let label = try session.resolver.resolveAsset(asset, in: settings)
        guard let alert = try session.repository.commit(.addAlert(assetId: label.id, condition: condition, threshold: threshold, repeats: repeats),
                                             names: context.names).applied.alert else { return .success }
        if context.json {
            context.printJSON(AlertText.json(alert))
        } else {
            context.out("Added alert \(alert.id): \(AlertText.describe(alert, context: context))\(repeats ? ", at every check while true" : ""). "
                        + "Check it from cron with 'bitpal alert check'.\n")
        }
        return .success
    }
}

struct AlertListCommand: Command {
    static let spec = CommandSpec(name: "alert list", summary: "Your price alerts and their state", group: "Prices",
                                  examples: ["bitpal alert list", "bitpal alert list --json"])

    init(parsing a: inout ArgumentList) throws {}

    func run(_ context: Context) throws -> ExitCode {
        // The whole file, not its settings alone: a listing of a truncated store is refused as every command refuses it.
        let book = try context.session().repository.loadBook()
        if context.json {
            context.printJSON(.array(book.alerts.map(AlertText.json)))
            return .success
        }
        if book.alerts.isEmpty {
            context.out("No alerts yet: add one with 'bitpal alert add btc above 100000'.\n")
            return .success
        }
        var table = Table([("ID", .right), ("ASSET", .left), ("CONDITION", .left), ("THRESHOLD", .right), ("REPEAT", .left), ("STATE", .left),
                           ("LAST CHECKED (\(Human.zoneLabel(context.timeZone)))", .left)])
        for a in book.alerts {
            table.add([String(a.id), context.assetLabel(a.assetId).symbol.uppercased(), a.condition.rawValue, AlertText.threshold(a),
                       a.repeats ? "yes" : "no", a.state.rawValue, a.lastChecked.map { Human.when($0, in: context.timeZone) } ?? "never"])
        }
        context.out(table.render(style: context.style))
        return .success
    }
}

struct AlertRemoveCommand: Command {
    static let spec = CommandSpec(name: "alert remove", summary: "Delete a price alert", arguments: "ID", group: "Prices",
                                  examples: ["bitpal alert remove 2"])

    var id: Int

    init(parsing a: inout ArgumentList) throws { id = try ArgumentList.positiveInt(try a.popPositional("ID"), field: "ID") }

    func run(_ context: Context) throws -> ExitCode {
        guard let removed = try context.session().repository.commit(.removeAlert(id), names: context.names).applied.alert else { return .success }
        if context.json {
            context.printJSON(.object([("removed", .number(String(removed.id)))]))
        } else {
            context.out("Removed alert \(removed.id): \(AlertText.describe(removed, context: context)).\n")
        }
        return .success
    }
}

struct AlertCheckCommand: Command {
    static let spec = CommandSpec(
        name: "alert check", summary: "Check every alert and print the ones that fire (for cron)",
        options: [OptionSpec("--quiet", nil, "print only the alerts that fire")],
        group: "Prices",
        details: """
        Refreshes the prices the alerts need when older than 60 s (unless offline), then prints one line
        per alert that fires: its condition turned true since the last check (or is true, with --repeat).
        With --quiet nothing else is printed, so cron mails only real news. The states are kept in
        portfolio.json, written under its lock. Exit 0 when the check ran; 3 when prices could not be
        fetched (then no alert fires and no state changes, so a crossing fires at the next check).
        """,
        examples: ["bitpal alert check", "*/5 * * * * bitpal alert check --quiet"])

    var quiet: Bool

    init(parsing a: inout ArgumentList) throws { quiet = a.popFlag("--quiet") }

    func run(_ context: Context) throws -> ExitCode {
        let check = try context.session().checkAlerts(names: context.names)
        if context.json {
            context.printJSON(.object([
                ("checked", .number(String(check.checked))),
                ("fired", .array(check.fired.map { f in
                    .object([("id", .number(String(f.alert.id))), ("assetId", .string(f.alert.assetId)), ("condition", .string(f.alert.condition.rawValue)),
                             ("threshold", .string(f.alert.threshold.text)), ("price", .string(DecimalFormatting.exact(f.quote.price))),
                             ("change24h", .optional(f.quote.change24h.map { DecimalFormatting.fixed($0, scale: 4) }))])
                })),
            ]))
            return .success
        }
        for f in check.fired {
            let a = f.alert, symbol = context.assetLabel(a.assetId).symbol.uppercased()
            let price = Human.money(f.quote.price, in: CurrencyCode(f.quote.currency))
            let change = f.quote.change24h.map { ($0 >= 0 ? "+" : "") + DecimalFormatting.percent($0) + "%" } ?? ""
            switch a.condition {
            case .above, .below:
                context.out("\(symbol) is \(a.condition.rawValue) \(AlertText.threshold(a)): \(price)\(change.isEmpty ? "" : " (\(change) in 24 h)") [alert \(a.id)]\n")
            case .move:
                context.out("\(symbol) moved \(change) in 24 h (beyond \(AlertText.threshold(a))): \(price) [alert \(a.id)]\n")
            }
        }
        if !quiet {
            for a in check.unknown {
                context.warn("alert \(a.id) (\(AlertText.describe(a, context: context))) cannot be told: "
                             + (a.condition == .move ? "no 24-hour change is known" : "no price in \(a.currency) is known"))
            }
            // Only a person at a terminal hears that nothing fired; cron gets no mail.
            if check.fired.isEmpty && context.environment.stdoutIsTerminal {
                context.out(check.checked == 0 ? "No alerts to check.\n" : "Checked \(check.checked) alert\(check.checked == 1 ? "" : "s"); none fired.\n")
            }
        }
        return .success
    }
}

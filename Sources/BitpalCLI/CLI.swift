import Foundation
import PortfolioCore

/// bitpal's front end: splits global options, finds the command in the table, runs it,
/// and turns every error into one `error:` line and an exit code.
public struct CLI {
    public static let version = "0.1.0"

    /// The command table: help, suggestions and completions are all generated from it.
    public static var commands: [any Command.Type] { [
        DemoCommand.self,
        AddCommand.self, ListCommand.self, EditCommand.self, DeleteCommand.self, MoveCommand.self,
        ImportCommand.self, ExportCommand.self,
        HoldingsCommand.self, ClosedCommand.self, SummaryCommand.self, IncomeCommand.self, GainsCommand.self, CompareCommand.self,
        HistoryCommand.self, PerformanceCommand.self,
        ExplainCommand.self, WidgetCommand.self, ReportPageCommand.self,
        TargetSetCommand.self, TargetClearCommand.self, TargetShowCommand.self, AllocationCommand.self,
        PlanAddCommand.self, PlanListCommand.self, PlanShowCommand.self, PlanEditCommand.self, PlanRemoveCommand.self,
        SavingAddCommand.self, SavingListCommand.self, SavingEditCommand.self, SavingRemoveCommand.self, SavingRunCommand.self,
        SavingDueCommand.self, SavingConfirmCommand.self,
        AssetAddCommand.self, AssetListCommand.self, AssetShowCommand.self, AssetEditCommand.self, AssetRemoveCommand.self,
        PortfolioListCommand.self, PortfolioAddCommand.self, PortfolioEditCommand.self, PortfolioDefaultCommand.self,
        PortfolioRemoveCommand.self,
        CashBalanceCommand.self, CashHistoryCommand.self, CashDepositCommand.self, CashWithdrawCommand.self, CashInterestCommand.self, CashFeeCommand.self,
        CashTransferCommand.self, CashExchangeCommand.self,
        FXListCommand.self, FXSetCommand.self, FXRefreshCommand.self, FXFetchHistoryCommand.self, FXHistoryCommand.self, FXImportCommand.self,
        PriceListCommand.self, PriceSetCommand.self, PriceRefreshCommand.self, PriceHistoryCommand.self, PriceImportCommand.self,
        PriceFetchHistoryCommand.self,
        AlertAddCommand.self, AlertListCommand.self, AlertRemoveCommand.self, AlertCheckCommand.self,
        CoinsSearchCommand.self, CoinsUpdateCommand.self,
        WatchListCommand.self, WatchAddCommand.self, WatchRemoveCommand.self,
        CheckCommand.self, HelpCommand.self, CompletionsCommand.self,
    ] }

    /// Groups of commands run without a subcommand, and the subcommand they default to.
    static let defaultSubcommands = ["price": "list", "watch": "list", "asset": "list", "portfolio": "list", "cash": "balance", "fx": "list", "target": "show", "plan": "list", "saving": "list", "alert": "list"]

    public var environment: Environment
    public var console: Console

    public init(environment: Environment, console: Console) {
        self.environment = environment
        self.console = console
    }

    public func run(_ arguments: [String]) -> ExitCode {
        do {
            return try dispatch(arguments)
        } catch {
            return report(error)
        }
    }

    func report(_ error: Error) -> ExitCode {
        let (message, code): (String, ExitCode) = switch error {
        case let e as UsageError: ("\(e)", .usage)
        case let e as LiteralError: ("\(e)", .usage)
        case let e as PriceError:
            switch e.underlying {
            case .offline: ("\(e)", .usage)
            case .unknownCoin: ("\(e)", .failure)  // the service answered: it has no such coin
            case .noRates: ("\(e)", .failure)  // the service answered: it has no rates then
            case .historyDays: ("\(e)", .failure)  // a well-formed number the rule refuses
            default: ("\(e)", .service)
            }
        case let e as PortfolioError: ("\(e)", e.exitCode)
        case let e as StoreError: ("\(e)", .failure)
        case let e as CommandFailure: (e.message, e.code)
        default: ("\(error)", .failure)
        }
        console.error("error: \(Self.capped(message))\n")
        return code
    }

    /// The longest line of an error bitpal prints: what a person typed or a file held is echoed in
    /// messages, and 100,000 characters of it would bury the message (and fill a cron mail).
    static let maxErrorLine = 1000

    /// `message` with each line longer than `maxErrorLine` cut in its middle, saying how long it was.
    static func capped(_ message: String) -> String {
        guard message.utf8.count > maxErrorLine else { return message }
        return message.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            guard line.count > maxErrorLine else { return String(line) }
            let half = maxErrorLine / 2 - 20
            return String(line.prefix(half)) + " … " + String(line.suffix(half)) + " (a line of \(line.count) characters, cut)"
        }.joined(separator: "\n")
    }

    func dispatch(_ arguments: [String]) throws -> ExitCode {
        let (globals, rest) = try CLI.splitGlobals(arguments)
        let context = Context(environment: environment, console: console, globals: globals)
        if globals.version {  // before or after a command, as every global option
            console.print("bitpal \(CLI.version)\n")
            return .success
        }
        guard let first = rest.first else {
            console.print(Help.overview())
            return .success
        }
        if first.hasPrefix("-") && first != "-" {
            let names = GlobalOptions.specs.map(\.name)
            throw UsageError.unknownOption(first, command: "bitpal", suggestion: EditDistance.closest(to: first, in: names, max: 1).first)
        }
        if globals.help, rest.count == 1 || rest[1].hasPrefix("-"), let group = Help.group(first) {
            // `bitpal price --help` is the group's help, as `bitpal help price` is.
            console.print(group)
            return .success
        }
        let (type, consumed) = try CLI.find(rest)
        if globals.help {
            console.print(Help.command(type.spec))
            return .success
        }
        var args = try ArgumentList(Array(rest.dropFirst(consumed)), command: type.spec.name, usage: type.spec.usage,
                                    options: type.spec.options)
        let command = try type.init(parsing: &args)
        try args.finish()
        do {
            return try command.run(context)
        } catch let e as PortfolioError {
            // Coins are named one way in every message: symbol and name.
            throw CommandFailure(e.description(names: context.names), code: e.exitCode)
        }
    }

    /// The command named by the first words of `words`, and how many words named it.
    static func find(_ words: [String]) throws(UsageError) -> (any Command.Type, Int) {
        let first = words[0]
        if let c = commands.first(where: { $0.spec.name == first }) { return (c, 1) }
        let group = commands.filter { $0.spec.name.hasPrefix(first + " ") }
        if !group.isEmpty {
            let subs = group.map { String($0.spec.name.dropFirst(first.count + 1)) }
            if words.count > 1, !words[1].hasPrefix("-") || words[1] == "-" {
                if let c = group.first(where: { $0.spec.name == first + " " + words[1] }) { return (c, 2) }
                let typed = words[1].lowercased()
                let prefixed = subs.filter { $0.hasPrefix(typed) }
                throw .unknownSubcommand(command: first, word: words[1], choices: subs,
                                         suggestion: prefixed.count == 1 ? prefixed[0] : EditDistance.closest(to: typed, in: subs, max: 1).first)
            }
            if let fallback = defaultSubcommands[first],
               let c = group.first(where: { $0.spec.name == first + " " + fallback }) {
                return (c, 1)
            }
            throw .missingSubcommand(command: first, choices: subs)
        }
        let names = Set(commands.map { String($0.spec.name.split(separator: " ")[0]) }).sorted()
        // A unique prefix is the likeliest meaning (`hold` → `holdings`); else the closest spelling.
        let typed = first.lowercased()
        let prefixed = names.filter { $0.hasPrefix(typed) }
        let suggestion = prefixed.count == 1 ? prefixed[0] : EditDistance.closest(to: typed, in: names, max: 1).first
        throw .unknownCommand(first, suggestion: suggestion)
    }

    /// Takes the global options out of the arguments (anywhere before `--`).
    static func splitGlobals(_ arguments: [String]) throws(UsageError) -> (GlobalOptions, [String]) {
        var g = GlobalOptions()
        var rest: [String] = []
        var i = 0
        var seenTerminator = false
        var colorSet = false
        func colorChoice(_ text: String) throws(UsageError) -> ColorChoice {
            ColorChoice(rawValue: try ArgumentList.choice(text, of: ColorChoice.allCases.map(\.rawValue), option: "--color")) ?? .auto
        }
        while i < arguments.count {
            let a = arguments[i]
            i += 1
            if seenTerminator { rest.append(a); continue }
            switch a {
            case "--":
                seenTerminator = true
                // Before the command, `--` only ends the global options; after it, the command's.
                if !rest.isEmpty { rest.append(a) }
            case "--json": g.json = true
            case "--offline": g.offline = true
            case "--no-color", "--no-colour":
                if colorSet { throw .repeatedOption("--color") }
                colorSet = true
                g.color = .never
            case "--color", "--colour":
                guard i < arguments.count else { throw .missingValue(option: "--color", valueName: "WHEN") }
                if colorSet { throw .repeatedOption("--color") }
                colorSet = true
                g.color = try colorChoice(arguments[i])
                i += 1
            case "-h", "--help": g.help = true
            case "--portfolio", "-p":
                guard i < arguments.count else { throw .missingValue(option: "--portfolio", valueName: "NAME") }
                if g.portfolio != nil { throw .repeatedOption("--portfolio") }
                g.portfolio = arguments[i]
                i += 1
            case "--version": g.version = true
            case "--data-dir":
                guard i < arguments.count else { throw .missingValue(option: "--data-dir", valueName: "DIR") }
                if g.dataDir != nil { throw .repeatedOption("--data-dir") }
                g.dataDir = arguments[i]
                i += 1
            default:
                if a.hasPrefix("--color=") || a.hasPrefix("--colour=") {
                    if colorSet { throw .repeatedOption("--color") }
                    colorSet = true
                    g.color = try colorChoice(String(a.drop(while: { $0 != "=" }).dropFirst()))
                } else if a.hasPrefix("--portfolio=") {
                    if g.portfolio != nil { throw .repeatedOption("--portfolio") }
                    g.portfolio = String(a.dropFirst("--portfolio=".count))
                } else if a.hasPrefix("--data-dir=") {
                    if g.dataDir != nil { throw .repeatedOption("--data-dir") }
                    g.dataDir = String(a.dropFirst("--data-dir=".count))
                } else if ["--json=", "--offline=", "--no-color=", "--help=", "--version="].contains(where: { a.hasPrefix($0) }) {
                    throw .flagTakesNoValue(String(a.prefix(while: { $0 != "=" })))
                } else {
                    rest.append(a)
                }
            }
        }
        if g.dataDir?.isEmpty == true { throw .missingValue(option: "--data-dir", valueName: "DIR") }
        return (g, rest)
    }
}

/// A command's own failure with a chosen exit code and wording.
extension PortfolioError {
    /// 1, but 2 for an option that does not fit the record it is given for.
    var exitCode: ExitCode {
        if case .misusedOption = self { return .usage }
        return .failure
    }
}

public struct CommandFailure: Error {
    public var message: String
    public var code: ExitCode

    public init(_ message: String, code: ExitCode = .failure) {
        self.message = message
        self.code = code
    }
}

import PortfolioCore

/// Help text, assembled from the command table.
enum Help {
    static let groups = ["Getting started", "Transactions", "Reports", "Assets and portfolios", "Cash and currencies", "Goals and habits", "Prices", "Coins and watchlist", "Other"]

    static func overview() -> String {
        var s = """
        bitpal \(CLI.version) — a command-line portfolio tracker: exact to the cent, crash-safe, scriptable.

        Usage: bitpal COMMAND [ARGUMENTS] [OPTIONS]

        """
        let width = CLI.commands.map { $0.spec.name.count }.max() ?? 10
        for group in groups {
            let members = CLI.commands.filter { $0.spec.group == group }
            guard !members.isEmpty else { continue }
            s += "\n\(group):\n"
            for c in members {
                s += "  " + c.spec.name.padding(toLength: width + 2, withPad: " ", startingAt: 0) + c.spec.summary + "\n"
            }
        }
        s += "\nGlobal options (before or after the command):\n" + optionLines(GlobalOptions.specs)
        s += """

        Exit codes: 0 success, 1 the operation failed, 2 usage error, 3 the price service failed.
        Run 'bitpal help COMMAND' (or 'bitpal COMMAND --help') for a command's options and examples.

        """
        return s
    }

    static func command(_ spec: CommandSpec) -> String {
        var s = "Usage: \(spec.usage)\n\n\(spec.summary).\n"
        if !spec.details.isEmpty { s += "\n" + spec.details + "\n" }
        if !spec.options.isEmpty { s += "\nOptions:\n" + optionLines(spec.options) }
        s += "\nGlobal options: -p/--portfolio NAME, --data-dir DIR, --json, --offline, --color auto|always|never, --no-color, -h/--help\n"
        if !spec.examples.isEmpty {
            s += "\nExamples:\n" + spec.examples.map { "  \($0)\n" }.joined()
        }
        return s
    }

    /// `bitpal help price`: the commands of a group, or `nil` when `word` is not a group.
    static func group(_ word: String) -> String? {
        let members = CLI.commands.filter { $0.spec.name.hasPrefix(word + " ") }
        guard !members.isEmpty else { return nil }
        let width = members.map { $0.spec.name.count }.max() ?? 0
        var s = "Usage: bitpal \(word) SUBCOMMAND [ARGUMENTS] [OPTIONS]\n\n"
        if let fallback = CLI.defaultSubcommands[word] { s += "'bitpal \(word)' on its own runs 'bitpal \(word) \(fallback)'.\n\n" }
        for c in members {
            s += "  " + c.spec.name.padding(toLength: width + 2, withPad: " ", startingAt: 0) + c.spec.summary + "\n"
        }
        s += "\nRun 'bitpal help \(word) SUBCOMMAND' for its options and examples.\n"
        return s
    }

    static func optionLines(_ options: [OptionSpec]) -> String {
        let labels = options.map { o in o.name + (o.valueName.map { " \($0)" } ?? "") }
        let width = labels.map(\.count).max() ?? 0
        var s = ""
        for (label, o) in zip(labels, options) {
            var help = o.help
            if !o.choices.isEmpty && !help.contains(o.choices[0]) { help += " (\(o.choices.joined(separator: "|")))" }
            s += "  " + label.padding(toLength: width + 2, withPad: " ", startingAt: 0) + help + "\n"
        }
        return s
    }
}

struct HelpCommand: Command {
    static let spec = CommandSpec(
        name: "help", summary: "Show help for bitpal or one command", arguments: "[COMMAND]", group: "Other",
        examples: ["bitpal help add", "bitpal help price refresh"])

    var words: [String]

    init(parsing arguments: inout ArgumentList) throws {
        words = arguments.popRemaining()
    }

    func run(_ context: Context) throws -> ExitCode {
        guard !words.isEmpty else {
            context.out(Help.overview())
            return .success
        }
        if words.count == 1, let group = Help.group(words[0]) {
            context.out(group)
            return .success
        }
        let (type, consumed) = try CLI.find(words)
        if consumed < words.count { throw UsageError.unexpectedArgument(words[consumed]) }
        context.out(Help.command(type.spec))
        return .success
    }
}

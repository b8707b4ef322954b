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

extension Help {
    /// Every command, grouped as the overview groups them.
    static var grouped: [(group: String, commands: [CommandSpec])] {
        var out: [(group: String, commands: [CommandSpec])] = []
        for g in groups {
            var members: [CommandSpec] = []
            for c in CLI.commands where c.spec.group == g { members.append(c.spec) }
            if !members.isEmpty { out.append((g, members)) }
        }
        return out
    }

    static let exitCodes = [("0", "success"), ("1", "the operation failed: a rule refused it, or a file could not be read or written"),
                            ("2", "usage error: an unknown command or option, a malformed value"),
                            ("3", "the price service could not be reached or refused")]

    /// The command reference of the manual, in Markdown, generated from the command table
    /// (`bitpal help --reference`; the manual's `CommandReference.md` is this text, and a test keeps it so).
    static func reference() -> String {
        var s = """
        # Command reference

        Every command, its arguments, options and examples, generated from bitpal's command table
        (`bitpal help --reference`), so it cannot drift from what the program accepts. The same
        text is `bitpal help COMMAND`.

        ## Global options

        Before or after the command:


        """
        for o in GlobalOptions.specs { s += "- `\(o.name)\(o.valueName.map { " \($0)" } ?? "")`: \(o.help)\n" }
        s += "\nExit codes: " + exitCodes.map { "`\($0.0)` \($0.1)" }.joined(separator: "; ") + ".\n"
        for (group, commands) in grouped {
            s += "\n## \(group)\n"
            for c in commands {
                s += "\n### `bitpal \(c.name)`\n\n\(c.summary).\n\n```\n\(c.usage)\n```\n"
                if !c.details.isEmpty { s += "\n" + c.details.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\n") + "\n" }
                if !c.options.isEmpty {
                    s += "\n| option | meaning |\n|---|---|\n"
                    for o in c.options {
                        var help = o.help
                        if !o.choices.isEmpty && !help.contains(o.choices[0]) { help += " (\(o.choices.joined(separator: ", ")))" }
                        s += "| `\(o.name)\(o.valueName.map { " \($0)" } ?? "")` | \(help.replacingOccurrences(of: "|", with: "\\|")) |\n"
                    }
                }
                if !c.examples.isEmpty { s += "\n```sh\n" + c.examples.joined(separator: "\n") + "\n```\n" }
            }
        }
        return s
    }

    /// `bitpal.1`, the manual page, in roff, generated from the same table (`bitpal help --man`).
    static func manPage() -> String {
        func roff(_ text: String) -> String {
            var out = text.replacingOccurrences(of: "\\", with: "\\e").replacingOccurrences(of: "-", with: "\\-")
            // Anything beyond ASCII (–, →, ×, €) as groff's \[uXXXX], which every output device renders.
            out = out.unicodeScalars.map { u in
                guard !u.isASCII else { return String(u) }
                let hex = String(u.value, radix: 16, uppercase: true)
                return "\\[u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + "]"
            }.joined()
            if out.hasPrefix(".") || out.hasPrefix("'") { out = "\\&" + out }
            return out.split(separator: "\n", omittingEmptySubsequences: false)
                .map { $0.hasPrefix(".") || $0.hasPrefix("'") ? "\\&" + $0 : String($0) }.joined(separator: "\n")
        }
        var s = """
        .TH BITPAL 1 "" "bitpal \(CLI.version)" "User Commands"
        .SH NAME
        bitpal \\- a command\\-line portfolio tracker: exact to the cent, crash\\-safe, scriptable
        .SH SYNOPSIS
        .B bitpal
        [\\fIGLOBAL OPTIONS\\fR] \\fICOMMAND\\fR [\\fIARGUMENTS\\fR] [\\fIOPTIONS\\fR]
        .SH DESCRIPTION
        bitpal records what you own (coins, stocks, funds, cash) and tells you what it cost, what it is worth
        and what you gained, exactly. Every command below also prints its own help:
        .B bitpal help COMMAND.
        .SH GLOBAL OPTIONS

        """
        for o in GlobalOptions.specs {
            s += ".TP\n.B \(roff(o.name))\(o.valueName.map { " \\fI\(roff($0))\\fR" } ?? "")\n\(roff(o.help))\n"
        }
        s += ".SH COMMANDS\n"
        for (group, commands) in grouped {
            s += ".SS \(roff(group))\n"
            for c in commands {
                s += ".TP\n.B \(roff(c.usage))\n\(roff(c.summary)).\n"
                if !c.details.isEmpty { s += ".br\n" + roff(c.details.replacingOccurrences(of: "\n", with: " ")) + "\n" }
                for o in c.options {
                    s += ".RS\n.TP\n.B \(roff(o.name))\(o.valueName.map { " \\fI\(roff($0))\\fR" } ?? "")\n\(roff(o.help))\n.RE\n"
                }
            }
        }
        s += ".SH EXIT STATUS\n"
        for (code, meaning) in exitCodes { s += ".TP\n.B \(code)\n\(roff(meaning))\n" }
        s += """
        .SH FILES
        .TP
        .I $BITPAL_HOME/portfolio.json
        everything you typed (default folder: $XDG_DATA_HOME/bitpal, else ~/.local/share/bitpal)
        .TP
        .I prices.json, coins.json
        the price cache and the coin list (safe to delete)
        .SH ENVIRONMENT
        BITPAL_HOME, BITPAL_PORTFOLIO, BITPAL_OFFLINE, BITPAL_HTTP_TIMEOUT, BITPAL_API_URL, COINGECKO_API_KEY, COINGECKO_PRO_API_KEY, NO_COLOR, TZ.
        .SH SEE ALSO
        The manual: Sources/BitpalCLI/Documentation.docc in bitpal's source.

        """
        return s
    }
}

struct HelpCommand: Command {
    static let spec = CommandSpec(
        name: "help", summary: "Show help for bitpal or one command", arguments: "[COMMAND]",
        options: [OptionSpec("--man", nil, "print the manual page (bitpal.1, roff) generated from the command table"),
                  OptionSpec("--reference", nil, "print the command reference (Markdown) generated from the command table")],
        group: "Other",
        details: "Install the manual page with: bitpal help --man > ~/.local/share/man/man1/bitpal.1 (then: man bitpal).",
        examples: ["bitpal help add", "bitpal help price refresh", "bitpal help --man > ~/.local/share/man/man1/bitpal.1"])

    var words: [String]
    var man: Bool
    var reference: Bool

    init(parsing arguments: inout ArgumentList) throws {
        man = arguments.popFlag("--man")
        reference = arguments.popFlag("--reference")
        words = arguments.popRemaining()
        if (man || reference) && !words.isEmpty { throw UsageError.conflict("--man and --reference print the whole table; leave out the command") }
        if man && reference { throw UsageError.conflict("give --man or --reference, not both") }
    }

    func run(_ context: Context) throws -> ExitCode {
        if man {
            context.out(Help.manPage())
            return .success
        }
        if reference {
            context.out(Help.reference())
            return .success
        }
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

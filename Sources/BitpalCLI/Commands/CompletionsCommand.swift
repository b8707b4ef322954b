import Foundation
import PortfolioCore

/// Shell completion scripts, generated from the command table.
enum Completions {
    static var topWords: [String] {
        var seen: [String] = []
        for c in CLI.commands {
            let w = String(c.spec.name.split(separator: " ")[0])
            if !seen.contains(w) { seen.append(w) }
        }
        return seen
    }

    static func subcommands(of word: String) -> [String] {
        CLI.commands.compactMap { c in
            let parts = c.spec.name.split(separator: " ")
            return parts.count == 2 && parts[0] == word ? String(parts[1]) : nil
        }
    }

    static let globalFlags = GlobalOptions.specs.map(\.name)

    /// What a word may be, read off the command table (argument names and option value names, and the
    /// command they belong to).
    enum Kind: Equatable {
        case words([String]), file, directory, command, nothing
        /// Names the book holds, listed at completion time by `bitpal completions --list NAME` (offline, no lock).
        case dynamic(String)

        /// The kind of a value named `name` (`ASSET`, `FILE|-`, `buy|sell`, `DIR`) of `command`, given its option's choices.
        init(valueName name: String, choices: [String] = [], command: String = "") {
            let bare = name.trimmingCharacters(in: CharacterSet(charactersIn: "[]."))
            let group = String(command.split(separator: " ").first ?? "")
            if !choices.isEmpty { self = .words(choices) }
            else if ["FROM", "TO"].contains(bare) && (group == "fx" || command == "cash exchange") { self = .words(CurrencyCode.supported) }
            else if bare == "CODE" && (command == "asset edit" || command == "asset remove") { self = .dynamic("registered") }
            else if bare == "CODE" && command != "asset add" { self = .words(CurrencyCode.supported) }
            else if ["COIN", "ASSET", "FROM", "TO"].contains(bare) { self = .dynamic("assets") }
            else if bare == "PORTFOLIO" || (bare == "NAME" && group == "portfolio" && command != "portfolio add") { self = .dynamic("portfolios") }
            else if bare == "NAME" && group == "saving" && command != "saving add" { self = .dynamic("saving-plans") }
            else if bare == "NAME" && group == "plan" && command != "plan add" { self = .dynamic("plans") }
            else if bare == "ID" && group == "alert" { self = .dynamic("alerts") }
            else if bare == "ID" { self = .dynamic("ids") }
            else if bare == "KIND" { self = .words(TransactionOptions.addKinds) }
            else if bare == "FILE" || bare == "FILE|-" { self = .file }
            else if bare == "DIR" { self = .directory }
            else if bare == "COMMAND" { self = .command }
            else if bare.contains("|") && bare == bare.lowercased() { self = .words(bare.split(separator: "|").map(String.init)) }
            else { self = .nothing }
        }

        /// The bash that fills COMPREPLY for this kind.
        var bash: String {
            switch self {
            case let .words(w): "COMPREPLY=( $(compgen -W \"\(w.joined(separator: " "))\" -- \"$cur\") )"
            case let .dynamic(list): "COMPREPLY=( $(compgen -W \"$(_bitpal_list \(list))\" -- \"$cur\") )"
            case .file: "compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- \"$cur\") )"
            case .directory: "compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -d -- \"$cur\") )"
            case .command: "COMPREPLY=( $(compgen -W \"\(topWords.joined(separator: " "))\" -- \"$cur\") )"
            case .nothing: "COMPREPLY=()"
            }
        }

        /// The zsh that offers this kind's words.
        var zsh: String {
            switch self {
            case let .words(w): "compadd -- \(w.joined(separator: " "))"
            case let .dynamic(list): "compadd -- ${(f)\"$(_bitpal_list \(list))\"}"
            case .file: "_files"
            case .directory: "_files -/"
            case .command: "compadd -- \(topWords.joined(separator: " "))"
            case .nothing: ":"
            }
        }
    }

    /// The lists `--list` prints, one name a line.
    static let lists = ["assets", "registered", "portfolios", "plans", "saving-plans", "alerts", "ids"]

    /// The words of list `name` for `book`: what a person would type there.
    static func words(_ name: String, book: Book, coins: () -> [String]) -> [String] {
        switch name {
        case "assets": book.assets.map(\.id) + coins()
        case "registered": book.assets.map(\.id)
        case "portfolios": book.portfolios.map(\.name)
        case "plans": book.plans.map(\.name)
        case "saving-plans": book.savingPlans.map(\.name)
        case "alerts": book.alerts.map { String($0.id) }
        case "ids": Ledger.chronological(book.transactions).suffix(200).reversed().map { String(UUIDText.lowercased($0.id).prefix(8)) }
        default: []
        }
    }

    /// The kinds of a command's positional arguments; the last one repeats when it ends in `...`.
    static func positionals(_ spec: CommandSpec) -> (kinds: [Kind], repeats: Bool) {
        let words = spec.arguments.split(separator: " ").map(String.init)
        return (words.map { Kind(valueName: $0, command: spec.name) }, words.last?.hasSuffix("...") ?? false)
    }

    /// Symbols of the built-in coins, for ASSET arguments (`--list assets`: offline and instant).
    static var coinWords: [String] {
        var seen = Set<String>()
        return CoinCatalog.builtin.map { $0.symbol.lowercased() }.filter { seen.insert($0).inserted && !$0.contains(" ") }
    }

    enum Shell { case bash, zsh }

    /// The script of `shell`: one walker over the words before the cursor (global options anywhere,
    /// the command, its subcommand, then positional arguments, skipping every option and its value),
    /// then the value of an option, an option, the command, a subcommand or a positional argument,
    /// each by its kind in the command table.
    static func script(_ shell: Shell) -> String {
        let valuedGlobals = GlobalOptions.specs.filter { $0.valueName != nil }.map(\.name) + ["-p"]
        func offer(_ kind: Kind) -> String { shell == .bash ? kind.bash : kind.zsh }
        func words(_ list: [String]) -> String { offer(.words(list)) }
        var s = shell == .bash ? """
        # bash completion for bitpal (generated by 'bitpal completions bash')
        # Names the book holds (assets, portfolios, plans, ids) come from the bitpal being completed.
        _bitpal_list() { "${_bitpal_command:-bitpal}" ${_bitpal_dir:+--data-dir} ${_bitpal_dir:+"$_bitpal_dir"} completions --list "$1" 2>/dev/null; }
        _bitpal() {
            local _bitpal_command="${COMP_WORDS[0]}" _bitpal_dir=""
            local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" w key="" optkey nargs=0 i=1 n="$COMP_CWORD"
            COMPREPLY=()
            while [ "$i" -lt "$n" ]; do
                w="${COMP_WORDS[i]}"

        """ : """
        #compdef bitpal
        # zsh completion for bitpal (generated by 'bitpal completions zsh')
        # Names the book holds (assets, portfolios, plans, ids) come from the bitpal being completed.
        _bitpal_list() { "${_bitpal_command:-bitpal}" ${_bitpal_dir:+--data-dir} ${_bitpal_dir:+"$_bitpal_dir"} completions --list "$1" 2>/dev/null }
        _bitpal() {
            local _bitpal_command="${words[1]}" _bitpal_dir=""
            local cur="${words[CURRENT]}" prev="${words[CURRENT-1]}" w key="" optkey nargs=0 i=2 n="$CURRENT"
            while [ "$i" -lt "$n" ]; do
                w="${words[i]}"

        """
        s += """
                case "$w" in
                    --data-dir) _bitpal_dir="\(shell == .bash ? "${COMP_WORDS[i+1]}" : "${words[i+1]}")"; i=$((i + 2)); continue ;;  # the book the lists come from
                    \(valuedGlobals.joined(separator: "|"))) i=$((i + 2)); continue ;;
                    --) i=$((i + 1)); continue ;;
                    -*=*) i=$((i + 1)); continue ;;
                    -*) if _bitpal_takes_value "$key" "$w"; then i=$((i + 2)); else i=$((i + 1)); fi; continue ;;
                esac
                if [ -z "$key" ]; then key="$w"
                elif [ "$nargs" -eq 0 ] && _bitpal_is_group "$key"; then key="$key $w"
                else nargs=$((nargs + 1)); fi
                i=$((i + 1))
            done
            optkey="$key"
            _bitpal_is_group "$key" && optkey="$(_bitpal_default "$key")"
            # The value of an option.
            case "$optkey|$prev" in

        """
        for o in GlobalOptions.specs where o.valueName != nil {
            let kind = o.name == "--portfolio" ? Kind.dynamic("portfolios") : Kind(valueName: o.valueName ?? "", choices: o.choices)
            s += "        *\"|\(o.name)\"\(o.name == "--portfolio" ? "|*\"|-p\"" : "")) \(offer(kind)); return ;;\n"
        }
        for c in CLI.commands {
            for o in c.spec.options where o.valueName != nil {
                let kind = o.name == "--currency" ? Kind.words(CurrencyCode.supported) : Kind(valueName: o.valueName ?? "", choices: o.choices, command: c.spec.name)
                s += "        \"\(c.spec.name)|\(o.name)\") \(offer(kind)); return ;;\n"
            }
        }
        s += """
            esac
            # Options.
            case "$cur" in
                -*)
                    case "$optkey" in

        """
        for c in CLI.commands {
            s += "                \"\(c.spec.name)\") \(words(c.spec.options.map(\.name) + globalFlags)) ;;\n"
        }
        s += """
                        *) \(words(globalFlags)) ;;
                    esac
                    return ;;
            esac
            # The command, a subcommand, or a positional argument.
            if [ -z "$key" ]; then \(shell == .bash ? Kind.command.bash : "_describe 'command' _bitpal_commands"); return; fi
            case "$key" in

        """
        for w in topWords where !subcommands(of: w).isEmpty {
            s += "        \(w)) \(words(subcommands(of: w))); return ;;\n"
        }
        s += """
            esac
            case "$key|$nargs" in

        """
        for c in CLI.commands {
            let (kinds, repeats) = positionals(c.spec)
            for (n, kind) in kinds.enumerated() where kind != .nothing {
                let pattern = repeats && n == kinds.count - 1 ? "\"\(c.spec.name)|\"*" : "\"\(c.spec.name)|\(n)\""
                s += "        \(pattern)) \(offer(kind)) ;;\n"
            }
        }
        s += """
                "help|0") \(offer(.command)) ;;
                "help|1") _bitpal_is_group "$prev" && \(shell == .bash ? "COMPREPLY=( $(compgen -W \"$(_bitpal_subcommands \"$prev\")\" -- \"$cur\") )" : "compadd -- ${=$(_bitpal_subcommands \"$prev\")}") ;;
            esac
        }
        _bitpal_subcommands() {
            case "$1" in

        """
        for w in topWords where !subcommands(of: w).isEmpty {
            s += "        \(w)) echo \"\(subcommands(of: w).joined(separator: " "))\" ;;\n"
        }
        s += """
            esac
        }
        _bitpal_is_group() {
            case "$1" in \(topWords.filter { !subcommands(of: $0).isEmpty }.joined(separator: "|"))) return 0 ;; esac
            return 1
        }
        _bitpal_default() {
            case "$1" in

        """
        for (group, sub) in CLI.defaultSubcommands.sorted(by: { $0.key < $1.key }) { s += "        \(group)) echo \"\(group) \(sub)\" ;;\n" }
        s += """
                *) echo "$1" ;;
            esac
        }
        _bitpal_takes_value() {
            case "$1|$2" in

        """
        var valued: [String] = []
        for c in CLI.commands { for o in c.spec.options where o.valueName != nil { valued.append("\"\(c.spec.name)|\(o.name)\"") } }
        for (group, sub) in CLI.defaultSubcommands.sorted(by: { $0.key < $1.key }) {
            for o in CLI.commands.first(where: { $0.spec.name == "\(group) \(sub)" })?.spec.options ?? [] where o.valueName != nil {
                valued.append("\"\(group)|\(o.name)\"")
            }
        }
        s += "        \(valued.joined(separator: "|"))) return 0 ;;\n"
        s += """
            esac
            return 1
        }

        """
        if shell == .bash {
            s += "complete -F _bitpal bitpal\n"
        } else {
            s += "_bitpal_commands=(\n"
            for w in topWords {
                let summary = CLI.commands.first { $0.spec.name == w }?.spec.summary ?? "\(w) commands: " + subcommands(of: w).joined(separator: ", ")
                s += "    '\(w):\(zshQuote(summary))'\n"
            }
            s += """
            )
            # Installed in fpath, this file is _bitpal itself: the first TAB runs it, so complete now too.
            if [ "${funcstack[1]}" = "_bitpal" ]; then _bitpal "$@"; else compdef _bitpal bitpal; fi

            """
        }
        return s
    }

    static func bash() -> String { script(.bash) }

    static func zsh() -> String { script(.zsh) }

    static func zshQuote(_ s: String) -> String {
        s.replacingOccurrences(of: "'", with: "'\\''").replacingOccurrences(of: ":", with: "\\:")
    }

    /// What fish offers for a kind (`-a` arguments, or `-F` for files).
    static func fishArguments(_ kind: Kind) -> String? {
        switch kind {
        case let .words(w): "-a '\(w.joined(separator: " "))'"
        case let .dynamic(list): "-a '(__bitpal_list \(list))'"
        case .file, .directory: "-F"
        case .command: "-a '\(topWords.joined(separator: " "))'"
        case .nothing: nil
        }
    }

    static func fish() -> String {
        let valuedGlobals = (GlobalOptions.specs.filter { $0.valueName != nil }.map(\.name) + ["-p"]).joined(separator: " ")
        var s = """
        # fish completion for bitpal (generated by 'bitpal completions fish')
        complete -c bitpal -f
        # The words before the cursor that are not options nor an option's value: the command, its subcommand, its arguments.
        function __bitpal_words
            set -l tokens (commandline -opc)
            set -e tokens[1]
            set -l skip 0
            for t in $tokens
                if test $skip -eq 1
                    set skip 0
                    continue
                end
                if contains -- $t \(valuedGlobals)
                    set skip 1
                else if not string match -q -- '-*' $t
                    echo $t
                end
            end
        end
        # Whether the words start with $argv and hold exactly N more (N the first argument).
        function __bitpal_at
            set -l n $argv[1]
            set -e argv[1]
            set -l w (__bitpal_words)
            test (count $w) -eq (math (count $argv) + $n); or return 1
            for i in (seq (count $argv))
                test "$w[$i]" = "$argv[$i]"; or return 1
            end
        end
        # Whether the words start with $argv.
        function __bitpal_in
            set -l w (__bitpal_words)
            test (count $w) -ge (count $argv); or return 1
            for i in (seq (count $argv))
                test "$w[$i]" = "$argv[$i]"; or return 1
            end
        end
        function __bitpal_list
            set -l tokens (commandline -opc)
            set -l dir
            set -l i (contains -i -- --data-dir $tokens)
            and set dir --data-dir $tokens[(math $i + 1)]
            $tokens[1] $dir completions --list $argv[1] 2>/dev/null
        end

        """
        for o in GlobalOptions.specs {
            var line = "complete -c bitpal -l \(o.name.dropFirst(2))"
            // -x: a value that is not a file (-r alone would offer files too).
            if o.name == "--portfolio" { line += " -s p -x -a '(__bitpal_list portfolios)'" }
            else if o.name == "--data-dir" { line += " -r -F" }
            else if o.valueName != nil { line += " -x" + (o.choices.isEmpty ? "" : " -a '\(o.choices.joined(separator: " "))'") }
            s += line + " -d '\(fishQuote(o.help))'\n"
        }
        for w in topWords {
            let summary = CLI.commands.first { $0.spec.name == w }?.spec.summary ?? subcommands(of: w).joined(separator: ", ")
            s += "complete -c bitpal -n '__bitpal_at 0' -a \(w) -d '\(fishQuote(summary))'\n"
        }
        for c in CLI.commands {
            let parts = c.spec.name.split(separator: " ").map(String.init)
            let path = parts.joined(separator: " ")
            if parts.count == 2 {
                s += "complete -c bitpal -n '__bitpal_at 0 \(parts[0])' -a \(parts[1]) -d '\(fishQuote(c.spec.summary))'\n"
            }
            for o in c.spec.options {
                var line = "complete -c bitpal -n '__bitpal_in \(path)' -l \(o.name.dropFirst(2))"
                if o.valueName != nil {
                    let kind = o.name == "--currency" ? Kind.words(CurrencyCode.supported) : Kind(valueName: o.valueName ?? "", choices: o.choices, command: c.spec.name)
                    let arguments = fishArguments(kind)
                    line += (arguments == "-F" ? " -r" : " -x") + (arguments.map { " " + $0 } ?? "")
                }
                s += line + " -d '\(fishQuote(o.help))'\n"
            }
            let (kinds, repeats) = positionals(c.spec)
            for (n, kind) in kinds.enumerated() {
                guard let arguments = fishArguments(kind) else { continue }
                let condition = repeats && n == kinds.count - 1 ? "__bitpal_in \(path)" : "__bitpal_at \(n) \(path)"
                s += "complete -c bitpal -n '\(condition)' \(arguments)\n"
            }
        }
        return s
    }

    static func fishQuote(_ s: String) -> String {
        s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'")
    }
}

struct CompletionsCommand: Command {
    static let spec = CommandSpec(
        name: "completions", summary: "Print a shell completion script", arguments: "bash|zsh|fish",
        options: [OptionSpec("--list", "NAME", "print the names a completion offers, one a line (what the scripts call)",
                             choices: Completions.lists)],
        group: "Other",
        details: """
        bash: bitpal completions bash > ~/.local/share/bash-completion/completions/bitpal
              (loaded by the bash-completion package; without it, add to ~/.bashrc:
              source <(bitpal completions bash))
        zsh:  bitpal completions zsh > ~/.zfunc/_bitpal, with fpath=(~/.zfunc $fpath) before
              compinit in ~/.zshrc (or: source <(bitpal completions zsh) after compinit)
        fish: bitpal completions fish > ~/.config/fish/completions/bitpal.fish
        Commands, subcommands and options come from the command table; registered assets, coins,
        portfolios, plans, saving plans, alerts and transaction ids from your book, read offline
        (--list NAME) when you press TAB.
        """,
        examples: ["source <(bitpal completions bash)", "bitpal completions --list portfolios"])

    var shell: String?
    var list: String?

    init(parsing a: inout ArgumentList) throws {
        list = try a.popOption("--list").map { text throws(UsageError) in try ArgumentList.choice(text, of: Completions.lists, option: "--list") }
        if list == nil {
            shell = try ArgumentList.choice(try a.popPositional("bash|zsh|fish"), of: ["bash", "zsh", "fish"], option: "shell")
        }
    }

    func run(_ context: Context) throws -> ExitCode {
        if let list {
            // Offline and quiet: a TAB never waits for the network, and prints nothing when the book cannot be read.
            let book = list == "ids" ? ((try? context.session().repository.loadBook()) ?? Book()) : ((try? context.session().repository.loadSettings()) ?? Book())
            for word in Completions.words(list, book: book, coins: { Completions.coinWords }) { context.out(word + "\n") }
            return .success
        }
        switch shell {
        case "bash": context.out(Completions.bash())
        case "zsh": context.out(Completions.zsh())
        default: context.out(Completions.fish())
        }
        return .success
    }
}

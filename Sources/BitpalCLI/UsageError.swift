import PortfolioCore

/// A command line bitpal cannot run (exit 2). The wording lives here.
public enum UsageError: Error, Equatable {
    case unknownCommand(String, suggestion: String?)
    case unknownSubcommand(command: String, word: String, choices: [String], suggestion: String?)
    case missingSubcommand(command: String, choices: [String])
    case unknownOption(String, command: String, suggestion: String?)
    case missingValue(option: String, valueName: String)
    case flagTakesNoValue(String)
    case repeatedOption(String)
    case missingArgument(String, usage: String)
    case unexpectedArgument(String)
    case invalidChoice(option: String, value: String, choices: [String])
    case invalidLiteral(LiteralError)
    case conflict(String)
    /// A value of the right shape's wrong kind (`--portfolio 'a b'`): what is wrong, in words.
    case invalidValue(option: String, value: String, reason: String)
}

extension UsageError: CustomStringConvertible {
    public var description: String {
        func did(_ s: String?) -> String { s.map { ". Did you mean '\($0)'?" } ?? "" }
        switch self {
        case let .invalidValue(option, value, reason):
            return "\(option) '\(TextEscaping.shortened(value))' is not valid: \(reason)"
        case let .unknownCommand(word, suggestion):
            return "unknown command '\(TextEscaping.shortened(word))'\(did(suggestion))"
        case let .unknownSubcommand(command, word, choices, suggestion):
            let base = "unknown '\(command)' command '\(TextEscaping.escaped(word))'"
            return suggestion != nil ? base + did(suggestion) : base + " (choose one of: \(choices.joined(separator: ", ")))"
        case let .missingSubcommand(command, choices):
            return "'\(command)' needs one of: \(choices.joined(separator: ", "))"
        case let .unknownOption(name, command, suggestion):
            return "unknown option '\(TextEscaping.escaped(name))' for '\(command)'\(did(suggestion))"
        case let .missingValue(option, valueName):
            return "option '\(option)' needs a value (\(option) \(valueName))"
        case let .flagTakesNoValue(name):
            return "option '\(name)' takes no value"
        case let .repeatedOption(name):
            return "option '\(name)' was given more than once"
        case let .missingArgument(name, usage):
            return "missing \(name) (usage: \(usage))"
        case let .unexpectedArgument(word):
            return "unexpected argument '\(TextEscaping.shortened(word))'"
        case let .invalidChoice(option, value, choices):
            let lower = value.lowercased()
            let prefixed = choices.filter { $0.hasPrefix(lower) }
            let guess = prefixed.count == 1 ? prefixed[0] : EditDistance.closest(to: lower, in: choices, max: 1).first
            return "\(option) must be one of \(choices.joined(separator: ", ")), not '\(TextEscaping.shortened(value))'\(did(guess))"
        case let .invalidLiteral(error):
            return error.description
        case let .conflict(text):
            return text
        }
    }
}

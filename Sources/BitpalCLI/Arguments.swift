import Foundation
import PortfolioCore

/// One option a command accepts.
public struct OptionSpec: Sendable {
    public var name: String
    /// The value's placeholder (`DATE`), or `nil` for a flag.
    public var valueName: String?
    public var help: String
    /// Allowed values, for help and shell completion.
    public var choices: [String]
    /// The command needs it (its usage line shows it without brackets).
    public var required: Bool

    public init(_ name: String, _ valueName: String? = nil, _ help: String, choices: [String] = [], required: Bool = false) {
        self.name = name
        self.valueName = valueName
        self.help = help
        self.choices = choices
        self.required = required
    }
}

/// The arguments left for one command, popped as typed values.
///
/// Options are checked against the command's table when the list is made, so an
/// unknown option fails before anything runs, with a suggestion.
public struct ArgumentList {
    private var positionals: [String] = []
    private var values: [String: String] = [:]
    private var flags: Set<String> = []
    public let command: String
    public let usage: String

    public init(_ tokens: [String], command: String, usage: String, options: [OptionSpec]) throws(UsageError) {
        self.command = command
        self.usage = usage
        var byName: [String: OptionSpec] = [:]
        for o in options { byName[o.name] = o }
        var i = 0
        var onlyPositionals = false
        while i < tokens.count {
            let token = tokens[i]
            i += 1
            if onlyPositionals || token == "-" || !token.hasPrefix("-") || ArgumentList.looksNumeric(token) {
                positionals.append(token)
                continue
            }
            if token == "--" { onlyPositionals = true; continue }
            var name = token
            var inline: String?
            if let eq = token.firstIndex(of: "="), token.hasPrefix("--") {
                name = String(token[..<eq])
                inline = String(token[token.index(after: eq)...])
            }
            guard let spec = byName[name] else {
                let suggestion = EditDistance.closest(to: name, in: options.map(\.name), max: 1).first
                throw .unknownOption(name, command: command, suggestion: suggestion)
            }
            if let valueName = spec.valueName {
                let value: String
                if let inline {
                    value = inline
                } else {
                    guard i < tokens.count else { throw .missingValue(option: name, valueName: valueName) }
                    value = tokens[i]
                    i += 1
                }
                if values[name] != nil { throw .repeatedOption(name) }
                values[name] = try ArgumentList.choice(value, of: spec.choices, option: name)
            } else {
                if inline != nil { throw .flagTakesNoValue(name) }
                flags.insert(name)
            }
        }
    }

    /// An enumerated value, any case, as the table spells it (`SELL` is `sell`); any text when there are no choices.
    static func choice(_ value: String, of choices: [String], option: String) throws(UsageError) -> String {
        guard !choices.isEmpty else { return value }
        if let match = choices.first(where: { $0.caseInsensitiveCompare(value) == .orderedSame }) { return match }
        throw .invalidChoice(option: option, value: value, choices: choices)
    }

    /// `-5`, `-0.5`: left as positionals so the literal parser can say what is wrong with them.
    static func looksNumeric(_ token: String) -> Bool {
        guard token.count > 1, token.hasPrefix("-") else { return false }
        let rest = token.dropFirst()
        return rest.first.map { $0.isNumber || $0 == "." } ?? false
    }

    public mutating func popPositional(_ name: String) throws(UsageError) -> String {
        guard !positionals.isEmpty else { throw .missingArgument(name, usage: usage) }
        return positionals.removeFirst()
    }

    public mutating func popOptionalPositional() -> String? {
        positionals.isEmpty ? nil : positionals.removeFirst()
    }

    /// Every remaining positional.
    public mutating func popRemaining() -> [String] {
        defer { positionals = [] }
        return positionals
    }

    public mutating func popOption(_ name: String) -> String? {
        values.removeValue(forKey: name)
    }

    public mutating func popFlag(_ name: String) -> Bool {
        flags.remove(name) != nil
    }

    /// Rejects anything not consumed.
    public func finish() throws(UsageError) {
        if let extra = positionals.first { throw .unexpectedArgument(extra) }
    }

    // MARK: Typed values

    /// A decimal literal that must also meet the precision rules.
    ///
    /// One rule for every length: text that is not `digits(.digits)?` is a usage error (exit 2);
    /// well-formed text with too many digits breaks a rule (exit 1), however many digits it has
    /// (`Decimal(string:)` itself gives up somewhere past 160 digits).
    public static func decimal(_ text: String, field: String) throws -> Decimal {
        do {
            return try ValueRules.fixed(text, field: field).decimal
        } catch let error as LiteralError {
            throw UsageError.invalidLiteral(error)
        }
    }

    /// An exact amount, price or fee, by the same rules as `decimal`.
    public static func fixed(_ text: String, field: String) throws -> Fixed18 {
        do {
            return try ValueRules.fixed(text, field: field)
        } catch let error as LiteralError {
            throw UsageError.invalidLiteral(error)
        }
    }

    /// A date as typed (see `DateInput`); the zone and the range are applied when the command runs.
    public static func date(_ text: String, field: String) throws(UsageError) -> DateArgument {
        guard let input = DateInput.parse(text) else { throw .invalidLiteral(.notADate(field: field, text: text)) }
        return DateArgument(input: input, field: field, text: text)
    }

    /// A whole number `0...Int.max` written as plain digits.
    ///
    /// Anything but digits (`-1`, `+3`, `1.5`, ` 7`, empty) is a usage error (exit 2); digits too
    /// large for the option are a well-formed value that breaks a rule (exit 1), at any length.
    /// A transaction's id, id prefix or `@LINE`; a malformed `@LINE` is a usage error.
    public static func recordID(_ text: String) throws(UsageError) -> String {
        if text.hasPrefix("@") {
            let line = text.dropFirst()
            guard !line.isEmpty, line.count <= 12, line.allSatisfy({ $0.isASCII && $0.isNumber }) else {
                throw .invalidLiteral(.notAnInteger(field: "Line (in @LINE)", text: String(line)))
            }
        }
        return text
    }

    /// A whole number of digits; one past `max` is refused saying what the most is (exit 1).
    public static func positiveInt(_ text: String, field: String, max: Int = Int.max) throws -> Int {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else {
            throw UsageError.invalidLiteral(.notAnInteger(field: field, text: text))
        }
        guard let n = Int(text), n <= max else {
            throw CommandFailure("\(field) '\(TextEscaping.shortened(text))' is too large (at most \(max))")
        }
        return n
    }
}

/// A date argument: what it says and what was typed, so a range error can quote it.
public struct DateArgument: Equatable, Sendable {
    public var input: DateInput
    public var field: String
    public var text: String

    /// The moment it names in `zone`; outside the kept range, an error quoting the text.
    public func start(in zone: TimeZone, now: Date) throws(DateRangeError) -> Date {
        try input.start(in: zone, now: now, field: field, text: text)
    }

    /// What a record dated by it is dated (see `DateInput.record`); a date after now is refused with the
    /// record's other rules (`ValueRules`).
    public func record(in zone: TimeZone, now: Date) throws(DateRangeError) -> RecordDate {
        try input.record(in: zone, now: now, field: field, text: text)
    }

    /// As a filter's bound (see `DateInput.filterBound`).
    public func filterBound(in zone: TimeZone, now: Date, lower: Bool) -> Date? {
        input.filterBound(in: zone, now: now, lower: lower)
    }
}

import PortfolioCore

/// What `help`, suggestions and completions know about a command.
public struct CommandSpec: Sendable {
    /// The words that name it: `add`, `price set`.
    public var name: String
    public var summary: String
    /// Positional arguments as they appear in usage: `buy|sell COIN AMOUNT PRICE`.
    public var arguments: String
    public var options: [OptionSpec]
    public var group: String
    /// Longer help, shown by `bitpal help COMMAND`.
    public var details: String
    public var examples: [String]

    public init(
        name: String, summary: String, arguments: String = "", options: [OptionSpec] = [], group: String,
        details: String = "", examples: [String] = []
    ) {
        self.name = name
        self.summary = summary
        self.arguments = arguments
        self.options = options
        self.group = group
        self.details = details
        self.examples = examples
    }

    public var usage: String {
        var parts = ["bitpal", name]
        if !arguments.isEmpty { parts.append(arguments) }
        for o in options {
            let text = o.valueName.map { "\(o.name) \($0)" } ?? o.name
            parts.append(o.required ? text : "[\(text)]")
        }
        return parts.joined(separator: " ")
    }
}

/// A command: parsed from arguments into typed fields, then run.
public protocol Command {
    static var spec: CommandSpec { get }
    /// Pops this command's arguments; no I/O happens here.
    init(parsing arguments: inout ArgumentList) throws
    func run(_ context: Context) throws -> ExitCode
}

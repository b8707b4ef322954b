import Foundation
import PortfolioCore

/// When to colour output.
public enum ColorChoice: String, CaseIterable, Sendable {
    case auto, always, never
}

/// Options that apply to every command and may come before it.
public struct GlobalOptions: Equatable {
    public var dataDir: String?
    /// `--portfolio NAME` / `-p NAME`.
    public var portfolio: String?
    public var json = false
    public var offline = false
    /// `--color auto|always|never` (`--no-color` is `never`).
    public var color = ColorChoice.auto
    public var help = false
    public var version = false

    static let specs: [OptionSpec] = [
        OptionSpec("--data-dir", "DIR", "where data lives (default: $BITPAL_HOME, else $XDG_DATA_HOME/bitpal, else ~/.local/share/bitpal)"),
        OptionSpec("--portfolio", "NAME", "the portfolio to work in (also -p NAME or BITPAL_PORTFOLIO; default: the default portfolio)"),
        OptionSpec("--json", nil, "print one JSON document on stdout instead of a table"),
        OptionSpec("--offline", nil, "never touch the network; use cached and manual prices (also BITPAL_OFFLINE=1)"),
        OptionSpec("--color", "WHEN", "auto (default: on a terminal, unless NO_COLOR is set or TERM=dumb), always or never",
                   choices: ColorChoice.allCases.map(\.rawValue)),
        OptionSpec("--no-color", nil, "the same as --color never"),
        OptionSpec("--help", nil, "show help (also -h)"),
        OptionSpec("--version", nil, "show bitpal's version"),
    ]
}

/// What a running command can use: options, output, clock, files, prices and coins.
public final class Context {
    public let environment: Environment
    public let console: Console
    public let globals: GlobalOptions
    /// The time the command started; every check in one run uses this one clock reading.
    public let now: Date

    init(environment: Environment, console: Console, globals: GlobalOptions) {
        self.environment = environment
        self.console = console
        self.globals = globals
        self.now = ISODate.truncatedToMillis(environment.now())
    }

    var json: Bool { globals.json }

    /// The zone for bare dates: `TZ` from the environment, else the system's.
    var timeZone: TimeZone {
        if let tz = environment.variables["TZ"], !tz.isEmpty,
           let zone = TimeZone(identifier: tz.hasPrefix(":") ? String(tz.dropFirst()) : tz) {
            return zone
        }
        return TimeZone.current
    }

    /// `--offline` or `BITPAL_OFFLINE=1` (any value but empty or 0).
    var offline: Bool {
        if globals.offline { return true }
        if let v = environment.variables["BITPAL_OFFLINE"], !v.isEmpty, v != "0" { return true }
        return false
    }

    /// Colour as cli.md says: `always` wins over everything; `auto` only on a terminal, without
    /// `NO_COLOR`, and not on a `dumb` terminal.
    var style: Style {
        switch globals.color {
        case .always: return Style(enabled: true)
        case .never: return Style(enabled: false)
        case .auto:
            let noColorEnv = environment.variables["NO_COLOR"].map { !$0.isEmpty } ?? false
            let dumb = environment.variables["TERM"] == "dumb"
            return Style(enabled: environment.stdoutIsTerminal && !noColorEnv && !dumb)
        }
    }

    private var cachedDirectory: String?
    func dataDirectory() throws -> String {
        if let cachedDirectory { return cachedDirectory }
        let dir = try DataLocation.resolve(explicit: globals.dataDir, environment: environment.variables)
        cachedDirectory = dir
        return dir
    }

    func out(_ text: String) { console.print(text) }
    func warn(_ text: String) { console.error("warning: " + text + "\n") }
    func note(_ text: String) { console.error(text + "\n") }

    func printJSON(_ value: JSONValue) { out(value.rendered()) }

    // MARK: The session

    private var cachedSession: Session?

    /// The library's session for this run: the data folder, this run's clock, the network as the
    /// environment gives it, and notices worded for the terminal.
    func session() throws -> Session {
        if let cachedSession { return cachedSession }
        let variables = environment.variables
        nonisolated(unsafe) let sleeper = environment.sleep
        let made = Session(
            SessionEnvironment(
                directory: try dataDirectory(), now: now, offline: offline, transport: environment.transport,
                clock: environment.clock, sleep: { sleeper($0) }, timeZone: timeZone,
                network: { try Context.networkSettings(variables) }),
            notify: { [unowned self] in self.render($0) })
        cachedSession = made
        return made
    }

    /// `BITPAL_HTTP_TIMEOUT` (1–600 whole seconds), `BITPAL_API_URL`, `BITPAL_FX_URL`, `BITPAL_YAHOO_URL` and
    /// `BITPAL_TWELVEDATA_URL` (http or https), checked by
    /// every command about to use the network: a bad value is a usage error (exit 2).
    static func networkSettings(_ variables: [String: String]) throws -> NetworkSettings {
        var timeout: Int?
        if let text = variables["BITPAL_HTTP_TIMEOUT"], !text.isEmpty {
            guard let seconds = PriceServiceConfig.parseTimeout(text) else {
                throw CommandFailure(
                    "BITPAL_HTTP_TIMEOUT '\(TextEscaping.escaped(String(text.prefix(40))))' is not a whole number of seconds from 1 to 600",
                    code: .usage)
            }
            timeout = seconds
        }
        for name in ["BITPAL_API_URL", "BITPAL_FX_URL", "BITPAL_YAHOO_URL", "BITPAL_TWELVEDATA_URL"] {
            guard let base = variables[name], !base.isEmpty else { continue }
            let scheme = URL(string: base)?.scheme?.lowercased()
            guard scheme == "http" || scheme == "https", URL(string: base)?.host != nil else {
                throw CommandFailure("\(name) '\(TextEscaping.escaped(String(base.prefix(100))))' is not an http or https URL",
                                     code: .usage)
            }
        }
        let twelveData = TwelveDataClient.settings(environment: variables)
        return NetworkSettings(config: PriceServiceConfig(environment: variables), fxConfig: FXServiceConfig(environment: variables),
                               secrets: PriceServiceConfig.secrets(in: variables) + [twelveData.key].compactMap { $0 }, timeoutOverride: timeout,
                               yahoo: YahooClient.settings(environment: variables, version: CLI.version), twelveData: twelveData)
    }

    /// How messages name an asset: `BTC (Bitcoin)`, `AAPL (Apple Inc.)`, escaped for the terminal.
    func coinLabel(_ id: String) -> String {
        guard let session = try? session() else { return TextEscaping.escaped(id) }
        if let a = session.resolver.registeredAssets[id] { return "\(TextEscaping.escaped(a.id)) (\(TextEscaping.escaped(a.name)))" }
        if Asset.isRegisteredID(id) { return TextEscaping.escaped(id) }
        let c = session.resolver.coin(id: id)
        let symbol = TextEscaping.escaped(c.symbol.uppercased())
        return c.name == c.id && c.symbol == c.id ? symbol : "\(symbol) (\(TextEscaping.escaped(c.name)))"
    }

    /// How the core's messages name coins and dates for this reader.
    var names: MessageNames {
        let zone = timeZone
        let several = ((try? session())?.resolver.portfolioCount ?? 1) > 1
        var names = MessageNames(coin: { [unowned self] in coinLabel($0) }, date: { Human.whenLabelled($0, in: zone) },
                                 portfolio: { several ? " in '\(TextEscaping.escaped($0))'" : "" })
        names.now = now
        return names
    }

    /// A failure of the last few minutes, as a phrase for warnings.
    func phrase(_ failure: NetworkFailure) -> String {
        func clock(_ d: Date) -> String { Human.time(d, in: timeZone) + " " + Human.zoneLabel(timeZone) }
        return "it failed at \(clock(failure.at))" + (failure.reason.isEmpty ? "" : ": " + TextEscaping.escaped(failure.reason))
            + "; not asking again before \(clock(failure.retryAfter)) unless you run 'bitpal price refresh' or 'bitpal coins update'"
    }

    /// Words a session's notice as a warning.
    func render(_ notice: SessionNotice) {
        switch notice {
        case .catalogCacheUnreadable(let error):
            warn("\(error.cacheDescription); using the built-in coins only (delete it or run 'bitpal coins update')")
        case .catalogNotRefreshed(let failure, let error):
            let why = failure.map(phrase) ?? error.map { "\($0)" } ?? "unknown"
            warn("could not refresh the coin list (\(why)); searched the coins known offline")
        case .pricesNotRefreshedRecently(let failure, let known):
            warn("could not refresh prices (\(phrase(failure))); \(known ? "showing the last known prices" : "no prices are known yet")")
        case .pricesNotRefreshed(let error):
            warn("could not refresh prices (\(error)); showing the last known prices")
        case .ratesNotFetched(let error):
            warn("could not fetch the ECB's exchange rates (\(error))")
        case .service(let text):
            warn(text)
        case .priceCacheMovedAside(let broken):
            warn("\(broken); it was moved aside to \((broken.path as NSString).lastPathComponent).unreadable and a new price cache started")
        case .priceCacheUnreadable(let error):
            warn("\(error.cacheDescription); using manual prices only (the file holds only fetched and imported prices: "
                + "delete it, or run 'bitpal price refresh' to start it afresh, then import again)")
        case .storeBreaksRules(let path, let problems, let n, let leftOut):
            warn("\(path) breaks \(n) rule\(n == 1 ? "" : "s") (\(problems.joined(separator: "; "))\(n > 2 ? "; …" : "")); "
                + (leftOut ? "\(n == 1 ? "that record is" : "those records are") left out of this report: " : "")
                + "run 'bitpal check'")
        case let .storeMigrated(backup, days):
            note("Upgraded portfolio.json to format version \(Book.formatVersion); the file as it was is kept as \(backup)."
                + (days == 0 ? "" : " \(days) record\(days == 1 ? " dated at midnight is" : "s dated at midnight are") now dated by day."))
        }
    }
}

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

    func store() throws -> PortfolioStore { PortfolioStore(directory: try dataDirectory()) }
    func priceCache() throws -> PriceCache { PriceCache(directory: try dataDirectory()) }
    func catalogCache() throws -> CatalogCache { CatalogCache(directory: try dataDirectory()) }

    func out(_ text: String) { console.print(text) }
    func warn(_ text: String) { console.error("warning: " + text + "\n") }
    func note(_ text: String) { console.error(text + "\n") }

    func printJSON(_ value: JSONValue) { out(value.rendered()) }

    // MARK: Coins

    private var loadedCatalog: CoinCatalog?
    private var cacheLoaded = false

    /// The built-in coins, plus the cached full list once it has been needed.
    func catalog(includingCache: Bool = false) -> CoinCatalog {
        var catalog = loadedCatalog ?? CoinCatalog()
        if includingCache && !cacheLoaded {
            cacheLoaded = true
            if let cache = try? catalogCache() {
                do {
                    if let loaded = try cache.load() { catalog.add(loaded.coins) }
                } catch {
                    warn("\(error.cacheDescription); using the built-in coins only (delete it or run 'bitpal coins update')")
                }
            }
        }
        loadedCatalog = catalog
        return catalog
    }

    /// The coin for a stored id: catalog entry, else a stand-in named by its id.
    func coin(id: String) -> Coin {
        if let c = catalog().coin(id: id) { return c }
        return catalog(includingCache: true).coin(id: id) ?? Coin.unknown(id)
    }

    /// Registered assets of the book last read (for naming them).
    var registeredAssets: [String: Asset] = [:]
    /// How many portfolios the book last read has (messages name the portfolio when there are several).
    var portfolioCount = 1

    /// How messages name an asset: `BTC (Bitcoin)`, `AAPL (Apple Inc.)`, escaped for the terminal.
    func coinLabel(_ id: String) -> String {
        if let a = registeredAssets[id] { return "\(TextEscaping.escaped(a.id)) (\(TextEscaping.escaped(a.name)))" }
        if Asset.isRegisteredID(id) { return TextEscaping.escaped(id) }
        let c = coin(id: id)
        let symbol = TextEscaping.escaped(c.symbol.uppercased())
        return c.name == c.id && c.symbol == c.id ? symbol : "\(symbol) (\(TextEscaping.escaped(c.name)))"
    }

    /// How the core's messages name coins and dates for this reader.
    var names: MessageNames {
        let zone = timeZone
        return MessageNames(coin: { [unowned self] in coinLabel($0) }, date: { Human.whenLabelled($0, in: zone) },
                            portfolio: { [unowned self] in portfolioCount > 1 ? " in '\(TextEscaping.escaped($0))'" : "" })
    }

    /// Resolves what the user typed to a coin.
    ///
    /// A close match in the local catalog (built-in coins and the cached list) is answered at once
    /// with "did you mean", never after a network wait. Only when nothing known is close, and the
    /// cached list is missing or older than 7 days, is the list fetched (once per run, within the
    /// reports' short budget, not after a recent network failure).
    func resolveCoin(_ query: String) throws -> Coin {
        if let c = catalog().resolve(query) { return c }
        if let c = catalog(includingCache: true).resolve(query) { return c }
        let near = catalog().suggestions(for: query)
        if near.isEmpty && !offline && !catalogRefreshTried {
            catalogRefreshTried = true
            if let failure = rememberedNetworkFailure() {
                warn("could not refresh the coin list (\(failure)); searched the coins known offline")
            } else {
                do {
                    if try refreshCatalogIfOld(), let c = catalog().resolve(query) { return c }
                } catch let error as CommandFailure {
                    throw error  // a bad BITPAL_HTTP_TIMEOUT
                } catch {
                    warn("could not refresh the coin list (\(error)); searched the coins known offline")
                }
            }
        }
        throw PortfolioError.coinNotFound(query: query, suggestions: near.isEmpty ? catalog().suggestions(for: query) : near)
    }

    /// One coin-list refresh per run at most, even when many coins are unknown (or the service is down).
    private var catalogRefreshTried = false

    /// Fetches the full coin list when the cache is missing or older than 7 days (with the
    /// reports' short budget); true when it did.
    @discardableResult
    func refreshCatalogIfOld() throws -> Bool {
        let cache = try catalogCache()
        if let loaded = try? cache.load(), now.timeIntervalSince(loaded.fetchedAt) < CatalogCache.maxAge { return false }
        try updateCatalog(.automatic)
        return true
    }

    /// Fetches the full coin list into the cache.
    @discardableResult
    func updateCatalog(_ purpose: NetworkPurpose) throws -> Int {
        let coins = try withPriceService(purpose) { client throws(PriceError) in try client.coinList() }
        try catalogCache().save(coins, fetchedAt: now)
        var catalog = CoinCatalog()
        catalog.add(coins)
        loadedCatalog = catalog
        cacheLoaded = true
        return coins.count
    }

    // MARK: Prices

    /// Why a command talks to the price service, which sets its time budget.
    enum NetworkPurpose {
        /// A report's refresh, or a coin-list refresh while resolving a coin: about 3 s.
        case automatic
        /// A command run for the network's sake (`price refresh`, `coins update`): 30 s.
        case explicit
    }

    static let automaticBudgetSeconds = 3
    static let explicitBudgetSeconds = 30
    /// After a failure, automatic refreshes are skipped this long (reports use the cache at once).
    static let failureMemorySeconds: TimeInterval = 300

    /// The budget of this command, fixed at its first network use and shared by every request after it.
    private var networkBudget: NetworkBudget?

    /// `BITPAL_HTTP_TIMEOUT`: `nil` when unset or empty; a usage error (exit 2) unless 1–600 whole seconds.
    /// Checked by every command about to use the network (not offline).
    func httpTimeout() throws -> Int? {
        guard let text = environment.variables["BITPAL_HTTP_TIMEOUT"], !text.isEmpty else { return nil }
        guard let seconds = PriceServiceConfig.parseTimeout(text) else {
            throw CommandFailure(
                "BITPAL_HTTP_TIMEOUT '\(TextEscaping.escaped(String(text.prefix(40))))' is not a whole number of seconds from 1 to 600",
                code: .usage)
        }
        return seconds
    }

    func priceClient(_ purpose: NetworkPurpose) throws -> CoinGeckoClient {
        if offline { throw PriceError.offline }
        let override = try httpTimeout()
        if let base = environment.variables["BITPAL_API_URL"], !base.isEmpty {
            let scheme = URL(string: base)?.scheme?.lowercased()
            guard scheme == "http" || scheme == "https", URL(string: base)?.host != nil else {
                throw CommandFailure("BITPAL_API_URL '\(TextEscaping.escaped(String(base.prefix(100))))' is not an http or https URL",
                                     code: .usage)
            }
        }
        let budget = networkBudget ?? NetworkBudget(
            seconds: override ?? (purpose == .automatic ? Self.automaticBudgetSeconds : Self.explicitBudgetSeconds),
            clock: environment.clock)
        networkBudget = budget
        nonisolated(unsafe) let sleeper = environment.sleep
        return CoinGeckoClient(
            config: PriceServiceConfig(environment: environment.variables), transport: environment.transport,
            budget: budget, secrets: PriceServiceConfig.secrets(in: environment.variables), sleep: { sleeper($0) })
    }

    /// Runs `body` with a client; a failure is remembered for a few minutes, a success forgets it.
    func withPriceService<T>(_ purpose: NetworkPurpose, _ body: (CoinGeckoClient) throws(PriceError) -> T) throws -> T {
        let client = try priceClient(purpose)
        do {
            let result = try body(client)
            forgetNetworkFailure()
            return result
        } catch {
            rememberNetworkFailure(error)
            throw error
        }
    }

    private var networkFailurePath: String? { (try? dataDirectory()).map { $0 + "/.network-failure" } }

    /// A failure of the last few minutes, as a phrase for warnings; `nil` when there is none.
    func rememberedNetworkFailure() -> String? {
        guard let path = networkFailurePath, let bytes = try? FileSystem.read(path) else { return nil }
        let lines = bytes.split(separator: UInt8(ascii: "\n"), maxSplits: 1, omittingEmptySubsequences: false)
        guard let first = lines.first, let at = ISODate.parseTimestamp(utf8: first) else { return nil }
        let age = now.timeIntervalSince(at)
        guard age >= 0, age < Self.failureMemorySeconds else { return nil }
        let reason = lines.count > 1 ? String(decoding: lines[1], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) : ""
        func clock(_ d: Date) -> String { Human.time(d, in: timeZone) + " " + Human.zoneLabel(timeZone) }
        let retry = clock(at.addingTimeInterval(Self.failureMemorySeconds))
        return "it failed at \(clock(at))" + (reason.isEmpty ? "" : ": " + TextEscaping.escaped(String(reason.prefix(300))))
            + "; not asking again before \(retry) unless you run 'bitpal price refresh' or 'bitpal coins update'"
    }

    /// Writes `.network-failure` (the time, then the reason; keys already redacted). Best effort.
    private func rememberNetworkFailure(_ error: PriceError) {
        guard error != .offline, let dir = try? dataDirectory(), let path = networkFailurePath else { return }
        let text = ISODate.format(now) + "\n" + PriceError.redact(error.description, PriceServiceConfig.secrets(in: environment.variables))
            .replacingOccurrences(of: "\n", with: " ") + "\n"
        try? FileSystem.ensureDirectory(dir)
        try? FileSystem.writeAtomically(Array(text.utf8), to: path)
    }

    private func forgetNetworkFailure() {
        guard let path = networkFailurePath else { return }
        unlink(path)
    }

    /// Manual and cached quotes together: the newest of each coin, or with `history` every one.
    ///
    /// An unreadable price cache holds nothing the user typed: reports go on with the manual
    /// prices and a warning (the next refresh moves the file aside and starts afresh).
    func priceBook(_ portfolio: Book, history: Bool = false) throws -> PriceBook {
        let cache = try priceCache()
        do {
            return PriceBook(manual: portfolio.manualPrices, fetched: history ? try cache.load() : try cache.loadLatest())
        } catch {
            warn("\(error.cacheDescription); using manual prices only (the file holds only fetched prices: "
                + "delete it, or run 'bitpal price refresh' to start it afresh)")
            return PriceBook(manual: portfolio.manualPrices, fetched: [])
        }
    }
}

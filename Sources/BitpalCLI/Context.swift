import Foundation
import PortfolioCore

/// When to colour output.
public enum ColorChoice: String, CaseIterable, Sendable {
    case auto, always, never
}

/// Options that apply to every command and may come before it.
public struct GlobalOptions: Equatable {
    public var dataDir: String?
    public var json = false
    public var offline = false
    /// `--color auto|always|never` (`--no-color` is `never`).
    public var color = ColorChoice.auto
    public var help = false
    public var version = false

    static let specs: [OptionSpec] = [
        OptionSpec("--data-dir", "DIR", "where data lives (default: $BITPAL_HOME, else $XDG_DATA_HOME/bitpal, else ~/.local/share/bitpal)"),
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
            if let cache = try? catalogCache(), let loaded = try? cache.load() { catalog.add(loaded.coins) }
        }
        loadedCatalog = catalog
        return catalog
    }

    /// The coin for a stored id: catalog entry, else a stand-in named by its id.
    func coin(id: String) -> Coin {
        if let c = catalog().coin(id: id) { return c }
        return catalog(includingCache: true).coin(id: id) ?? Coin.unknown(id)
    }

    /// How messages name a coin: `BTC (Bitcoin)`, escaped for the terminal.
    func coinLabel(_ id: String) -> String {
        let c = coin(id: id)
        let symbol = TextEscaping.escaped(c.symbol.uppercased())
        return c.name == c.id && c.symbol == c.id ? symbol : "\(symbol) (\(TextEscaping.escaped(c.name)))"
    }

    /// A `@Sendable` lookup for reports over `ids` (reads the cached list only if a built-in lookup misses).
    func coinLookup(_ ids: some Sequence<String>) -> @Sendable (String) -> Coin {
        var table: [String: Coin] = [:]
        for id in ids where table[id] == nil { table[id] = coin(id: id) }
        let frozen = table
        return { id in frozen[id] ?? Coin.unknown(id) }
    }

    /// Resolves what the user typed to a coin; once online, refreshes a missing or old coin list first.
    func resolveCoin(_ query: String) throws -> Coin {
        if let c = catalog().resolve(query) { return c }
        if let c = catalog(includingCache: true).resolve(query) { return c }
        if !offline && !catalogRefreshTried {
            catalogRefreshTried = true
            do {
                if try refreshCatalogIfOld(), let c = catalog().resolve(query) { return c }
            } catch {
                warn("could not refresh the coin list (\(error)); searched the coins known offline")
            }
        }
        throw PortfolioError.coinNotFound(query: query, suggestions: catalog().suggestions(for: query))
    }

    /// One coin-list refresh per run at most, even when many coins are unknown (or the service is down).
    private var catalogRefreshTried = false

    /// Fetches the full coin list when the cache is missing or older than 7 days; true when it did.
    @discardableResult
    func refreshCatalogIfOld() throws -> Bool {
        let cache = try catalogCache()
        if let loaded = try? cache.load(), now.timeIntervalSince(loaded.fetchedAt) < CatalogCache.maxAge { return false }
        try updateCatalog()
        return true
    }

    /// Fetches the full coin list into the cache.
    @discardableResult
    func updateCatalog() throws -> Int {
        let coins = try priceClient().coinList()
        try catalogCache().save(coins, fetchedAt: now)
        var catalog = CoinCatalog()
        catalog.add(coins)
        loadedCatalog = catalog
        cacheLoaded = true
        return coins.count
    }

    // MARK: Prices

    func priceClient() throws -> CoinGeckoClient {
        if offline { throw PriceError.offline }
        let sleep = environment.sleep
        nonisolated(unsafe) let sleeper = sleep
        return CoinGeckoClient(
            config: PriceServiceConfig(environment: environment.variables), transport: environment.transport,
            sleep: { sleeper($0) })
    }

    /// Manual and cached quotes together: the newest of each coin, or with `history` every one.
    func priceBook(_ portfolio: Portfolio, history: Bool = false) throws -> PriceBook {
        let cache = try priceCache()
        return PriceBook(manual: portfolio.manualPrices, fetched: history ? try cache.load() : try cache.loadLatest())
    }
}

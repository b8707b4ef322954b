import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Why a command talks to the price service, which sets its time budget.
public enum NetworkPurpose: Sendable {
    /// A report's refresh, or a coin-list refresh while resolving a coin: about 3 s.
    case automatic
    /// A command run for the network's sake (`price refresh`, `coins update`): 30 s.
    case explicit
}

/// How to reach the price service. The front end reads it from its environment only when a command
/// first needs the network, so a bad setting fails only the commands that would use it.
public struct NetworkSettings: Sendable {
    public var config: PriceServiceConfig
    /// Keys to redact from every message.
    public var secrets: [String]
    /// A budget in seconds that replaces the purpose's own (`BITPAL_HTTP_TIMEOUT`).
    public var timeoutOverride: Int?

    public init(config: PriceServiceConfig, secrets: [String], timeoutOverride: Int? = nil) {
        self.config = config
        self.secrets = secrets
        self.timeoutOverride = timeoutOverride
    }
}

/// What the outside world gives a session: the data folder, the time, the network and the waits.
/// Tests pass a temporary folder, a fixed time, a fake transport and a clock they control.
public struct SessionEnvironment {
    public var directory: String
    /// The moment the command started; every check of one run uses this one reading.
    public var now: Date
    /// Never touch the network (cached and manual prices only).
    public var offline: Bool
    public var transport: any HTTPTransport
    /// A monotonic clock in seconds, for network budgets.
    public var clock: @Sendable () -> TimeInterval
    /// Waits between retries.
    public var sleep: @Sendable (TimeInterval) -> Void
    /// Called at the first network use; may throw to refuse a bad setting.
    public var network: () throws -> NetworkSettings
    /// The zone of calendar days: bare dates in price files, and the days the price cache keeps one quote of.
    public var timeZone: TimeZone

    public init(directory: String, now: Date, offline: Bool, transport: any HTTPTransport,
                clock: @escaping @Sendable () -> TimeInterval = NetworkBudget.monotonicNow,
                sleep: @escaping @Sendable (TimeInterval) -> Void = { _ in },
                timeZone: TimeZone = .current,
                network: @escaping () throws -> NetworkSettings) {
        self.timeZone = timeZone
        self.directory = directory
        self.now = now
        self.offline = offline
        self.transport = transport
        self.clock = clock
        self.sleep = sleep
        self.network = network
    }
}

/// Something a session went on after, for the front end to word: every case is a warning.
public enum SessionNotice {
    /// The cached coin list could not be read; the built-in coins are used.
    case catalogCacheUnreadable(StoreError)
    /// The coin list was not refreshed: a recent failure, or this error.
    case catalogNotRefreshed(NetworkFailure?, Error?)
    /// Prices were not refreshed after a failure of the last minutes; `known` says whether any are.
    case pricesNotRefreshedRecently(NetworkFailure, known: Bool)
    /// Refreshing prices failed; the last known ones are shown.
    case pricesNotRefreshed(Error)
    /// A warning of the price service's reply (an unusable number, say).
    case service(String)
    /// The price cache could not be appended to and was moved aside.
    case priceCacheMovedAside(StoreError)
    /// The price cache could not be read; only manual prices are used.
    case priceCacheUnreadable(StoreError)
    /// The store breaks rules; with `leftOut` the records were left out of the replay.
    case storeBreaksRules(path: String, problems: [String], count: Int, leftOut: Bool)
    /// A version-1 store was written in the current version, after the old file was kept as `backup`.
    /// `days` of its records were dated as calendar days (they were the writer's local midnights).
    case storeMigrated(backup: String, days: Int)
}

/// A network failure remembered for a few minutes (`.network-failure` in the data folder).
public struct NetworkFailure: Equatable, Sendable {
    public var at: Date
    /// Already redacted and on one line; may be empty.
    public var reason: String
    /// When automatic refreshes are tried again.
    public var retryAfter: Date
}

/// One run of bitpal against one data folder: the store, the price cache, the coin list and the
/// price service, and the names of what they hold. The front end parses arguments and renders;
/// everything that reads, fetches, resolves or replays is here.
public final class Session {
    public let directory: String
    public let now: Date
    public let offline: Bool
    /// The zone of calendar days (see `SessionEnvironment.timeZone`).
    public let timeZone: TimeZone
    private let environment: SessionEnvironment
    /// Receives every warning; the front end words it.
    public var notify: (SessionNotice) -> Void

    public init(_ environment: SessionEnvironment, notify: @escaping (SessionNotice) -> Void = { _ in }) {
        self.environment = environment
        self.directory = environment.directory
        self.now = environment.now
        self.offline = environment.offline
        self.timeZone = environment.timeZone
        self.notify = notify
    }

    public var store: PortfolioStore {
        var store = PortfolioStore(directory: directory, timeZone: timeZone)
        nonisolated(unsafe) let notify = self.notify
        store.migrated = { notify(.storeMigrated(backup: $0, days: $1)) }
        return store
    }
    public var priceCache: PriceCache { PriceCache(directory: directory) }
    public var catalogCache: CatalogCache { CatalogCache(directory: directory) }

    // MARK: The book

    /// Registered assets of the book last read (for naming them).
    public private(set) var registeredAssets: [String: Asset] = [:]
    /// How many portfolios the book last read has (messages name the portfolio when there are several).
    public private(set) var portfolioCount = 1
    /// The price cache's rates, read at most once a run (an import may ask for a rate on every row).
    private let cachedRatesBox = Once<[FXRate]>()

    /// Reads the whole store and remembers what names need of it.
    public func loadBook() throws -> Book {
        var book = try store.load()
        remember(book)
        book.moreRates = cachedRates
        return book
    }

    /// The price cache's fetched and imported rates, read when a book's own table has none for a
    /// record (`Book.moreRates`).
    public var cachedRates: @Sendable () -> [FXRate] {
        let box = cachedRatesBox
        return { [priceCache] in
            box.value { (try? priceCache.loadHistory(.rates)).map { Session.cachedRates(PriceBook(fetched: $0)) } ?? [] }
        }
    }

    /// The portfolios and registered assets only, for commands that resolve arguments and then
    /// write through the store (which reads the whole book under its lock).
    public func loadSettings() throws -> Book {
        var book = try store.loadSettings()
        remember(book)
        book.moreRates = cachedRates
        return book
    }

    /// Makes `change` to the book through the store (which checks the whole history under its lock):
    /// the records added, changed or removed, grouped by link. Rates come from the book's table and
    /// the price cache, as every report finds them.
    public func commit(_ change: TransactionChange, names: MessageNames) throws -> [[Transaction]] {
        let store = self.store
        let rates = cachedRates
        return try store.update(now: now, names: names) { book in
            book.moreRates = rates
            return (true, try book.apply(change, now: now, lines: { (try? store.transactionLines()) ?? [] }))
        }
    }

    /// Makes a setting change through the store: what it did, and the book as written.
    public func commit(_ change: SettingChange, names: MessageNames) throws -> (applied: SettingApplied, book: Book) {
        try store.update(now: now, names: names) { book in
            let done = try book.apply(change, now: now)
            return (done.changed, (done, book))
        }
    }

    /// Imports `document` through the store, all or nothing (`TransactionImport.merge`): into
    /// `portfolio` where a row names none, rates found as every report finds them; with `dryRun`,
    /// what it would do, writing nothing.
    public func commitImport(_ document: ImportDocument, portfolio: String, allowDuplicates: Bool, dryRun: Bool, names: MessageNames,
                             resolveAsset: (String) throws -> String) throws -> ImportOutcome {
        let rates = cachedRates
        return try store.update(now: now, names: names) { book in
            book.moreRates = rates  // a row in another currency finds fetched and imported rates too
            let outcome = try TransactionImport.merge(document, into: &book, portfolio: portfolio, now: now, allowDuplicates: allowDuplicates,
                                                      timeZone: timeZone, names: names, resolveAsset: resolveAsset)
            return (!dryRun && outcome.changesStore, outcome)
        }
    }

    /// Keeps the registered assets and the portfolio count for naming things.
    public func remember(_ book: Book) {
        registeredAssets = Dictionary(book.assets.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        portfolioCount = book.portfolios.count
    }

    /// The replay of `book`; records that break a rule are left out (with `replaying`) and the
    /// problems reported as a notice. `names` words them. Cash movements are kept only with `cashMovements`.
    public func checkedLedger(_ book: Book, replaying: Bool = true, cashMovements: Bool = false, names: MessageNames,
                              tune: (inout LedgerOptions) -> Void = { _ in }) -> Ledger {
        var options = book.ledgerOptions
        options.keepingCashMovements = cashMovements
        tune(&options)
        let checked = book.checked(now: now, replaying: replaying, options: options)
        if !checked.problems.isEmpty {
            let lines = (try? store.transactionLines()) ?? []
            let first = checked.problems.prefix(2).map { PortfolioStore.describe($0, lines: lines, names: names) }
            notify(.storeBreaksRules(path: store.path, problems: first, count: checked.problems.count, leftOut: replaying))
        }
        return checked.ledger
    }

    /// The reports of `portfolios` with fresh-enough prices: replays every portfolio and (with
    /// `refresh`) fetches prices first when a held coin's newest quote is over 60 s old, unless
    /// offline. Registered assets are never fetched.
    ///
    /// `tune` changes how the book is replayed (disposals kept, a method tried in place of a portfolio's own).
    public func reports(_ book: Book, portfolios: Set<String>, refresh: Bool, currency: String? = nil, names: MessageNames,
                        tune: (inout LedgerOptions) -> Void = { _ in }) throws -> Reports {
        let ledger = checkedLedger(book, names: names, tune: tune)
        let (prices, base) = try prices(book, ledger: ledger, portfolios: portfolios, currency: currency, refresh: refresh, history: nil)
        var reports = Reports(ledger: ledger, prices: prices, now: now, portfolios: portfolios, baseCurrency: base, rates: fxTable(book, prices: prices),
                              asset: assetLookup(ledger.positions.keys.map(\.assetId) + ledger.income.map(\.assetId)))
        reports.portfolioBases = Dictionary(book.portfolios.map { ($0.name, $0.baseCurrency) }, uniquingKeysWith: { a, _ in a })
        return reports
    }

    /// The prices a report of `portfolios` uses (with `history`, every quote) and the currency it shows:
    /// `currency`, else the portfolios' common base, else the default portfolio's. With `refresh`, the
    /// held coins' quotes (in every base they are shown in, one request) and the rates are refreshed
    /// first under the reports' rule (over 60 s old, never offline, not after a recent failure).
    func prices(_ book: Book, ledger: Ledger, portfolios: Set<String>, currency: String?, refresh: Bool,
                history: PriceHistoryScope?) throws -> (prices: PriceBook, base: String) {
        var prices = priceBook(book, scope: history)
        let bases = Set(book.portfolios.filter { portfolios.contains($0.name) }.map(\.baseCurrency))
        let base = currency ?? (bases.count == 1 ? bases.first ?? "USD" : book.portfolio(named: book.defaultPortfolio)?.baseCurrency ?? "USD")
        if refresh {
            let coins = ledger.openPositions.filter { portfolios.contains($0.key.portfolio) && !Asset.isRegisteredID($0.assetId) }
                .map(\.assetId)
            prices = try refreshIfNeeded(coins: coins, book: prices, currencies: Array(bases.union([base])).sorted())
            prices = refreshRatesIfNeeded(book, prices: prices, history: history)
        }
        return (Self.withTradePrices(prices, book: book, ledger: ledger, portfolios: portfolios), base)
    }

    /// `prices` with a quote at each trade of an asset the portfolios hold (or held) that has no quote at
    /// all — manual, fetched or imported, in any currency: a holding never priced is valued at its latest
    /// trade's price (as hledger's `--infer-market-prices` and Portfolio Performance do), and the quote says
    /// so (`.trade`). Nothing is scanned when every asset has a quote.
    static func withTradePrices(_ prices: PriceBook, book: Book, ledger: Ledger, portfolios: Set<String>) -> PriceBook {
        var lacking = Set<String>()
        for key in ledger.positions.keys where portfolios.contains(key.portfolio) && !key.assetId.isEmpty && prices.latest(key.assetId) == nil {
            lacking.insert(key.assetId)
        }
        if lacking.isEmpty { return prices }
        var trades: [(t: Transaction, price: Decimal)] = []
        // The splits of each position after a trade make its price today's units' price (a 2:1 split halves it).
        var splits: [PositionKey: [(date: Date, ratio: Decimal)]] = [:]
        for t in book.transactions where lacking.contains(t.assetId) {
            if t.type == .split {
                let old = t.priceValue?.decimal ?? 1
                guard !old.isZero else { continue }
                splits[PositionKey(portfolio: t.portfolio, assetId: t.assetId), default: []].append((t.date, t.amountValue.decimal / old))
            } else if t.rule.price == .positive, let price = t.priceValue, price.units > 0 {
                trades.append((t, price.decimal))
            }
        }
        var out = prices
        out.add(trades.map { trade in
            var price = trade.price
            for split in splits[PositionKey(portfolio: trade.t.portfolio, assetId: trade.t.assetId)] ?? [] where split.date > trade.t.date {
                price /= split.ratio
            }
            let currency = trade.t.currency ?? book.portfolio(named: trade.t.portfolio)?.baseCurrency ?? "USD"
            return Quote(coinId: trade.t.assetId, price: price, time: trade.t.date, source: .trade, currency: currency)
        })
        return out
    }

    // MARK: Names

    /// How reports and messages name an asset: a registered asset by its code and name, a coin by the catalog.
    public func assetLabel(_ id: String) -> AssetLabel {
        if let a = registeredAssets[id] { return AssetLabel(asset: a) }
        if Asset.isRegisteredID(id) { return AssetLabel.unknown(id) }
        let c = coin(id: id)
        return c.name == c.id && c.symbol == c.id ? AssetLabel.unknown(id) : AssetLabel(coin: c)
    }

    /// A `@Sendable` lookup for reports over `ids`.
    public func assetLookup(_ ids: some Sequence<String>) -> @Sendable (String) -> AssetLabel {
        var table: [String: AssetLabel] = [:]
        for id in ids where table[id] == nil { table[id] = assetLabel(id) }
        let frozen = table
        return { id in frozen[id] ?? AssetLabel.unknown(id) }
    }

    /// What the user typed as an ASSET: a registered code (any case) first, then a coin id or symbol.
    public func resolveAsset(_ query: String, in book: Book) throws -> AssetLabel {
        if let code = Asset.code(query), let a = book.asset(id: code) { return AssetLabel(asset: a) }
        return AssetLabel(coin: try resolveCoin(query))
    }

    // MARK: Coins

    private var loadedCatalog: CoinCatalog?
    private var cacheLoaded = false
    /// One coin-list refresh per run at most, even when many coins are unknown (or the service is down).
    private var catalogRefreshTried = false

    /// The built-in coins, plus the cached full list once it has been needed.
    public func catalog(includingCache: Bool = false) -> CoinCatalog {
        var catalog = loadedCatalog ?? CoinCatalog()
        if includingCache && !cacheLoaded {
            cacheLoaded = true
            do {
                if let loaded = try catalogCache.load() { catalog.add(loaded.coins) }
            } catch {
                notify(.catalogCacheUnreadable(error))
            }
        }
        loadedCatalog = catalog
        return catalog
    }

    /// The coin for a stored id: catalog entry, else a stand-in named by its id.
    public func coin(id: String) -> Coin {
        if let c = catalog().coin(id: id) { return c }
        return catalog(includingCache: true).coin(id: id) ?? Coin.unknown(id)
    }

    /// Resolves what the user typed to a coin.
    ///
    /// A close match in the local catalog (built-in coins and the cached list) is answered at once
    /// with "did you mean", never after a network wait. Only when nothing known is close, and the
    /// cached list is missing or older than 7 days, is the list fetched (once per run, within the
    /// reports' short budget, not after a recent network failure).
    public func resolveCoin(_ query: String) throws -> Coin {
        if let c = catalog().resolve(query) { return c }
        if let c = catalog(includingCache: true).resolve(query) { return c }
        let near = catalog().suggestions(for: query)
        if near.isEmpty && !offline && !catalogRefreshTried {
            catalogRefreshTried = true
            if let failure = rememberedNetworkFailure() {
                notify(.catalogNotRefreshed(failure, nil))
            } else {
                do {
                    if try refreshCatalogIfOld(), let c = catalog().resolve(query) { return c }
                } catch let error as PriceError {
                    notify(.catalogNotRefreshed(nil, error))
                } catch let error as StoreError {
                    notify(.catalogNotRefreshed(nil, error))
                }
            }
        }
        throw PortfolioError.coinNotFound(query: query, suggestions: near.isEmpty ? catalog().suggestions(for: query) : near)
    }

    /// Fetches the full coin list when the cache is missing or older than 7 days (with the
    /// reports' short budget); true when it did.
    @discardableResult
    public func refreshCatalogIfOld() throws -> Bool {
        if let loaded = try? catalogCache.load(), now.timeIntervalSince(loaded.fetchedAt) < CatalogCache.maxAge { return false }
        try updateCatalog(.automatic)
        return true
    }

    /// Fetches the full coin list into the cache; the number of coins.
    @discardableResult
    public func updateCatalog(_ purpose: NetworkPurpose) throws -> Int {
        let coins = try withPriceService(purpose) { client throws(PriceError) in try client.coinList() }
        try catalogCache.save(coins, fetchedAt: now)
        var catalog = CoinCatalog()
        catalog.add(coins)
        loadedCatalog = catalog
        cacheLoaded = true
        return coins.count
    }

    // MARK: The price service

    public static let automaticBudgetSeconds = 3
    public static let explicitBudgetSeconds = 30
    /// After a failure, automatic refreshes are skipped this long (reports use the cache at once).
    public static let failureMemorySeconds: TimeInterval = 300

    /// The budget of this run, fixed at its first network use and shared by every request after it.
    private var networkBudget: NetworkBudget?
    private var settings: NetworkSettings?

    /// The network settings, read (and checked) once; throws `PriceError.offline` when offline.
    public func networkSettings() throws -> NetworkSettings {
        if offline { throw PriceError.offline }
        if let settings { return settings }
        let read = try environment.network()
        settings = read
        return read
    }

    /// A client under this run's one budget.
    public func priceClient(_ purpose: NetworkPurpose) throws -> CoinGeckoClient {
        let settings = try networkSettings()
        let budget = networkBudget ?? NetworkBudget(
            seconds: settings.timeoutOverride ?? (purpose == .automatic ? Self.automaticBudgetSeconds : Self.explicitBudgetSeconds),
            clock: environment.clock)
        networkBudget = budget
        return CoinGeckoClient(config: settings.config, transport: environment.transport, budget: budget,
                               secrets: settings.secrets, sleep: environment.sleep)
    }

    /// Runs `body` with a client; a failure is remembered for a few minutes, a success forgets it.
    public func withPriceService<T>(_ purpose: NetworkPurpose, _ body: (CoinGeckoClient) throws(PriceError) -> T) throws -> T {
        let client = try priceClient(purpose)
        do {
            let result = try body(client)
            forgetNetworkFailure()
            return result
        } catch {
            rememberNetworkFailure(error, secrets: client.secrets)
            throw error
        }
    }

    private var networkFailurePath: String { directory + "/.network-failure" }

    /// A failure of the last few minutes; `nil` when there is none.
    public func rememberedNetworkFailure() -> NetworkFailure? {
        guard let bytes = try? FileSystem.read(networkFailurePath) else { return nil }
        let lines = bytes.split(separator: UInt8(ascii: "\n"), maxSplits: 1, omittingEmptySubsequences: false)
        guard let first = lines.first, let at = ISODate.parseTimestamp(utf8: first) else { return nil }
        let age = now.timeIntervalSince(at)
        guard age >= 0, age < Self.failureMemorySeconds else { return nil }
        let reason = lines.count > 1 ? String(decoding: lines[1], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) : ""
        return NetworkFailure(at: at, reason: String(reason.prefix(300)), retryAfter: at.addingTimeInterval(Self.failureMemorySeconds))
    }

    /// Writes `.network-failure` (the time, then the redacted reason). Best effort.
    private func rememberNetworkFailure(_ error: PriceError, secrets: [String]) {
        switch error {
        case .offline, .unknownCoin, .historyDays, .historyBeyondPlan: return  // the service answered: nothing to wait out
        default: break
        }
        let text = ISODate.format(now) + "\n" + PriceError.redact(error.description, secrets).replacingOccurrences(of: "\n", with: " ") + "\n"
        try? FileSystem.ensureDirectory(directory)
        try? FileSystem.writeAtomically(Array(text.utf8), to: networkFailurePath)
    }

    private func forgetNetworkFailure() { unlink(networkFailurePath) }

    // MARK: Prices

    /// Manual and cached quotes together: the newest of each asset, or with `history` every one.
    ///
    /// An unreadable price cache holds nothing the user typed: reports go on with the manual
    /// prices and a notice (the next refresh moves the file aside and starts afresh).
    public func priceBook(_ book: Book, history: Bool = false) -> PriceBook {
        priceBook(book, scope: history ? .everything : nil)
    }

    /// Manual and cached quotes together: the newest of each asset, or with a `scope` the history
    /// it asks for (and the newest quote of everything else).
    public func priceBook(_ book: Book, scope: PriceHistoryScope?) -> PriceBook {
        do {
            let fetched: [Quote]
            if let scope { fetched = try priceCache.loadHistory(scope) } else { fetched = try priceCache.loadLatest() }
            return PriceBook(manual: book.manualPrices, fetched: fetched)
        } catch {
            notify(.priceCacheUnreadable(error))
            return PriceBook(manual: book.manualPrices, fetched: [])
        }
    }

    /// Fetches `coins` in one batch and appends the quotes to the cache (under the cache lock only).
    public func fetchPrices(_ coins: [String], currencies: [String] = ["USD"], purpose: NetworkPurpose) throws -> FetchedPrices {
        let fetched = try withPriceService(purpose) { client throws(PriceError) in
            try client.prices(for: coins, currencies: currencies, now: now)
        }
        if !fetched.quotes.isEmpty, let broken = try priceCache.append(fetched.quotes, now: now, timeZone: timeZone) {
            notify(.priceCacheMovedAside(broken))
        }
        return fetched
    }

    // MARK: Exchange rates

    /// Fetched rates live in the price cache as quotes of `fx:FROM/TO` (units of TO per FROM).
    public static func rateQuoteID(from: String, to: String) -> String { "fx:\(from)/\(to)" }

    /// What `fx refresh` fetched, and the currencies the service had no rate for.
    public struct RefreshedRates: Sendable {
        public var rates: [FXRate]
        public var missing: [String]
    }

    /// One request to the price service's `/exchange_rates`: the rate of every currency the book uses
    /// (and USD, the currency of fetched prices) into every portfolio's base, kept in the price cache.
    public func refreshRates(_ book: Book, purpose: NetworkPurpose) throws -> RefreshedRates {
        let perBitcoin = try withPriceService(purpose) { client throws(PriceError) in try client.exchangeRates() }
        let currencies = currencies(of: book)
        var rates: [FXRate] = []
        var missing = Set<String>()
        for base in Set(book.portfolios.map(\.baseCurrency)).sorted() {
            for c in currencies.sorted() where c != base {
                // FROM→TO = value[TO] ÷ value[FROM], both "units per 1 BTC"; rounded half-up at 18 decimals.
                guard let to = perBitcoin[base.lowercased()] else { missing.insert(base); continue }
                guard let from = perBitcoin[c.lowercased()] else { missing.insert(c); continue }
                var exact = to / from, rounded = Decimal()
                NSDecimalRound(&rounded, &exact, 18, .plain)
                guard let rate = Fixed18(rounded), rate.units > 0 else { missing.insert(c); continue }
                rates.append(FXRate(from: c, to: base, rate: rate, date: now, source: .coingecko))
            }
        }
        let quotes = rates.map {
            Quote(coinId: Self.rateQuoteID(from: $0.from, to: $0.to), price: $0.rate.decimal, time: now, source: .coingecko, currency: $0.to)
        }
        if !quotes.isEmpty, let broken = try priceCache.append(quotes, now: now, timeZone: timeZone) { notify(.priceCacheMovedAside(broken)) }
        return RefreshedRates(rates: rates, missing: missing.sorted())
    }

    /// The currencies the book's money is in (USD included: fetched prices are in it).
    private func currencies(of book: Book) -> Set<String> {
        var currencies: Set<String> = ["USD"]
        for t in book.transactions { if let c = t.currency { currencies.insert(c) } }
        for a in book.assets { currencies.insert(a.currency) }
        for q in book.manualPrices { currencies.insert(q.currency) }
        for r in book.fxRates { currencies.formUnion([r.from, r.to]) }
        return currencies
    }

    /// Reports refresh the rates with the prices, under the same rules: only when money in another
    /// currency than a base is in use and the newest fetched rate is over 60 s old, not offline, not
    /// after a recent failure; a failure is a notice and the last known rates are used.
    func refreshRatesIfNeeded(_ book: Book, prices: PriceBook, history: PriceHistoryScope? = nil) -> PriceBook {
        guard !offline else { return prices }
        let bases = Set(book.portfolios.map(\.baseCurrency))
        guard !currencies(of: book).union(bases).subtracting(bases).isEmpty || bases.count > 1 else { return prices }
        let newest = prices.latestQuotes.filter { $0.coinId.hasPrefix("fx:") }.map(\.time).max()
        if let newest, now.timeIntervalSince(newest) < 60 { return prices }
        // After a recent failure the prices' refresh (just before) has said so: not twice.
        if rememberedNetworkFailure() != nil { return prices }
        do {
            _ = try refreshRates(book, purpose: .automatic)
            return priceBook(book, scope: history)
        } catch {
            notify(.pricesNotRefreshed(error))
            return prices
        }
    }

    /// The rate table reports use: rates typed by hand, then the fetched and imported ones of the
    /// price cache (every one `prices` holds: the newest of each pair, or with a history book all of them).
    public func fxTable(_ book: Book, prices: PriceBook) -> FXTable {
        var rates = book.fxRates
        for newest in prices.latestQuotes where newest.coinId.hasPrefix("fx:") {
            let pair = newest.coinId.dropFirst(3).split(separator: "/").map(String.init)
            guard pair.count == 2 else { continue }
            for q in prices.history(newest.coinId) {
                guard let rate = Fixed18(q.price), rate.units > 0 else { continue }
                rates.append(FXRate(from: pair[0], to: pair[1], rate: rate, date: q.time, source: q.source == .imported ? .imported : .coingecko))
            }
        }
        return FXTable(rates)
    }

    /// Refreshes when any of `coins` has a newest quote over 60 s old, within the short budget; on
    /// failure (or after one in the last few minutes) reports a notice and keeps the cache.
    /// Throws only for bad network settings (checked whenever online).
    public func refreshIfNeeded(coins: [String], book: PriceBook, currencies: [String] = ["USD"]) throws -> PriceBook {
        guard !offline else { return book }
        _ = try networkSettings()
        let stale = book.needsRefresh(Array(Set(coins)).sorted(), now: now)
        guard !stale.isEmpty else { return book }
        if let failure = rememberedNetworkFailure() {
            notify(.pricesNotRefreshedRecently(failure, known: !book.isEmpty))
            return book
        }
        do {
            var updated = book
            let fetched = try fetchPrices(stale, currencies: currencies, purpose: .automatic)
            for w in fetched.warnings { notify(.service(w)) }
            updated.add(fetched.quotes)
            return updated
        } catch let error as PriceError {
            notify(.pricesNotRefreshed(error))
        } catch let error as StoreError {
            notify(.pricesNotRefreshed(error))
        }
        return book
    }
}

/// One cost-basis method's figures for a portfolio (`compare`).
public struct MethodComparison: Sendable, Equatable {
    public var method: CostBasisMethod
    /// The portfolio's own method.
    public var current: Bool
    /// Realized in the period (all time without one).
    public var realized: Exact36
    /// `nil` under `average`.
    public var shortTerm: Exact36?
    public var longTerm: Exact36?
    /// Over the priced holdings; `nil` when none is priced.
    public var unrealized: Exact36?
    public var openBasis: Exact36?
}

extension Session {
    /// What every method gives for `portfolio` (`compare`): the book replayed once per method with
    /// that portfolio's method replaced (nothing written; lots that moves bring from other
    /// portfolios arrive as their source's own method took them).
    public func compare(_ book: Book, portfolio: Portfolio, since: Date?, until: Date?, timeZone: TimeZone, refresh: Bool,
                        currency: String? = nil, names: MessageNames) throws -> (reports: Reports, methods: [MethodComparison]) {
        var first: Reports?
        var rows: [MethodComparison] = []
        for method in CostBasisMethod.allCases {
            var reports: Reports
            if var r = first {
                var options = book.ledgerOptions
                options.keepingCashMovements = false
                options.keepingDisposals = true
                options.methods[portfolio.name] = method
                r.ledger = book.checked(now: now, options: options).ledger
                reports = r
            } else {
                reports = try self.reports(book, portfolios: [portfolio.name], refresh: refresh, currency: currency, names: names) {
                    $0.keepingDisposals = true
                    $0.methods[portfolio.name] = method
                }
                first = reports
            }
            let gains = reports.gains(since: since, until: until, timeZone: timeZone)
            let holdings = reports.holdings()
            let priced = holdings.holdings.count > holdings.unpricedCount
            rows.append(MethodComparison(
                method: method, current: method == portfolio.costBasisMethod, realized: gains.total,
                shortTerm: method == .average ? nil : gains.shortTerm ?? .zero, longTerm: method == .average ? nil : gains.longTerm ?? .zero,
                unrealized: priced ? holdings.unrealizedPnL : nil, openBasis: priced ? holdings.totalCost : nil))
        }
        guard let reports = first else { throw PortfolioError.portfolioNotFound(portfolio.name) }
        return (reports, rows)
    }

    /// What one record did (`explain`): the book replayed up to and through it, by its portfolio's
    /// method; with what is left of the lots it made, wherever moves took them.
    public func explain(_ book: Book, index: Int, names: MessageNames) -> (explanation: Explanation?, remaining: [(portfolio: String, lot: Lot)]) {
        let tx = book.transactions[index]
        let ledger = checkedLedger(book, names: names) { $0.explaining = tx.id }
        var remaining: [(String, Lot)] = []
        // A move's receiving leg made no lot of its own: it brought the lots of their first acquisitions.
        let brought = tx.type == .transferIn && tx.linkedId != nil
        let sources = Set((ledger.explanation?.made ?? []).compactMap(\.source))
        for p in ledger.positions.values where p.key.assetId == tx.assetId && p.isOpen && (!brought || p.key.portfolio == tx.portfolio) {
            for lot in p.lots.open where brought ? lot.source.map(sources.contains) ?? false : lot.source == tx.id {
                remaining.append((p.key.portfolio, lot))
            }
        }
        remaining.sort { $0.0 < $1.0 }
        return (ledger.explanation, remaining)
    }
}

/// A value made the first time it is asked for, then kept (thread-safe).
final class Once<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var made: Value?

    func value(_ make: () -> Value) -> Value {
        lock.lock()
        defer { lock.unlock() }
        if let made { return made }
        let v = make()
        made = v
        return v
    }
}

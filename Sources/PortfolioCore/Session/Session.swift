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
    /// The exchange-rate service (the ECB's rates).
    public var fxConfig: FXServiceConfig
    /// Keys to redact from every message.
    public var secrets: [String]
    /// A budget in seconds that replaces the purpose's own (`BITPAL_HTTP_TIMEOUT`).
    public var timeoutOverride: Int?
    /// Yahoo Finance's base URL (`BITPAL_YAHOO_URL`) and the User-Agent sent to it (`BITPAL_USER_AGENT`).
    public var yahoo: (url: String, userAgent: String)
    /// Twelve Data's base URL (`BITPAL_TWELVEDATA_URL`) and key (`BITPAL_TWELVEDATA_KEY`, `nil` when not set).
    public var twelveData: (url: String, key: String?)

    public init(config: PriceServiceConfig, fxConfig: FXServiceConfig = FXServiceConfig(environment: [:]), secrets: [String],
                timeoutOverride: Int? = nil,
                yahoo: (url: String, userAgent: String) = (YahooClient.defaultURL, "Mozilla/5.0 (compatible; bitpal)"),
                twelveData: (url: String, key: String?) = (TwelveDataClient.defaultURL, nil)) {
        self.config = config
        self.fxConfig = fxConfig
        self.secrets = secrets
        self.timeoutOverride = timeoutOverride
        self.yahoo = yahoo
        self.twelveData = twelveData
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
    /// Fetching the ECB's rates for a missing day failed; the record waits for a rate.
    case ratesNotFetched(Error)
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

/// One run of bitpal against one data folder, in parts: the book (`repository`), prices and rates
/// (`prices`), names (`resolver`) and the price service (`service`); and the reports made of them.
/// The front end parses arguments and renders; everything that reads, fetches, resolves or replays is here.
public final class Session {
    public let directory: String
    public let now: Date
    public let offline: Bool
    /// The zone of calendar days (see `SessionEnvironment.timeZone`).
    public let timeZone: TimeZone
    public let service: PriceService
    public let resolver: Resolver
    public let prices: Prices
    public let repository: Repository
    private let notices: Notices
    /// Receives every warning; the front end words it.
    public var notify: (SessionNotice) -> Void {
        get { notices.send }
        set { notices.send = newValue }
    }

    public init(_ environment: SessionEnvironment, notify: @escaping (SessionNotice) -> Void = { _ in }) {
        directory = environment.directory
        now = environment.now
        offline = environment.offline
        timeZone = environment.timeZone
        let notices = Notices(notify)
        self.notices = notices
        service = PriceService(environment)
        resolver = Resolver(environment, service: service, notices: notices)
        prices = Prices(environment, service: service, resolver: resolver, notices: notices)
        repository = Repository(environment, prices: prices, resolver: resolver, notices: notices)
    }

    /// The replay of `book`; records that break a rule are left out (with `replaying`) and the
    /// problems reported as a notice. `names` words them. Cash movements are kept only with `cashMovements`.
    public func checkedLedger(_ book: Book, replaying: Bool = true, cashMovements: Bool = false, names: MessageNames,
                              tune: (inout LedgerOptions) -> Void = { _ in }) -> Ledger {
        checkedHistory(book, replaying: replaying, cashMovements: cashMovements, names: names, tune: tune).ledger
    }

    /// `checkedLedger`, with the problems it reported.
    func checkedHistory(_ book: Book, replaying: Bool = true, cashMovements: Bool = false, names: MessageNames,
                        tune: (inout LedgerOptions) -> Void = { _ in }) -> CheckedHistory {
        var options = book.ledgerOptions
        options.keepingCashMovements = cashMovements
        tune(&options)
        let checked = book.checked(now: now, replaying: replaying, options: options)
        if !checked.problems.isEmpty {
            let store = repository.store
            let lines = (try? store.transactionLines()) ?? []
            let first = checked.problems.prefix(2).map { PortfolioStore.describe($0, lines: lines, names: names) }
            notify(.storeBreaksRules(path: store.path, problems: first, count: checked.problems.count, leftOut: replaying))
        }
        return checked
    }

    /// The reports of `portfolios` with fresh-enough prices: replays every portfolio and (with
    /// `refresh`) fetches prices first when a held coin's newest quote is over 60 s old, unless
    /// offline. Registered assets are never fetched.
    ///
    /// `tune` changes how the book is replayed (disposals kept, a method tried in place of a portfolio's own).
    /// `replayed` is the book's replay as reports make it, when known (`Repository.loadForReports`): used
    /// unless `tune` asks for another; a book without its transactions (`Book.omitted`) is then read whole.
    /// Otherwise, with the `source` of the book read, a replay that finds no rule broken is left as a snapshot.
    public func reports(_ book: Book, replayed: Ledger? = nil, source: SnapshotSource? = nil, portfolios: Set<String>, refresh: Bool,
                        currency: String? = nil, names: MessageNames, tune: (inout LedgerOptions) -> Void = { _ in }) throws -> Reports {
        let plain = Self.isPlain(tune)
        if book.omitted != nil, replayed == nil || !plain {
            return try reports(try repository.loadBook(), portfolios: portfolios, refresh: refresh, currency: currency, names: names, tune: tune)
        }
        let ledger: Ledger
        if plain, let replayed {
            ledger = replayed
        } else {
            let checked = checkedHistory(book, names: names, tune: tune)
            ledger = checked.ledger
            if plain, let source, checked.problems.isEmpty { repository.store.refreshSnapshot(source, book: book, ledger: ledger, now: now) }
        }
        let (quotes, base) = try reportPrices(book, ledger: ledger, portfolios: portfolios, currency: currency, refresh: refresh, history: nil)
        var reports = Reports(ledger: ledger, prices: quotes, now: now, portfolios: portfolios, baseCurrency: base,
                              rates: prices.fxTable(book, prices: quotes), asset: resolver.assetLookup(ledger.positions.keys.map(\.assetId) + ledger.income.map(\.assetId)))
        reports.portfolioBases = Dictionary(book.portfolios.map { ($0.name, $0.baseCurrency) }, uniquingKeysWith: { a, _ in a })
        return reports
    }

    /// The prices a report of `portfolios` uses (with `history`, every quote) and the currency it shows:
    /// `currency`, else the portfolios' common base, else the default portfolio's. With `refresh`, the
    /// held coins' quotes (in every base they are shown in, one request) and the rates are refreshed
    /// first under the reports' rule (over 60 s old, never offline, not after a recent failure).
    func reportPrices(_ book: Book, ledger: Ledger, portfolios: Set<String>, currency: String?, refresh: Bool,
                      history: PriceHistoryScope?) throws -> (prices: PriceBook, base: String) {
        var quotes = prices.priceBook(book, scope: history)
        let bases = Set(book.portfolios.filter { portfolios.contains($0.name) }.map(\.baseCurrency))
        let base = currency ?? (bases.count == 1 ? bases.first ?? "USD" : book.portfolio(named: book.defaultPortfolio)?.baseCurrency ?? "USD")
        if refresh {
            let coins = ledger.openPositions.filter { portfolios.contains($0.key.portfolio) && !Asset.isRegisteredID($0.assetId) }
                .map(\.assetId)
            quotes = try prices.refreshIfNeeded(coins: coins, book: quotes, currencies: Array(bases.union([base])).sorted())
            let held = Set(ledger.openPositions.filter { portfolios.contains($0.key.portfolio) }.map(\.assetId))
            quotes = prices.refreshAssetsIfNeeded(book.assets.filter { held.contains($0.id) }, book: quotes)
            quotes = prices.refreshRatesIfNeeded(book, prices: quotes, history: history)
            // Value over time needs every past day's rate: fetched once when the table lacks the first day's.
            if let history, history.rates, let first = history.since {
                quotes = prices.fillRateHistoryIfNeeded(book, prices: quotes, since: first, history: history)
            }
        }
        return (try Self.withTradePrices(quotes, book: book, ledger: ledger, portfolios: portfolios) { try repository.loadBook().transactions }, base)
    }

    /// Whether `tune` leaves a report's replay as it is (nothing more kept, no method changed).
    public static func isPlain(_ tune: (inout LedgerOptions) -> Void) -> Bool {
        var options = LedgerOptions(keepingCashMovements: false)
        tune(&options)
        return options.trackingCash.isEmpty && options.methods.isEmpty && !options.keepingCashMovements && !options.keepingDisposals
            && options.explaining == nil && !options.keepingChanges
    }

    /// `prices` with a quote at each trade of an asset the portfolios hold (or held) that has no quote at
    /// all — manual, fetched or imported, in any currency: a holding never priced is valued at its latest
    /// trade's price (as hledger's `--infer-market-prices` and Portfolio Performance do), and the quote says
    /// so (`.trade`). Nothing is scanned when every asset has a quote.
    /// `transactions` gives the book's records when it holds none (`Book.omitted`).
    static func withTradePrices(_ prices: PriceBook, book: Book, ledger: Ledger, portfolios: Set<String>,
                                transactions: () throws -> [Transaction] = { [] }) rethrows -> PriceBook {
        var lacking = Set<String>()
        for key in ledger.positions.keys where portfolios.contains(key.portfolio) && !key.assetId.isEmpty && prices.latest(key.assetId) == nil {
            lacking.insert(key.assetId)
        }
        if lacking.isEmpty { return prices }
        var trades: [(t: Transaction, price: Decimal)] = []
        // The splits of each position after a trade make its price today's units' price (a 2:1 split halves it).
        var splits: [PositionKey: [(date: Date, ratio: Decimal)]] = [:]
        for t in book.omitted == nil ? book.transactions : try transactions() where lacking.contains(t.assetId) {
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

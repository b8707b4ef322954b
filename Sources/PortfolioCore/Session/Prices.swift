import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Prices and rates: the price cache with the prices set by hand, the quotes and rates reports use,
/// and fetching them from the price service under its rules.
public final class Prices {
    public let directory: String
    public let now: Date
    public let offline: Bool
    /// The zone of calendar days (the days the price cache keeps one quote of, bare dates in price files).
    public let timeZone: TimeZone
    let service: PriceService
    let resolver: Resolver
    let notices: Notices
    public var priceCache: PriceCache { PriceCache(directory: directory) }
    /// The price cache's rates, read at most once a run (an import may ask for a rate on every row).
    private let cachedRatesBox = Once<[FXRate]>()
    /// Rates fetched this run for a missing day (`rateFetcher`).
    let fetchedRates = FetchedRates()
    /// Twelve Data answered 429 this run: it is not asked again until the next.
    private var twelveDataRefused = false

    public init(_ environment: SessionEnvironment, service: PriceService, resolver: Resolver, notices: Notices) {
        directory = environment.directory
        now = environment.now
        offline = environment.offline
        timeZone = environment.timeZone
        self.service = service
        self.resolver = resolver
        self.notices = notices
    }

    /// The price cache's fetched and imported rates, read when a book's own table has none for a
    /// record (`Book.moreRates`), and those fetched this run for a missing day.
    public var cachedRates: @Sendable () -> [FXRate] {
        let box = cachedRatesBox, fetched = fetchedRates
        return { [priceCache] in
            box.value { (try? priceCache.loadHistory(.rates)).map { Prices.cachedRates(PriceBook(fetched: $0)) } ?? [] } + fetched.rates
        }
    }

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
            notices.send(.priceCacheUnreadable(error))
            return PriceBook(manual: book.manualPrices, fetched: [])
        }
    }

    /// Fetches `coins` in one batch and appends the quotes to the cache (under the cache lock only).
    public func fetchPrices(_ coins: [String], currencies: [String] = ["USD"], purpose: NetworkPurpose) throws -> FetchedPrices {
        let fetched = try service.withPriceService(purpose) { client throws(PriceError) in
            try client.prices(for: coins, currencies: currencies, now: now)
        }
        if !fetched.quotes.isEmpty, let broken = try priceCache.append(fetched.quotes, now: now, timeZone: timeZone) {
            notices.send(.priceCacheMovedAside(broken))
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
        let perBitcoin = try service.withPriceService(purpose) { client throws(PriceError) in try client.exchangeRates() }
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
        if !quotes.isEmpty, let broken = try priceCache.append(quotes, now: now, timeZone: timeZone) { notices.send(.priceCacheMovedAside(broken)) }
        return RefreshedRates(rates: rates, missing: missing.sorted())
    }

    /// The currencies the book's money is in (USD included: fetched prices are in it).
    func currencies(of book: Book) -> Set<String> {
        var currencies: Set<String> = ["USD"]
        for t in book.transactions { if let c = t.currency { currencies.insert(c) } }
        if let omitted = book.omitted { currencies.formUnion(omitted.currencies) }
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
        if service.rememberedNetworkFailure() != nil { return prices }
        do {
            _ = try refreshRates(book, purpose: .automatic)
            return priceBook(book, scope: history)
        } catch {
            notices.send(.pricesNotRefreshed(error))
            return prices
        }
    }

    /// The rate table reports use: rates typed by hand, then the fetched and imported ones of the
    /// price cache (every one `prices` holds: the newest of each pair, or with a history book all of them).
    public func fxTable(_ book: Book, prices: PriceBook) -> FXTable { FXTable(historyRates(book, prices: prices)) }

    /// Refreshes when any of `coins` has a newest quote over 60 s old, within the short budget; on
    /// failure (or after one in the last few minutes) reports a notice and keeps the cache.
    /// Throws only for bad network settings (checked whenever online).
    public func refreshIfNeeded(coins: [String], book: PriceBook, currencies: [String] = ["USD"]) throws -> PriceBook {
        guard !offline else { return book }
        _ = try service.networkSettings()
        let stale = book.needsRefresh(Array(Set(coins)).sorted(), now: now)
        guard !stale.isEmpty else { return book }
        if let failure = service.rememberedNetworkFailure() {
            notices.send(.pricesNotRefreshedRecently(failure, known: !book.isEmpty))
            return book
        }
        do {
            var updated = book
            let fetched = try fetchPrices(stale, currencies: currencies, purpose: .automatic)
            for w in fetched.warnings { notices.send(.service(w)) }
            updated.add(fetched.quotes)
            return updated
        } catch let error as PriceError {
            notices.send(.pricesNotRefreshed(error))
        } catch let error as StoreError {
            notices.send(.pricesNotRefreshed(error))
        }
        return book
    }

    /// The reports' refresh of registered assets with a quote source: those of `assets` whose newest
    /// quote is over 60 s old, under the same short budget, never offline, not after a recent failure;
    /// an asset that fails is a notice and its last known price is used.
    public func refreshAssetsIfNeeded(_ assets: [Asset], book: PriceBook) -> PriceBook {
        guard !offline else { return book }
        let byID = Dictionary(assets.filter { $0.quote != nil }.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        let stale = book.needsRefresh(byID.keys.sorted(), now: now).compactMap { byID[$0] }
        guard !stale.isEmpty else { return book }
        if let failure = service.rememberedMarketFailure() {
            notices.send(.pricesNotRefreshedRecently(failure, known: !book.isEmpty))
            return book
        }
        do {
            let fetched = try fetchAssetQuotes(stale, purpose: .automatic)
            for (id, error) in fetched.failures { notices.send(.service("\(TextEscaping.escaped(id)): \(error)")) }
            var updated = book
            updated.add(fetched.quotes)
            return updated
        } catch {
            notices.send(.pricesNotRefreshed(error))
            return book
        }
    }

    /// What a refresh of registered assets with a quote source fetched, and which could not be fetched and why.
    public struct AssetQuotes: Sendable {
        public var quotes: [Quote] = []
        public var failures: [(assetId: String, error: MarketDataError)] = []
        /// Prices a service sent that were dropped as unusable.
        public var dropped = 0
    }

    /// The charts of `assets` from their quote sources (daily bars since `since`, else the latest price
    /// with a few days), in the assets' order: Yahoo's at most 4 requests at once; Twelve Data's one
    /// after another (its plan counts requests a minute), none after its 429 (`notAsked`).
    private func charts(_ assets: [Asset], since: Date?, purpose: NetworkPurpose) throws -> [Result<YahooClient.Chart, MarketDataError>] {
        let services = Set(assets.compactMap { $0.quote?.service })
        let yahoo = services.contains(.yahoo) ? try service.yahooClient(purpose) : nil
        let twelveData = services.contains(.twelvedata) ? try service.twelveDataClient(purpose) : nil
        let now = self.now
        var results = Parallel.map(assets, width: 4) { asset -> Result<YahooClient.Chart, MarketDataError>? in
            guard let source = asset.quote, source.service == .yahoo, let yahoo else { return nil }
            do throws(MarketDataError) {
                return .success(try yahoo.chart(symbol: source.symbol, since: since, now: now))
            } catch {
                return .failure(error)
            }
        }
        for (i, asset) in assets.enumerated() where results[i] == nil {
            guard let source = asset.quote, source.service == .twelvedata, let twelveData else { continue }
            do throws(MarketDataError) {
                results[i] = .success(try twelveDataAsked { () throws(MarketDataError) in
                    if let since { return try twelveData.dailyCloses(symbol: source.symbol, since: since, now: now) }
                    return try twelveData.latest(symbol: source.symbol)
                })
            } catch {
                results[i] = .failure(error)
            }
        }
        return results.map { $0 ?? .failure(.unavailable(service: "bitpal", detail: "no quote source")) }
    }

    /// `chart` when it is in `asset`'s currency (an empty window may name none), else why not.
    private static func inCurrency(_ chart: YahooClient.Chart, of asset: Asset) -> Result<YahooClient.Chart, MarketDataError> {
        guard chart.currency == asset.currency || (chart.currency.isEmpty && chart.closes.isEmpty && chart.latest == nil) else {
            return .failure(.wrongCurrency(symbol: asset.quote?.symbol ?? asset.id, quoted: chart.currency, asset: asset.currency))
        }
        return .success(chart)
    }

    /// The latest quote of each asset in `assets` that has a quote source (one request a symbol,
    /// under the run's one budget), kept in the price cache as fetched. A failure of one asset never
    /// hides the others' quotes; a quote in another currency than the asset's is refused for it.
    /// After Twelve Data's 429 it is asked nothing more this run: its failure counts the symbols that wait.
    public func fetchAssetQuotes(_ assets: [Asset], purpose: NetworkPurpose) throws -> AssetQuotes {
        var out = AssetQuotes()
        let sourced = assets.filter { $0.quote != nil }
        guard !sourced.isEmpty else { return out }
        var refusal: Int?  // the index of Twelve Data's 429 among the failures
        for (asset, result) in zip(sourced, try charts(sourced, since: nil, purpose: purpose)) {
            guard let source = asset.quote else { continue }
            switch result.flatMap({ Self.inCurrency($0, of: asset) }) {
            case let .failure(error):
                if case .rateLimited = error {
                    refusal = out.failures.count
                } else if error == Self.notAsked, let refusal, case let .rateLimited(name, waiting) = out.failures[refusal].error {
                    out.failures[refusal].error = .rateLimited(service: name, waiting: waiting + 1)
                }
                out.failures.append((asset.id, error))
            case let .success(chart):
                out.dropped += chart.dropped
                guard let latest = chart.latest else {
                    out.failures.append((asset.id, .unavailable(service: source.service.name,
                                                                detail: "no latest price for '\(TextEscaping.escaped(source.symbol))'")))
                    continue
                }
                // As a coin's: the time it was fetched, the service's own time beside it.
                out.quotes.append(Quote(coinId: asset.id, price: latest.price, time: now, sourceUpdatedAt: latest.time,
                                        source: source.service.quoteSource, currency: asset.currency))
            }
        }
        // A source that could not answer is left alone by reports for a few minutes; one that answered is tried again.
        service.noteMarketFailure(out.failures.first { !$0.error.isBrokenRule }?.error)
        if !out.quotes.isEmpty, let broken = try priceCache.append(out.quotes, now: now, timeZone: timeZone) {
            notices.send(.priceCacheMovedAside(broken))
        }
        return out
    }

    /// What `fetchAssetHistories` got of one asset: its daily quotes, the splits its source reports
    /// (by the exchange's day), and how many prices were unusable.
    public struct AssetHistory: Sendable {
        public var quotes: [Quote]
        public var splits: [(day: Int64, new: Decimal, old: Decimal)]
        public var dropped: Int
    }

    /// The daily closes of `assets` since `since` from their quote sources, kept in the price cache in
    /// one write: as traded (Yahoo's split adjustment undone; Twelve Data's asked unadjusted), the last
    /// bar of each day of the asset's exchange, each dated that day (its first instant in this run's
    /// zone). Each asset's result on its own, in the assets' order.
    public func fetchAssetHistories(_ assets: [Asset], since: Date, purpose: NetworkPurpose) throws -> [Result<AssetHistory, MarketDataError>] {
        let results = try charts(assets, since: since, purpose: purpose).enumerated().map { i, result in
            result.flatMap { Self.inCurrency($0, of: assets[i]) }.map { chart in
                let exchange = chart.exchangeZone ?? timeZone
                var byDay: [Int64: Decimal] = [:]
                let traded = chart.closesAsTraded
                // Days of the exchange from the day `since` falls on (an exchange east of here starts its day earlier).
                let first = ISODate.dayNumber(of: since, in: timeZone)
                for bar in traded where bar.time <= now {
                    let day = ISODate.dayNumber(of: bar.time, in: exchange)
                    if day >= first { byDay[day] = bar.price }  // bars come in time order: the day's last wins
                }
                let quotes = byDay.keys.sorted().map { day in
                    Quote(coinId: assets[i].id, price: byDay[day] ?? 0, time: RecordDate.day(day, in: timeZone).date,
                          source: assets[i].quote?.service.quoteSource ?? .yahoo, currency: assets[i].currency)
                }.filter { $0.time <= now }
                return AssetHistory(quotes: quotes, splits: chart.splits.map { (ISODate.dayNumber(of: $0.time, in: exchange), $0.new, $0.old) },
                                    dropped: chart.dropped + chart.closes.count - traded.count)
            }
        }
        let all = results.flatMap { (try? $0.get().quotes) ?? [] }
        if !all.isEmpty, let broken = try priceCache.merge(all, now: now, timeZone: timeZone).setAside {
            notices.send(.priceCacheMovedAside(broken))
        }
        return results
    }

    /// Why an asset of Twelve Data was not asked: the service answered 429 earlier in this run.
    public static let notAsked = MarketDataError.unavailable(service: TwelveDataClient.name, detail: "not asked after its HTTP 429 earlier in this run")

    /// Asks Twelve Data unless it answered 429 earlier in this run (then `notAsked`); a 429 is remembered.
    private func twelveDataAsked(_ ask: () throws(MarketDataError) -> YahooClient.Chart) throws(MarketDataError) -> YahooClient.Chart {
        guard !twelveDataRefused else { throw Self.notAsked }
        do {
            return try ask()
        } catch {
            if case .rateLimited = error { twelveDataRefused = true }
            throw error
        }
    }

    /// Every rate known over time: those typed by hand (in recording order), then every fetched
    /// or imported `fx:FROM/TO` quote of the price history, oldest first.
    public func historyRates(_ book: Book, prices: PriceBook) -> [FXRate] { book.fxRates + Self.cachedRates(prices) }

    /// The fetched and imported rates among `prices` (`fx:FROM/TO` quotes), oldest first per pair.
    public static func cachedRates(_ prices: PriceBook) -> [FXRate] {
        var rates: [FXRate] = []
        for newest in prices.latestQuotes where newest.coinId.hasPrefix("fx:") {
            let pair = newest.coinId.dropFirst(3).split(separator: "/").map(String.init)
            guard pair.count == 2 else { continue }
            for q in prices.history(newest.coinId) {
                guard let rate = Fixed18(q.price), rate.units > 0 else { continue }
                rates.append(FXRate(from: pair[0], to: pair[1], rate: rate, date: q.time, source: FXRate.Source(rawValue: q.source.rawValue) ?? .coingecko))
            }
        }
        return rates
    }
}

import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Names: what a person types resolved to a registered asset or a coin (the built-in list, the cached
/// full list, a refresh of it when nothing known is close), and how reports and messages name them.
public final class Resolver {
    public let now: Date
    public var offline: Bool { service.offline }
    let service: PriceService
    let notices: Notices
    public var catalogCache: CatalogCache

    public init(_ environment: SessionEnvironment, service: PriceService, notices: Notices) {
        now = environment.now
        self.service = service
        self.notices = notices
        catalogCache = CatalogCache(directory: environment.directory)
    }

    /// Registered assets of the book last read (for naming them).
    public private(set) var registeredAssets: [String: Asset] = [:]
    /// How many portfolios the book last read has (messages name the portfolio when there are several).
    public private(set) var portfolioCount = 1

    /// Keeps the registered assets and the portfolio count for naming things.
    public func remember(_ book: Book) {
        registeredAssets = Dictionary(book.assets.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        portfolioCount = book.portfolios.count
    }

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
                notices.send(.catalogCacheUnreadable(error))
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
            if let failure = service.rememberedNetworkFailure() {
                notices.send(.catalogNotRefreshed(failure, nil))
            } else {
                do {
                    if try refreshCatalogIfOld(), let c = catalog().resolve(query) { return c }
                } catch let error as PriceError {
                    notices.send(.catalogNotRefreshed(nil, error))
                } catch let error as StoreError {
                    notices.send(.catalogNotRefreshed(nil, error))
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
        let coins = try service.withPriceService(purpose) { client throws(PriceError) in try client.coinList() }
        try catalogCache.save(coins, fetchedAt: now)
        var catalog = CoinCatalog()
        catalog.add(coins)
        loadedCatalog = catalog
        cacheLoaded = true
        return coins.count
    }
}

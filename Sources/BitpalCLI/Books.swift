import Foundation
import PortfolioCore

extension Context {
    /// Reads the store once per run and remembers what messages need of it (asset names, how
    /// many portfolios there are).
    func loadBook() throws -> Book {
        let book = try store().load()
        remember(book)
        return book
    }

    /// The portfolios and registered assets only, for commands that resolve arguments and then
    /// write through the store (which reads the whole book under its lock).
    func loadSettings() throws -> Book {
        let book = try store().loadSettings()
        remember(book)
        return book
    }

    /// Keeps the registered assets and the portfolio count for naming things in messages.
    func remember(_ book: Book) {
        registeredAssets = Dictionary(book.assets.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        portfolioCount = book.portfolios.count
    }

    /// How reports and messages name an asset: a registered asset by its code and name, a coin by the catalog.
    func assetLabel(_ id: String) -> AssetLabel {
        if let a = registeredAssets[id] { return AssetLabel(asset: a) }
        if Asset.isRegisteredID(id) { return AssetLabel.unknown(id) }
        let c = coin(id: id)
        return c.name == c.id && c.symbol == c.id ? AssetLabel.unknown(id) : AssetLabel(coin: c)
    }

    /// A `@Sendable` lookup for reports over `ids`.
    func assetLookup(_ ids: some Sequence<String>) -> @Sendable (String) -> AssetLabel {
        var table: [String: AssetLabel] = [:]
        for id in ids where table[id] == nil { table[id] = assetLabel(id) }
        let frozen = table
        return { id in frozen[id] ?? AssetLabel.unknown(id) }
    }

    /// What the user typed as an ASSET: a registered code (any case) first, then a coin id or symbol.
    func resolveAsset(_ query: String, in book: Book) throws -> AssetLabel {
        if let code = Asset.code(query), let a = book.asset(id: code) { return AssetLabel(asset: a) }
        return AssetLabel(coin: try resolveCoin(query))
    }

    /// `--portfolio`/`-p`, else `BITPAL_PORTFOLIO`, as typed (`nil` when neither is given).
    var portfolioOption: String? {
        if let p = globals.portfolio { return p }
        if let p = environment.variables["BITPAL_PORTFOLIO"], !p.isEmpty { return p }
        return nil
    }

    /// The portfolio a command works in: the one named by `--portfolio`/`-p`/`BITPAL_PORTFOLIO`, else the default.
    func portfolio(in book: Book) throws -> Portfolio {
        guard let name = portfolioOption else {
            return book.portfolio(named: book.defaultPortfolio) ?? book.portfolios[0]
        }
        return try Context.portfolio(named: name, in: book, option: "--portfolio")
    }

    /// The portfolio `name` names (any case): a usage error when it is not a valid name, "not found" when none has it.
    static func portfolio(named name: String, in book: Book, option: String) throws -> Portfolio {
        guard Portfolio.isValidName(name) else {
            throw UsageError.invalidValue(option: option, value: name,
                                          reason: "a portfolio name is 1–40 letters, digits, '-', '_' or '.'")
        }
        guard let p = book.portfolio(named: name) else { throw PortfolioError.portfolioNotFound(name) }
        return p
    }

    /// The portfolios a report covers: with `all`, every active one; else the chosen one.
    func selection(in book: Book, all: Bool) throws -> Set<String> {
        if all {
            if portfolioOption != nil && globals.portfolio != nil {
                throw UsageError.conflict("--all covers every active portfolio; leave out --portfolio")
            }
            return Set(book.portfolios.filter(\.active).map(\.name))
        }
        return [try portfolio(in: book).name]
    }
}

import Foundation
import PortfolioCore

extension Context {
    /// How reports and messages name an asset (the session's names; a bare id when there is no data folder).
    func assetLabel(_ id: String) -> AssetLabel { (try? session())?.resolver.assetLabel(id) ?? AssetLabel.unknown(id) }

    /// A `@Sendable` lookup for reports over `ids`.
    func assetLookup(_ ids: some Sequence<String>) -> @Sendable (String) -> AssetLabel {
        if let session = try? session() { return session.resolver.assetLookup(ids) }
        return { AssetLabel.unknown($0) }
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

import Foundation
import PortfolioCore

struct CoinsSearchCommand: Command {
    static let spec = CommandSpec(
        name: "coins search", summary: "Find coins by id, symbol or name", arguments: "QUERY",
        options: [OptionSpec("--limit", "N", "at most N results (default 10)")],
        group: "Coins and watchlist",
        details: "Best matches first: an exact id or symbol, then prefixes, then substrings, ties by market-cap\nrank. Searches the built-in top coins and the cached full list ('bitpal coins update').",
        examples: ["bitpal coins search eth", "bitpal coins search doge --json"])

    var query: String
    var limit: Int

    init(parsing a: inout ArgumentList) throws {
        query = try a.popPositional("QUERY")
        limit = try a.popOption("--limit").map { text in try ArgumentList.positiveInt(text, field: "--limit") } ?? 10
    }

    func run(_ context: Context) throws -> ExitCode {
        let results = try context.session().resolver.catalog(includingCache: true).search(query, limit: limit)
        if context.json {
            context.printJSON(.array(results.map { c in
                .object([("id", .string(c.id)), ("symbol", .string(c.symbol)), ("name", .string(c.name)),
                         ("marketCapRank", c.marketCapRank.map { .number(String($0)) } ?? .null)])
            }))
            return .success
        }
        if results.isEmpty {
            context.out("No coin matches '\(TextEscaping.escaped(query))'." + (context.offline ? "\n" : " Try 'bitpal coins update' for the full list.\n"))
            return .success
        }
        var table = Table([("ID", .left), ("SYMBOL", .left), ("NAME", .left), ("RANK", .right)])
        for c in results {
            table.add([TextEscaping.escaped(c.id), TextEscaping.escaped(c.symbol.uppercased()), TextEscaping.escaped(c.name),
                       c.marketCapRank.map(String.init) ?? "—"])
        }
        context.out(table.render(style: context.style))
        return .success
    }
}

struct CoinsUpdateCommand: Command {
    static let spec = CommandSpec(
        name: "coins update", summary: "Fetch the price service's full coin list into the catalog cache",
        group: "Coins and watchlist",
        details: "The cache (coins.json) is kept 7 days and refreshed by itself (within 3 s) when a coin cannot be\nresolved and no known coin is close. Gives up after 30 s (BITPAL_HTTP_TIMEOUT changes that).\nExit 3 if the service fails.",
        examples: ["bitpal coins update"])

    init(parsing a: inout ArgumentList) throws {}

    func run(_ context: Context) throws -> ExitCode {
        if context.offline {
            throw UsageError.conflict("'coins update' fetches the coin list, so it cannot run offline")
        }
        let count = try context.session().resolver.updateCatalog(.explicit)
        if context.json {
            context.printJSON(.object([("coins", .number(String(count)))]))
        } else {
            context.out("Cached \(count) coins.\n")
        }
        return .success
    }
}

struct WatchAddCommand: Command {
    static let spec = CommandSpec(
        name: "watch add", summary: "Watch coins you do not (yet) hold", arguments: "COIN...",
        group: "Coins and watchlist",
        details: "A coin already watched is named and skipped. Nothing is added when any coin is unknown.",
        examples: ["bitpal watch add sol ada"])

    var coins: [String]

    init(parsing a: inout ArgumentList) throws {
        coins = a.popRemaining()
        if coins.isEmpty { throw UsageError.missingArgument("COIN", usage: Self.spec.usage) }
    }

    func run(_ context: Context) throws -> ExitCode {
        let session = try context.session()
        let resolved = try coins.map { try session.resolver.resolveCoin($0) }
        let now = context.now
        let done = try session.repository.commit(.watch(resolved.map(\.id), at: now), names: context.names).applied
        let added = done.added.compactMap { id in resolved.first { $0.id == id } }
        let skipped = done.skipped.compactMap { id in resolved.first { $0.id == id } }
        for c in skipped { context.note("\(context.coinLabel(c.id)) is already in your watchlist") }
        if context.json {
            context.printJSON(.object([("added", .array(added.map { .string($0.id) })),
                                       ("alreadyWatched", .array(skipped.map { .string($0.id) }))]))
        } else if !added.isEmpty {
            context.out("Watching " + added.map { context.coinLabel($0.id) }.joined(separator: ", ") + ".\n")
        }
        return .success
    }
}

struct WatchRemoveCommand: Command {
    static let spec = CommandSpec(
        name: "watch remove", summary: "Stop watching coins", arguments: "COIN...",
        group: "Coins and watchlist", examples: ["bitpal watch remove ada"])

    var coins: [String]

    init(parsing a: inout ArgumentList) throws {
        coins = a.popRemaining()
        if coins.isEmpty { throw UsageError.missingArgument("COIN", usage: Self.spec.usage) }
    }

    func run(_ context: Context) throws -> ExitCode {
        let session = try context.session()
        let resolved = try coins.map { try session.resolver.resolveCoin($0) }
        _ = try session.repository.commit(.unwatch(resolved.map(\.id)), names: context.names)
        if context.json {
            context.printJSON(.object([("removed", .array(resolved.map { .string($0.id) }))]))
        } else {
            context.out("Stopped watching " + resolved.map { context.coinLabel($0.id) }.joined(separator: ", ") + ".\n")
        }
        return .success
    }
}

/// How to order the watchlist.
enum WatchSort: String, CaseIterable {
    case name, price, change
}

struct WatchListCommand: Command {
    static let spec = CommandSpec(
        name: "watch list", summary: "Watched coins with price and 24h change",
        options: [OptionSpec("--sort", "ORDER", "name A–Z (default), price high–low, change best–worst", choices: WatchSort.allCases.map(\.rawValue))],
        group: "Coins and watchlist", details: "'bitpal watch' on its own does the same. Unpriced coins come last.",
        examples: ["bitpal watch", "bitpal watch --sort change --json"])

    var sort: WatchSort

    init(parsing a: inout ArgumentList) throws {
        sort = a.popOption("--sort").flatMap(WatchSort.init(rawValue:)) ?? .name
    }

    func run(_ context: Context) throws -> ExitCode {
        let session = try context.session()
        let portfolio = try session.repository.store.load()
        let book = try session.prices.refreshIfNeeded(coins: portfolio.watchlist.map(\.coinId), book: session.prices.priceBook(portfolio))
        struct Row { var entry: WatchEntry; var coin: Coin; var quote: Quote? }
        var rows = portfolio.watchlist.map { Row(entry: $0, coin: session.resolver.coin(id: $0.coinId), quote: book.latest($0.coinId)) }
        func byName(_ a: Row, _ b: Row) -> Bool { a.coin.name.lowercased() < b.coin.name.lowercased() }
        // Unpriced coins last whatever the order; a price without a 24h change comes before them.
        func ordered(by key: @escaping (Row) -> Decimal?) -> (Row, Row) -> Bool {
            { a, b in
                if (a.quote == nil) != (b.quote == nil) { return a.quote != nil }
                return KnownFirst.descending(key(a), key(b), tie: byName(a, b), unknown: byName(a, b))
            }
        }
        switch sort {
        case .name: rows.sort(by: ordered(by: { _ in 0 }))
        case .price: rows.sort(by: ordered(by: { $0.quote?.price }))
        case .change: rows.sort(by: ordered(by: { $0.quote?.change24h }))
        }
        if context.json {
            // The entry's fields (`WatchEntry.fields`), the coin and its price after its id.
            context.printJSON(.array(rows.map { r in
                .object(WatchEntry.fields.pairs(r.entry, adding: [
                    ("symbol", .string(r.coin.symbol.lowercased())), ("name", .string(r.coin.name)),
                    ("currentPrice", ReportJSON.price(r.quote?.price)), ("priceChange24h", ReportJSON.percent(r.quote?.change24h)),
                    ("priceUpdatedAt", ReportJSON.date(r.quote?.time)),
                ], after: "coinId"))
            }))
            return .success
        }
        if rows.isEmpty {
            context.out("Your watchlist is empty. Add coins with: bitpal watch add sol ada\n")
            return .success
        }
        let style = context.style
        var table = Table([("COIN", .left), ("NAME", .left), ("PRICE", .right), ("24H", .right), ("UPDATED", .left)])
        for r in rows {
            table.add([
                .init(TextEscaping.escaped(r.coin.symbol.uppercased())), .init(TextEscaping.escaped(r.coin.name)),
                .init(r.quote.map(Human.price) ?? "—"),
                .init(Human.percent(r.quote?.change24h), paint: { style.pnl($0, r.quote?.change24h) }),
                .init(r.quote.map { Human.age($0.time, now: context.now) } ?? "never"),
            ])
        }
        context.out(table.render(style: style))
        let times = rows.compactMap { $0.quote?.time }
        if let oldest = times.min(), PriceBook.isStale(oldest, now: context.now) {
            context.out(style.yellow("Some prices are stale (older than 60 minutes); run 'bitpal price refresh'.") + "\n")
        }
        return .success
    }
}

/// Sizes of the widget.
enum WidgetSize: String, CaseIterable {
    case small, medium, large
}

struct WidgetCommand: Command {
    static let spec = CommandSpec(
        name: "widget", summary: "The portfolio at a glance, for tmux, polybar or a prompt",
        options: [OptionSpec("--size", "SIZE", "small: one line (default); medium: plus top 2; large: plus top 5", choices: WidgetSize.allCases.map(\.rawValue)),
                  ReportOptions.all],
        group: "Reports",
        examples: ["bitpal widget", "bitpal widget --size medium", "set -g status-right '#(bitpal widget --offline)'"])

    var size: WidgetSize
    var all: Bool

    init(parsing a: inout ArgumentList) throws {
        size = a.popOption("--size").flatMap(WidgetSize.init(rawValue:)) ?? .small
        all = a.popFlag("--all")
    }

    func run(_ context: Context) throws -> ExitCode {
        let reports = try context.reports(refresh: true, all: all)
        let s = reports.summary()
        // Nothing to show: no holdings and no cash (a portfolio holding only cash has a value).
        let empty = s.holdingsCount == 0 && s.cashBalance == nil
        if context.json {
            context.printJSON(.object([
                ("totalValue", ReportJSON.money(s.totalValue)),
                ("unrealizedPnL", ReportJSON.money(s.unrealizedPnL)),
                ("realizedPnL", ReportJSON.money(s.realizedPnL)),
                ("income", ReportJSON.money(s.income)),
                ("taxWithheld", ReportJSON.money(s.taxWithheld)),
                ("totalPnL", ReportJSON.money(s.totalPnL)),
                ("holdings", .array(s.topHoldings.map { ReportJSON.topHolding($0, idKey: "id", upperSymbol: true) })),
                ("lastUpdated", ReportJSON.date(s.pricesAsOf)),
                ("cashBalance", ReportJSON.money(s.cashBalance)),
                ("isEmpty", .bool(empty)),
                ("stale", .bool(s.stale)),
            ]))
            return .success
        }
        let style = context.style
        if empty {
            context.out("bitpal: no holdings\n")
            return .success
        }
        let nothingPriced = s.holdingsCount > 0 && s.unpricedCount == s.holdingsCount
        var line = nothingPriced ? "— (no prices yet)"
            : "\(Human.money(s.money(s.totalValue))) " + style.pnl("\(Human.signedMoney(s.money(s.totalPnL))) (\(Human.percent(s.totalPnLPercentage)))", s.totalPnL)
        if s.stale { line += " " + style.yellow("[stale]") }
        context.out(line + "\n")
        let count = size == .small ? 0 : size == .medium ? 2 : 5
        for h in s.topHoldings.prefix(count) {
            context.out("\(TextEscaping.escaped(h.asset.symbol.uppercased())) \(h.currentValue.map(s.money).map(Human.money) ?? "—") "
                + style.pnl(Human.percent(h.profitLossPercentage), h.profitLossPercentage) + "\n")
        }
        return .success
    }
}

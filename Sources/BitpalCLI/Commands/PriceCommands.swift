import Foundation
import PortfolioCore

struct PriceSetCommand: Command {
    static let spec = CommandSpec(
        name: "price set", summary: "Record a manual price (a registered asset, offline use, a coin the service lacks)",
        arguments: "ASSET PRICE", options: [OptionSpec("--date", "DATE", "when the price was true (default now)"),
                                            OptionSpec("--currency", "CODE", "the price's currency (default: the asset's, else the portfolio's)")],
        group: "Prices",
        details: "The newest quote of an asset wins, manual or fetched. Registered assets are priced only this way\n(never fetched). Manual prices live in portfolio.json.",
        examples: ["bitpal price set btc 60000", "bitpal price set AAPL 187.50", "bitpal price set shiba-inu 0.0000245 --date 2024-05-01"])

    var coin: String
    var price: Decimal
    var date: DateArgument?
    var currency: String?

    init(parsing a: inout ArgumentList) throws {
        coin = try a.popPositional("ASSET")
        price = try ArgumentList.decimal(try a.popPositional("PRICE"), field: "Price")
        date = try a.popOption("--date").map { text throws(UsageError) in try ArgumentList.date(text, field: "Date") }
        currency = a.popOption("--currency")
    }

    func run(_ context: Context) throws -> ExitCode {
        let session = try context.session()
        let book = try session.repository.loadSettings()
        let coin = try session.resolver.resolveAsset(self.coin, in: book)
        let when = try date?.start(in: context.timeZone, now: context.now) ?? context.now
        let currency = try TransactionOptions.currency(currency, asset: coin, book: book, portfolio: try context.portfolio(in: book))
        let quote = Quote(coinId: coin.id, price: price, time: when, source: .manual, currency: currency)
        _ = try session.repository.commit(.setPrice(quote), names: context.names)
        if context.json {
            context.printJSON(ReportJSON.quote(quote, asset: coin, now: context.now))
        } else {
            let shown = Human.price(price, in: CurrencyCode(currency))
            context.out("Set \(context.coinLabel(coin.id)) to \(shown) as of \(Human.whenLabelled(when, in: context.timeZone)) (manual).\n")
        }
        return .success
    }
}

/// Renders quotes as a table or JSON (price list and price history).
func renderQuotes(_ quotes: [Quote], context: Context) {
    if context.json {
        context.printJSON(.array(quotes.map { ReportJSON.quote($0, asset: context.assetLabel($0.coinId), now: context.now) }))
        return
    }
    let style = context.style
    var table = Table([("ASSET", .left), ("NAME", .left), ("PRICE", .right), ("24H", .right), ("SOURCE", .left),
                       ("TIME (\(Human.zoneLabel(context.timeZone)))", .left), ("AGE", .left)])
    for q in quotes {
        let c = context.assetLabel(q.coinId)
        let stale = PriceBook.isStale(q.time, now: context.now) && !Asset.isRegisteredID(q.coinId)
        table.add([
            .init(TextEscaping.escaped(c.symbol.uppercased())), .init(TextEscaping.escaped(c.name)), .init(Human.price(q)),
            .init(q.change24h.map { Human.percent($0) } ?? "—", paint: { style.pnl($0, q.change24h) }),
            .init(q.source.rawValue), .init(Human.time(q.time, in: context.timeZone)),
            .init(Human.age(q.time, now: context.now) + (stale ? " (stale)" : ""), paint: stale ? { style.yellow($0) } : nil),
        ])
    }
    context.out(table.render(style: style))
}

struct PriceListCommand: Command {
    static let spec = CommandSpec(
        name: "price list", summary: "Every known price: coin, price, 24h change, source, time, age",
        group: "Prices", details: "'bitpal price' on its own does the same. Never touches the network.",
        examples: ["bitpal price", "bitpal price list --json"])

    init(parsing a: inout ArgumentList) throws {}

    func run(_ context: Context) throws -> ExitCode {
        let session = try context.session()
        let portfolio = try session.repository.loadBook()  // remembers the registered assets, which name their quotes
        let quotes = session.prices.priceBook(portfolio).latestQuotes.filter { !$0.coinId.hasPrefix("fx:") }  // rates: fx list
        if quotes.isEmpty && !context.json {
            context.out("No prices yet. Fetch them with 'bitpal price refresh' or set one with 'bitpal price set COIN PRICE'.\n")
            return .success
        }
        renderQuotes(quotes, context: context)
        return .success
    }
}

struct PriceHistoryCommand: Command {
    static let spec = CommandSpec(
        name: "price history", summary: "The recorded quotes of one asset, oldest first", arguments: "ASSET",
        group: "Prices", details: "Fetched, imported and manual quotes together.",
        examples: ["bitpal price history btc", "bitpal price history ethereum --json", "bitpal price history AAPL"])

    var coin: String

    init(parsing a: inout ArgumentList) throws {
        coin = try a.popPositional("ASSET")
    }

    func run(_ context: Context) throws -> ExitCode {
        let session = try context.session()
        let portfolio = try session.repository.loadBook()
        let coin = try session.resolver.resolveAsset(self.coin, in: portfolio)
        let quotes = session.prices.priceBook(portfolio, scope: PriceHistoryScope(assets: [coin.id], rates: false)).history(coin.id)
        if quotes.isEmpty && !context.json {
            context.out("No prices recorded for \(context.coinLabel(coin.id)) yet.\n")
            return .success
        }
        renderQuotes(quotes, context: context)
        return .success
    }
}

struct PriceRefreshCommand: Command {
    static let spec = CommandSpec(
        name: "price refresh", summary: "Fetch current prices of every held and watched coin and every asset with a quote source (for cron)",
        options: [OptionSpec("--quiet", nil, "print nothing unless it fails")],
        group: "Prices",
        details: """
        One batched request to the price service for the coins, and one request a symbol to its own
        source for each registered asset with '--quote yahoo' (Yahoo Finance) or '--quote twelvedata'
        (Twelve Data; after its 429, the minute's requests used up, it is asked nothing more this run);
        a failure of one never hides the others' prices. Exit 0 when they answered (a coin without a
        price is a warning), 1 when an asset's symbol is unknown, not on the key's plan or quoted in
        another currency, or BITPAL_TWELVEDATA_KEY is missing, 3 when a service could not be reached
        or refused (what the others fetched is kept), 2 with --offline. Never holds the portfolio lock
        while fetching. Gives up after 30 s in all, retries included (BITPAL_HTTP_TIMEOUT=SECONDS,
        1-600, changes that). Environment: BITPAL_API_URL, COINGECKO_API_KEY, COINGECKO_PRO_API_KEY,
        BITPAL_YAHOO_URL, BITPAL_USER_AGENT, BITPAL_TWELVEDATA_URL, BITPAL_TWELVEDATA_KEY,
        BITPAL_HTTP_TIMEOUT.
        """,
        examples: ["bitpal price refresh", "*/5 * * * * bitpal price refresh --quiet"])

    var quiet: Bool

    init(parsing a: inout ArgumentList) throws {
        quiet = a.popFlag("--quiet")
    }

    func run(_ context: Context) throws -> ExitCode {
        if context.offline {
            throw UsageError.conflict("'price refresh' fetches prices, so it cannot run offline (--offline or BITPAL_OFFLINE)")
        }
        let session = try context.session()
        _ = try session.service.networkSettings()
        let portfolio = try session.repository.loadBook()
        let ledger = try context.checkedLedger(portfolio)  // a store that breaks a rule still gets its prices
        // Coins only: registered assets are priced by hand and never fetched.
        let held = ledger.openPositions.map(\.assetId).filter { !Asset.isRegisteredID($0) }
        let coins = Array(Set(held + portfolio.watchlist.map(\.coinId))).sorted()
        let sourced = portfolio.assets.filter { $0.quote != nil }
        guard !coins.isEmpty || !sourced.isEmpty else {
            if context.json {
                context.printJSON(.object([("refreshed", .array([])), ("missing", .array([])), ("assets", .array([])), ("failed", .array([]))]))
            } else if !quiet {
                context.out("Nothing to refresh: you hold and watch no coins, and no asset has a quote source "
                    + "('bitpal asset edit CODE --quote yahoo', or --quote twelvedata).\n")
            }
            return .success
        }
        // Assets first: a failure of the coins' service never hides their quotes (nor the other way round).
        let assets = try session.prices.fetchAssetQuotes(sourced, purpose: .explicit)
        var fetched = FetchedPrices(quotes: [], missing: [])
        var coinFailure: Error?
        if !coins.isEmpty {
            do {
                // In every portfolio's base, in the same one request.
                fetched = try session.prices.fetchPrices(coins, currencies: Array(Set(portfolio.portfolios.map(\.baseCurrency))).sorted(),
                                                         purpose: .explicit)
            } catch {
                coinFailure = error
            }
        }
        if !quiet { for w in fetched.warnings { context.warn(w) } }
        // The services the assets' quotes come from, for messages: `Yahoo Finance and Twelve Data`.
        let sources = AssetQuoteSource.Service.allCases.filter { s in sourced.contains { $0.quote?.service == s } }.map(\.name)
            .joined(separator: " and ")
        if !quiet, assets.dropped > 0 { context.warn("\(assets.dropped) unusable price\(assets.dropped == 1 ? "" : "s") from \(sources) dropped") }
        // Every asset that failed is named (with --quiet too: cron mails it), then the worst exit.
        for (id, error) in assets.failures { context.warn("\(TextEscaping.escaped(id)): \(error)") }
        if let coinFailure, assets.quotes.isEmpty { throw coinFailure }
        if context.json {
            context.printJSON(.object([
                ("refreshed", .array(fetched.quotes.map { ReportJSON.quote($0, asset: context.assetLabel($0.coinId), now: context.now) })),
                ("missing", .array(fetched.missing.map { .string($0) })),
                ("assets", .array(assets.quotes.map { ReportJSON.quote($0, asset: context.assetLabel($0.coinId), now: context.now) })),
                ("failed", .array(assets.failures.map { .object([("assetId", .string($0.assetId)), ("error", .string($0.error.description))]) })),
            ]))
        } else if !quiet {
            for id in fetched.missing {
                context.warn("the price service has no price for '\(TextEscaping.escaped(id))'; set one with 'bitpal price set \(id) PRICE'")
            }
            if !coins.isEmpty && coinFailure == nil {
                let host = PriceServiceConfig(environment: context.environment.variables).host
                context.out("Refreshed \(Set(fetched.quotes.map(\.coinId)).count) of \(coins.count) price\(coins.count == 1 ? "" : "s") from \(host).\n")
            }
            if !sourced.isEmpty {
                context.out("Refreshed \(assets.quotes.count) of \(sourced.count) asset price\(sourced.count == 1 ? "" : "s") from \(sources).\n")
            }
        }
        if let coinFailure { throw coinFailure }
        if assets.failures.contains(where: { $0.error.isBrokenRule }) { return .failure }
        return assets.failures.isEmpty ? .success : .service
    }
}

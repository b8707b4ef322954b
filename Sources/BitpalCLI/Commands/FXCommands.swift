import Foundation
import PortfolioCore

/// The exchange-rate table: rates typed by hand (and, later, fetched), kept in portfolio.json.
enum FXOptions {
    static func currency(_ text: String, field: String) throws -> String {
        guard let code = CurrencyCode.parse(text)?.code else { throw PortfolioError.unsupportedCurrency(text) }
        return code
    }

    static func json(_ r: FXRate) -> JSONValue { FXRate.fields.object(r) }

    static func render(_ rates: [FXRate], context: Context) {
        var table = Table([("FROM", .left), ("TO", .left), ("RATE", .right), ("DATE (\(Human.zoneLabel(context.timeZone)))", .left),
                           ("SOURCE", .left)])
        for r in rates {
            table.add([.init(r.from), .init(r.to), .init(DecimalFormatting.grouped(r.rate.text)), .init(Human.when(r.date, in: context.timeZone)),
                       .init(r.source.rawValue)])
        }
        context.out(table.render(style: context.style))
    }

    static let details = """
    A rate is units of TO per one FROM (fx set EUR USD 1.09: one euro is 1.09 dollars), true from its
    date on. A lookup takes the newest rate of the pair at or before a date, a rate recorded the other
    way round counting as 1 ÷ rate; when both share a date, the one recorded later wins. Rates typed by
    hand live in portfolio.json ("fxRates"); fetched ones (fx refresh) and imported ones (fx import) in
    the price cache. Money in another currency than a portfolio's base stores the rate of its date.
    """
}

struct FXSetCommand: Command {
    static let spec = CommandSpec(
        name: "fx set", summary: "Record an exchange rate by hand", arguments: "FROM TO RATE",
        options: [OptionSpec("--date", "DATE", "when the rate was true (default now)")],
        group: "Cash and currencies", details: FXOptions.details,
        examples: ["bitpal fx set EUR USD 1.0921 --date 2024-01-15", "bitpal fx set usd jpy 151.2"])

    var from: String
    var to: String
    var rate: Fixed18
    var date: DateArgument?

    init(parsing a: inout ArgumentList) throws {
        from = try a.popPositional("FROM")
        to = try a.popPositional("TO")
        rate = try ArgumentList.fixed(try a.popPositional("RATE"), field: "Rate")
        date = try a.popOption("--date").map { text throws(UsageError) in try ArgumentList.date(text, field: "Date") }
    }

    func run(_ context: Context) throws -> ExitCode {
        let from = try FXOptions.currency(self.from, field: "FROM"), to = try FXOptions.currency(self.to, field: "TO")
        let when = try date?.start(in: context.timeZone, now: context.now) ?? context.now
        let r = FXRate(from: from, to: to, rate: rate, date: when)
        _ = try context.session().repository.commit(.setRate(r), names: context.names)
        if context.json {
            context.printJSON(FXOptions.json(r))
        } else {
            context.out("Recorded 1 \(from) = \(DecimalFormatting.grouped(rate.text)) \(to) as of \(Human.whenLabelled(when, in: context.timeZone)).\n")
        }
        return .success
    }
}

struct FXListCommand: Command {
    static let spec = CommandSpec(
        name: "fx list", summary: "The newest exchange rate of each pair", group: "Cash and currencies", details: FXOptions.details,
        examples: ["bitpal fx", "bitpal fx list --json"])

    init(parsing a: inout ArgumentList) throws {}

    func run(_ context: Context) throws -> ExitCode {
        let session = try context.session()
        let book = try session.repository.loadBook()
        let rates = session.prices.fxTable(book, prices: session.prices.priceBook(book)).newest
        if context.json {
            context.printJSON(.array(rates.map(FXOptions.json)))
        } else if rates.isEmpty {
            context.out("No exchange rates yet. Record one with 'bitpal fx set EUR USD 1.09'.\n")
        } else {
            FXOptions.render(rates, context: context)
        }
        return .success
    }
}

struct FXRefreshCommand: Command {
    static let spec = CommandSpec(
        name: "fx refresh", summary: "Fetch the exchange rates the book needs (one request, for cron)",
        options: [OptionSpec("--quiet", nil, "print nothing on success")], group: "Cash and currencies",
        details: """
        One request to the price service's /exchange_rates: the rate of every currency the book uses (and
        USD, the currency of fetched prices) into every portfolio's base, kept in the price cache. A
        currency the service does not list gets no rate (never a guessed 1).
        """,
        examples: ["bitpal fx refresh", "*/5 * * * * bitpal price refresh --quiet && bitpal fx refresh --quiet"])

    var quiet: Bool

    init(parsing a: inout ArgumentList) throws { quiet = a.popFlag("--quiet") }

    func run(_ context: Context) throws -> ExitCode {
        if context.offline {
            throw UsageError.conflict("'fx refresh' fetches rates, so it cannot run offline (--offline or BITPAL_OFFLINE)")
        }
        let session = try context.session()
        let refreshed = try session.prices.refreshRates(try session.repository.loadBook(), purpose: .explicit)
        if context.json {
            context.printJSON(.object([("refreshed", .array(refreshed.rates.map(FXOptions.json))),
                                       ("missing", .array(refreshed.missing.map { .string($0) }))]))
            return .success
        }
        for c in refreshed.missing { context.warn("the price service lists no rate for \(c); record one with 'bitpal fx set'") }
        if quiet { return .success }
        let host = PriceServiceConfig(environment: context.environment.variables).host
        context.out("Refreshed \(refreshed.rates.count) rate\(refreshed.rates.count == 1 ? "" : "s") from \(host).\n")
        if !refreshed.rates.isEmpty { FXOptions.render(refreshed.rates, context: context) }
        return .success
    }
}

struct FXHistoryCommand: Command {
    static let spec = CommandSpec(
        name: "fx history", summary: "Every rate of one pair, either way round, oldest first", arguments: "FROM TO",
        group: "Cash and currencies", examples: ["bitpal fx history EUR USD"])

    var from: String
    var to: String

    init(parsing a: inout ArgumentList) throws {
        from = try a.popPositional("FROM")
        to = try a.popPositional("TO")
    }

    func run(_ context: Context) throws -> ExitCode {
        let from = try FXOptions.currency(self.from, field: "FROM"), to = try FXOptions.currency(self.to, field: "TO")
        let session = try context.session()
        let book = try session.repository.loadBook()
        // Typed, fetched and imported rates together.
        let rates = session.prices.fxTable(book, prices: session.prices.priceBook(book, scope: .rates)).history(from, to)
        if context.json {
            context.printJSON(.array(rates.map(FXOptions.json)))
        } else if rates.isEmpty {
            context.out("No \(from)/\(to) rates yet. Record one with 'bitpal fx set \(from) \(to) RATE'.\n")
        } else {
            FXOptions.render(rates, context: context)
        }
        return .success
    }
}

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

    /// Warns of currencies the ECB does not quote.
    static func warnMissing(_ codes: [String], context: Context) {
        for c in codes {
            context.warn("the ECB publishes no rate for \(c); record its rates with 'bitpal fx set' or 'bitpal fx import'")
        }
    }

    static let details = """
    A rate is units of TO per one FROM (fx set EUR USD 1.09: one euro is 1.09 dollars), true from its
    date on. A lookup takes the newest rate of the pair at or before a date, a rate recorded the other
    way round counting as 1 ÷ rate; when both share a date, the one recorded later wins. Rates typed by
    hand live in portfolio.json ("fxRates"); fetched ones (fx refresh, fx fetch-history) and imported ones
    (fx import) in the price cache. Money in another currency than a portfolio's base stores the rate of
    its date; when none is known for a past day and bitpal is online, the ECB's are fetched first.
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
        name: "fx refresh", summary: "Fetch today's exchange rates the book needs (for cron)",
        options: [OptionSpec("--quiet", nil, "print nothing on success")], group: "Cash and currencies",
        details: """
        Two requests: the price service's /exchange_rates (the rate of every currency the book uses, and
        USD, the currency of fetched prices, into every portfolio's base) and the ECB's reference rates
        of the newest working day (Frankfurter's /v1/latest; BITPAL_FX_URL overrides its address), both
        kept in the price cache. A currency a service does not list gets no rate from it (never a guessed
        1). When one service fails, the other's rates are still kept and shown, and the exit is 3.
        """,
        examples: ["bitpal fx refresh", "*/5 * * * * bitpal price refresh --quiet && bitpal fx refresh --quiet"])

    var quiet: Bool

    init(parsing a: inout ArgumentList) throws { quiet = a.popFlag("--quiet") }

    func run(_ context: Context) throws -> ExitCode {
        if context.offline {
            throw UsageError.conflict("'fx refresh' fetches rates, so it cannot run offline (--offline or BITPAL_OFFLINE)")
        }
        let session = try context.session()
        let book = try session.repository.loadBook()
        _ = try session.service.networkSettings()
        // Each source on its own: one's failure never hides the other's rates.
        var failures: [(source: String, error: Error)] = []
        var coingecko: Prices.RefreshedRates?
        var ecb: Prices.ECBFetch?
        do { coingecko = try session.prices.refreshRates(book, purpose: .explicit) } catch { failures.append(("coingecko", error)) }
        do { ecb = try session.prices.refreshECBRates(book, purpose: .explicit) } catch { failures.append(("ecb", error)) }
        let rates = (coingecko?.rates ?? []) + (ecb?.rates ?? [])
        if context.json {
            context.printJSON(.object([("refreshed", .array(rates.map(FXOptions.json))),
                                       ("missing", .array((coingecko?.missing ?? []).map { .string($0) })),
                                       ("ecbMissing", .array((ecb?.missing ?? []).map { .string($0) })),
                                       ("failed", .array(failures.map { .object([("source", .string($0.source)), ("error", .string("\($0.error)"))]) }))]))
        } else {
            for c in coingecko?.missing ?? [] { context.warn("the price service lists no rate for \(c); record one with 'bitpal fx set'") }
            FXOptions.warnMissing(ecb?.missing ?? [], context: context)
            if !quiet || !failures.isEmpty {
                context.out("Refreshed \(rates.count) rate\(rates.count == 1 ? "" : "s").\n")
                if !rates.isEmpty { FXOptions.render(rates, context: context) }
            }
        }
        if let first = failures.first {
            for other in failures.dropFirst() { context.console.error("error: \(other.error)\n") }
            throw first.error
        }
        return .success
    }
}

struct FXFetchHistoryCommand: Command {
    static let spec = CommandSpec(
        name: "fx fetch-history", summary: "Fetch the ECB's daily exchange rates since the first transaction",
        arguments: "[CURRENCY...]",
        options: [OptionSpec("--since", "DATE", "from this day (default: the day of the first transaction)")], group: "Cash and currencies",
        details: """
        One request to Frankfurter's /v1/{start}..{end}?base=EUR (the ECB's reference rates, no key;
        BITPAL_FX_URL overrides its address) for every working day from the first day through today. Each
        CURRENCY (default: every currency the book uses) gets a rate into every portfolio's base for each
        day, computed here exactly from the rates per euro (rounded half-up at 18 decimals) and kept in
        the price cache dated by day; fetching again replaces them. A weekend or holiday uses the newest
        earlier rate, as every lookup does. A currency the ECB does not quote is named in a warning. Exit
        3 when the service cannot be reached, refuses or answers with something else than its JSON; 1
        when it has no rates for those days.
        """,
        examples: ["bitpal fx fetch-history", "bitpal fx fetch-history USD GBP --since 2023-01-01"])

    var currencies: [String]
    var since: DateArgument?

    init(parsing a: inout ArgumentList) throws {
        currencies = a.popRemaining()
        since = try a.popOption("--since").map { text throws(UsageError) in try ArgumentList.date(text, field: "--since") }
    }

    func run(_ context: Context) throws -> ExitCode {
        if context.offline {
            throw UsageError.conflict("'fx fetch-history' fetches rates, so it cannot run offline (--offline or BITPAL_OFFLINE)")
        }
        let session = try context.session()
        let book = try session.repository.loadBook()
        var (currencies, bases) = session.prices.rateCurrencies(book)
        if !self.currencies.isEmpty { currencies = Set(try self.currencies.map { try FXOptions.currency($0, field: "CURRENCY") }) }
        let zone = context.timeZone
        let start: Int64
        if let since {
            let date = try since.start(in: zone, now: context.now)
            guard date <= context.now else { throw CommandFailure("--since \(TextEscaping.escaped(since.text)) is in the future") }
            start = ISODate.dayNumber(of: date, in: zone)
        } else if let first = book.transactions.map(\.date).min() {
            start = ISODate.dayNumber(of: first, in: zone)
        } else {
            throw CommandFailure("the book has no transactions yet: say from which day with --since", code: .usage)
        }
        let today = ISODate.dayNumber(of: context.now, in: zone)
        _ = try session.service.networkSettings()
        let fetched = try session.prices.fetchECBHistory(currencies: currencies, bases: bases, from: start, through: today, purpose: .explicit)
        var pairs: [(from: String, to: String, rates: [FXRate])] = []
        for r in fetched.rates {
            if let i = pairs.firstIndex(where: { $0.from == r.from && $0.to == r.to }) { pairs[i].rates.append(r) } else { pairs.append((r.from, r.to, [r])) }
        }
        pairs.sort { ($0.from, $0.to) < ($1.from, $1.to) }
        func day(_ r: FXRate?) -> JSONValue { .optional(r.map { ISODate.dayText(ISODate.dayNumber(of: $0.date, in: zone)) }) }
        if context.json {
            context.printJSON(.object([
                ("since", .string(ISODate.dayText(start))), ("until", .string(ISODate.dayText(today))),
                ("fetched", .array(pairs.map { p in
                    .object([("from", .string(p.from)), ("to", .string(p.to)), ("rates", .number(String(p.rates.count))),
                             ("first", day(p.rates.first)), ("last", day(p.rates.last))])
                })),
                ("missing", .array(fetched.missing.map { .string($0) })),
            ]))
            return .success
        }
        FXOptions.warnMissing(fetched.missing, context: context)
        if pairs.isEmpty { context.out("No ECB rates for the currencies asked between \(ISODate.dayText(start)) and \(ISODate.dayText(today)).\n") }
        for p in pairs {
            context.out("\(p.from)→\(p.to): \(p.rates.count) daily rate\(p.rates.count == 1 ? "" : "s"), "
                + "\(Human.day(p.rates[0].date, in: zone)) … \(Human.day(p.rates[p.rates.count - 1].date, in: zone)).\n")
        }
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

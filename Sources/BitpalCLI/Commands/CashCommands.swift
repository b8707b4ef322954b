import Foundation
import PortfolioCore

/// The cash ledger of a portfolio that tracks cash: money in and out, interest, transfers.
enum CashOptions {
    static let details = """
    A portfolio that tracks cash (portfolio add|edit NAME --cash) keeps a cash ledger: buys spend
    cash (total + fee), sells bring it back (total − fee), dividends and interest add what was paid
    net of tax, a swap spends its fee; moving assets, rewards, adjustments and splits leave it alone.
    Cash never goes below zero at any date: a buy, a withdrawal or a back-dated change that would
    overdraw is refused and nothing is written. At one instant deposits come first, so a deposit on
    a buy's day pays for it. Until exchange rates arrive, cash is in the portfolio's base currency.
    """

    /// The chosen portfolio, which must track cash.
    static func portfolio(_ context: Context, in book: Book) throws -> Portfolio {
        let p = try context.portfolio(in: book)
        guard p.trackCash else { throw PortfolioError.cashNotTracked(p.name) }
        return p
    }

    static func amount(_ text: String) throws -> Fixed18 { try ArgumentList.fixed(text, field: "Amount") }

    /// Records `legs` (built for the chosen portfolio, which tracks cash) and says what was added.
    static func record(_ context: Context, _ make: (Book, Portfolio) throws -> TransactionChange) throws -> ExitCode {
        let settings = try context.session().repository.loadSettings()
        return try TransactionOptions.write(try make(settings, try portfolio(context, in: settings)), context: context)
    }

    static let dateOption = OptionSpec("--date", "DATE", "when (default now)")
    static let noteOption = OptionSpec("--note", "TEXT", "a note kept with it")
    static let currencyOption = OptionSpec("--currency", "CODE", "the cash's currency (default: the base currency)")
}

/// What every cash record takes: an amount, a date, a note and a currency.
struct CashRecordOptions {
    var amount: Fixed18
    var date: DateArgument?
    var note: String?
    var currency: String?
    var fxRate: Fixed18?

    init(_ a: inout ArgumentList) throws {
        amount = try CashOptions.amount(try a.popPositional("AMOUNT"))
        date = try a.popOption("--date").map { text throws(UsageError) in try ArgumentList.date(text, field: "Date") }
        note = a.popOption("--note").flatMap { $0.isEmpty ? nil : $0 }
        currency = a.popOption("--currency")
        fxRate = try TransactionOptions.fxRate(&a)
    }

    /// One cash record of `type` in `portfolio`, as asked.
    func request(_ type: TransactionType, fee: Fixed18? = nil, portfolio: Portfolio, context: Context) throws -> RecordRequest {
        RecordRequest(portfolio: portfolio.name, type: type, amount: amount, fee: fee, currency: currency, fxRate: fxRate,
                      date: try date?.record(in: context.timeZone, now: context.now) ?? .instant(context.now), notes: note)
    }
}

struct CashDepositCommand: Command {
    static let spec = CommandSpec(
        name: "cash deposit", summary: "Record money paid into the portfolio", arguments: "AMOUNT",
        options: [CashOptions.currencyOption, TransactionOptions.fxRate, OptionSpec("--initial", nil, "label it initial capital"), CashOptions.dateOption,
                  CashOptions.noteOption],
        group: "Cash and currencies", details: CashOptions.details,
        examples: ["bitpal -p brokerage cash deposit 10000 --initial --date 2024-01-01", "bitpal cash deposit 500"])

    var options: CashRecordOptions
    var initial: Bool

    init(parsing a: inout ArgumentList) throws {
        options = try CashRecordOptions(&a)
        initial = a.popFlag("--initial")
    }

    func run(_ context: Context) throws -> ExitCode {
        try CashOptions.record(context) { _, p in
            var r = try options.request(.deposit, portfolio: p, context: context)
            if initial { r.notes = r.notes.map { "initial capital: " + $0 } ?? "initial capital" }
            return .record(r)
        }
    }
}

struct CashWithdrawCommand: Command {
    static let spec = CommandSpec(
        name: "cash withdraw", summary: "Record money taken out of the portfolio", arguments: "AMOUNT",
        options: [CashOptions.currencyOption, TransactionOptions.fxRate, CashOptions.dateOption, CashOptions.noteOption],
        group: "Cash and currencies", details: CashOptions.details, examples: ["bitpal cash withdraw 1000 --date 2024-03-01"])

    var options: CashRecordOptions

    init(parsing a: inout ArgumentList) throws { options = try CashRecordOptions(&a) }

    func run(_ context: Context) throws -> ExitCode {
        try CashOptions.record(context) { _, p in .record(try options.request(.withdrawal, portfolio: p, context: context)) }
    }
}

struct CashInterestCommand: Command {
    static let spec = CommandSpec(
        name: "cash interest", summary: "Record interest paid on cash (income)", arguments: "AMOUNT",
        options: [OptionSpec("--fee", "TAX", "tax withheld from it (default 0)"), CashOptions.currencyOption, TransactionOptions.fxRate,
                  CashOptions.dateOption,
                  CashOptions.noteOption],
        group: "Cash and currencies", details: "AMOUNT is the gross interest; cash grows by AMOUNT − TAX, which is income.",
        examples: ["bitpal cash interest 12.50 --date 2024-03-02", "bitpal cash interest 20 --fee 5"])

    var options: CashRecordOptions
    var fee: Fixed18

    init(parsing a: inout ArgumentList) throws {
        options = try CashRecordOptions(&a)
        fee = try a.popOption("--fee").map { try ArgumentList.fixed($0, field: "Fee") } ?? .zero
    }

    func run(_ context: Context) throws -> ExitCode {
        try CashOptions.record(context) { _, p in .record(try options.request(.interest, fee: fee, portfolio: p, context: context)) }
    }
}

struct CashFeeCommand: Command {
    static let spec = CommandSpec(
        name: "cash fee", summary: "Record money paid from cash as a cost (an account or custody fee)", arguments: "AMOUNT",
        options: [CashOptions.currencyOption, TransactionOptions.fxRate, CashOptions.dateOption, CashOptions.noteOption],
        group: "Cash and currencies",
        details: """
        An expense: cash falls by AMOUNT and the realized P&L with it. Never money taken out: net
        deposits, performance flows and history's net invested are untouched, so the fee shows as
        the cost it is.
        """,
        examples: ["bitpal cash fee 4.90 --note \"custody fee\"", "bitpal -p brokerage cash fee 2 --currency EUR"])

    var options: CashRecordOptions

    init(parsing a: inout ArgumentList) throws { options = try CashRecordOptions(&a) }

    func run(_ context: Context) throws -> ExitCode {
        try CashOptions.record(context) { _, p in .record(try options.request(.expense, portfolio: p, context: context)) }
    }
}

struct CashTransferCommand: Command {
    static let spec = CommandSpec(
        name: "cash transfer", summary: "Move cash to another portfolio that tracks cash", arguments: "AMOUNT",
        options: [OptionSpec("--to", "PORTFOLIO", "where the cash goes (required)"), CashOptions.currencyOption, CashOptions.dateOption,
                  CashOptions.noteOption],
        group: "Cash and currencies",
        details: "A withdrawal from the chosen portfolio and a deposit into --to, linked: 'edit' and 'delete' act on both.",
        examples: ["bitpal -p brokerage cash transfer 500 --to savings"])

    var options: CashRecordOptions
    var to: String

    init(parsing a: inout ArgumentList) throws {
        options = try CashRecordOptions(&a)
        guard let to = a.popOption("--to") else { throw UsageError.missingValue(option: "--to", valueName: "PORTFOLIO") }
        self.to = try PortfolioOptions.name(to, option: "--to")
    }

    func run(_ context: Context) throws -> ExitCode {
        try CashOptions.record(context) { book, from in
            let target = try Context.portfolio(named: to, in: book, option: "--to")
            return .cashTransfer(try options.request(.withdrawal, portfolio: from, context: context), to: target.name)
        }
    }
}

struct CashExchangeCommand: Command {
    static let spec = CommandSpec(
        name: "cash exchange", summary: "Convert cash from one currency to another", arguments: "AMOUNT FROM TO",
        options: [OptionSpec("--rate", "R", "units of TO per one FROM (required)"), OptionSpec("--fee", "F", "in FROM, taken before converting"),
                  CashOptions.dateOption, CashOptions.noteOption],
        group: "Cash and currencies",
        details: """
        Takes AMOUNT of FROM and adds (AMOUNT − F) × R of TO (rounded half-up at 18 decimals): a
        withdrawal and a deposit, linked. Each leg keeps its rate to the base: implied by --rate when one
        side is the base currency, else the rate table's.
        """,
        examples: ["bitpal cash exchange 1000 USD EUR --rate 0.92 --fee 2"])

    var amount: Fixed18
    var from: String
    var to: String
    var rate: Fixed18
    var fee: Fixed18
    var date: DateArgument?
    var note: String?

    init(parsing a: inout ArgumentList) throws {
        amount = try CashOptions.amount(try a.popPositional("AMOUNT"))
        from = try a.popPositional("FROM")
        to = try a.popPositional("TO")
        guard let r = a.popOption("--rate") else { throw UsageError.missingValue(option: "--rate", valueName: "R") }
        rate = try ArgumentList.fixed(r, field: "Rate")
        fee = try a.popOption("--fee").map { try ArgumentList.fixed($0, field: "Fee") } ?? .zero
        date = try a.popOption("--date").map { text throws(UsageError) in try ArgumentList.date(text, field: "Date") }
        note = a.popOption("--note").flatMap { $0.isEmpty ? nil : $0 }
    }

    func run(_ context: Context) throws -> ExitCode {
        try CashOptions.record(context) { _, p in
            .cashExchange(ExchangeRequest(portfolio: p.name, amount: amount, from: try FXOptions.currency(self.from, field: "FROM"),
                                          to: try FXOptions.currency(self.to, field: "TO"), rate: rate, fee: fee,
                                          date: try date?.record(in: context.timeZone, now: context.now) ?? .instant(context.now), notes: note))
        }
    }
}

struct CashBalanceCommand: Command {
    static let spec = CommandSpec(
        name: "cash balance", summary: "Cash of the portfolio, per currency", options: [ReportOptions.all],
        group: "Cash and currencies", details: CashOptions.details, examples: ["bitpal cash", "bitpal -p brokerage cash --json"])

    var all: Bool

    init(parsing a: inout ArgumentList) throws { all = a.popFlag("--all") }

    func run(_ context: Context) throws -> ExitCode {
        // The cash report's portfolios (every one that tracks cash, or the chosen one, which must), valued as
        // every report values cash: each balance in the base at today's rate, or named when no rate is known.
        let book = try context.session().repository.loadSettings()
        _ = try CashReport.selection(context, book: book, all: all)
        let reports = try context.reports(refresh: false, all: all)
        let report = reports.holdings()
        let base = reports.baseCurrency
        for pair in report.missingRates {
            context.warn("no \(pair) rate is known, so cash in \(pair.prefix(3)) is left out of the total; record one with "
                + "'bitpal fx set \(pair.prefix(3)) \(pair.suffix(3)) RATE'")
        }
        let lines = report.cash
        if context.json {
            context.printJSON(.object([
                ("baseCurrency", .string(base)),
                ("balances", .array(lines.map { c in
                    .object([("currency", .string(c.currency)), ("amount", ReportJSON.money(c.balance)), ("value", ReportJSON.money(c.value))])
                })),
                ("total", ReportJSON.money(report.cashBalance ?? .zero)),
            ]))
            return .success
        }
        var table = Table([("CURRENCY", .left), ("BALANCE", .right), ("VALUE (\(base))", .right)])
        for c in lines {
            table.add([.init(c.currency), .init(Human.money(c.money)), .init(c.value.map(report.money).map(Human.money) ?? "no rate")])
        }
        if lines.isEmpty { table.add([.init(base), .init(Human.money(.zero(report.currency))), .init(Human.money(.zero(report.currency)))]) }
        context.out(table.render(style: context.style))
        if lines.count > 1 {
            context.out("Total \(Human.money(report.money(report.cashBalance ?? .zero)))"
                + (report.missingRates.isEmpty ? "" : " (without the cash that has no rate)") + "\n")
        }
        return .success
    }
}

struct CashHistoryCommand: Command {
    static let spec = CommandSpec(
        name: "cash history", summary: "Every cash movement with the running balance, oldest first", options: [ReportOptions.all],
        group: "Cash and currencies", examples: ["bitpal cash history", "bitpal -p brokerage cash history --json"])

    var all: Bool

    init(parsing a: inout ArgumentList) throws { all = a.popFlag("--all") }

    func run(_ context: Context) throws -> ExitCode {
        let (_, ledger, selected) = try CashReport.replay(context, all: all)
        let rows = ledger.cashMovements.filter { selected.contains($0.portfolio) }
        if context.json {
            context.printJSON(.object([("rows", .array(rows.map { m in
                .object([("date", .string(RecordDate(date: m.date, day: m.day).text)), ("transactionId", .string(UUIDText.lowercased(m.transactionId))),
                         ("portfolio", .string(m.portfolio)), ("type", .string(m.type.rawValue)), ("amount", ReportJSON.money(m.amount)),
                         ("currency", .string(m.currency)), ("balance", ReportJSON.money(m.balance))])
            }))]))
            return .success
        }
        if rows.isEmpty {
            context.out("No cash movements yet. Record one with 'bitpal cash deposit AMOUNT'.\n")
            return .success
        }
        let zone = context.timeZone
        var table = Table((all ? [("PORTFOLIO", .left)] : []) + [("DATE (\(Human.zoneLabel(zone)))", .left), ("TYPE", .left), ("AMOUNT", .right), ("BALANCE", .right),
                                                                  ("CURRENCY", .left), ("ID", .left)])
        for m in rows {
            let currency = CurrencyCode(m.currency)
            table.add((all ? [.init(TextEscaping.escaped(m.portfolio))] : []) + [
                .init(Human.day(m.date, in: zone)), .init(m.type.rawValue), .init(Human.signedMoney(Money(m.amount, currency))),
                .init(Human.money(Money(m.balance, currency))),
                .init(m.currency), .init(String(UUIDText.lowercased(m.transactionId).prefix(8))),
            ])
        }
        context.out(table.render(style: context.style))
        return .success
    }
}

enum CashReport {
    /// The book, its replay, and the portfolios a cash report covers.
    static func replay(_ context: Context, all: Bool) throws -> (Book, Ledger, Set<String>) {
        let book = try context.session().repository.loadBook()
        let selected = try selection(context, book: book, all: all)
        return (book, try context.checkedLedger(book, cashMovements: true), selected)
    }

    /// The portfolios a cash report covers: every active one that tracks cash (`--all`), else the
    /// chosen one, which must track cash.
    static func selection(_ context: Context, book: Book, all: Bool) throws -> Set<String> {
        if all { return Set(try context.selection(in: book, all: true).filter { book.portfolio(named: $0)?.trackCash == true }) }
        return [try CashOptions.portfolio(context, in: book).name]
    }
}

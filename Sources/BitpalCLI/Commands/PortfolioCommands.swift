import Foundation
import PortfolioCore

enum PortfolioOptions {
    static func name(_ text: String, option: String = "NAME") throws(UsageError) -> String {
        guard Portfolio.isValidName(text) else {
            throw .invalidValue(option: option, value: text, reason: "a portfolio name is 1–40 letters, digits, '-', '_' or '.'")
        }
        return text
    }

    /// The portfolio's fields (`Portfolio.fields`, every one) but its creation date and targets
    /// (`target show` prints those), then whether it is the default, its transactions and its value.
    static func json(_ p: Portfolio, book: Book, value: Exact36?) -> JSONValue {
        .object(Portfolio.fields.pairs(p, leaving: ["createdDate", "targets"], adding: [
            ("default", .bool(p.name == book.defaultPortfolio)),
            ("transactionCount", .number(String(book.lineCount(portfolio: p.name)))),
            ("totalValue", ReportJSON.money(value)),
        ]))
    }

    /// The transactions of `portfolio` as `list` shows them: the two legs of a swap or a cash exchange
    /// (both in the portfolio) are one line; a move's or a cash transfer's leg is one line in each portfolio.

    static let method = OptionSpec("--method", "METHOD", "cost basis: average (default), fifo, lifo or hifo",
                                   choices: CostBasisMethod.allCases.map(\.rawValue))

    /// `--method`, any case (exit 2 when unknown).
    static func method(_ a: inout ArgumentList) throws(UsageError) -> CostBasisMethod? {
        guard let text = a.popOption("--method") else { return nil }
        guard let m = CostBasisMethod(name: text) else {
            throw .invalidChoice(option: "--method", value: text, choices: CostBasisMethod.allCases.map(\.rawValue))
        }
        return m
    }

    static let cashOptions = [
        OptionSpec("--cash", nil, "keep a cash ledger: buys spend cash, sells and income add it, never below zero"),
        OptionSpec("--opening-deposit", "AMOUNT", "with --cash: deposit this much in the same write (to start an existing history)"),
        OptionSpec("--date", "DATE", "the opening deposit's date (default now; before the first buy to pay for it)"),
    ]

    /// `--cash`, `--no-cash` (when `allowOff`), `--opening-deposit AMOUNT` and `--date D`.
    static func cash(_ a: inout ArgumentList, allowOff: Bool) throws -> (on: Bool?, deposit: Fixed18?, date: DateArgument?) {
        let on = a.popFlag("--cash"), off = allowOff && a.popFlag("--no-cash")
        if on && off { throw UsageError.conflict("--cash and --no-cash contradict each other") }
        let deposit = try a.popOption("--opening-deposit").map { try ArgumentList.fixed($0, field: "Opening deposit") }
        let date = try a.popOption("--date").map { text throws(UsageError) in try ArgumentList.date(text, field: "Date") }
        if deposit != nil && !on { throw UsageError.conflict("--opening-deposit goes with --cash") }
        if date != nil && deposit == nil { throw UsageError.conflict("--date is the opening deposit's date: give --opening-deposit") }
        return (on ? true : off ? false : nil, deposit, date)
    }

    /// The opening deposit `--opening-deposit` and `--date` ask for.
    static func openingDeposit(_ cash: (on: Bool?, deposit: Fixed18?, date: DateArgument?), context: Context) throws -> (amount: Fixed18, date: RecordDate)? {
        guard let amount = cash.deposit else { return nil }
        return (amount, try cash.date?.record(in: context.timeZone, now: context.now) ?? .instant(context.now))
    }
}

struct PortfolioListCommand: Command {
    static let spec = CommandSpec(
        name: "portfolio list", summary: "Your portfolios: base currency, transactions, value",
        options: [OptionSpec("--all", nil, "inactive portfolios too")],
        group: "Assets and portfolios", examples: ["bitpal portfolio list", "bitpal portfolio list --all --json"])

    var all: Bool

    init(parsing a: inout ArgumentList) throws {
        all = a.popFlag("--all")
    }

    func run(_ context: Context) throws -> ExitCode {
        let session = try context.session()
        let book = try session.repository.loadBook()
        let ledger = try context.checkedLedger(book)
        let prices = session.prices.priceBook(book)  // no network: a listing uses what is known
        let shown = book.portfolios.filter { all || $0.active }
        let rates = session.prices.fxTable(book, prices: prices)
        // Each portfolio's value in its own base, every balance and holding converted at today's rate; unknown
        // ("—") when anything is unpriced or has no rate, never a part taken for the whole.
        let values: [String: Exact36?] = Dictionary(uniqueKeysWithValues: shown.map { p in
            let h = Reports(ledger: ledger, prices: prices, now: context.now, portfolios: [p.name], baseCurrency: p.baseCurrency, rates: rates,
                            asset: { AssetLabel.unknown($0) }).holdings()
            return (p.name, h.unpricedCount > 0 || !h.missingRates.isEmpty ? nil : Optional(h.totalValue))
        })
        if context.json {
            context.printJSON(.array(shown.map { PortfolioOptions.json($0, book: book, value: values[$0.name] ?? nil) }))
            return .success
        }
        var table = Table([("", .left), ("NAME", .left), ("CURRENCY", .left), ("METHOD", .left), ("CASH", .left), ("STATUS", .left),
                           ("TRANSACTIONS", .right), ("VALUE", .right), ("DESCRIPTION", .left)])
        for p in shown {
            let count = book.lineCount(portfolio: p.name)
            table.add([p.name == book.defaultPortfolio ? "*" : "", TextEscaping.escaped(p.name), p.baseCurrency, p.costBasisMethod.rawValue, p.trackCash ? "yes" : "no",
                       p.active ? "active" : "inactive", String(count), (values[p.name] ?? nil).map { v in Human.money(Money(v, CurrencyCode(p.baseCurrency))) } ?? "—",
                       TextEscaping.escaped(p.description ?? "")])
        }
        context.out(table.render(style: context.style))
        context.out("* the default portfolio (used when --portfolio is not given)\n")
        return .success
    }
}

struct PortfolioAddCommand: Command {
    static let spec = CommandSpec(
        name: "portfolio add", summary: "Create a portfolio", arguments: "NAME",
        options: [OptionSpec("--currency", "CODE", "its base currency (default USD): reports and costs are in it"),
                  OptionSpec("--description", "TEXT", "what it is for"), PortfolioOptions.method] + PortfolioOptions.cashOptions,
        group: "Assets and portfolios",
        details: "NAME: 1–40 letters, digits, '-', '_' or '.'; unique, whatever the case.",
        examples: ["bitpal portfolio add trading --description \"short-term\"", "bitpal -p trading add buy btc 0.1 60000",
                   "bitpal portfolio add us-taxable --method fifo",
                   "bitpal portfolio add brokerage --cash --opening-deposit 10000 --date 2024-01-01"])

    var name: String
    var currency: String?
    var description: String?
    var method: CostBasisMethod?
    var cash: (on: Bool?, deposit: Fixed18?, date: DateArgument?)

    init(parsing a: inout ArgumentList) throws {
        name = try PortfolioOptions.name(try a.popPositional("NAME"))
        currency = a.popOption("--currency")
        description = a.popOption("--description").flatMap { $0.isEmpty ? nil : $0 }
        method = try PortfolioOptions.method(&a)
        cash = try PortfolioOptions.cash(&a, allowOff: false)
    }

    func run(_ context: Context) throws -> ExitCode {
        let currency = try self.currency.map(AssetOptions.currency) ?? "USD"
        let p = Portfolio(name: name, baseCurrency: currency, description: description, createdDate: context.now, trackCash: cash.on == true,
                          costBasisMethod: method ?? .average)
        let book = try context.session().repository.commit(.addPortfolio(p, openingDeposit: try PortfolioOptions.openingDeposit(cash, context: context)),
                                                names: context.names).book
        if context.json {
            context.printJSON(PortfolioOptions.json(p, book: book, value: .zero))
        } else {
            let how = p.costBasisMethod == .average ? "" : ", \(p.costBasisMethod.rawValue)"
            context.out("Created portfolio '\(TextEscaping.escaped(name))' (\(currency)\(how)). Use it with: bitpal -p \(name) add buy bitcoin 0.1 60000\n")
        }
        return .success
    }
}

struct PortfolioEditCommand: Command {
    static let spec = CommandSpec(
        name: "portfolio edit", summary: "Rename, describe, activate or deactivate a portfolio", arguments: "NAME",
        options: [OptionSpec("--name", "NEW", "a new name (its transactions follow in the same write)"),
                  OptionSpec("--description", "TEXT", "a new description (\"\" removes it)"),
                  OptionSpec("--active", nil, "include it in --all again"),
                  OptionSpec("--inactive", nil, "leave it out of --all and of 'portfolio list'"),
                  OptionSpec("--method", "METHOD", "a new cost-basis method: average, fifo, lifo or hifo (every report follows)",
                             choices: CostBasisMethod.allCases.map(\.rawValue)),
                  OptionSpec("--currency", "CODE", "a new base currency (only while it has no transactions or plans)")]
            + PortfolioOptions.cashOptions + [OptionSpec("--no-cash", nil, "stop tracking cash (refused while it has cash records)")],
        group: "Assets and portfolios",
        details: """
        Turning cash on re-checks the whole history: it is refused, naming the first record that would
        overdraw, unless the cash it needs is there; --opening-deposit AMOUNT --date D records that
        cash in the same write. A new --method changes which basis every past disposal took (the
        quantities and the cash stay the same, so it is never refused for that); see 'bitpal compare'.
        """,
        examples: ["bitpal portfolio edit trading --name swing", "bitpal portfolio edit old --inactive",
                   "bitpal portfolio edit main --cash --opening-deposit 25000 --date 2023-12-31", "bitpal portfolio edit main --method fifo"])

    var name: String
    var newName: String?
    var description: String?
    var active: Bool?
    var method: CostBasisMethod?
    var currency: String?
    var cash: (on: Bool?, deposit: Fixed18?, date: DateArgument?)

    init(parsing a: inout ArgumentList) throws {
        name = try PortfolioOptions.name(try a.popPositional("NAME"))
        currency = a.popOption("--currency")
        newName = try a.popOption("--name").map { text throws(UsageError) in try PortfolioOptions.name(text, option: "--name") }
        description = a.popOption("--description")
        let on = a.popFlag("--active"), off = a.popFlag("--inactive")
        if on && off { throw UsageError.conflict("--active and --inactive contradict each other") }
        active = on ? true : off ? false : nil
        method = try PortfolioOptions.method(&a)
        cash = try PortfolioOptions.cash(&a, allowOff: true)
        if newName == nil && description == nil && active == nil && cash.on == nil && method == nil && currency == nil {
            throw UsageError.conflict("nothing to change: give at least one of --name, --description, --active, --inactive, --method, --currency, --cash, --no-cash")
        }
    }

    func run(_ context: Context) throws -> ExitCode {
        var edit = PortfolioEdit()
        (edit.name, edit.currency, edit.description, edit.active, edit.method) = (newName, currency, description, active, method)
        (edit.trackCash, edit.openingDeposit) = (cash.on, try PortfolioOptions.openingDeposit(cash, context: context))
        let (done, book) = try context.session().repository.commit(.editPortfolio(name, edit), names: context.names)
        guard let p = done.portfolio else { return .success }
        if context.json {
            context.printJSON(PortfolioOptions.json(p, book: book, value: nil))
        } else {
            context.out("Changed portfolio '\(TextEscaping.escaped(p.name))'" + (p.active ? "" : " (inactive)")
                        + (method.map { ": cost basis by \($0.rawValue) (\($0.summary))" } ?? "") + ".\n")
        }
        return .success
    }
}

struct PortfolioDefaultCommand: Command {
    static let spec = CommandSpec(
        name: "portfolio default", summary: "Choose the portfolio used when none is named", arguments: "NAME",
        group: "Assets and portfolios", examples: ["bitpal portfolio default trading"])

    var name: String

    init(parsing a: inout ArgumentList) throws {
        name = try PortfolioOptions.name(try a.popPositional("NAME"))
    }

    func run(_ context: Context) throws -> ExitCode {
        let chosen = try context.session().repository.commit(.setDefaultPortfolio(name), names: context.names).applied.name ?? name
        if context.json {
            context.printJSON(.object([("defaultPortfolio", .string(chosen))]))
        } else {
            context.out("'\(TextEscaping.escaped(chosen))' is now the default portfolio.\n")
        }
        return .success
    }
}

struct PortfolioRemoveCommand: Command {
    static let spec = CommandSpec(
        name: "portfolio remove", summary: "Delete an empty portfolio", arguments: "NAME",
        group: "Assets and portfolios",
        details: "Refused while it has transactions (move or delete them first), for the default and for the last one.",
        examples: ["bitpal portfolio remove old"])

    var name: String

    init(parsing a: inout ArgumentList) throws {
        name = try PortfolioOptions.name(try a.popPositional("NAME"))
    }

    func run(_ context: Context) throws -> ExitCode {
        let removed = try context.session().repository.commit(.removePortfolio(name), names: context.names).applied.name ?? name
        if context.json {
            context.printJSON(.object([("removed", .string(removed))]))
        } else {
            context.out("Removed portfolio '\(TextEscaping.escaped(removed))'.\n")
        }
        return .success
    }
}

struct IncomeCommand: Command {
    static let spec = CommandSpec(
        name: "income", summary: "Dividends, interest and rewards: gross, tax withheld, net",
        options: [OptionSpec("--year", "YYYY", "only this year (UTC)"),
                  OptionSpec("--by", "GROUP", "totals by asset, month or year", choices: IncomeGrouping.allCases.map(\.rawValue)),
                  ReportOptions.all],
        group: "Reports",
        details: "A reward's gross is its value at receipt (amount × price), with no tax. Money prints with 2 decimals.",
        examples: ["bitpal income", "bitpal income --year 2024 --by month", "bitpal income --all --json"])

    var year: Int?
    var by: IncomeGrouping?
    var all: Bool

    init(parsing a: inout ArgumentList) throws {
        year = try Period.year(&a)
        by = a.popOption("--by").flatMap(IncomeGrouping.init(rawValue:))
        all = a.popFlag("--all")
    }

    func run(_ context: Context) throws -> ExitCode {
        let reports = try context.reports(refresh: false, all: all)
        let report = reports.income(year: year, by: by, timeZone: context.timeZone)
        let money = ReportJSON.money as (Exact36?) -> JSONValue
        func sums(_ s: IncomeReport.Sums) -> [(String, JSONValue)] {
            [("gross", money(s.gross)), ("taxWithheld", money(s.taxWithheld)), ("net", money(s.net))]
        }
        if context.json {
            let rows: [JSONValue] = report.groups.map { groups in groups.map { .object([("group", .string($0.group))] + sums($0.sums)) } }
                ?? report.rows.map { e in
                    .object([("date", .string(RecordDate(date: e.date, day: e.day).text)), ("transactionId", .string(UUIDText.lowercased(e.transactionId))),
                             ("assetId", e.assetId.isEmpty ? .null : .string(e.assetId)), ("type", .string(e.type.rawValue))]
                                + sums(IncomeReport.Sums(e)))
                }
            context.printJSON(.object([("rows", .array(rows)), ("totals", .object(sums(report.totals)))]))
            return .success
        }
        if report.rows.isEmpty {
            context.out("No income\(year.map { " in \($0)" } ?? "") yet: record one with 'bitpal add dividend AAPL 2.40' or 'bitpal add reward eth 0.01 3000'.\n")
            return .success
        }
        var table: Table
        if let groups = report.groups {
            table = Table([(by == .asset ? "ASSET" : by == .month ? "MONTH" : "YEAR", .left), ("GROSS", .right), ("TAX WITHHELD", .right), ("NET", .right)])
            for g in groups {
                let label = by == .asset ? TextEscaping.escaped(context.assetLabel(g.group).symbol.uppercased()) : g.group
                table.add([label, Human.money(report.money(g.sums.gross)), Human.money(report.money(g.sums.taxWithheld)), Human.money(report.money(g.sums.net))])
            }
            table.addFooter([.init("TOTAL"), .init(Human.money(report.money(report.totals.gross))), .init(Human.money(report.money(report.totals.taxWithheld))),
                             .init(Human.money(report.money(report.totals.net)))])
        } else {
            let zone = context.timeZone
            table = Table([("DATE (\(Human.zoneLabel(zone)))", .left), ("ASSET", .left), ("KIND", .left), ("GROSS", .right),
                           ("TAX WITHHELD", .right), ("NET", .right)])
            for e in report.rows {
                table.add([Human.day(e.date, in: zone), TextEscaping.escaped(context.assetLabel(e.assetId).symbol.uppercased()), e.type.rawValue,
                           Human.money(report.money(e.gross)), Human.money(report.money(e.taxWithheld)), Human.money(report.money(e.net))])
            }
            table.addFooter([.init("TOTAL"), .init(""), .init(""), .init(Human.money(report.money(report.totals.gross))),
                             .init(Human.money(report.money(report.totals.taxWithheld))), .init(Human.money(report.money(report.totals.net)))])
        }
        context.out(table.render(style: context.style))
        context.noteConversion(reports)
        return .success
    }
}

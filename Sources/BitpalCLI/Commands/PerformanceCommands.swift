import Foundation
import PortfolioCore

extension Context {
    /// The value over time of the chosen portfolios (every active one with `all`), with current
    /// prices refreshed under the reports' 60-second rule (never offline); and how to name them.
    func timeline(all: Bool, currency: String? = nil, refresh: Bool = true) throws -> (timeline: ValueTimeline, title: String) {
        let session = try session()
        var book = try session.repository.loadBook()
        let chosen = try selection(in: book, all: all)
        let code = try currency.map { try FXOptions.currency($0, field: "--currency") }
        let timeline = try session.timeline(book, portfolios: chosen, refresh: refresh, currency: code, timeZone: timeZone, names: names)
        Parallel.discard(&book, leaving: Book())
        let title = all ? "all portfolios" : "'\(TextEscaping.escaped(chosen.first ?? ""))'"
        return (timeline, title)
    }

    /// A `--since` (lower) or `--until` bound as a local day; `nil` when open.
    func localDay(_ argument: DateArgument?, lower: Bool) -> LocalDay? {
        guard let argument, let date = argument.filterBound(in: timeZone, now: now, lower: lower) else { return nil }
        return LocalDay(date, in: timeZone)
    }

    /// Warns that some days left out something held (no price or no rate on them).
    func warnPartial(days: Int, unpriced: [String], what: String) {
        guard days > 0 else { return }
        let names = unpriced.prefix(5).map { $0.contains("→") ? "no \($0) rate" : coinLabel($0) }.joined(separator: ", ")
        warn("\(days) day\(days == 1 ? "" : "s") of \(what) left out something held for want of a price or rate (\(names)\(unpriced.count > 5 ? ", …" : ""))"
            + "; record one with 'bitpal price set ASSET PRICE --date D' (or 'bitpal fx set')")
    }
}

/// `--since` and `--until` of `history` and `performance`: local days, inclusive.
struct DayRange {
    var since: DateArgument?
    var until: DateArgument?

    static let options = [
        OptionSpec("--since", "DATE", "from this day on (inclusive, local time)"),
        OptionSpec("--until", "DATE", "up to this day (inclusive; default: today)"),
    ]

    init(parsing a: inout ArgumentList) throws {
        since = try a.popOption("--since").map { text throws(UsageError) in try ArgumentList.date(text, field: "--since") }
        until = try a.popOption("--until").map { text throws(UsageError) in try ArgumentList.date(text, field: "--until") }
    }

    var isEmpty: Bool { since == nil && until == nil }

    func days(_ context: Context) throws -> (since: LocalDay?, until: LocalDay?) {
        let s = context.localDay(since, lower: true), u = context.localDay(until, lower: false)
        if let s, let u, s > u { throw UsageError.conflict("--since is after --until") }
        return (s, u)
    }
}

struct HistoryCommand: Command {
    static let spec = CommandSpec(
        name: "history", summary: "Value over time: holdings, cash, net invested and P&L at each day, week or month end",
        options: DayRange.options + [
            OptionSpec("--interval", "INTERVAL", "day, week (ending on Sunday) or month (the default; with --chart, day)",
                       choices: HistoryInterval.allCases.map(\.rawValue)),
            OptionSpec("--chart", nil, "draw total value and net invested as a line chart fitted to the terminal (COLUMNS, else 80)"),
            OptionSpec("--ascii", nil, "with --chart: plain ASCII instead of braille dots and box lines"),
            ReportOptions.all, ReportOptions.currency,
        ],
        group: "Reports",
        details: """
        One row per period end, from the first transaction to today (the last row is today, a period
        still running): what was held at the end of that day, each position at the newest price at or
        before then, converted at that day's rate; cash (portfolios that track it); their total; net
        invested, the money put in less taken out since the first transaction (buys at total + fee,
        sells, dividends and interest out, transfers at market value; with cash tracked, deposits and
        withdrawals, and transfers of assets); and P&L = total − net invested. A holding with no price
        yet on a day is left out and its row marked partial. Past prices come from 'price set --date'
        and the price history in the cache; nothing is fetched except today's prices, as 'holdings'
        does (never with --offline).
        """,
        examples: ["bitpal history", "bitpal history --interval week --since 2024-01-01", "bitpal history --chart",
                   "bitpal history --chart --ascii --all", "bitpal history --interval day --json"])

    var range: DayRange
    var interval: HistoryInterval?
    var chart: Bool
    var ascii: Bool
    var all: Bool
    var currency: String?

    init(parsing a: inout ArgumentList) throws {
        range = try DayRange(parsing: &a)
        interval = a.popOption("--interval").flatMap(HistoryInterval.init(rawValue:))
        chart = a.popFlag("--chart")
        ascii = a.popFlag("--ascii")
        all = a.popFlag("--all")
        currency = a.popOption("--currency")
        if ascii && !chart { throw UsageError.conflict("--ascii is a style of --chart; add --chart") }
    }

    func run(_ context: Context) throws -> ExitCode {
        if chart && context.json { throw UsageError.conflict("--chart draws for people; leave it out with --json") }
        let (since, until) = try range.days(context)
        let (timeline, title) = try context.timeline(all: all, currency: currency)
        let history = timeline.history(interval: interval ?? (chart ? .day : .month), since: since, until: until)
        if context.json {
            context.printJSON(.object([
                ("interval", .string(history.interval.rawValue)), ("currency", .string(history.currency.code)),
                ("rows", .array(history.rows.map { r in
                    .object([("date", .string(r.date.description)), ("holdingsValue", ReportJSON.money(r.holdingsValue)),
                             ("cash", ReportJSON.money(r.cash)), ("totalValue", ReportJSON.money(r.totalValue)),
                             ("netInvested", ReportJSON.money(r.netInvested)), ("pnl", ReportJSON.money(r.pnl)), ("partial", .bool(r.partial))])
                })),
            ]))
            return .success
        }
        guard !history.rows.isEmpty else {
            context.out(timeline.firstDay == nil
                ? "No transactions yet in \(title): record one with 'bitpal add buy bitcoin 0.5 42000'.\n"
                : "Nothing to show between those dates: \(title) starts on \(timeline.firstDay?.description ?? "").\n")
            return .success
        }
        let partial = history.rows.filter(\.partial).count
        if chart {
            context.out(chartText(history, title: title, context: context))
        } else {
            context.out(table(history, cash: timeline.tracksCash, style: context.style))
        }
        if partial > 0 {
            let names = history.unpriced.prefix(5).map { $0.contains("→") ? "no \($0) rate" : context.coinLabel($0) }.joined(separator: ", ")
            context.out("partial: \(partial) row\(partial == 1 ? "" : "s") leave\(partial == 1 ? "s" : "") out a holding with no price on that day (\(names)"
                + "\(history.unpriced.count > 5 ? ", …" : "")); set one with 'bitpal price set ASSET PRICE --date D'.\n")
        }
        return .success
    }

    private func table(_ history: ValueHistory, cash: Bool, style: Style) -> String {
        var columns: [(String, Table.Alignment)] = [("DATE", .left), ("HOLDINGS", .right)]
        if cash { columns.append(("CASH", .right)) }
        columns += [("TOTAL VALUE", .right), ("NET INVESTED", .right), ("P&L", .right), ("", .left)]
        var table = Table(columns)
        for r in history.rows {
            var cells: [Table.Cell] = [.init(r.date.description), .init(Human.money(history.money(r.holdingsValue)))]
            if cash { cells.append(.init(r.cash.map(history.money).map(Human.money) ?? "—")) }
            cells += [.init(Human.money(history.money(r.totalValue))), .init(Human.money(history.money(r.netInvested))),
                      .init(Human.signedMoney(history.money(r.pnl)), paint: { style.pnl($0, r.pnl) }),
                      .init(r.partial ? "partial" : "", paint: { style.yellow($0) })]
            table.add(cells)
        }
        return table.render(style: style)
    }

    private func chartText(_ history: ValueHistory, title: String, context: Context) -> String {
        let columns = context.environment.variables["COLUMNS"].flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }.flatMap { $0 > 0 ? min($0, 1000) : nil } ?? 80
        let rows = history.rows
        let chart = LineChart(series: [LineChart.Series(label: "total value", values: rows.map(\.totalValue.double)),
                                       LineChart.Series(label: "net invested", values: rows.map(\.netInvested.double))],
                              dates: rows.map(\.date), currency: history.currency, width: columns, ascii: ascii)
        let every: String = switch history.interval { case .day: "daily"; case .week: "weekly"; case .month: "monthly" }
        var head = "Value of \(title) in \(history.currency), \(every), \(rows.first?.date.description ?? "") to \(rows.last?.date.description ?? "")"
        if head.count > max(columns, LineChart.minimumWidth) { head = String(head.prefix(max(columns, LineChart.minimumWidth))) }
        let last = rows[rows.count - 1]
        // The last row in words, wrapped at the width.
        let parts = ["On \(last.date): value \(Human.money(history.money(last.totalValue))),", "net invested \(Human.money(history.money(last.netInvested))),",
                     "P&L \(Human.signedMoney(history.money(last.pnl)))."]
        var foot = "", line = ""
        for part in parts {
            if !line.isEmpty && line.count + 1 + part.count > max(columns, LineChart.minimumWidth) {
                foot += line + "\n"
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + part
        }
        foot += line + "\n"
        return head + "\n" + chart.render(style: context.style) + foot
    }
}

struct PerformanceCommand: Command {
    static let spec = CommandSpec(
        name: "performance", summary: "Returns over a period: time-weighted (TWR) and money-weighted (IRR), gain and flows",
        options: [OptionSpec("--period", "PERIOD", "ytd, 1y, 3y, 5y (any Ny: the N years ending today), max (the default) or a year (2024)")]
            + DayRange.options + [
                OptionSpec("--flows", nil, "list every flow of the period: date, kind, transaction, amount"),
                ReportOptions.all, ReportOptions.currency,
            ],
        group: "Reports",
        details: """
        Flows are money crossing the portfolio's edge: without cash tracking, buys in (total + fee),
        sells out (total − fee), dividends and interest out (net), transfers at market value on their
        day (at their basis without a price), a swap's fee in; with cash tracking, deposits in,
        withdrawals out, transfers of assets at market value. Gain = end value − start value − net
        flows, the start value being that at the end of the day before the period.

        TWR chains each day's return, money coming in at the start of its day and going out at its
        end, so selling everything is not a −100% day (a day that left out a holding without a
        price is bridged to the next fully priced one); over more than 366 days it is also given a
        year. IRR is the yearly rate (Act/365) that makes the flows, the start and the end value
        meet, as hledger's roi computes it; none when no rate does. Rates are statistics: shown with
        2 decimals (JSON: strings with 4).
        """,
        examples: ["bitpal performance", "bitpal performance --period ytd", "bitpal performance --period 2024 --flows",
                   "bitpal performance --since 2024-07-01 --until 2024-12-31 --json", "bitpal performance --all --period 1y"])

    var period: PerformancePeriod?
    var range: DayRange
    var flows: Bool
    var all: Bool
    var currency: String?

    init(parsing a: inout ArgumentList) throws {
        period = try a.popOption("--period").map { text throws(UsageError) in try PerformanceCommand.period(text) }
        range = try DayRange(parsing: &a)
        flows = a.popFlag("--flows")
        all = a.popFlag("--all")
        currency = a.popOption("--currency")
        if period != nil && !range.isEmpty { throw UsageError.conflict("--period is a period of its own; leave out --since and --until") }
    }

    /// `ytd`, `max`, `Ny` (1–100) or a year (1900–9999), any case.
    static func period(_ text: String) throws(UsageError) -> PerformancePeriod {
        let t = text.lowercased()
        if t == "ytd" { return .ytd }
        if t == "max" { return .max }
        if t.hasSuffix("y"), t.count <= 4, let n = Int(t.dropLast()), (1...100).contains(n) { return .years(n) }
        if t.count == 4, t.allSatisfy(\.isASCII), let y = Int(t), (1900...9999).contains(y) { return .year(y) }
        throw .invalidValue(option: "--period", value: text, reason: "a period is ytd, 1y, 3y, 5y (any Ny up to 100y), max or a year like 2024")
    }

    func run(_ context: Context) throws -> ExitCode {
        let chosen = try range.days(context)
        let (timeline, title) = try context.timeline(all: all, currency: currency)
        let asked = period ?? (range.isEmpty ? .max : .range(since: chosen.since, until: chosen.until))
        let (since, until) = asked.days(today: timeline.today, firstTransaction: timeline.firstDay)
        guard since <= until else {
            if until < timeline.today {
                throw CommandFailure("The period ends on \(until), before it starts on \(since) (the first transaction's day, without --since): there is nothing to measure")
            }
            throw CommandFailure("The period starts on \(since), after today (\(timeline.today)): there is nothing to measure yet")
        }
        let p = timeline.performance(since: since, until: until)
        context.warnPartial(days: p.partialDays, unpriced: p.unpriced, what: "the period")
        // Over the whole history, the gain and summary's total P&L answer one question two ways: name the gap.
        let whole = since == timeline.firstDay && until == timeline.today
        let summary = whole ? try context.reports(refresh: false, all: all, currency: currency).summary() : nil
        let summaryPnL = summary.map { $0.money($0.totalPnL) }
        let gap = try summary.flatMap { s throws(PortfolioError) in try p.gap(to: s) }
        if context.json {
            context.printJSON(.object([
                ("since", .string(p.since.description)), ("until", .string(p.until.description)), ("days", .number(String(p.days))),
                ("startValue", ReportJSON.money(p.startValue)), ("endValue", ReportJSON.money(p.endValue)),
                ("netFlows", ReportJSON.money(p.netFlows)), ("gain", ReportJSON.money(p.gain)),
                ("twr", ReportJSON.rate(p.twr)), ("twrAnnualized", ReportJSON.rate(p.twrAnnualized)), ("irr", ReportJSON.rate(p.irr)),
                ("summaryTotalPnL", ReportJSON.money(summaryPnL?.amount)), ("movedAtMarketValue", ReportJSON.money(gap?.amount)),
                ("flows", .array(p.flows.map { f in
                    .object([("date", .string(f.date.description)), ("kind", .string(f.kind.rawValue)),
                             ("transactionId", .string(UUIDText.lowercased(f.transactionId))), ("amount", ReportJSON.money(f.amount))])
                })),
            ]))
            return .success
        }
        let style = context.style
        context.out("Performance of \(title) from \(p.since) to \(p.until) (\(p.days) day\(p.days == 1 ? "" : "s")), in \(p.currency):\n")
        var rows = Table([("", .left), ("", .right), ("", .left)])
        rows.showsHeader = false
        rows.add([.init("Start value"), .init(Human.money(p.money(p.startValue))), .init("at the end of \(p.since.adding(days: -1))")])
        rows.add([.init("End value"), .init(Human.money(p.money(p.endValue))), .init("at the end of \(p.until)")])
        rows.add([.init("Net flows"), .init(Human.signedMoney(p.money(p.netFlows))),
                  .init("\(p.flows.count) flow\(p.flows.count == 1 ? "" : "s"): money put in, less taken out (assets moved at their market value)")])
        rows.add([.init("Gain"), .init(Human.signedMoney(p.money(p.gain)), paint: { style.pnl($0, p.gain) }), .init("end − start − net flows")])
        if let summaryPnL, let gap, DecimalFormatting.money(gap.amount) != "0.00" {
            rows.add([.init("Summary's P&L"), .init(Human.signedMoney(summaryPnL)),
                      .init("the gain is \(Human.moneyApart(gap)): assets moved in or out count here at their market value, in 'summary' at their basis")])
        }
        let twrNote = p.twrAnnualized.map { "time-weighted; \(Human.rate($0)) a year" } ?? "time-weighted: the investments' own return"
        rows.add([.init("TWR"), .init(Human.rate(p.twr), paint: { style.pnl($0, rate: p.twr) }),
                  .init(twrNote)])
        rows.add([.init("IRR"), .init(Human.rate(p.irr), paint: { style.pnl($0, rate: p.irr) }),
                  .init(p.irr == nil ? "money-weighted: no rate solves these flows" : "money-weighted, a year's rate (Act/365)")])
        context.out(rows.render(style: style))
        if flows {
            guard !p.flows.isEmpty else {
                context.out("\nNo flows in the period.\n")
                return .success
            }
            let session = try context.session()
            var table = Table((all ? [("PORTFOLIO", .left)] : []) + [
                ("DATE", .left), ("KIND", .left), ("ID", .left), ("ASSET", .left), ("AMOUNT", .right), ("", .left)])
            for f in p.flows {
                let asset = f.assetId.isEmpty ? "" : session.resolver.assetLabel(f.assetId).symbol.uppercased()
                table.add((all ? [.init(TextEscaping.escaped(f.portfolio))] : []) + [
                    .init(f.date.description), .init(f.kind.rawValue), .init(Human.shortID(f.transactionId)), .init(TextEscaping.escaped(asset)),
                    .init(Human.signedMoney(p.money(f.amount))), .init(f.atBasis ? "at basis (no price)" : ""),
                ])
            }
            context.out("\n" + table.render(style: style))
        }
        return .success
    }
}

extension ReportJSON {
    /// A rate of return as a percentage string with 4 decimals (`"42.1053"`), or null.
    static func rate(_ fraction: Double?) -> JSONValue { .optional(Human.rateText(fraction, decimals: 4)) }
}

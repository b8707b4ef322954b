import Foundation
import PortfolioCore

/// `report --html FILE`: one self-contained page with what the reports print (history-performance.md,
/// "The report page"). Every figure is formatted by the same functions as the CLI's tables.
struct ReportPageCommand: Command {
    static let spec = CommandSpec(
        name: "report", summary: "Write a self-contained HTML page: summary, holdings, allocation, value chart, performance, income, gains",
        options: [OptionSpec("--html", "FILE", "where to write the page ('-' for standard output)", required: true), ReportOptions.all,
                  ReportOptions.currency],
        group: "Reports",
        details: """
        One file with no scripts and nothing fetched when it opens (inline SVG and CSS): open it in any
        browser, on a phone, or print it. Its figures are the ones 'holdings', 'summary', 'allocation',
        'history', 'performance', 'income' and 'gains' print. Prices are refreshed first as for
        'holdings' (unless offline). The file is readable by you only (mode 600).
        """,
        examples: ["bitpal report --html report.html", "bitpal report --html - --all > all.html"])

    var file: String
    var all: Bool
    var currency: String?

    init(parsing a: inout ArgumentList) throws {
        guard let file = a.popOption("--html"), !file.isEmpty else { throw UsageError.missingValue(option: "--html", valueName: "FILE") }
        self.file = file
        all = a.popFlag("--all")
        currency = a.popOption("--currency")
    }

    func run(_ context: Context) throws -> ExitCode {
        if file != "-" { try KeptFiles.refuseOutput(file, dataDirectory: try context.dataDirectory()) }
        let reports = try context.reports(refresh: true, all: all, currency: currency) { $0.keepingDisposals = true }
        let (timeline, _) = try context.timeline(all: all, currency: currency, refresh: false)  // the reports just refreshed
        let session = try context.session()
        let settings = try session.repository.loadSettings()
        let portfolio = try context.portfolio(in: settings)
        var page = ReportPage(context: context, reports: reports, timeline: timeline)
        page.title = all ? "All portfolios" : "Portfolio '\(portfolio.name)'"
        page.targets = all ? nil : portfolio.targets
        let html = try page.render()
        if file == "-" {
            context.out(html)
            return .success
        }
        try FileSystem.writeAtomically(Array(html.utf8), to: file, mode: 0o600)
        if context.json {
            context.printJSON(.object([("file", .string(file)), ("bytes", .number(String(html.utf8.count)))]))
        } else {
            context.out("Wrote \(TextEscaping.escaped(file)) (\(html.utf8.count / 1024 + 1) KB); open it in a browser.\n")
        }
        return .success
    }
}

/// The page itself, from the reports.
struct ReportPage {
    let context: Context
    let reports: Reports
    let timeline: ValueTimeline
    var title = ""
    var targets: Targets?

    init(context: Context, reports: Reports, timeline: ValueTimeline) {
        self.context = context
        self.reports = reports
        self.timeline = timeline
    }

    private typealias Cell = HTMLPage.Cell

    func render() throws -> String {
        let zone = context.timeZone
        let summary = reports.summary()
        let holdings = reports.holdings(sort: .value, byPortfolio: false)
        var s = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            + "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            + "<title>bitpal — \(HTMLPage.escape(title))</title><style>\(HTMLPage.style)</style></head><body>\n"
        s += "<header><h1>\(HTMLPage.escape(title))</h1><p class=\"muted\">bitpal report, \(HTMLPage.escape(Human.time(context.now, in: zone))) "
            + "\(HTMLPage.escape(Human.zoneLabel(zone))), in \(reports.baseCurrency)."
            + (summary.pricesAsOf.map { " Prices as of \(HTMLPage.escape(Human.time($0, in: zone))) (\(HTMLPage.escape(Human.age($0, now: context.now))))." } ?? "")
            + "</p></header>\n"
        s += summarySection(summary)
        s += holdingsSection(holdings)
        s += allocationSection(holdings)
        s += valueSection()
        s += try performanceSection()
        s += incomeSection()
        s += gainsSection()
        s += "<footer>Made by bitpal \(CLI.version) from portfolio.json; a file with no scripts and no links. "
            + "Figures are rounded to cents for display only.</footer>\n</body></html>\n"
        return s
    }

    private func card(_ label: String, _ value: String, _ note: String = "", tone: String? = nil) -> String {
        "<div class=\"card\"><span>\(HTMLPage.escape(label))</span><b\(tone.map { " class=\"\($0)\"" } ?? "")>\(HTMLPage.escape(value))</b>"
            + (note.isEmpty ? "" : "<span>\(HTMLPage.escape(note))</span>") + "</div>"
    }

    private func tone(_ text: String) -> String? { text.hasPrefix("-") ? "neg" : text.hasPrefix("+") ? "pos" : nil }

    private func summarySection(_ s: PortfolioSummary) -> String {
        let nothingPriced = s.holdingsCount > 0 && s.unpricedCount == s.holdingsCount
        var cards = card("Total value", nothingPriced ? "—" : Human.money(s.money(s.totalValue)), s.unpricedCount > 0 ? "priced holdings only" : "")
        if let cash = s.cashBalance { cards += card("Cash", Human.money(s.money(cash))) }
        if let deposits = s.netDeposits { cards += card("Net deposits", Human.money(s.money(deposits))) }
        let unrealized = nothingPriced ? "—" : Human.signedMoney(s.money(s.unrealizedPnL))
        cards += card("Unrealized P&L", unrealized, tone: tone(unrealized))
        let realized = Human.signedMoney(s.money(s.realizedPnL))
        cards += card("Realized P&L", realized, tone: tone(realized))
        if let fx = s.fxEffect {
            let text = Human.signedMoney(s.money(fx))
            cards += card("FX effect", text, "cash in other currencies", tone: tone(text))
        }
        let income = Human.signedMoney(s.money(s.income))
        cards += card("Income", income, s.taxWithheld.isZero ? "" : "net of \(Human.money(s.money(s.taxWithheld))) tax", tone: tone(income))
        let total = nothingPriced ? "—" : Human.signedMoney(s.money(s.totalPnL))
        cards += card("Total P&L", total, nothingPriced ? "" : Human.percent(s.totalPnLPercentage), tone: tone(total))
        return "<section><h2>Summary</h2><div class=\"cards\">\(cards)</div></section>\n"
    }

    /// The holdings in two tables: what matters (asset, amount, cost, value, P&L) fits a laptop's 1100 px
    /// without scrolling; name, type, average cost and price follow in a second table.
    private func holdingsSection(_ report: HoldingsReport) -> String {
        var rows: [[Cell]] = []
        var details: [[Cell]] = []
        for h in report.holdings {
            let price = h.quote.map { q in Human.price(q) + (h.stale ? " (stale)" : q.source == .trade ? " (trade)" : "") } ?? "—"
            rows.append([Cell(h.asset.symbol.uppercased()), Cell(Human.quantity(h.totalAmount), numeric: true),
                         Cell(Human.money(report.money(h.totalCost)), numeric: true), Cell(h.currentValue.map(report.money).map(Human.money) ?? "—", numeric: true),
                         .signed(h.profitLoss.map(report.money).map(Human.signedMoney) ?? "—"), .signed(Human.percent(h.profitLossPercentage))])
            details.append([Cell(h.asset.symbol.uppercased()), Cell(h.asset.name), Cell(h.asset.type.rawValue),
                            Cell(Human.price(report.money(h.avgCost)), numeric: true), Cell(price, numeric: true)])
        }
        for c in report.cash {
            rows.append([Cell(c.currency + " cash"), Cell(Human.money(c.money), numeric: true), Cell(""),
                         Cell(c.value.map(report.money).map(Human.money) ?? "no rate", numeric: true), Cell(""), Cell("")])
        }
        if rows.isEmpty { return "<section><h2>Holdings</h2><p class=\"muted\">Nothing held yet.</p></section>\n" }
        var footer: [[Cell]] = [[Cell(report.unpricedCount > 0 ? "Total (\(report.holdings.count - report.unpricedCount) priced)" : "Total"),
                                 Cell(""), Cell(Human.money(report.money(report.totalCost)), numeric: true),
                                 Cell(Human.money(report.money(report.holdingsValue)), numeric: true), .signed(Human.signedMoney(report.money(report.unrealizedPnL))),
                                 .signed(Human.percent(report.unrealizedPnLPercentage))]]
        if report.cashBalance != nil {
            footer.append([Cell("With cash"), Cell(""), Cell(""), Cell(Human.money(report.money(report.totalValue)), numeric: true), Cell(""), Cell("")])
        }
        let headers: [(String, Bool)] = [("Asset", false), ("Amount", true), ("Cost basis", true), ("Value", true), ("P&L", true), ("P&L %", true)]
        var s = "<section><h2>Holdings</h2>" + HTMLPage.table(headers, rows, footer: footer, narrowHides: [1, 2])
        if !details.isEmpty {
            s += HTMLPage.table([("Asset", false), ("Name", false), ("Type", false), ("Avg cost", true), ("Price", true)], details,
                                caption: "Each holding's name, type, average cost and price", narrowHides: [2, 3])
        }
        if report.unpricedCount > 0 {
            s += "<p class=\"muted\">\(report.unpricedCount) holding\(report.unpricedCount == 1 ? " has" : "s have") no price (cost "
                + "\(HTMLPage.escape(Human.money(report.money(report.unpricedCost))))): left out of the totals.</p>"
        }
        for line in warningLines(report) { s += "<p class=\"warn\">\(HTMLPage.escape(line))</p>" }
        return s + "</section>\n"
    }

    /// What the CLI warns about the holdings' totals, as sentences for the page.
    private func warningLines(_ report: HoldingsReport) -> [String] {
        var lines = report.holdings.compactMap { h -> String? in
            guard let q = h.quote, q.source == .trade else { return nil }
            return "\(h.asset.symbol.uppercased()) has no price: valued at its latest trade's, \(Human.price(q)) on "
                + "\(Human.day(q.time, in: context.timeZone))."
        }
        lines += report.missingRates.map { pair in
            "No \(pair) rate is known, so what is held or priced in \(pair.prefix(3)) is left unpriced; record one with 'bitpal fx set \(pair.prefix(3)) \(pair.suffix(3)) RATE'."
        }
        if !report.unconverted.isEmpty {
            lines.append("Counted apart, outside the totals (their cost cannot be converted): "
                + report.unconverted.map { "\(context.assetLabel($0.assetId).symbol.uppercased()) in '\($0.portfolio)'" }.joined(separator: ", ") + ".")
        }
        return lines
    }

    private func allocationSection(_ holdings: HoldingsReport) -> String {
        if let targets {
            let report = reports.allocation(targets)
            var rows: [[Cell]] = []
            for r in report.rows {
                rows.append([Cell(context.targetLabel(r.target, by: report.by)), Cell(Human.money(report.money(r.value)), numeric: true),
                             Cell(r.weight.map { DecimalFormatting.percent($0) + "%" } ?? "—", numeric: true), Cell(r.targetPercent.text + "%", numeric: true),
                             Cell(r.drift.map { ($0 > 0 ? "+" : "") + DecimalFormatting.percent($0) + " pts" } ?? "—", numeric: true),
                             Cell(Human.signedMoney(report.money(r.driftValue)), numeric: true)])  // a distance from the target, not a gain
            }
            let bars = HTMLPage.bars(report.rows.map { (context.targetLabel($0.target, by: report.by), $0.weight, $0.targetPercent.decimal) })
            return "<section><h2>Allocation</h2><p class=\"muted\">By \(report.by.rawValue), against the target (the line on each bar).</p>" + bars
                + HTMLPage.table([("Class", false), ("Value", true), ("Weight", true), ("Target", true), ("Drift", true), ("Drift value", true)], rows,
                                 footer: [[Cell("Total"), Cell(Human.money(report.money(report.total)), numeric: true), Cell(""), Cell(""), Cell(""), Cell("")]],
                                 narrowHides: [1, 5])
                + "</section>\n"
        }
        // No target: the mix by asset type, cash included.
        var values: [(String, Exact36)] = []
        func add(_ key: String, _ v: Exact36) {
            if let i = values.firstIndex(where: { $0.0 == key }) { values[i].1 = (try? values[i].1 + v) ?? values[i].1 } else { values.append((key, v)) }
        }
        for h in holdings.holdings { if let v = h.currentValue { add(h.asset.type.rawValue, v) } }
        if let cash = holdings.cashBalance { add("cash", cash) }
        let total = holdings.totalValue
        guard !values.isEmpty, !total.isZero else { return "" }
        let rows = values.map { ($0.0, $0.1, Percent.of($0.1, total)) }.sorted { $0.1 > $1.1 }
        return "<section><h2>Allocation</h2><p class=\"muted\">By asset type (no target set; 'bitpal target set' adds one).</p>"
            + HTMLPage.bars(rows.map { ($0.0, $0.2, nil) })
            + HTMLPage.table([("Class", false), ("Value", true), ("Weight", true)],
                             rows.map { [Cell($0.0), Cell(Human.money(holdings.money($0.1)), numeric: true),
                                         Cell($0.2.map { DecimalFormatting.percent($0) + "%" } ?? "—", numeric: true)] })
            + "</section>\n"
    }

    /// Value over time: the chart of total value and net invested (daily, weekly beyond two years),
    /// and the month ends as `history` prints them.
    private func valueSection() -> String {
        guard let first = timeline.firstDay else { return "" }
        let daily = timeline.today.number - first.number <= 730
        let points = timeline.history(interval: daily ? .day : .week)
        let chart = HTMLPage.lineChart(points.rows.map { HTMLPage.ChartPoint(day: $0.date.number, total: $0.totalValue.double, invested: $0.netInvested.double) },
                                       axisLabel: { LineChart.compactMoney($0, in: points.currency) },  // as the terminal's chart labels its axis
                                       title: "Total value and net invested, \(first) to \(timeline.today)")
        let months = timeline.history(interval: .month)
        let cash = timeline.tracksCash
        var rows: [[Cell]] = []
        for r in months.rows.suffix(12).reversed() {
            rows.append([Cell(r.date.description + (r.partial ? " (partial)" : "")), Cell(Human.money(months.money(r.holdingsValue)), numeric: true)]
                        + (cash ? [Cell(r.cash.map(months.money).map(Human.money) ?? "—", numeric: true)] : [])
                        + [Cell(Human.money(months.money(r.totalValue)), numeric: true),
                           Cell(Human.money(months.money(r.netInvested)), numeric: true),
                           .signed(Human.signedMoney(months.money(r.pnl)))])
        }
        let headers: [(String, Bool)] = [("Month end", false), ("Holdings", true)] + (cash ? [("Cash", true)] : [])
            + [("Total value", true), ("Net invested", true), ("P&L", true)]
        return "<section><h2>Value over time</h2><p class=\"muted\">Every day's value at that day's prices (as 'history'); "
            + "net invested counts every flow since the first transaction. The table shows the last 12 month ends; "
            + "'bitpal history' prints them all.</p>" + chart
            + HTMLPage.table(headers, rows, narrowHides: cash ? [1, 2, 4] : [1, 3]) + "</section>\n"
    }

    /// Performance for `max` and for each calendar year, as `performance` prints it.
    private func performanceSection() throws -> String {
        guard timeline.firstDay != nil else { return "" }
        let today = timeline.today
        let periods: [(String, PerformanceReport)] = [("All time", timeline.performance(.max))]
            + timeline.calendarYears.reversed().map { (String($0), timeline.performance(.year($0))) }
        let rows = periods.map { label, p in
            let span = label == "All time" ? "\(label), from \(p.since)" : p.until == today ? "\(label), to \(p.until)" : label
            return [Cell(span), Cell(Human.money(p.money(p.startValue)), numeric: true), Cell(Human.money(p.money(p.endValue)), numeric: true),
                    Cell(Human.signedMoney(p.money(p.netFlows)), numeric: true), .signed(Human.signedMoney(p.money(p.gain))),  // money in is no gain
                    .signed(Human.rate(p.twr) + (p.twrAnnualized.map { " (\(Human.rate($0)) a year)" } ?? "")), .signed(Human.rate(p.irr))]
        }
        var warning = ""
        if let all = periods.first?.1, all.partialDays > 0 {
            // The CLI's warning about partial days, with what was missing.
            let missing = all.unpriced.prefix(5).map { $0.contains("→") ? "no \($0) rate" : context.coinLabel($0) }.joined(separator: ", ")
                + (all.unpriced.count > 5 ? ", …" : "")
            warning = "<p class=\"warn\">\(all.partialDays) day\(all.partialDays == 1 ? "" : "s") left out something held for want of a price or rate "
                + "(\(HTMLPage.escape(missing))); record one with 'bitpal price set ASSET PRICE --date D' (or 'bitpal fx set').</p>"
        }
        // The all-time gain and the summary's total P&L: one question, two answers; the gap named.
        if let all = periods.first?.1, let gap = try all.gap(to: reports.summary()), DecimalFormatting.money(gap.amount) != "0.00" {
            warning += "<p class=\"muted\">The all-time gain is \(HTMLPage.escape(Human.moneyApart(gap))) than the summary's total P&amp;L: "
                + "assets moved in or out count here at their market value, in the summary at their basis.</p>"
        }
        return "<section><h2>Performance</h2>" + warning + "<p class=\"muted\">TWR: the investments' own return, not fooled by money in and out "
            + "(a year's rate beyond 366 days); IRR: the money-weighted rate a year (Act/365). As 'performance --period max' and '--period YYYY'.</p>"
            + HTMLPage.table([("Period", false), ("Start", true), ("End", true), ("Net flows", true), ("Gain", true), ("TWR", true), ("IRR", true)],
                             rows, narrowHides: [1, 2, 3, 4])
            + "</section>\n"
    }

    private func incomeSection() -> String {
        let report = reports.income(by: .year, timeZone: context.timeZone)
        guard let groups = report.groups, !groups.isEmpty else { return "" }
        let rows = groups.map { g in [Cell(g.0), Cell(Human.money(report.money(g.1.gross)), numeric: true), Cell(Human.money(report.money(g.1.taxWithheld)), numeric: true),
                                      Cell(Human.money(report.money(g.1.net)), numeric: true)] }
        return "<section><h2>Income by year</h2><p class=\"muted\">Dividends, interest and rewards (years of your time zone, as 'income --by year').</p>"
            + HTMLPage.table([("Year", false), ("Gross", true), ("Tax withheld", true), ("Net", true)], rows,
                             footer: [[Cell("Total"), Cell(Human.money(report.money(report.totals.gross)), numeric: true),
                                       Cell(Human.money(report.money(report.totals.taxWithheld)), numeric: true),
                                       Cell(Human.money(report.money(report.totals.net)), numeric: true)]])
            + "</section>\n"
    }

    private func gainsSection() -> String {
        let report = reports.gains(timeZone: context.timeZone)
        guard !report.totals.isEmpty else { return "" }
        let rows = report.totals.map { t in [Cell(String(t.year)), .signed(t.shortTerm.map(report.money).map(Human.signedMoney) ?? "—"),
                                             .signed(t.longTerm.map(report.money).map(Human.signedMoney) ?? "—"), .signed(Human.signedMoney(report.money(t.gain)))] }
        let pooled = report.rows.contains { $0.disposal.method == .average }
            ? "<p class=\"muted\">Rows of an average-cost portfolio take from its pool, which has no dates: no short/long split, "
                + "so short and long term need not add up to the total.</p>" : ""
        return "<section><h2>Realized gains by year</h2><p class=\"muted\">As 'gains' prints them (short term: held a year or less).</p>" + pooled
            + HTMLPage.table([("Year", false), ("Short term", true), ("Long term", true), ("Total", true)], rows,
                             footer: [[Cell("Total"), .signed(report.shortTerm.map(report.money).map(Human.signedMoney) ?? "—"),
                                       .signed(report.longTerm.map(report.money).map(Human.signedMoney) ?? "—"), .signed(Human.signedMoney(report.money(report.total)))]])
            + "</section>\n"
    }
}

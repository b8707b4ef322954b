import Foundation
import PortfolioCore

extension Context {
    /// The reports of the chosen portfolios (every active one with `all`) with fresh-enough prices:
    /// loads the store, replays every portfolio, and (with `refresh`) fetches prices first when a
    /// held coin's newest quote is over 60 s old, unless offline. Registered assets are never fetched.
    func reports(refresh: Bool, all: Bool, currency: String? = nil, tune: (inout LedgerOptions) -> Void = { _ in }) throws -> Reports {
        let session = try session()
        // A report that replays otherwise (lot parts kept, a method tried) reads the records; the others
        // read the snapshot when it stands for the store (`Repository.loadForReports`).
        var (book, replayed, source) = Session.isPlain(tune) ? try session.repository.loadForReports() : (try session.repository.loadBook(), nil, nil)
        let code = try currency.map { try FXOptions.currency($0, field: "--currency") }
        let reports = try session.reports(book, replayed: replayed, source: source, portfolios: try selection(in: book, all: all), refresh: refresh,
                                          currency: code, names: names, tune: tune)
        // The book is not needed any more: destroyed on another thread while the report is printed.
        Parallel.discard(&book, leaving: Book())
        return reports
    }

    /// Names every rate a report lacked, and what is counted apart for it (never left out in silence).
    func warnWhatTotalsLeaveOut(_ report: HoldingsReport) {
        // A holding never priced is valued at its latest trade: said, with the price and its day.
        for h in report.holdings {
            guard let q = h.quote, q.source == .trade else { continue }
            warn("\(assetLabel(h.asset.id).symbol.uppercased()) has no price: valued at its latest trade's, "
                + "\(Human.price(q)) on \(Human.day(q.time, in: timeZone)); set one with 'bitpal price set \(h.asset.id) PRICE'")
        }
        for pair in report.missingRates {
            let from = pair.prefix(3), to = pair.suffix(3)
            warn("no \(pair) rate is known, so what is held or priced in \(from) is left unpriced; record one with 'bitpal fx set \(from) \(to) RATE'")
        }
        if report.totalsTooLarge {
            warn(PortfolioError.valueTooLarge.description + ": the totals leave out the holdings past it (each line is exact)")
        }
        if !report.unconverted.isEmpty {
            warn("counted apart, outside the totals (their cost cannot be converted): "
                + report.unconverted.map { "\(assetLabel($0.assetId).symbol.uppercased()) in '\(TextEscaping.escaped($0.portfolio))'" }
                    .joined(separator: ", "))
        }
    }

    /// Says that some figures are converted from another base (a view at today's rates).
    /// With `shown`, only the portfolios that have rows in the report (a portfolio with none converted nothing).
    func noteConversion(_ reports: Reports, shown: Set<String>? = nil) {
        // A portfolio whose base has no rate today is named, never taken as converted (nor as zero).
        for name in reports.unconvertiblePortfolios {
            let base = reports.portfolioBases[name] ?? "?"
            warn("no \(base)→\(reports.baseCurrency) rate is known, so the figures of '\(TextEscaping.escaped(name))' (\(base)) are left out of "
                + "these totals; record one with 'bitpal fx set \(base) \(reports.baseCurrency) RATE'")
        }
        let converted = reports.convertedPortfolios.filter { shown?.contains($0) ?? true }
        guard !converted.isEmpty else { return }
        let names = converted.map { "'\(TextEscaping.escaped($0))' (\(reports.portfolioBases[$0] ?? "?"))" }.joined(separator: ", ")
        out("Figures of \(names) are converted to \(reports.baseCurrency) at today's rates.\n")
    }
}

/// `--all`, shared by every report.
enum ReportOptions {
    static let all = OptionSpec("--all", nil, "every active portfolio together (default: the chosen portfolio)")
    static let currency = OptionSpec("--currency", "CODE", "the currency to show (default: the portfolios' base, else the default portfolio's); others convert at today's rates")
}

/// The line under a report that says how old its prices are.
func pricesLine(asOf: Date?, stale: Bool, unpriced: Int, unpricedCost: Money, context: Context) -> String {
    var s = ""
    if let asOf {
        s += "Prices as of \(Human.time(asOf, in: context.timeZone)) \(Human.zoneLabel(context.timeZone)) (\(Human.age(asOf, now: context.now)))"
        if stale { s += " " + context.style.yellow("[STALE: older than 60 minutes; run 'bitpal price refresh']") }
        s += ".\n"
    }
    if unpriced > 0 {
        s += "\(unpriced) holding\(unpriced == 1 ? " has" : "s have") no price (cost \(Human.money(unpricedCost)), left out of the totals): "
            + "set one with 'bitpal price set ASSET PRICE'"
        s += context.offline ? ".\n" : " or run 'bitpal price refresh'.\n"
    }
    return s
}

struct HoldingsCommand: Command {
    static let spec = CommandSpec(
        name: "holdings", summary: "What you own, what it cost and your unrealized P&L",
        options: [OptionSpec("--sort", "ORDER", "value (default), pnl, name or amount", choices: HoldingsSort.allCases.map(\.rawValue)),
                  ReportOptions.all,
                  OptionSpec("--by-portfolio", nil, "with --all, one line per portfolio and asset (a PORTFOLIO column)"),
                  OptionSpec("--lots", nil, "the open lots of each holding: acquired, age, quantity, unit cost, basis (average: the pool)"),
                  ReportOptions.currency],
        group: "Reports",
        details: """
        Prices older than 60 seconds are refreshed first unless --offline, within about 3 seconds
        (BITPAL_HTTP_TIMEOUT sets it); if that fails, the cached prices are used with a warning, and
        for 5 minutes the next reports go straight to the cache. Prices older than 60 minutes are
        marked stale. Totals cover the priced holdings; the unpriced ones are counted apart.
        """,
        examples: ["bitpal holdings", "bitpal holdings --sort pnl", "bitpal holdings --lots", "bitpal holdings --json --offline"])

    var sort: HoldingsSort
    var all: Bool
    var byPortfolio: Bool
    var lots: Bool
    var currency: String?

    init(parsing a: inout ArgumentList) throws {
        sort = a.popOption("--sort").flatMap(HoldingsSort.init(rawValue:)) ?? .value
        all = a.popFlag("--all")
        byPortfolio = a.popFlag("--by-portfolio")
        lots = a.popFlag("--lots")
        currency = a.popOption("--currency")
        if byPortfolio && !all { throw UsageError.conflict("--by-portfolio keeps portfolios apart within --all; add --all") }
    }

    func run(_ context: Context) throws -> ExitCode {
        let reports = try context.reports(refresh: true, all: all, currency: currency)
        let report = reports.holdings(sort: sort, byPortfolio: byPortfolio)
        context.warnWhatTotalsLeaveOut(report)
        let heldLots = lots ? report.holdings.map { reports.lots(of: $0.asset.id, portfolio: $0.portfolio, timeZone: context.timeZone) } : []
        if context.json {
            var json = ReportJSON.holdings(report, currency: reports.baseCurrency)
            if lots { json = LotText.withLots(json, report: report, lots: heldLots, zone: context.timeZone) }
            context.printJSON(json)
            return .success
        }
        if report.holdings.isEmpty && report.cash.isEmpty {
            // A book whose positions all closed holds nothing now; only an empty one has nothing yet.
            context.out(reports.closed().isEmpty ? "You hold nothing yet. Record a buy with: bitpal add buy bitcoin 0.5 42000\n"
                        : "Nothing is held now: every position is closed (see 'bitpal closed').\n")
            return .success
        }
        if lots {
            context.out(LotText.table(report, lots: heldLots, portfolioColumn: all, context: context))
            context.out(pricesLine(asOf: report.pricesAsOf, stale: report.stale, unpriced: report.unpricedCount,
                                   unpricedCost: report.money(report.unpricedCost), context: context))
            context.noteConversion(reports)
            return .success
        }
        let style = context.style
        var table = Table((byPortfolio ? [("PORTFOLIO", .left)] : []) + [
            ("ASSET", .left), ("NAME", .left), ("TYPE", .left), ("AMOUNT", .right), ("AVG COST", .right), ("COST BASIS", .right),
            ("PRICE", .right), ("VALUE", .right), ("P&L", .right), ("P&L %", .right)])
        let lead: [Table.Cell] = byPortfolio ? [.init("TOTAL")] : []
        for h in report.holdings {
            let price = h.quote.map { q in Human.price(q) + (h.stale ? " (stale)" : q.source == .trade ? " (trade)" : "") } ?? "—"
            table.add((byPortfolio ? [.init(TextEscaping.escaped(h.portfolio ?? ""))] : []) + [
                .init(TextEscaping.escaped(h.asset.symbol.uppercased())), .init(TextEscaping.escaped(h.asset.name)),
                .init(h.asset.type.rawValue), .init(Human.quantity(h.totalAmount)), .init(Human.price(report.money(h.avgCost))),
                .init(Human.money(report.money(h.totalCost))),
                .init(price, paint: { h.stale ? style.yellow($0) : $0 }), .init(h.currentValue.map(report.money).map(Human.money) ?? "—"),
                .init(h.profitLoss.map(report.money).map(Human.signedMoney) ?? "—", paint: { style.pnl($0, h.profitLoss) }),
                .init(Human.percent(h.profitLossPercentage), paint: { style.pnl($0, h.profitLossPercentage) }),
            ])
        }
        // Cash: its balance is its value; no cost, no P&L.
        for c in report.cash {
            table.add((byPortfolio ? [.init(TextEscaping.escaped(c.portfolio ?? ""))] : []) + [
                .init(c.currency), .init("Cash"), .init("cash"), .init(Human.money(c.money)), .init(""),
                .init(""), .init(""), .init(c.value.map(report.money).map(Human.money) ?? "—"), .init(""), .init(""),
            ])
        }
        // Totals cover the priced holdings, so that P&L = value − cost on the row itself; with cash, a
        // second line adds it.
        let priced = report.holdings.count - report.unpricedCount
        let pct = report.unrealizedPnLPercentage
        table.addFooter(lead + (priced == 0 && report.cash.isEmpty ? [
            .init(byPortfolio ? "" : "TOTAL"), .init(""), .init(""), .init(""), .init(""), .init("—"), .init(""), .init("—"), .init("—"), .init("—"),
        ] : [
            .init(byPortfolio ? "" : "TOTAL"), .init(report.unpricedCount > 0 ? "\(priced) priced" : ""), .init(""), .init(""), .init(""),
            .init(Human.money(report.money(report.totalCost))), .init(""), .init(Human.money(report.money(report.holdingsValue))),
            .init(Human.signedMoney(report.money(report.unrealizedPnL)), paint: { style.pnl($0, report.unrealizedPnL) }),
            .init(Human.percent(pct), paint: { style.pnl($0, pct) }),
        ]))
        if let cash = report.cashBalance {
            table.addFooter((byPortfolio ? [.init("")] : []) + [.init(""), .init("with cash"), .init(""), .init(Human.money(report.money(cash))),
                                    .init(""), .init(""), .init(""), .init(Human.money(report.money(report.totalValue))), .init(""), .init("")])
        }
        context.out(table.render(style: style))
        context.out(pricesLine(asOf: report.pricesAsOf, stale: report.stale, unpriced: report.unpricedCount,
                               unpricedCost: report.money(report.unpricedCost), context: context))
        context.noteConversion(reports)
        return .success
    }
}

struct ClosedCommand: Command {
    static let spec = CommandSpec(
        name: "closed", summary: "Positions brought down to zero, with realized P&L",
        options: [ReportOptions.all], group: "Reports",
        details: "Each cycle (acquisitions until the quantity is exactly zero again, by any kind) is one closed\nposition, newest first. COST is the basis realized in the cycle.",
        examples: ["bitpal closed", "bitpal closed --all --json"])

    var all: Bool

    init(parsing a: inout ArgumentList) throws {
        all = a.popFlag("--all")
    }

    func run(_ context: Context) throws -> ExitCode {
        let reports = try context.reports(refresh: false, all: all)
        let lines = reports.closed()
        if context.json {
            context.printJSON(ReportJSON.closed(lines))
            return .success
        }
        if lines.isEmpty {
            context.out("No closed positions yet: a position closes when you sell all of it.\n")
            context.noteConversion(reports, shown: [])  // names a portfolio left out for want of a rate
            return .success
        }
        let style = context.style
        let zone = context.timeZone
        var table = Table((all ? [("PORTFOLIO", .left)] : []) + [
            ("ASSET", .left), ("NAME", .left), ("TYPE", .left), ("QUANTITY", .right), ("AVG COST", .right), ("AVG SELL", .right),
            ("COST", .right), ("REALIZED", .right), ("REALIZED %", .right), ("OPENED", .left), ("CLOSED", .left)])
        for l in lines {
            let p = l.position
            table.add((all ? [.init(TextEscaping.escaped(p.portfolio))] : []) + [
                .init(TextEscaping.escaped(l.asset.symbol.uppercased())), .init(TextEscaping.escaped(l.asset.name)),
                .init(l.asset.type.rawValue), .init(p.totalQuantity.map(Human.quantity) ?? "—"), .init(p.avgCostPrice.map(reports.money).map(Human.price) ?? "—"),
                .init(p.avgSellPrice.map(reports.money).map(Human.price) ?? "—"), .init(Human.money(reports.money(p.totalCost))),
                .init(Human.signedMoney(reports.money(p.realizedPnL)), paint: { style.pnl($0, p.realizedPnL) }),
                .init(Human.percent(p.realizedPnLPercentage), paint: { style.pnl($0, p.realizedPnLPercentage) }),
                .init(Human.day(p.openedDate, in: zone)), .init(Human.day(p.closedDate, in: zone)),
            ])
        }
        context.out(table.render(style: style))
        context.noteConversion(reports, shown: Set(lines.map(\.position.portfolio)))
        return .success
    }
}

struct SummaryCommand: Command {
    static let spec = CommandSpec(
        name: "summary", summary: "Total value, cost and P&L, realized, unrealized and income",
        options: [ReportOptions.all, ReportOptions.currency], group: "Reports",
        examples: ["bitpal summary", "bitpal summary --all --json"])

    var all: Bool
    var currency: String?

    init(parsing a: inout ArgumentList) throws {
        all = a.popFlag("--all")
        currency = a.popOption("--currency")
    }

    func run(_ context: Context) throws -> ExitCode {
        let reports = try context.reports(refresh: true, all: all, currency: currency)
        let s = reports.summary()
        context.warnWhatTotalsLeaveOut(reports.holdings())
        if context.json {
            context.printJSON(ReportJSON.summary(s, currency: reports.baseCurrency, unconverted: reports.unconvertiblePortfolios))
            return .success
        }
        let style = context.style
        var rows = Table([("", .left), ("", .right), ("", .left)])
        let nothingPriced = s.holdingsCount > 0 && s.unpricedCount == s.holdingsCount
        rows.add([.init("Total value"), .init(nothingPriced ? "—" : Human.money(s.money(s.totalValue))),
                  .init(nothingPriced ? "no prices yet" : s.unpricedCount > 0 ? "priced holdings only" : "")])
        if let cash = s.cashBalance {
            rows.add([.init("  holdings"), .init(nothingPriced ? "—" : Human.money(s.money(s.holdingsValue))), .init("")])
            rows.add([.init("  cash"), .init(Human.money(s.money(cash))), .init("")])
        }
        if let deposits = s.netDeposits { rows.add([.init("Net deposits"), .init(Human.money(s.money(deposits))),
                                                    .init("money put in, less taken out (assets moved in or out at their basis)")]) }
        rows.add([.init("Open cost"), .init(Human.money(s.money(s.totalOpenCost))), .init("")])
        rows.add([.init("Closed cost"), .init(Human.money(s.money(s.totalClosedCost))), .init("")])
        rows.add([.init("Unrealized P&L"), .init(nothingPriced ? "—" : Human.signedMoney(s.money(s.unrealizedPnL)), paint: { style.pnl($0, s.unrealizedPnL) }),
                  .init(nothingPriced || s.unpricedCount == 0 ? "" : "priced holdings only")])
        rows.add([.init("Realized P&L"), .init(Human.signedMoney(s.money(s.realizedPnL)), paint: { style.pnl($0, s.realizedPnL) }), .init("")])
        rows.add([.init("Income"), .init(Human.signedMoney(s.money(s.income)), paint: { style.pnl($0, s.income) }),
                  .init(s.taxWithheld.isZero ? "" : "net of \(Human.money(s.money(s.taxWithheld))) tax withheld")])
        if let fx = s.fxEffect, !fx.isZero {
            rows.add([.init("FX effect"), .init(Human.signedMoney(s.money(fx)), paint: { style.pnl($0, fx) }), .init("cash in other currencies, at today's rates")])
        }
        rows.add(nothingPriced ? [.init("Total P&L"), .init("—"), .init("no prices yet")] : [
            .init("Total P&L"), .init(Human.signedMoney(s.money(s.totalPnL)), paint: { style.pnl($0, s.totalPnL) }),
            .init(Human.percent(s.totalPnLPercentage), paint: { style.pnl($0, s.totalPnLPercentage) }),
        ])
        rows.add([.init("Holdings"), .init(String(s.holdingsCount)),
                  .init(s.unpricedCount > 0 ? "\(s.unpricedCount) unpriced (cost \(Human.money(s.money(s.unpricedCost))))" : "")])
        rows.showsHeader = false
        context.out(rows.render(style: style))
        if !s.topHoldings.isEmpty {
            context.out("\nTop holdings:\n")
            var top = Table([("ASSET", .left), ("NAME", .left), ("VALUE", .right), ("P&L", .right), ("P&L %", .right)])
            for h in s.topHoldings {
                top.add([.init(TextEscaping.escaped(h.asset.symbol.uppercased())), .init(TextEscaping.escaped(h.asset.name)),
                         .init(h.currentValue.map(s.money).map(Human.money) ?? "—"),
                         .init(h.profitLoss.map(s.money).map(Human.signedMoney) ?? "—", paint: { style.pnl($0, h.profitLoss) }),
                         .init(Human.percent(h.profitLossPercentage), paint: { style.pnl($0, h.profitLossPercentage) })])
            }
            top.showsHeader = false
            top.indent = "  "
            context.out(top.render(style: style))
        }
        context.out("\n" + pricesLine(asOf: s.pricesAsOf, stale: s.stale, unpriced: s.unpricedCount,
                                      unpricedCost: s.money(s.unpricedCost), context: context))
        context.noteConversion(reports)
        return .success
    }
}

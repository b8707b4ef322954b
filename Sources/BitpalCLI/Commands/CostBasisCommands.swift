import Foundation
import PortfolioCore

/// `--year`, `--since` and `--until` of `gains` and `compare`: local days, inclusive.
struct Period {
    var year: Int?
    var since: DateArgument?
    var until: DateArgument?

    static let options = [
        OptionSpec("--year", "YYYY", "only disposals of this calendar year (local time)"),
        OptionSpec("--since", "DATE", "from this day or time on (inclusive)"),
        OptionSpec("--until", "DATE", "up to this day or time (inclusive; a day covers the whole day)"),
    ]

    /// All time.
    init() {}

    init(parsing a: inout ArgumentList) throws {
        year = try Period.year(&a)
        since = try a.popOption("--since").map { text throws(UsageError) in try ArgumentList.date(text, field: "--since") }
        until = try a.popOption("--until").map { text throws(UsageError) in try ArgumentList.date(text, field: "--until") }
        if year != nil && (since != nil || until != nil) { throw UsageError.conflict("--year is a period of its own; leave out --since and --until") }
    }

    /// `--year YYYY` (exit 2 unless four digits, 1900–9999); `gains`, `compare` and `income` share it.
    static func year(_ a: inout ArgumentList) throws(UsageError) -> Int? {
        try a.popOption("--year").map { text throws(UsageError) in
            guard text.count == 4, let y = Int(text), (1900...9999).contains(y) else {
                throw .invalidValue(option: "--year", value: text, reason: "a year is four digits, 1900–9999")
            }
            return y
        }
    }

    /// The first and last instants covered (`nil`: open).
    func bounds(in zone: TimeZone, now: Date) throws -> (since: Date?, until: Date?) {
        if let year {
            let start = ISODate.startOfDay((Int64(year), 1, 1), in: zone)
            let end = ISODate.startOfDay((Int64(year) + 1, 1, 1), in: zone).addingTimeInterval(-0.001)
            return (start, end)
        }
        let s = since.flatMap { $0.filterBound(in: zone, now: now, lower: true) }
        let u = until.flatMap { $0.filterBound(in: zone, now: now, lower: false) }
        if let s, let u, s > u { throw UsageError.conflict("--since is after --until") }
        return (s, u)
    }

    var isAllTime: Bool { year == nil && since == nil && until == nil }

    /// "in 2024", "from 2024-01-01 to 2024-06-30", "all time".
    func words(in zone: TimeZone, now: Date) -> String {
        if let year { return "in \(year)" }
        let s = since.flatMap { $0.filterBound(in: zone, now: now, lower: true) }.map { "from \(Human.day($0, in: zone))" }
        let u = until.flatMap { $0.filterBound(in: zone, now: now, lower: false) }.map { "to \(Human.day($0, in: zone))" }
        let parts = [s, u].compactMap { $0 }
        return parts.isEmpty ? "all time" : parts.joined(separator: " ")
    }
}

/// Shapes shared by `gains`, `explain` and `holdings --lots`.
enum LotText {
    static func term(_ t: HoldingTerm?) -> String { t?.rawValue ?? "—" }
    static func id(_ id: UUID?) -> JSONValue { .optional(id.map(UUIDText.lowercased)) }
    static func day(_ d: Date?, zone: TimeZone) -> JSONValue { .optional(d.map { Human.day($0, in: zone) }) }
    static func quantity(_ q: Fixed18) -> JSONValue { .string(DecimalFormatting.exact(q.decimal)) }

    /// A lot's share of its holding's value (by quantity); `nil` when the holding is unpriced.
    static func value(of lot: HeldLot, in h: Holding) -> Exact36? {
        guard let v = h.currentValue, let total = Fixed18(h.totalAmount), total.units > 0 else { return nil }
        return try? v.multiplied(by: lot.lot.quantity, dividedBy: total)
    }

    /// `holdings --lots --json`: each holding object gains `lots`.
    static func withLots(_ json: JSONValue, report: HoldingsReport, lots: [[HeldLot]], zone: TimeZone) -> JSONValue {
        guard case let .object(fields) = json else { return json }
        return .object(fields.map { key, field in
            guard key == "holdings", case let .array(items) = field else { return (key, field) }
            return (key, .array(items.enumerated().map { i, item in
                guard i < lots.count, case let .object(f) = item else { return item }
                let h = report.holdings[i]
                return .object(f + [("lots", .array(lots[i].map { l in
                    let v = value(of: l, in: h)
                    return .object([("portfolio", .string(l.portfolio)), ("transactionId", id(l.lot.source)),
                                    ("acquiredDate", day(l.lot.acquired, zone: zone)), ("quantity", quantity(l.lot.quantity)),
                                    ("unitCost", ReportJSON.price(l.unitCost)), ("basis", ReportJSON.money(l.basis)),
                                    ("ageDays", l.ageDays.map { .number(String($0)) } ?? .null),
                                    ("currentValue", ReportJSON.money(v)), ("profitLoss", ReportJSON.money(v.flatMap { try? $0 - l.basis }))])
                }))])
            }))
        })
    }

    /// `holdings --lots`: one row per open lot (per pool under average), grouped by holding.
    static func table(_ report: HoldingsReport, lots: [[HeldLot]], portfolioColumn: Bool, context: Context) -> String {
        let style = context.style
        let zone = context.timeZone
        var table = Table((portfolioColumn ? [("PORTFOLIO", .left)] : []) + [
            ("ASSET", .left), ("ACQUIRED", .left), ("AGE", .right), ("TERM", .left), ("QUANTITY", .right), ("UNIT COST", .right),
            ("BASIS", .right), ("VALUE", .right), ("P&L", .right), ("FROM", .left)])
        for (h, held) in zip(report.holdings, lots) {
            for l in held {
                let v = value(of: l, in: h)
                let gain = v.flatMap { try? $0 - l.basis }
                let term = l.ageDays.map { $0 > 365 ? "long" : "short" } ?? "—"
                let acquired: String = l.lot.acquired.map { Human.day($0, in: zone) } ?? "pool"
                let age: String = l.ageDays.map { "\($0)d" } ?? "—"
                let lead: [Table.Cell] = portfolioColumn ? [Table.Cell(TextEscaping.escaped(l.portfolio))] : []
                let cells: [Table.Cell] = [
                    Table.Cell(TextEscaping.escaped(h.asset.symbol.uppercased())), Table.Cell(acquired), Table.Cell(age), Table.Cell(term),
                    Table.Cell(Human.quantity(l.lot.quantity.decimal)), Table.Cell(Human.price(report.money(l.unitCost))),
                    Table.Cell(Human.money(report.money(l.basis))),
                    Table.Cell(v.map(report.money).map(Human.money) ?? "—"),
                    Table.Cell(gain.map(report.money).map(Human.signedMoney) ?? "—", paint: { style.pnl($0, gain) }),
                    Table.Cell(l.lot.source.map(Human.shortID) ?? "—"),
                ]
                table.add(lead + cells)
            }
        }
        table.addFooter((portfolioColumn ? [.init("")] : []) + [
            .init("TOTAL"), .init(""), .init(""), .init(""), .init(""), .init(""), .init(Human.money(report.money(report.openCost))),
            .init(Human.money(report.money(report.holdingsValue))), .init(""), .init(""),
        ])
        return table.render(style: style)
            + "TERM: held up to 365 days is short, longer is long (as of today). FROM: the acquisition; 'bitpal explain ID' shows it.\n"
    }
}

struct GainsCommand: Command {
    static let spec = CommandSpec(
        name: "gains", summary: "Realized gains and losses by disposal, with short and long terms by year",
        options: Period.options + [ReportOptions.all],
        group: "Reports",
        details: """
        Every disposal that realized a gain or a loss: sells, swaps, transfer-out fees in units and
        negative adjustments. PROCEEDS are net of the fee; GAIN = PROCEEDS − BASIS. Under fifo, lifo
        and hifo each lot part is short (held up to 365 days) or long; a row is short or long when
        every part is, else mixed. Under average the pool has no dates: rows are mixed and the
        totals have no short/long split. 'bitpal explain ID' shows the arithmetic of a row.
        """,
        examples: ["bitpal gains", "bitpal gains --year 2024", "bitpal gains --since 2024-07-01 --json"])

    var period: Period
    var all: Bool

    init(parsing a: inout ArgumentList) throws {
        period = try Period(parsing: &a)
        all = a.popFlag("--all")
    }

    private func row(_ r: GainRow, zone: TimeZone) -> JSONValue {
        let lots: [JSONValue] = r.parts.map { p in
            .object([("transactionId", LotText.id(p.transactionId)), ("acquiredDate", LotText.day(p.acquiredDate, zone: zone)),
                     ("quantity", LotText.quantity(p.quantity)), ("basis", ReportJSON.money(p.basis)), ("term", .optional(p.term?.rawValue))])
        }
        var fields: [(String, JSONValue)] = all ? [("portfolio", .string(r.disposal.portfolio))] : []
        fields += [("date", .string(RecordDate(date: r.disposal.date, day: r.disposal.day).text)), ("transactionId", .string(UUIDText.lowercased(r.disposal.transactionId))),
                   ("assetId", .string(r.asset.id)), ("type", .string(r.disposal.type.rawValue)), ("kind", .string(r.label))]
        fields += [("quantity", LotText.quantity(r.disposal.quantity)), ("proceeds", ReportJSON.money(r.proceeds)),
                   ("basis", ReportJSON.money(r.basis)), ("gain", ReportJSON.money(r.gain)), ("term", .string(r.term.rawValue)),
                   ("lots", .array(lots))]
        return .object(fields)
    }

    private func total(_ t: GainTotal) -> JSONValue {
        .object([("year", .number(String(t.year))), ("gain", ReportJSON.money(t.gain)),
                 ("shortTerm", ReportJSON.money(t.shortTerm)), ("longTerm", ReportJSON.money(t.longTerm))])
    }

    func run(_ context: Context) throws -> ExitCode {
        let zone = context.timeZone
        let (since, until) = try period.bounds(in: zone, now: context.now)
        let reports = try context.reports(refresh: false, all: all) { $0.keepingDisposals = true }
        let report = reports.gains(since: since, until: until, timeZone: zone)
        if context.json {
            context.printJSON(.object([("currency", .string(reports.baseCurrency)), ("rows", .array(report.rows.map { row($0, zone: zone) })),
                                       ("totals", .array(report.totals.map(total)))]))
            return .success
        }
        if report.rows.isEmpty {
            context.out("No realized gains or losses \(period.words(in: zone, now: context.now)): they come from sells, swaps, network fees and losses.\n")
            return .success
        }
        let style = context.style
        var table = Table((all ? [("PORTFOLIO", .left)] : []) + [
            ("DATE (\(Human.zoneLabel(context.timeZone)))", .left), ("ID", .left), ("ASSET", .left), ("KIND", .left), ("QUANTITY", .right), ("PROCEEDS", .right),
            ("BASIS", .right), ("GAIN", .right), ("TERM", .left)])
        for r in report.rows {
            table.add((all ? [.init(TextEscaping.escaped(r.disposal.portfolio))] : []) + [
                .init(Human.day(r.disposal.date, in: zone)), .init(Human.shortID(r.disposal.transactionId)),
                .init(TextEscaping.escaped(r.asset.symbol.uppercased())), .init(r.label), .init(Human.quantity(r.disposal.quantity.decimal)),
                .init(Human.money(report.money(r.proceeds))), .init(Human.money(report.money(r.basis))),
                .init(Human.signedMoney(report.money(r.gain)), paint: { style.pnl($0, r.gain) }), .init(r.term.rawValue),
            ])
        }
        context.out(table.render(style: style))
        var totals = Table([("YEAR", .left), ("GAIN", .right), ("SHORT TERM", .right), ("LONG TERM", .right)])
        for t in report.totals {
            totals.add([.init(String(t.year)), .init(Human.signedMoney(report.money(t.gain)), paint: { style.pnl($0, t.gain) }),
                        .init(t.shortTerm.map(report.money).map(Human.signedMoney) ?? "—"), .init(t.longTerm.map(report.money).map(Human.signedMoney) ?? "—")])
        }
        if report.totals.count > 1 {
            totals.addFooter([.init("TOTAL"), .init(Human.signedMoney(report.money(report.total)), paint: { style.pnl($0, report.total) }),
                              .init(report.shortTerm.map(report.money).map(Human.signedMoney) ?? "—"),
                              .init(report.longTerm.map(report.money).map(Human.signedMoney) ?? "—")])
        }
        context.out("\n" + totals.render(style: style))
        if report.rows.contains(where: { $0.disposal.method == .average }) {
            context.out("Rows of an average-cost portfolio take from its pool, which has no dates: no short/long split.\n")
        }
        context.noteConversion(reports, shown: Set(report.rows.map(\.disposal.portfolio)))
        return .success
    }
}

struct CompareCommand: Command {
    static let spec = CommandSpec(
        name: "compare", summary: "What-if: realized and unrealized P&L under every cost-basis method",
        options: Period.options + [ReportOptions.currency],
        group: "Reports",
        details: """
        Replays the portfolio under average, fifo, lifo and hifo, side by side; nothing is written.
        REALIZED covers the period (all time without one), UNREALIZED and OPEN BASIS the priced
        holdings now. Over all time, realized + unrealized is the same under every method (only when
        it is realized differs) unless transfer-outs or moves took basis away, which the method picks
        too. The portfolio's own method is marked; 'bitpal portfolio edit NAME --method M' changes
        it. Lots that moves brought from other portfolios come as those took them.
        """,
        examples: ["bitpal compare", "bitpal compare --year 2024", "bitpal -p trading compare --json"])

    var period: Period
    var currency: String?

    init(parsing a: inout ArgumentList) throws {
        period = try Period(parsing: &a)
        currency = a.popOption("--currency")
    }

    func run(_ context: Context) throws -> ExitCode {
        let zone = context.timeZone
        let (since, until) = try period.bounds(in: zone, now: context.now)
        let session = try context.session()
        let book = try session.repository.loadBook()
        let portfolio = try context.portfolio(in: book)
        let code = try currency.map { try FXOptions.currency($0, field: "--currency") }
        let (reports, rows) = try session.compare(book, portfolio: portfolio, since: since, until: until, timeZone: zone, refresh: true,
                                                  currency: code, names: context.names)
        if context.json {
            func day(_ d: Date?) -> JSONValue { .optional(d.map { Human.day($0, in: zone) }) }
            context.printJSON(.object([
                ("portfolio", .string(portfolio.name)), ("currency", .string(reports.baseCurrency)), ("since", day(since)), ("until", day(until)),
                ("methods", .array(rows.map { m in
                    .object([("method", .string(m.method.rawValue)), ("realized", ReportJSON.money(m.realized)),
                             ("shortTerm", ReportJSON.money(m.shortTerm)), ("longTerm", ReportJSON.money(m.longTerm)),
                             ("unrealized", ReportJSON.money(m.unrealized)), ("openBasis", ReportJSON.money(m.openBasis)),
                             ("current", .bool(m.current))])
                })),
            ]))
            return .success
        }
        let style = context.style
        context.out("Portfolio '\(TextEscaping.escaped(portfolio.name))', realized \(period.words(in: zone, now: context.now)), unrealized now:\n")
        var table = Table([("METHOD", .left), ("REALIZED", .right), ("SHORT TERM", .right), ("LONG TERM", .right), ("UNREALIZED", .right),
                           ("OPEN BASIS", .right), ("REALIZED + UNREALIZED", .right)])
        for m in rows {
            let sum = m.unrealized.flatMap { try? m.realized + $0 }
            table.add([.init(m.method.rawValue + (m.current ? " *" : "")),
                       .init(Human.signedMoney(reports.money(m.realized)), paint: { style.pnl($0, m.realized) }),
                       .init(m.shortTerm.map(reports.money).map(Human.signedMoney) ?? "—"), .init(m.longTerm.map(reports.money).map(Human.signedMoney) ?? "—"),
                       .init(m.unrealized.map(reports.money).map(Human.signedMoney) ?? "—", paint: { style.pnl($0, m.unrealized) }),
                       .init(m.openBasis.map(reports.money).map(Human.money) ?? "—"), .init(sum.map(reports.money).map(Human.signedMoney) ?? "—")])
        }
        context.out(table.render(style: style))
        context.out("* the portfolio's method; change it with 'bitpal portfolio edit \(TextEscaping.escaped(portfolio.name)) --method METHOD'.\n")
        if rows.allSatisfy({ $0.unrealized == nil }) {
            context.out("No holding has a price, so unrealized P&L is unknown: set one with 'bitpal price set ASSET PRICE'.\n")
        }
        context.noteConversion(reports)
        return .success
    }
}

struct ExplainCommand: Command {
    static let spec = CommandSpec(
        name: "explain", summary: "The arithmetic of one transaction: the lots a sale took, what a buy left",
        arguments: "ID", group: "Reports",
        details: """
        For a disposal: the method, the pool or the lots it took (each with its acquisition, quantity,
        unit cost, basis and term), the proceeds and the gain, line by line. For an acquisition: the
        lot it made and what is left of it, wherever moves took it. For a split, the lots before and
        after; for income and cash, what they added. ID is an id, a unique prefix of 4+ characters
        (see 'bitpal list' or 'bitpal gains') or @LINE.
        """,
        examples: ["bitpal explain 3f2a9c01", "bitpal explain 3f2a --json"])

    var id: String

    init(parsing a: inout ArgumentList) throws {
        id = try ArgumentList.recordID(try a.popPositional("ID"))
    }

    func run(_ context: Context) throws -> ExitCode {
        let session = try context.session()
        let book = try session.repository.loadBook()
        let store = session.repository.store
        let named = try book.index(matching: id, lines: { (try? store.transactionLines()) ?? [] })
        // A linked record (a swap, a move, a cash transfer or exchange) is explained leg by leg, the one named first.
        let legs = book.legs(of: named)
        var texts: [ExplainText] = []
        for index in [named] + legs.filter({ $0 != named }) {
            let tx = book.transactions[index]
            let (found, remaining) = session.explain(book, index: index, names: context.names)
            guard let e = found else {
                throw CommandFailure("Transaction \(Human.shortID(tx.id)) breaks a rule of the store and is left out of every report; run 'bitpal check'")
            }
            let currency = CurrencyCode(book.portfolio(named: tx.portfolio)?.baseCurrency ?? "USD")
            texts.append(ExplainText(e: e, remaining: remaining, zone: context.timeZone, symbol: context.assetLabel(tx.assetId).symbol.uppercased(),
                                     multiplePortfolios: book.portfolios.count > 1, currency: currency))
        }
        if context.json {
            // One object for one record, as before; an array of the legs for a link.
            let objects = texts.map { $0.json() }
            context.printJSON(objects.count == 1 ? objects[0] : .array(objects))
        } else {
            context.out(texts.map { $0.lines(context: context).joined(separator: "\n") }
                .joined(separator: "\n\n") + "\n")
        }
        return .success
    }
}

/// `explain`'s words and JSON.
struct ExplainText: InOneCurrency {
    var e: Explanation
    var remaining: [(portfolio: String, lot: Lot)]
    var zone: TimeZone
    var symbol: String
    var multiplePortfolios: Bool
    /// The portfolio's base: the currency of every basis, proceeds and gain.
    var currency: CurrencyCode

    var tx: Transaction { e.transaction }

    private func q(_ v: Fixed18) -> String { Human.quantity(v.decimal) }

    private func lotJSON(_ lot: Lot, disposedOn: Date?) -> JSONValue {
        .object([("transactionId", LotText.id(lot.source)), ("acquiredDate", LotText.day(lot.acquired, zone: zone)),
                 ("quantity", LotText.quantity(lot.quantity)), ("unitCost", ReportJSON.price(lot.costPerUnit)),
                 ("basis", ReportJSON.money(lot.basis)),
                 ("term", .optional(disposedOn.flatMap { d in lot.acquired.map { HoldingTerm.of(acquired: $0, disposed: d, in: zone).rawValue } }))])
    }

    private func sum(_ lots: [Lot]) -> (Fixed18, Exact36) {
        lots.reduce((Fixed18.zero, Exact36.zero)) { acc, l in ((try? acc.0.adding(l.quantity)) ?? acc.0, (try? acc.1 + l.basis) ?? acc.1) }
    }

    func json() -> JSONValue {
        var fields: [(String, JSONValue)] = [("transactionId", .string(UUIDText.lowercased(tx.id))), ("type", .string(tx.type.rawValue)),
                                             ("portfolio", .string(tx.portfolio)), ("method", .string(e.method.rawValue)),
                                             ("currency", .string(currency.code))]
        if let d = e.disposals.first(where: { !$0.isNetworkFee }) {
            fields += [("quantity", LotText.quantity(d.quantity)), ("proceeds", ReportJSON.money(d.proceeds)), ("fee", ReportJSON.money(d.fee)),
                       ("basis", ReportJSON.money(d.basis)), ("gain", ReportJSON.money(d.gain)), ("realized", .bool(d.realizes)),
                       ("pool", d.poolBefore.map { p in .object([("quantity", LotText.quantity(p.quantity)), ("basis", ReportJSON.money(p.basis))]) } ?? .null),
                       ("lots", .array(d.method == .average ? [] : d.parts.map { lotJSON($0, disposedOn: d.date) }))]
            if tx.type == .transferOut {
                fields.append(("networkFee", e.disposals.first(where: \.isNetworkFee).map { f in
                    .object([("quantity", LotText.quantity(f.quantity)), ("basis", ReportJSON.money(f.basis)), ("gain", ReportJSON.money(f.gain)),
                             ("lots", .array(f.method == .average ? [] : f.parts.map { lotJSON($0, disposedOn: f.date) }))])
                } ?? .null))
            }
        } else if !e.made.isEmpty {
            let (quantity, basis) = sum(e.made)
            fields.append(("lot", .object([("quantity", LotText.quantity(quantity)), ("basis", ReportJSON.money(basis)),
                                            ("acquiredDate", .string(Human.day(tx.date, in: zone)))])))
            if tx.type == .transferIn && tx.linkedId != nil { fields.append(("lots", .array(e.made.map { lotJSON($0, disposedOn: nil) }))) }
            if e.method == .average {
                fields.append(("remaining", .null))
            } else {
                let (rq, rb) = sum(remaining.map(\.lot))
                fields.append(("remaining", .object([("quantity", LotText.quantity(rq)), ("basis", ReportJSON.money(rb))])))
            }
        } else if tx.type == .split {
            fields += [("ratio", .string(TransactionOptions.splitRatio(tx))),
                       ("before", .array(e.before.map { lotJSON($0, disposedOn: nil) })), ("after", .array(e.after.map { lotJSON($0, disposedOn: nil) }))]
        }
        if let i = e.income {
            fields.append(("income", .object([("gross", ReportJSON.money(i.gross)), ("taxWithheld", ReportJSON.money(i.taxWithheld)),
                                               ("net", ReportJSON.money(i.net))])))
        }
        if let c = e.cash {
            fields.append(("cash", .object([("currency", .string(c.currency)), ("amount", .string(c.amount.trimmed(maxScale: 18))),
                                             ("balance", .string(c.balance.trimmed(maxScale: 18)))])))
        }
        return .object(fields)
    }

    func lines(context: Context) -> [String] {
        let where_ = multiplePortfolios ? " in '\(TextEscaping.escaped(tx.portfolio))'" : ""
        var out = ["\(TransactionOptions.describe([tx], context: context, otherwise: currency))",
                   "Transaction \(UUIDText.lowercased(tx.id))\(where_), cost basis by \(e.method.rawValue)."]
        for d in e.disposals { out += disposalLines(d) }
        if !e.made.isEmpty { out += acquisitionLines() }
        if tx.type == .split {
            out.append("  lots before:")
            out += lotTable(e.before, disposedOn: nil)
            out.append("  lots after (\(TransactionOptions.splitRatio(tx)); bases unchanged):")
            out += lotTable(e.after, disposedOn: nil)
        }
        if let i = e.income {
            out.append("  income     \(Human.money(money(i.gross))) gross − \(Human.money(money(i.taxWithheld))) tax withheld = \(Human.money(money(i.net)))")
        }
        if let c = e.cash {
            let cash = CurrencyCode(c.currency)
            out.append("  cash       \(Human.signedMoney(Money(c.amount, cash))) \(c.currency), balance after "
                       + Human.money(Money(c.balance, cash)))
        }
        if out.count == 2 { out.append("  It changes no quantity, basis or income.") }
        return out
    }

    private func disposalLines(_ d: Disposal) -> [String] {
        var out: [String] = []
        let what = d.isNetworkFee ? "network fee \(q(d.quantity)) \(symbol) (a realized loss)" : "\(q(d.quantity)) \(symbol)"
        if d.isNetworkFee || tx.type == .transferOut { out.append("  \(what):") }
        if let pool = d.poolBefore {
            let avg = Lot.costPerUnit(pool.basis, pool.quantity)
            out.append("  pool before  \(q(pool.quantity)) \(symbol), basis \(Human.money(money(pool.basis))) (average \(Human.price(money(avg))))")
            out.append(d.quantity == pool.quantity
                       ? "  basis        the whole pool: \(Human.money(money(d.basis)))"
                       : "  basis        \(Human.money(money(pool.basis))) × \(q(d.quantity)) ÷ \(q(pool.quantity)) = \(Human.money(money(d.basis)))")
        } else {
            out.append("  lots taken (\(Lots.takingOrder(d.method))):")
            out += lotTable(d.parts, disposedOn: d.date)
            out.append("  basis        " + (d.parts.count > 1 ? d.parts.map { Human.money(money($0.basis)) }.joined(separator: " + ") + " = " : "")
                       + Human.money(money(d.basis)))
        }
        if d.isNetworkFee {
            out.append("  gain         0.00 − \(Human.money(money(d.basis))) = \(Human.signedMoney(money(d.gain)))")
        } else if !d.realizes {
            out.append("  nothing realized: the basis leaves with the units" + (tx.linkedId != nil ? " and arrives with them in the other portfolio" : ""))
        } else if tx.type == .adjustment {
            out.append("  gain         nothing received − \(Human.money(money(d.basis))) = \(Human.signedMoney(money(d.gain)))")
        } else {
            let gross = (try? d.proceeds + d.fee) ?? d.proceeds
            out.append("  proceeds     \(Human.money(money(gross))) − fee \(Human.money(money(d.fee))) = \(Human.money(money(d.proceeds)))")
            out.append("  gain         \(Human.money(money(d.proceeds))) − \(Human.money(money(d.basis))) = \(Human.signedMoney(money(d.gain)))")
        }
        return out
    }

    private func acquisitionLines() -> [String] {
        var out: [String] = []
        let (quantity, basis) = sum(e.made)
        if tx.type == .transferIn && tx.linkedId != nil {
            out.append("  received   \(q(quantity)) \(symbol), basis \(Human.money(money(basis))), in the lots the transfer-out took:")
            out += lotTable(e.made, disposedOn: nil)
        } else {
            out.append("  lot        \(q(quantity)) \(symbol), basis \(Human.money(money(basis))) (unit cost \(Human.price(money(Lot.costPerUnit(basis, quantity))))), "
                       + "acquired \(Human.day(tx.date, in: zone))")
        }
        if e.method == .average {
            if let pool = e.after.first {
                out.append("  pool after \(q(pool.quantity)) \(symbol), basis \(Human.money(money(pool.basis))) (average \(Human.price(money(pool.costPerUnit))))")
            }
            out.append("  Under average cost the units join the pool; no lot of its own is left to follow.")
        } else if remaining.isEmpty {
            out.append("  left now   nothing: every unit of it has been disposed of")
        } else {
            for r in remaining {
                let place = multiplePortfolios ? " in '\(TextEscaping.escaped(r.portfolio))'" : ""
                out.append("  left now   \(q(r.lot.quantity)) \(symbol), basis \(Human.money(money(r.lot.basis)))\(place)")
            }
        }
        return out
    }

    private func lotTable(_ lots: [Lot], disposedOn: Date?) -> [String] {
        var t = Table([("ACQUIRED", .left), ("FROM", .left), ("QUANTITY", .right), ("UNIT COST", .right), ("BASIS", .right)]
                      + (disposedOn != nil ? [("TERM", .left)] : []))
        for lot in lots {
            let term = disposedOn.flatMap { d in lot.acquired.map { HoldingTerm.of(acquired: $0, disposed: d, in: zone).rawValue } }
            t.add([lot.acquired.map { Human.day($0, in: zone) } ?? "pool", lot.source.map(Human.shortID) ?? "—", q(lot.quantity),
                   Human.price(money(lot.costPerUnit)), Human.money(money(lot.basis))] + (disposedOn != nil ? [term ?? "—"] : []))
        }
        t.indent = "    "
        let rendered = t.render(style: Style(enabled: false))
        return rendered.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).filter { !$0.isEmpty }
    }
}

extension Lots {
    /// How a method picks lots, in words.
    static func takingOrder(_ m: CostBasisMethod) -> String {
        switch m {
        case .average: "the pool"
        case .fifo: "oldest first"
        case .lifo: "newest first"
        case .hifo: "highest unit cost first"
        }
    }
}

import Foundation
import PortfolioCore

/// Options shared by `add`, `edit` and `move`.
enum TransactionOptions {
    static let date = OptionSpec("--date", "DATE", "when it happened: YYYY-MM-DD, today or yesterday (that calendar day), a local time (2024-01-31 14:00), or ISO 8601 with Z or an offset; default now")
    static let fee = OptionSpec("--fee", "FEE", "buy, sell, transfer-in, swap: fee in money; transfer-out: network fee in units; dividend, interest: tax withheld (default 0)")
    static let note = OptionSpec("--note", "TEXT", "a note to keep with it")
    static let total = OptionSpec("--total", "TOTAL", "buy, sell: the exact money value before fees, in place of PRICE")
    static let currency = OptionSpec("--currency", "CODE", "the currency of the money (default: the asset's, else the portfolio's)")
    static let fxRate = OptionSpec("--fx-rate", "RATE", "units of the base currency per unit of --currency on that date (default: the rate table's)")

    /// `--fx-rate`, parsed (exit 2 when malformed).
    static func fxRate(_ a: inout ArgumentList) throws -> Fixed18? { try a.popOption("--fx-rate").map { try ArgumentList.fixed($0, field: "Rate") } }
    static let value = OptionSpec("--value", "VALUE", "swap: the money value of what was swapped")
    static let types = TransactionType.allCases.map(\.rawValue)
    /// What `add` records: every kind of an asset (cash alone is `bitpal cash …`), and swap.
    static let addKinds = KindRule.table.filter { $0.asset != .none }.map(\.type.rawValue) + ["swap"]

    static func type(_ text: String, option: String) throws(UsageError) -> TransactionType {
        guard let t = TransactionType(rawValue: text.lowercased()) else {
            throw .invalidChoice(option: option, value: text, choices: types)
        }
        return t
    }

    /// One line describing a transaction (or a swap's or move's two legs) for people; money of a
    /// record without a currency (one that carries none) in `otherwise`.
    static func describe(_ legs: [Transaction], context: Context, otherwise: CurrencyCode = .usd) -> String {
        let zone = context.timeZone
        guard let t = legs.first else { return "" }
        let currency = t.currency.map(CurrencyCode.init) ?? otherwise
        func label(_ id: String) -> String { context.coinLabel(id) }
        func symbol(_ id: String) -> String { TextEscaping.escaped(context.assetLabel(id).symbol.uppercased()) }
        var s: String
        if legs.count == 2, let other = legs.last, LinkKind.of(t, other)?.name == LinkKind.savingPlan {
            // A saving plan's due date: the deposit and the buy it pays for, each as itself.
            return legs.map { describe([$0], context: context, otherwise: otherwise) }.joined(separator: "; ")
        }
        if legs.count == 2, let other = legs.last {
            if t.type == .withdrawal && t.portfolio == other.portfolio {
                // Money names its currency by its symbol (or code) once: `€1,010.16`, `CHF 50.00`.
                s = "cash exchange " + exchanged(t, other)
            } else if t.type == .withdrawal {
                s = "cash transfer \(Human.money(t.amountValue.decimal, in: currency)) from '\(TextEscaping.escaped(t.portfolio))' "
                    + "to '\(TextEscaping.escaped(other.portfolio))'"
            } else if t.type == .sell {
                s = "swap \(Human.exactQuantity(t.amountValue.decimal)) \(symbol(t.assetId)) → \(Human.exactQuantity(other.amountValue.decimal)) \(symbol(other.assetId))"
                s += ", value \(Human.money(Money(t.gross, currency)))"
                if t.fee > 0 { s += ", fee \(Human.money(t.fee, in: currency))" }
            } else {
                s = "move \(Human.exactQuantity(t.amountValue.decimal)) \(label(t.assetId)) from '\(TextEscaping.escaped(t.portfolio))' to '\(TextEscaping.escaped(other.portfolio))'"
            }
            s += ", on \(Human.whenLabelled(t.date, in: zone))"
            if let n = t.notes { s += " — \(TextEscaping.escaped(n))" }
            return s
        }
        let amount = Human.exactQuantity(t.amount)
        // By what the kind's row says it holds (KindRule), not by the kind's name.
        let rule = t.rule
        if rule.asset == .none {  // money alone: a deposit, a withdrawal, an expense
            s = "\(t.type.rawValue) \(Human.money(t.amountValue.decimal, in: currency))"
        } else if rule.amountIsMoney {  // a payment: dividend, interest
            s = "\(t.type.rawValue) \(Human.money(t.amountValue.decimal, in: currency))" + (t.assetId.isEmpty ? " on cash" : " from \(label(t.assetId))")
            if t.fee > 0 { s += ", tax withheld \(Human.money(t.fee, in: currency))" }
            s += ", net \(Human.money(Money(t.total, currency)))"
        } else if rule.price == .splitDivisor {
            s = "split \(label(t.assetId)) \(splitRatio(t))"
        } else if rule.signed {
            s = "\(t.type.rawValue) \(t.negative ? "" : "+")\(amount) \(label(t.assetId))"
        } else if rule.price == .none {  // units alone: a transfer-out, a fee in units
            s = "\(t.type.rawValue) \(amount) \(label(t.assetId))"
            if t.fee > 0 { s += ", fee \(Human.exactQuantity(t.fee)) \(symbol(t.assetId))" }
        } else {  // units at a price: buy, sell, transfer-in, reward, spend
            s = "\(t.type.rawValue) \(amount) \(label(t.assetId))"
            if let p = t.priceValue { s += " at \(Human.price(p.decimal, in: currency))" }
            if t.fee > 0 { s += ", fee \(Human.money(t.fee, in: currency))" }
            let earns = rule.steps.contains { if case .income = $0 { true } else { false } }
            if !(t.type == .transferIn && t.priceValue == nil) { s += ", \(earns ? "income" : "total") \(Human.money(Money(t.total, currency)))" }
        }
        s += ", on \(Human.whenLabelled(t.date, in: zone))"
        if ((try? context.session())?.resolver.portfolioCount ?? 1) > 1 { s += " in '\(TextEscaping.escaped(t.portfolio))'" }
        if let n = t.notes { s += " — \(TextEscaping.escaped(n))" }
        return s
    }

    /// A cash exchange's two amounts, each in its own currency: `€1,010.16 → $1,100.00`.
    static func exchanged(_ from: Transaction, _ to: Transaction) -> String {
        func amount(_ t: Transaction) -> String { Human.money(t.amountValue.decimal, in: CurrencyCode(t.currency ?? "USD")) }
        return amount(from) + " → " + amount(to)
    }

    /// A split's ratio as typed: `4:1`, `1:3`.
    static func splitRatio(_ t: Transaction) -> String {
        "\(DecimalFormatting.exact(t.amountValue.decimal)):\(DecimalFormatting.exact((t.priceValue ?? Fixed18(units: Fixed18.scale)).decimal))"
    }

    /// The currency a money-bearing transaction of `asset` in `portfolio` is in: `--currency` if
    /// given, else the asset's (a registered one), else the portfolio's base. Until exchange rates
    /// exist, anything but the base is refused.
    static func currency(_ given: String?, asset: AssetLabel, book: Book, portfolio: Portfolio) throws -> String {
        try book.currency(given: given, assetId: asset.id, portfolio: portfolio)
    }

    /// Adds what `change` asks for (one record, or the two legs of a swap, a move, a cash transfer or
    /// an exchange) through the session's one door, and says what was added.
    static func write(_ change: TransactionChange, context: Context) throws -> ExitCode {
        let legs = try context.session().repository.commit(change, names: context.names).first ?? []
        guard !legs.isEmpty else { return .success }
        if context.json {
            context.printJSON(json(legs))
        } else {
            context.out("Added \(describe(legs, context: context))\nid \(legs[0].id.uuidString.lowercased())\n")
        }
        return .success
    }

    /// The legs of `legs` as JSON: one object, or an array of two for a swap or a move.
    static func json(_ legs: [Transaction]) -> JSONValue {
        legs.count == 1 ? ReportJSON.transaction(legs[0]) : .array(legs.map(ReportJSON.transaction))
    }

    /// A split ratio: a decimal (`4`, `0.5`) or `NEW:OLD` (`1:3`).
    /// Both parts must be greater than zero (a split neither creates units from nothing nor divides by zero).
    static func ratio(_ text: String) throws -> (Fixed18, Fixed18?) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        let ratio: (Fixed18, Fixed18?)
        if parts.count == 2 {
            ratio = (try ArgumentList.fixed(String(parts[0]), field: "Ratio"), try ArgumentList.fixed(String(parts[1]), field: "Ratio"))
        } else {
            ratio = (try ArgumentList.fixed(text, field: "Ratio"), nil)
        }
        let shown = TextEscaping.shortened(text)
        if ratio.0.units == 0 {
            throw CommandFailure("A split's ratio needs NEW greater than zero ('\(shown)' would leave nothing): write NEW:OLD, like 4:1 or 1:3")
        }
        if let old = ratio.1, old.units == 0 {
            throw CommandFailure("A split's ratio needs OLD greater than zero ('\(shown)' divides by zero): write NEW:OLD, like 4:1 or 1:3")
        }
        return ratio
    }
}

struct AddCommand: Command {
    static let spec = CommandSpec(
        name: "add", summary: "Record a transaction of any kind",
        arguments: "KIND ASSET AMOUNT [PRICE]",
        options: [TransactionOptions.date, TransactionOptions.fee, TransactionOptions.note, TransactionOptions.total,
                  TransactionOptions.currency, TransactionOptions.fxRate, TransactionOptions.value],
        group: "Transactions",
        details: KindRule.table.filter { $0.asset != .none }
            .map { "  \($0.type.rawValue.padding(toLength: 13, withPad: " ", startingAt: 0)) \($0.arguments.padding(toLength: 19, withPad: " ", startingAt: 0)) \($0.summary)" }
            .joined(separator: "\n") + """

          swap          FROM AMOUNT TO AMOUNT  one asset for another at --value V (money), fee on the disposal

        Money alone (no asset) is recorded with 'bitpal cash deposit|withdraw|exchange|transfer'.

        ASSET is a registered asset's code (AAPL, any case), else a CoinGecko id (bitcoin) or symbol
        (btc). Numbers are plain decimals (0.5, 42000): no commas, exponents or signs (an adjustment's
        QUANTITY may be negative). Nothing held may ever go below zero, at any date: a sell, a
        transfer-out with its fee, a negative adjustment or a swap that takes more than is held then
        is refused, and so is a back-dated one that would break a later one. Nothing is written when
        anything is refused. The portfolio is --portfolio/-p, else the default.
        """,
        examples: [
            "bitpal add buy bitcoin 0.5 42000",
            "bitpal add buy AAPL 3 --total 541.20 --fee 1",
            "bitpal add transfer-out eth 0.5 --fee 0.01",
            "bitpal add dividend AAPL 2.40 --fee 0.36",
            "bitpal add split AAPL 4",
            "bitpal add swap btc 0.5 eth 8 --value 30000 --fee 30",
        ])

    var kind: String
    var arguments: [String]
    var date: DateArgument?
    var feeText: String?
    var note: String?
    var totalText: String?
    var currency: String?
    var fxRate: Fixed18?
    var valueText: String?

    init(parsing a: inout ArgumentList) throws {
        let kindText = try a.popPositional("KIND")
        if let cash = TransactionType(rawValue: kindText.lowercased()), KindRule.of(cash).asset == .none {
            throw UsageError.conflict("a \(cash.rawValue) is money alone: record it with 'bitpal cash \(cash == .deposit ? "deposit" : "withdraw") AMOUNT'")
        }
        kind = try ArgumentList.choice(kindText, of: TransactionOptions.addKinds, option: "KIND")
        arguments = a.popRemaining()
        date = try a.popOption("--date").map { text throws(UsageError) in try ArgumentList.date(text, field: "Date") }
        feeText = a.popOption("--fee")
        note = a.popOption("--note")
        totalText = a.popOption("--total")
        currency = a.popOption("--currency")
        fxRate = try TransactionOptions.fxRate(&a)
        valueText = a.popOption("--value")
        let type = TransactionType(rawValue: kind)
        let rule = type.map(KindRule.of)
        // Shape checks (exit 2) before anything is read.
        // The arguments the kind's row names (PRICE left out when --total stands in for it).
        let expected: [String] = rule.map { r in
            r.arguments.split(separator: " ").map(String.init).filter { !(r.takesTotal && totalText != nil && $0 == "PRICE") }
        } ?? ["FROM", "AMOUNT", "TO", "AMOUNT"]
        let usage = "bitpal add \(kind) " + expected.joined(separator: " ")
        if arguments.count < expected.count { throw UsageError.missingArgument(expected[arguments.count], usage: usage) }
        if arguments.count > expected.count {
            if (type == .buy || type == .sell) && totalText != nil && arguments.count == 3 {
                throw UsageError.conflict("give PRICE or --total, not both")
            }
            throw UsageError.unexpectedArgument(arguments[expected.count])
        }
        if totalText != nil && !(rule?.takesTotal ?? false) { throw UsageError.conflict("--total is for buy and sell (a swap takes --value)") }
        if valueText != nil && type != nil { throw UsageError.conflict("--value is for swap") }
        if type == nil && valueText == nil { throw UsageError.missingValue(option: "--value", valueName: "VALUE") }
        if feeText != nil && rule?.fee == KindRule.FeeRule.none { throw UsageError.conflict("a \(kind) has no fee") }
        if currency != nil && !(rule?.hasCurrency ?? true) { throw UsageError.conflict("a \(kind) has no money, so no currency") }
        if fxRate != nil && !(rule?.hasCurrency ?? true) { throw UsageError.conflict("a \(kind) has no money, so no --fx-rate") }
        // Literals now, so a malformed one is a usage error whatever else is wrong.
        if let feeText { _ = try ArgumentList.fixed(feeText, field: "Fee") }
        if let totalText { _ = try ArgumentList.fixed(totalText, field: "Total") }
        if let valueText { _ = try ArgumentList.fixed(valueText, field: "Value") }
        switch type {
        case .adjustment?:
            let q = arguments[1]
            _ = try ArgumentList.fixed(q.hasPrefix("-") ? String(q.dropFirst()) : q, field: "Quantity")
        case .split?: _ = try TransactionOptions.ratio(arguments[1])
        case nil:
            _ = try ArgumentList.fixed(arguments[1], field: "Amount")
            _ = try ArgumentList.fixed(arguments[3], field: "Amount")
        default:
            for (i, name) in expected.enumerated() where i > 0 { _ = try ArgumentList.fixed(arguments[i], field: name.capitalized) }
        }
    }

    func run(_ context: Context) throws -> ExitCode {
        let session = try context.session()
        let now = context.now
        let book = try session.repository.loadSettings()
        let portfolio = try context.portfolio(in: book)
        let when = try date?.record(in: context.timeZone, now: now) ?? .instant(now)
        let notes = note.flatMap { $0.isEmpty ? nil : $0 }
        let fee = try feeText.map { try ArgumentList.fixed($0, field: "Fee") }
        guard let type = TransactionType(rawValue: kind) else {
            // A swap: a sell of FROM and a buy of TO, both with `total` = the value, linked by the sell's id.
            let from = try session.resolver.resolveAsset(arguments[0], in: book)
            let to = try session.resolver.resolveAsset(arguments[2], in: book)
            if from.id == to.id { throw CommandFailure("A swap needs two different assets (both are \(context.coinLabel(from.id)))") }
            return try TransactionOptions.write(.swap(SwapRequest(
                portfolio: portfolio.name, from: from.id, fromAmount: try ArgumentList.fixed(arguments[1], field: "Amount"),
                to: to.id, toAmount: try ArgumentList.fixed(arguments[3], field: "Amount"),
                value: try ArgumentList.fixed(valueText ?? "0", field: "Value"), fee: fee ?? .zero, currency: currency, fxRate: fxRate,
                date: when, notes: notes)), context: context)
        }
        let asset = try session.resolver.resolveAsset(arguments[0], in: book)
        var r = RecordRequest(portfolio: portfolio.name, type: type, assetId: asset.id, amount: .zero, fee: fee, currency: currency,
                              fxRate: fxRate, date: when, notes: notes)
        switch type {
        case .adjustment:
            let q = arguments[1]
            r.negative = q.hasPrefix("-")
            r.amount = try ArgumentList.fixed(r.negative ? String(q.dropFirst()) : q, field: "Quantity")
        case .split:
            (r.amount, r.price) = try TransactionOptions.ratio(arguments[1])
        default:
            r.amount = try ArgumentList.fixed(arguments[1], field: "Amount")
            if arguments.count > 2 { r.price = try ArgumentList.fixed(arguments[2], field: type == .transferIn ? "Cost" : "Price") }
        }
        r.total = try totalText.map { try ArgumentList.fixed($0, field: "Total") }
        return try TransactionOptions.write(.record(r), context: context)
    }
}

struct ListCommand: Command {
    static let spec = CommandSpec(
        name: "list", summary: "List transactions, newest first", arguments: "[ASSET]",
        options: [
            OptionSpec("--type", "TYPE", "only this kind (swap, move and transfer name linked pairs)",
                       choices: TransactionOptions.types + ["swap", "move", "transfer", "exchange"]),
            OptionSpec("--since", "DATE", "from this day or time on (inclusive)"),
            OptionSpec("--until", "DATE", "up to this day or time (inclusive; a day covers the whole day)"),
            OptionSpec("--limit", "N", "at most N lines"),
            ReportOptions.all,
        ],
        group: "Transactions",
        details: "A swap or a move is one line (both legs in --json).",
        examples: ["bitpal list", "bitpal list btc --type sell --since 2024-01-01", "bitpal list --all --limit 20 --json"])

    var asset: String?
    var type: String?
    var since: DateArgument?
    var until: DateArgument?
    var limit: Int?
    var all: Bool

    init(parsing a: inout ArgumentList) throws {
        asset = a.popOptionalPositional()
        type = a.popOption("--type")
        since = try a.popOption("--since").map { text throws(UsageError) in try ArgumentList.date(text, field: "--since") }
        until = try a.popOption("--until").map { text throws(UsageError) in try ArgumentList.date(text, field: "--until") }
        limit = try a.popOption("--limit").map { text in try ArgumentList.positiveInt(text, field: "--limit") }
        all = a.popFlag("--all")
    }

    /// What a line's kind is called: a leg's kind, or `swap`/`move`/`transfer` (of cash) for a linked pair.
    static func kind(of legs: [Transaction]) -> String {
        guard legs.count == 2 else { return legs[0].type.rawValue }
        switch legs[0].type {
        case .sell, .buy: return "swap"
        case .withdrawal, .deposit: return legs[0].portfolio == legs[1].portfolio ? "exchange" : "transfer"
        default: return "move"
        }
    }

    func run(_ context: Context) throws -> ExitCode {
        let session = try context.session()
        let since = self.since.flatMap { $0.filterBound(in: context.timeZone, now: context.now, lower: true) }
        let until = self.until.flatMap { $0.filterBound(in: context.timeZone, now: context.now, lower: false) }
        if let since, let until, since > until {
            throw UsageError.conflict("--since is after --until")
        }
        let (book, selectedLines, matching, total) = try lines(context, since: since, until: until)
        if context.json {
            var w = JSONWriter(capacity: selectedLines.count * 300 + 16)
            w.beginArray()
            for legs in selectedLines { for t in legs { PortfolioCodec.writeTransaction(t, to: &w) } }
            w.endArray()
            w.finish()
            context.out(w.text)
            return .success
        }
        if selectedLines.isEmpty && matching > 0 { return .success }  // --limit 0: nothing, as asked
        if selectedLines.isEmpty {
            context.out(total == 0
                ? "No transactions yet. Record one with: bitpal add buy bitcoin 0.5 42000\n"
                : "No transactions match.\n")
            return .success
        }
        let zone = context.timeZone
        let showPortfolio = all || book.portfolios.count > 1
        var table = Table((showPortfolio ? [("PORTFOLIO", .left)] : []) + [
            ("ID", .left), ("DATE (\(Human.zoneLabel(zone)))", .left), ("TYPE", .left), ("ASSET", .left), ("AMOUNT", .right),
            ("PRICE", .right), ("FEE", .right), ("TOTAL", .right), ("NOTES", .left)])
        // Few assets and portfolios, many rows: each symbol and base currency is looked up once.
        var symbols: [String: String] = [:]
        func sym(_ id: String) -> String {
            if let known = symbols[id] { return known }
            let made = TextEscaping.escaped(context.assetLabel(id).symbol.uppercased())
            symbols[id] = made
            return made
        }
        var bases: [String: String] = [:]
        func base(_ portfolio: String) -> String {
            if let known = bases[portfolio] { return known }
            let found = book.portfolio(named: portfolio)?.baseCurrency ?? "USD"
            bases[portfolio] = found
            return found
        }
        for legs in selectedLines {
            let t = legs[0]
            let currency = CurrencyCode(t.currency ?? base(t.portfolio))
            var row: [Table.Cell] = []
            if legs.count == 2 {
                let o = legs[1]
                let kind = ListCommand.kind(of: legs)
                let swap = kind == "swap", cash = kind == "transfer" || kind == "exchange"
                let exchange = kind == "exchange"
                // A link inside one portfolio (a swap, a cash exchange) names it once; an exchange shows both currencies.
                if showPortfolio {
                    row.append(.init(t.portfolio == o.portfolio ? TextEscaping.escaped(t.portfolio)
                                     : "\(TextEscaping.escaped(t.portfolio)) → \(TextEscaping.escaped(o.portfolio))"))
                }
                let exchanged = TransactionOptions.exchanged(t, o)
                row += [.init(Human.shortID(t.id)), .init(Human.when(t.date, in: zone)), .init(kind),
                        .init(swap ? "\(sym(t.assetId)) → \(sym(o.assetId))" : exchange ? "\(t.currency ?? "") → \(o.currency ?? "")" : cash ? "" : sym(t.assetId)),
                        .init(swap ? "\(Human.quantity(t.amountValue, negative: t.negative)) → \(Human.quantity(o.amountValue, negative: o.negative))"
                              : exchange ? exchanged : cash ? Human.money(t.amountValue, in: currency) : Human.quantity(t.amountValue, negative: t.negative)),
                        .init(""), .init(swap && (t.feeValue?.units ?? 0) > 0 ? Human.money(t.feeValue ?? .zero, in: currency) : ""),
                        .init(swap ? Human.money(Money(t.gross, currency)) : cash ? Human.money(Money(t.total, currency)) : ""),
                        .init(TextEscaping.escaped(t.notes ?? ""))]
            } else {
                if showPortfolio { row.append(.init(TextEscaping.escaped(t.portfolio))) }
                let rule = t.rule
                let fee: String = switch rule.fee {
                case .none: ""
                case .units: (t.feeValue?.units ?? 0) > 0 ? Human.quantity(t.feeValue ?? .zero) + " " + sym(t.assetId) : ""
                default: Human.money(t.feeValue ?? .zero, in: currency)
                }
                let price: String = t.type == .split ? TransactionOptions.splitRatio(t) : t.priceValue.map { Human.price($0, in: currency) } ?? ""
                row += [.init(Human.shortID(t.id)), .init(Human.when(t.date, in: zone)), .init(t.type.rawValue), .init(sym(t.assetId)),
                        .init(rule.amountIsMoney ? Human.money(t.amountValue, in: currency) : Human.quantity(t.amountValue, negative: t.negative)),
                        .init(price), .init(fee), .init(rule.hasCurrency ? Human.money(Money(t.total, currency)) : ""),
                        .init(TextEscaping.escaped(t.notes ?? ""))]
            }
            table.add(row)
        }
        context.out(table.render(style: context.style))
        if selectedLines.count < matching {
            context.out("\(selectedLines.count) of \(matching) \(matching == total ? "" : "matching ")transactions (--limit)\n")
        }
        return .success
    }
    /// The lines `list` shows (newest first, at most `limit`), how many match the filters, and how many
    /// lines the chosen portfolios have. A plain `--limit N` reads only the newest records, from the
    /// snapshot (`Snapshot.latestLines`), when it stands for the store.
    func lines(_ context: Context, since: Date?, until: Date?) throws -> (Book, [[Transaction]], matching: Int, total: Int) {
        let session = try context.session()
        if let limit, asset == nil, type == nil, since == nil, until == nil, let snapshot = session.repository.loadListing(),
           let latest = snapshot.latestLines(limit, in: try context.selection(in: snapshot.book, all: all), zone: context.timeZone) {
            return (snapshot.book, latest.lines, latest.total, latest.total)
        }
        let book = try session.repository.loadBook()
        let selected = try context.selection(in: book, all: all)
        let assetId = try asset.map { try session.resolver.resolveAsset($0, in: book).id }
        try context.checkedLedger(book, replaying: false)  // warns about duplicate ids, zeros, future dates (no replay)
        // Linked legs form one line (a swap or a move), keyed by their link.
        var groups: [UUID: [Transaction]] = [:]
        for t in book.transactions { if let link = t.linkedId { groups[link, default: []].append(t) } }
        // Count every match, keep the first `limit` (newest first): "2 of 5" counts what the filters match.
        var selectedLines: [[Transaction]] = []
        var matching = 0
        var total = 0
        var shown = Set<UUID>()
        for t in Ledger.chronological(book.transactions).reversed() {
            var legs = [t]
            // A saving plan's deposit and buy stay two lines (each is what it says); the other links are one.
            if let link = t.linkedId, let group = groups[link], group.count == 2, LinkKind.of(group[0], group[1])?.name != LinkKind.savingPlan {
                if !shown.insert(link).inserted { continue }
                legs = group
            }
            guard legs.contains(where: { selected.contains($0.portfolio) }) else { continue }
            total += 1
            if let assetId, !legs.contains(where: { $0.assetId == assetId }) { continue }
            if let type, ListCommand.kind(of: legs) != type { continue }
            if let since, t.date < since { continue }
            if let until, t.date > until { continue }
            matching += 1
            if limit.map({ selectedLines.count < $0 }) ?? true { selectedLines.append(legs) }
        }
        return (book, selectedLines, matching, total)
    }
}

struct EditCommand: Command {
    static let spec = CommandSpec(
        name: "edit", summary: "Change a transaction", arguments: "ID",
        options: [
            OptionSpec("--asset", "ASSET", "a new asset (also --coin)"),
            OptionSpec("--coin", "ASSET", "the same as --asset"),
            OptionSpec("--type", "TYPE", "a new kind (not on a swap's or move's leg)", choices: TransactionOptions.types),
            OptionSpec("--amount", "AMOUNT", "a new amount"),
            OptionSpec("--price", "PRICE", "a new price per unit"),
            OptionSpec("--total", "TOTAL", "a new exact total (buy, sell)"),
            OptionSpec("--value", "VALUE", "a swap's new value (both legs)"),
            OptionSpec("--currency", "CODE", "a new currency of its money (a registered asset's own only)"),
            OptionSpec("--fx-rate", "RATE", "a new rate to the portfolio's base (default, when the currency changes: the rate table's)"),
            OptionSpec("--date", "DATE", "a new date: YYYY-MM-DD (a calendar day), a local or ISO 8601 time, today, yesterday"),
            OptionSpec("--fee", "FEE", "a new fee (0 removes it)"),
            OptionSpec("--note", "TEXT", "a new note (\"\" removes it)"),
        ],
        group: "Transactions",
        details: """
        ID is the transaction's id or a unique prefix of 4+ characters (see 'bitpal list'), or @LINE,
        the record on that line of portfolio.json (as 'bitpal check' names it). The edited history is
        checked as a whole, as 'add' checks it. Options not given keep their current values. The legs
        of a link change together: --date, --note and --value change both legs of a swap or a move;
        --asset and --amount change both legs of a move, and --amount both of a cash transfer; on a
        swap or a cash exchange they change the leg named. A move's receiving leg takes no price or
        fee of its own.
        """,
        examples: ["bitpal edit 3f2a9c01 --price 41500", "bitpal edit 3f2a --date 2024-02-01 --note \"\""])

    var id: String
    var asset: String?
    var type: TransactionType?
    var amount: Fixed18?
    var price: Fixed18?
    var total: Fixed18?
    var value: Fixed18?
    var date: DateArgument?
    var fee: Fixed18?
    var note: String?
    var currency: String?
    var fxRate: Fixed18?

    init(parsing a: inout ArgumentList) throws {
        id = try ArgumentList.recordID(try a.popPositional("ID"))
        currency = a.popOption("--currency")
        fxRate = try TransactionOptions.fxRate(&a)
        let assetOption = a.popOption("--asset"), coinOption = a.popOption("--coin")
        if assetOption != nil && coinOption != nil { throw UsageError.conflict("--coin is --asset; give one") }
        asset = assetOption ?? coinOption
        type = try a.popOption("--type").map { text throws(UsageError) in try TransactionOptions.type(text, option: "--type") }
        amount = try a.popOption("--amount").map { try ArgumentList.fixed($0, field: "Amount") }
        price = try a.popOption("--price").map { try ArgumentList.fixed($0, field: "Price") }
        total = try a.popOption("--total").map { try ArgumentList.fixed($0, field: "Total") }
        value = try a.popOption("--value").map { try ArgumentList.fixed($0, field: "Value") }
        date = try a.popOption("--date").map { text throws(UsageError) in try ArgumentList.date(text, field: "Date") }
        fee = try a.popOption("--fee").map { try ArgumentList.fixed($0, field: "Fee") }
        note = a.popOption("--note")
        if asset == nil && type == nil && amount == nil && price == nil && total == nil && value == nil && date == nil && fee == nil && note == nil
            && currency == nil && fxRate == nil {
            throw UsageError.conflict("nothing to change: give at least one of --asset, --type, --amount, --price, --total, --value, --date, --fee, "
                + "--note, --currency, --fx-rate")
        }
    }

    func run(_ context: Context) throws -> ExitCode {
        let session = try context.session()
        let now = context.now
        let book = try session.repository.loadSettings()
        let newAsset = try asset.map { try session.resolver.resolveAsset($0, in: book) }
        let newDate = try date?.record(in: context.timeZone, now: now)
        var request = EditRequest(id: id)
        (request.assetId, request.type, request.amount, request.price, request.total) = (newAsset?.id, type, amount, price, total)
        (request.value, request.fee, request.date, request.notes, request.currency, request.fxRate) = (value, fee, newDate, note, currency, fxRate)
        let edited = try session.repository.commit(.edit(request), names: context.names).first ?? []
        if context.json {
            context.printJSON(TransactionOptions.json(edited))
        } else {
            guard let first = edited.first else { return .success }
            context.out("Changed \(Human.shortID(first.id)): \(TransactionOptions.describe(edited, context: context))\n")
        }
        return .success
    }
}

struct DeleteCommand: Command {
    static let spec = CommandSpec(
        name: "delete", summary: "Delete transactions", arguments: "ID...", group: "Transactions",
        details: "Each ID is a transaction's id, a unique prefix of 4+ characters, or @LINE (the record on that\nline of portfolio.json, as 'bitpal check' names it). A swap's or a move's leg takes the other\nleg with it. Refused (nothing deleted) when what remains would be invalid, e.g. a later sell\nwould exceed what is held.",
        examples: ["bitpal delete 3f2a9c01", "bitpal delete 3f2a 77b1"])

    var ids: [String]

    init(parsing a: inout ArgumentList) throws {
        ids = try a.popRemaining().map { text throws(UsageError) in try ArgumentList.recordID(text) }
        if ids.isEmpty { throw UsageError.missingArgument("ID", usage: Self.spec.usage) }
    }

    func run(_ context: Context) throws -> ExitCode {
        let session = try context.session()
        _ = try session.repository.loadSettings()
        let removed = try session.repository.commit(.delete(ids), names: context.names)
        if context.json {
            context.printJSON(.object([("deleted", .array(removed.flatMap { $0 }.map { .string($0.id.uuidString.lowercased()) }))]))
        } else {
            for legs in removed {
                context.out("Deleted \(Human.shortID(legs[0].id)): \(TransactionOptions.describe(legs, context: context))\n")
            }
        }
        return .success
    }
}

struct MoveCommand: Command {
    static let spec = CommandSpec(
        name: "move", summary: "Move units of an asset from one portfolio to another", arguments: "ASSET AMOUNT",
        options: [
            OptionSpec("--to", "PORTFOLIO", "the portfolio that receives them (required)"),
            OptionSpec("--from", "PORTFOLIO", "the portfolio they leave (default: --portfolio, else the default)"),
            OptionSpec("--fx-rate", "RATE", "between two bases: units of --to's base per unit of --from's on that date (default: the rate table's)"),
            TransactionOptions.date, TransactionOptions.note,
        ],
        group: "Transactions",
        details: """
        Records a linked transfer-out and transfer-in. The basis that moves is what the units carry
        in the source; the receiving leg takes it during the replay (nothing is realized). Deleting
        or editing either leg acts on both.
        """,
        examples: ["bitpal move btc 0.1 --to trading", "bitpal move AAPL 5 --from main --to long-term --date 2024-03-01"])

    var asset: String
    var amount: Fixed18
    var to: String
    var from: String?
    var date: DateArgument?
    var note: String?
    var fxRate: Fixed18?

    init(parsing a: inout ArgumentList) throws {
        asset = try a.popPositional("ASSET")
        fxRate = try TransactionOptions.fxRate(&a)
        amount = try ArgumentList.fixed(try a.popPositional("AMOUNT"), field: "Amount")
        guard let to = a.popOption("--to") else { throw UsageError.missingValue(option: "--to", valueName: "PORTFOLIO") }
        self.to = to
        from = a.popOption("--from")
        date = try a.popOption("--date").map { text throws(UsageError) in try ArgumentList.date(text, field: "Date") }
        note = a.popOption("--note")
    }

    func run(_ context: Context) throws -> ExitCode {
        let session = try context.session()
        let now = context.now
        let book = try session.repository.loadSettings()
        let source = try from.map { try Context.portfolio(named: $0, in: book, option: "--from") } ?? context.portfolio(in: book)
        let target = try Context.portfolio(named: to, in: book, option: "--to")
        // Said before the asset is looked up (the book says it again under its lock).
        if source.name == target.name { throw CommandFailure("--from and --to are both '\(TextEscaping.escaped(source.name))'") }
        let asset = try session.resolver.resolveAsset(self.asset, in: book)
        let when = try date?.record(in: context.timeZone, now: now) ?? .instant(now)
        let notes = note.flatMap { $0.isEmpty ? nil : $0 }
        return try TransactionOptions.write(.move(MoveRequest(assetId: asset.id, amount: amount, from: source.name, to: target.name,
                                                              fxRate: fxRate, date: when, notes: notes)), context: context)
    }
}

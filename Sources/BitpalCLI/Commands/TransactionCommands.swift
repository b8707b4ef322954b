import Foundation
import PortfolioCore

/// Options shared by `add` and `edit`.
enum TransactionOptions {
    static let date = OptionSpec("--date", "DATE", "when it happened: YYYY-MM-DD, today or yesterday (from local midnight), a local time (2024-01-31 14:00), or ISO 8601 with Z or an offset; default now")
    static let fee = OptionSpec("--fee", "FEE", "fee paid in USD (default 0)")
    static let note = OptionSpec("--note", "TEXT", "a note to keep with it")
    static let types = TransactionType.allCases.map(\.rawValue)

    static func type(_ text: String, option: String) throws(UsageError) -> TransactionType {
        guard let t = TransactionType(rawValue: text.lowercased()) else {
            throw .invalidChoice(option: option, value: text, choices: types)
        }
        return t
    }

    /// One line describing a transaction for people.
    static func describe(_ t: Transaction, coin: Coin, zone: TimeZone) -> String {
        var s = "\(t.type.rawValue) \(Human.quantity(t.amount)) \(TextEscaping.escaped(coin.symbol.uppercased())) (\(TextEscaping.escaped(coin.name)))"
        s += " at \(Human.price(t.pricePerCoin))"
        if t.fee > 0 { s += ", fee \(Human.money(t.fee))" }
        s += ", total \(Human.money(t.total)), on \(Human.whenLabelled(t.date, in: zone))"
        if let n = t.notes { s += " — \(TextEscaping.escaped(n))" }
        return s
    }
}

struct AddCommand: Command {
    static let spec = CommandSpec(
        name: "add", summary: "Record a buy or a sell", arguments: "buy|sell COIN AMOUNT PRICE",
        options: [TransactionOptions.date, TransactionOptions.fee, TransactionOptions.note],
        group: "Transactions",
        details: """
        COIN is a CoinGecko id (bitcoin) or a symbol (btc, any case). AMOUNT is how many units;
        PRICE is USD per unit. Both are plain decimals (0.5, 42000, 0.000000000000000001): no
        commas, exponents or signs. A sell may not exceed what you hold at its date, and a
        back-dated sell may not break a later one. Nothing is written when anything is refused.
        """,
        examples: [
            "bitpal add buy bitcoin 0.5 42000",
            "bitpal add buy eth 2 1000 --fee 10 --date 2024-01-01",
            "bitpal add sell btc 0.25 50000 --note \"rebalance\"",
        ])

    var type: TransactionType
    var coin: String
    var amount: Decimal
    var price: Decimal
    var date: DateArgument?
    var fee: Decimal
    var note: String?

    init(parsing a: inout ArgumentList) throws {
        type = try TransactionOptions.type(try a.popPositional("buy|sell"), option: "type")
        coin = try a.popPositional("COIN")
        amount = try ArgumentList.decimal(try a.popPositional("AMOUNT"), field: "Amount")
        price = try ArgumentList.decimal(try a.popPositional("PRICE"), field: "Price")
        date = try a.popOption("--date").map { text throws(UsageError) in try ArgumentList.date(text, field: "Date") }
        fee = try a.popOption("--fee").map { try ArgumentList.decimal($0, field: "Fee") } ?? 0
        note = a.popOption("--note")
    }

    func run(_ context: Context) throws -> ExitCode {
        let coin = try context.resolveCoin(self.coin)
        let tx = Transaction(coinId: coin.id, type: type, amount: amount, pricePerCoin: price, fee: fee,
                             date: try date?.start(in: context.timeZone, now: context.now) ?? context.now, notes: note.flatMap { $0.isEmpty ? nil : $0 })
        try ValueRules.check(tx, now: context.now)
        let now = context.now
        try context.store().update(now: now, names: context.names) { portfolio in
            try portfolio.add([tx], now: now)
            return (true, ())
        }
        if context.json {
            context.printJSON(ReportJSON.transaction(tx))
        } else {
            context.out("Added \(TransactionOptions.describe(tx, coin: coin, zone: context.timeZone))\nid \(tx.id.uuidString.lowercased())\n")
        }
        return .success
    }
}

struct ListCommand: Command {
    static let spec = CommandSpec(
        name: "list", summary: "List transactions, newest first", arguments: "[COIN]",
        options: [
            OptionSpec("--type", "TYPE", "only buys or only sells", choices: TransactionOptions.types),
            OptionSpec("--since", "DATE", "from this day or time on (inclusive)"),
            OptionSpec("--until", "DATE", "up to this day or time (inclusive; a day covers the whole day)"),
            OptionSpec("--limit", "N", "at most N transactions"),
        ],
        group: "Transactions",
        examples: ["bitpal list", "bitpal list btc --type sell --since 2024-01-01", "bitpal list --limit 20 --json"])

    var coin: String?
    var type: TransactionType?
    var since: DateArgument?
    var until: DateArgument?
    var limit: Int?

    init(parsing a: inout ArgumentList) throws {
        coin = a.popOptionalPositional()
        type = try a.popOption("--type").map { text throws(UsageError) in try TransactionOptions.type(text, option: "--type") }
        since = try a.popOption("--since").map { text throws(UsageError) in try ArgumentList.date(text, field: "--since") }
        until = try a.popOption("--until").map { text throws(UsageError) in try ArgumentList.date(text, field: "--until") }
        limit = try a.popOption("--limit").map { text in try ArgumentList.positiveInt(text, field: "--limit") }
    }

    func run(_ context: Context) throws -> ExitCode {
        let since = self.since.flatMap { $0.filterBound(in: context.timeZone, now: context.now, lower: true) }
        let until = self.until.flatMap { $0.filterBound(in: context.timeZone, now: context.now, lower: false) }
        if let since, let until, since > until {
            throw UsageError.conflict("--since is after --until")
        }
        let coinId = try coin.map { try context.resolveCoin($0).id }
        let portfolio = try context.store().load()
        context.checkedLedger(portfolio, replaying: false)  // warns about duplicate ids, zeros, future dates (no replay)
        // Count every match, keep the first `limit` (newest first): "2 of 5" counts what the filters match.
        var selected: [Transaction] = []
        var matching = 0
        for t in Ledger.chronological(portfolio.transactions).reversed() {
            if let coinId, t.coinId != coinId { continue }
            if let type, t.type != type { continue }
            if let since, t.date < since { continue }
            if let until, t.date > until { continue }
            matching += 1
            if limit.map({ selected.count < $0 }) ?? true { selected.append(t) }
        }
        if context.json {
            var w = JSONWriter(capacity: selected.count * 300 + 16)
            w.beginArray()
            for t in selected { PortfolioCodec.writeTransaction(t, to: &w) }
            w.endArray()
            w.finish()
            context.out(w.text)
            return .success
        }
        if selected.isEmpty && matching > 0 { return .success }  // --limit 0: nothing, as asked
        if selected.isEmpty {
            context.out(portfolio.transactions.isEmpty
                ? "No transactions yet. Record one with: bitpal add buy bitcoin 0.5 42000\n"
                : "No transactions match.\n")
            return .success
        }
        let zone = context.timeZone
        var table = Table([("ID", .left), ("DATE (\(Human.zoneLabel(zone)))", .left), ("TYPE", .left), ("COIN", .left), ("AMOUNT", .right),
                           ("PRICE", .right), ("FEE", .right), ("TOTAL", .right), ("NOTES", .left)])
        for t in selected {
            let c = context.coin(id: t.coinId)
            table.add([Human.shortID(t.id), Human.when(t.date, in: zone), t.type.rawValue, TextEscaping.escaped(c.symbol.uppercased()),
                       Human.quantity(t.amount), Human.price(t.pricePerCoin), Human.money(t.fee), Human.money(t.total),
                       TextEscaping.escaped(t.notes ?? "")])
        }
        context.out(table.render(style: context.style))
        if selected.count < matching {
            context.out("\(selected.count) of \(matching) \(matching == portfolio.transactions.count ? "" : "matching ")transactions (--limit)\n")
        }
        return .success
    }
}

struct EditCommand: Command {
    static let spec = CommandSpec(
        name: "edit", summary: "Change a transaction", arguments: "ID",
        options: [
            OptionSpec("--coin", "COIN", "a new coin"),
            OptionSpec("--type", "TYPE", "a new type: buy or sell", choices: TransactionOptions.types),
            OptionSpec("--amount", "AMOUNT", "a new amount"),
            OptionSpec("--price", "PRICE", "a new USD price per unit"),
            OptionSpec("--date", "DATE", "a new date: YYYY-MM-DD (local midnight), a local or ISO 8601 time, today, yesterday"),
            OptionSpec("--fee", "FEE", "a new fee in USD (0 removes it)"),
            OptionSpec("--note", "TEXT", "a new note (\"\" removes it)"),
        ],
        group: "Transactions",
        details: "ID is the transaction's id or a unique prefix of 4+ characters (see 'bitpal list'), or @LINE,\nthe record on that line of portfolio.json (as 'bitpal check' names it). The edited history is\nchecked as a whole, as 'add' checks it. Options not given keep their current values.",
        examples: ["bitpal edit 3f2a9c01 --price 41500", "bitpal edit 3f2a --date 2024-02-01 --note \"\""])

    var id: String
    var coin: String?
    var type: TransactionType?
    var amount: Decimal?
    var price: Decimal?
    var date: DateArgument?
    var fee: Decimal?
    var note: String?

    init(parsing a: inout ArgumentList) throws {
        id = try ArgumentList.recordID(try a.popPositional("ID"))
        coin = a.popOption("--coin")
        type = try a.popOption("--type").map { text throws(UsageError) in try TransactionOptions.type(text, option: "--type") }
        amount = try a.popOption("--amount").map { try ArgumentList.decimal($0, field: "Amount") }
        price = try a.popOption("--price").map { try ArgumentList.decimal($0, field: "Price") }
        date = try a.popOption("--date").map { text throws(UsageError) in try ArgumentList.date(text, field: "Date") }
        fee = try a.popOption("--fee").map { try ArgumentList.decimal($0, field: "Fee") }
        note = a.popOption("--note")
        if coin == nil && type == nil && amount == nil && price == nil && date == nil && fee == nil && note == nil {
            throw UsageError.conflict("nothing to change: give at least one of --coin, --type, --amount, --price, --date, --fee, --note")
        }
    }

    func run(_ context: Context) throws -> ExitCode {
        let newCoin = try coin.map { try context.resolveCoin($0) }
        let now = context.now
        let newDate = try date?.start(in: context.timeZone, now: now)
        let store = try context.store()
        let edited: Transaction = try store.update(now: now, names: context.names) { portfolio in
            let index = try portfolio.index(matching: id, lines: { (try? store.transactionLines()) ?? [] })
            var t = portfolio.transactions[index]
            if let newCoin { t.coinId = newCoin.id }
            if let type { t.type = type }
            if let amount { t.amount = amount }
            if let price { t.pricePerCoin = price }
            if let newDate { t.date = newDate }
            if let fee { t.fee = fee }
            if let note { t.notes = note.isEmpty ? nil : note }
            try portfolio.replace(at: index, with: t, now: now)
            return (true, t)
        }
        if context.json {
            context.printJSON(ReportJSON.transaction(edited))
        } else {
            context.out("Changed \(Human.shortID(edited.id)): \(TransactionOptions.describe(edited, coin: context.coin(id: edited.coinId), zone: context.timeZone))\n")
        }
        return .success
    }
}

struct DeleteCommand: Command {
    static let spec = CommandSpec(
        name: "delete", summary: "Delete transactions", arguments: "ID...", group: "Transactions",
        details: "Each ID is a transaction's id, a unique prefix of 4+ characters, or @LINE (the record on that\nline of portfolio.json, as 'bitpal check' names it). Refused (nothing deleted) when what remains\nwould be invalid, e.g. a later sell would exceed what is held.",
        examples: ["bitpal delete 3f2a9c01", "bitpal delete 3f2a 77b1"])

    var ids: [String]

    init(parsing a: inout ArgumentList) throws {
        ids = try a.popRemaining().map { text throws(UsageError) in try ArgumentList.recordID(text) }
        if ids.isEmpty { throw UsageError.missingArgument("ID", usage: Self.spec.usage) }
    }

    func run(_ context: Context) throws -> ExitCode {
        let store = try context.store()
        let removed: [Transaction] = try store.update(now: context.now, names: context.names) { portfolio in
            var indices: [Int] = []
            for text in ids {
                let i = try portfolio.index(matching: text, lines: { (try? store.transactionLines()) ?? [] })
                if !indices.contains(i) { indices.append(i) }
            }
            let found = indices.map { portfolio.transactions[$0] }
            try portfolio.delete(at: Set(indices))
            return (true, found)
        }
        if context.json {
            context.printJSON(.object([("deleted", .array(removed.map { .string($0.id.uuidString.lowercased()) }))]))
        } else {
            for t in removed {
                context.out("Deleted \(Human.shortID(t.id)): \(TransactionOptions.describe(t, coin: context.coin(id: t.coinId), zone: context.timeZone))\n")
            }
        }
        return .success
    }
}

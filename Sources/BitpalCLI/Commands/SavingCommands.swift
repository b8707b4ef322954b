import Foundation
import PortfolioCore

/// `saving add|list|edit|remove|run|due|confirm` (allocation-plans.md, "Regular saving plans").
enum SavingText {
    static let frequencies = SavingPlan.Frequency.allCases.map(\.rawValue)

    static func frequency(_ text: String) throws(UsageError) -> SavingPlan.Frequency {
        guard let f = SavingPlan.Frequency(rawValue: text.lowercased()) else { throw .invalidChoice(option: "--every", value: text, choices: frequencies) }
        return f
    }

    static func funding(_ text: String) throws(UsageError) -> SavingPlan.Funding {
        guard let f = SavingPlan.Funding(rawValue: text.lowercased()) else {
            throw .invalidChoice(option: "--from", value: text, choices: SavingPlan.Funding.allCases.map(\.rawValue))
        }
        return f
    }

    static func everyText(_ f: SavingPlan.Frequency) -> String {
        switch f {
        case .day: "day"
        case .week: "week"
        case .twoWeeks: "2 weeks"
        case .month: "month"
        }
    }

    static func money(_ v: Fixed18, _ currency: String) -> String { Human.money(Money(Exact36(v), CurrencyCode(currency))) }

    static func json(_ p: SavingPlan) -> JSONValue { SavingPlan.fields.object(p) }

    static func quoted(_ name: String) -> String { name.contains(" ") ? "\"\(name)\"" : name }

    /// Writes the legs of one occurrence and moves the plan on, under the lock (`confirm`).
    static func describe(_ r: SavingRecorded, context: Context) -> String {
        let t = r.buy
        let currency = t.currency ?? "USD"
        return "\(ISODate.dayText(r.day)) \(TextEscaping.escaped(r.plan)): bought \(Human.exactQuantity(t.amountValue.decimal)) "
            + "\(context.assetLabel(t.assetId).symbol.uppercased()) for \(money(t.totalValue ?? .zero, currency)) at \(money(t.priceValue ?? .zero, currency))"
            + ((t.feeValue?.units ?? 0) > 0 ? " + fee \(money(t.feeValue ?? .zero, currency))" : "")
            + (r.deposit != nil ? " (deposited \(money(r.deposit?.amountValue ?? .zero, currency)))" : "")
            + " [\(Human.shortID(t.id))]"
    }
}

struct SavingAddCommand: Command {
    static let spec = CommandSpec(
        name: "saving add", summary: "A habit: an amount of an asset on every due date", arguments: "NAME",
        options: [
            OptionSpec("--asset", "ASSET", "what to buy (a coin or a registered asset)", required: true),
            OptionSpec("--amount", "MONEY", "money per due date, the fee included (in the currency the asset is bought in)", required: true),
            OptionSpec("--every", "PERIOD", "day, week, 2weeks or month", choices: SavingText.frequencies, required: true),
            OptionSpec("--start", "DATE", "the first due date (default today); monthly plans keep its day of month"),
            OptionSpec("--fee", "MONEY", "fee per buy, taken from the amount (default 0)"),
            OptionSpec("--from", "SOURCE", "outside (default: a linked deposit when the portfolio tracks cash) or cash",
                       choices: SavingPlan.Funding.allCases.map(\.rawValue)),
            OptionSpec("--manual", nil, "a reminder: 'saving run' leaves it, 'saving confirm' records it"),
            OptionSpec("--note", "TEXT", "a note to keep with it"),
        ],
        group: "Goals and habits",
        details: """
        Due dates are the start, then every 1, 7 or 14 days, or every month on the start's day (the
        month's last day when it is shorter: Jan 31, Feb 29, Mar 31). 'bitpal saving run' (from cron)
        records each due date once: a buy dated that day, total = amount - fee, units = total / price
        rounded down to 18 decimals.
        """,
        examples: ["bitpal saving add weekly-btc --asset bitcoin --amount 100 --every week",
                   "bitpal saving add etf --asset VWCE --amount 500 --every month --start 2024-01-31 --from cash --portfolio broker"])

    var name: String
    var asset: String
    var amount: Fixed18
    var every: SavingPlan.Frequency
    var start: DateArgument?
    var fee: Fixed18
    var from: SavingPlan.Funding
    var manual: Bool
    var note: String?

    init(parsing a: inout ArgumentList) throws {
        name = try PlanText.name(try a.popPositional("NAME"))
        guard let asset = a.popOption("--asset") else { throw UsageError.missingValue(option: "--asset", valueName: "ASSET") }
        self.asset = asset
        guard let amount = a.popOption("--amount") else { throw UsageError.missingValue(option: "--amount", valueName: "MONEY") }
        self.amount = try ArgumentList.fixed(amount, field: "Amount")
        guard let every = a.popOption("--every") else { throw UsageError.missingValue(option: "--every", valueName: "PERIOD") }
        self.every = try SavingText.frequency(every)
        start = try a.popOption("--start").map { text throws(UsageError) in try ArgumentList.date(text, field: "--start") }
        fee = try a.popOption("--fee").map { try ArgumentList.fixed($0, field: "Fee") } ?? .zero
        from = try a.popOption("--from").map { text throws(UsageError) in try SavingText.funding(text) } ?? .outside
        manual = a.popFlag("--manual")
        note = a.popOption("--note")
    }

    func run(_ context: Context) throws -> ExitCode {
        guard amount.units > 0 else { throw PortfolioError.amountNotPositive }
        guard fee < amount else { throw CommandFailure("The fee (\(fee.text)) must be below the amount (\(amount.text))") }
        let session = try context.session()
        let settings = try session.repository.loadSettings()
        let portfolio = try context.portfolio(in: settings)
        let label = try session.resolver.resolveAsset(asset, in: settings)
        if from == .cash && !portfolio.trackCash {
            throw PortfolioError.cashNotTracked(portfolio.name)
        }
        let startDay = try start.map { ISODate.dayNumber(of: try $0.start(in: context.timeZone, now: context.now), in: context.timeZone) }
            ?? ISODate.dayNumber(of: context.now, in: context.timeZone)
        let plan = SavingPlan(name: name, portfolio: portfolio.name, assetId: label.id, amount: amount, fee: fee, frequency: every,
                              startDay: startDay, from: from, method: manual ? .manual : .automatic,
                              notes: note.flatMap { $0.isEmpty ? nil : $0 })
        let currency = try session.repository.commit(.addSavingPlan(plan), names: context.names).book.currency(of: plan)
        let today = ISODate.dayNumber(of: context.now, in: context.timeZone)
        if !manual && !Asset.isRegisteredID(label.id) && startDay < today - SavingPrices.historyDays + 1 {
            context.warn("the price service's history reaches \(SavingPrices.historyDays) days back: dates before "
                         + "\(ISODate.dayText(today - SavingPrices.historyDays + 1)) need prices set by hand ('bitpal price set \(label.symbol) PRICE --date D'), "
                         + "or move the plan on with 'bitpal saving edit \(SavingText.quoted(name)) --next DATE'")
        }
        if context.json {
            context.printJSON(SavingText.json(plan))
        } else {
            context.out("Added saving plan '\(TextEscaping.escaped(name))': \(SavingText.money(amount, currency)) of \(label.symbol.uppercased()) every "
                        + "\(SavingText.everyText(every)), next on \(ISODate.dayText(plan.nextDueDay))"
                        + (manual ? " (manual: confirm it with 'bitpal saving confirm \(SavingText.quoted(name))').\n"
                                  : ". Run 'bitpal saving run' from cron to carry it out.\n"))
        }
        return .success
    }
}

struct SavingListCommand: Command {
    static let spec = CommandSpec(name: "saving list", summary: "Your saving plans: next due date, last executed, active or paused",
                                  group: "Goals and habits", examples: ["bitpal saving list", "bitpal saving list --json"])

    init(parsing a: inout ArgumentList) throws {}

    func run(_ context: Context) throws -> ExitCode {
        // The whole file, not its settings alone: a listing of a truncated store is refused as every command refuses it.
        let book = try context.session().repository.loadBook()
        if context.json {
            context.printJSON(.array(book.savingPlans.map(SavingText.json)))
            return .success
        }
        if book.savingPlans.isEmpty {
            context.out("No saving plans yet: add one with 'bitpal saving add weekly-btc --asset bitcoin --amount 100 --every week'.\n")
            return .success
        }
        var table = Table([("NAME", .left), ("PORTFOLIO", .left), ("ASSET", .left), ("AMOUNT", .right), ("FEE", .right), ("EVERY", .left),
                           ("NEXT DUE", .left), ("LAST", .left), ("FROM", .left), ("METHOD", .left), ("STATUS", .left)])
        for p in book.savingPlans {
            let currency = book.currency(of: p)
            table.add([TextEscaping.escaped(p.name), TextEscaping.escaped(p.portfolio), context.assetLabel(p.assetId).symbol.uppercased(),
                       SavingText.money(p.amount, currency), SavingText.money(p.fee, currency), SavingText.everyText(p.frequency),
                       ISODate.dayText(p.nextDueDay), p.lastExecutedDay.map(ISODate.dayText) ?? "—", p.from.rawValue, p.method.rawValue,
                       p.active ? "active" : "paused"])
        }
        context.out(table.render(style: context.style))
        return .success
    }
}

struct SavingEditCommand: Command {
    static let spec = CommandSpec(
        name: "saving edit", summary: "Change, pause or resume a saving plan", arguments: "NAME",
        options: [
            OptionSpec("--amount", "MONEY", "money per due date, the fee included"),
            OptionSpec("--every", "PERIOD", "day, week, 2weeks or month (counted on from the next due date)", choices: SavingText.frequencies),
            OptionSpec("--fee", "MONEY", "fee per buy"),
            OptionSpec("--pause", nil, "stop carrying it out"),
            OptionSpec("--resume", nil, "carry it out again from the first due date on or after today (paused dates are not caught up)"),
            OptionSpec("--next", "DATE", "skip to the first due date on or after DATE (the dates before it are never recorded)"),
            OptionSpec("--note", "TEXT", "a note to keep with it (empty to remove)"),
        ],
        group: "Goals and habits",
        examples: ["bitpal saving edit weekly-btc --amount 150", "bitpal saving edit weekly-btc --next 2024-06-01", "bitpal saving edit weekly-btc --pause", "bitpal saving edit weekly-btc --resume"])

    var name: String
    var amount: Fixed18?
    var every: SavingPlan.Frequency?
    var fee: Fixed18?
    var pause: Bool
    var resume: Bool
    var next: DateArgument?
    var note: String?

    init(parsing a: inout ArgumentList) throws {
        name = try a.popPositional("NAME")
        next = try a.popOption("--next").map { text throws(UsageError) in try ArgumentList.date(text, field: "--next") }
        amount = try a.popOption("--amount").map { try ArgumentList.fixed($0, field: "Amount") }
        every = try a.popOption("--every").map { text throws(UsageError) in try SavingText.frequency(text) }
        fee = try a.popOption("--fee").map { try ArgumentList.fixed($0, field: "Fee") }
        pause = a.popFlag("--pause")
        resume = a.popFlag("--resume")
        note = a.popOption("--note")
        if pause && resume { throw UsageError.conflict("give --pause or --resume, not both") }
        if amount == nil && every == nil && fee == nil && !pause && !resume && next == nil && note == nil {
            throw UsageError.conflict("nothing to change: give at least one of --amount, --every, --fee, --pause, --resume, --next, --note")
        }
    }

    func run(_ context: Context) throws -> ExitCode {
        let today = ISODate.dayNumber(of: context.now, in: context.timeZone)
        let nextDay = try next.map { ISODate.dayNumber(of: try $0.start(in: context.timeZone, now: context.now), in: context.timeZone) }
        var edit = SavingPlanEdit()
        (edit.amount, edit.fee, edit.every, edit.pause, edit.resume) = (amount, fee, every, pause, resume)
        (edit.today, edit.nextDay, edit.notes) = (today, nextDay, note)
        guard let plan = try context.session().repository.commit(.editSavingPlan(name, edit), names: context.names).applied.savingPlan else { return .success }
        if context.json {
            context.printJSON(SavingText.json(plan))
        } else {
            context.out("Changed saving plan '\(TextEscaping.escaped(plan.name))': \(plan.active ? "active" : "paused"), next due "
                        + "\(ISODate.dayText(plan.nextDueDay)).\n")
        }
        return .success
    }
}

struct SavingRemoveCommand: Command {
    static let spec = CommandSpec(name: "saving remove", summary: "Delete a saving plan (the buys it recorded stay)", arguments: "NAME",
                                  group: "Goals and habits", examples: ["bitpal saving remove weekly-btc"])

    var name: String

    init(parsing a: inout ArgumentList) throws { name = try a.popPositional("NAME") }

    func run(_ context: Context) throws -> ExitCode {
        let removed = try context.session().repository.commit(.removeSavingPlan(name), names: context.names).applied.name ?? name
        if context.json {
            context.printJSON(.object([("removed", .string(removed))]))
        } else {
            context.out("Removed saving plan '\(TextEscaping.escaped(removed))'; the buys it recorded stay.\n")
        }
        return .success
    }
}

struct SavingRunCommand: Command {
    static let spec = CommandSpec(
        name: "saving run", summary: "Carry out every due saving plan, each due date exactly once (for cron)",
        options: [OptionSpec("--dry-run", nil, "show what would be recorded, write nothing"),
                  OptionSpec("--quiet", nil, "print nothing unless something waits or fails")],
        group: "Goals and habits",
        details: """
        For every active automatic plan and every due date from its next due date up to today (local
        time), oldest first: a buy dated that day at the newest price at or before its end (fetched
        first for today when older than 60 s; a missed day of a coin with no price that day fetches the
        coin's daily history, up to 365 days back). The buys and each plan's next due date are written
        together under the portfolio's lock, so a repeated or concurrent run never buys a date twice.
        A date with no usable price (none within 7 days before it) or whose buy would overdraw cash
        waits with a warning; later plans still run. Exit 0 when nothing waits, 1 when a date waits,
        3 when it waits because the price service failed.
        """,
        examples: ["bitpal saving run", "bitpal saving run --dry-run", "15 6 * * * bitpal saving run --quiet"])

    var dryRun: Bool
    var quiet: Bool

    init(parsing a: inout ArgumentList) throws {
        dryRun = a.popFlag("--dry-run")
        quiet = a.popFlag("--quiet")
    }

    func run(_ context: Context) throws -> ExitCode {
        let session = try context.session()
        let result = try session.runSavingPlans(timeZone: context.timeZone, dryRun: dryRun, names: context.names)
        // A failed fetch is said even with --quiet (cron mails it): the dates it concerns wait.
        if let failure = result.serviceFailure { context.warn("fetching prices failed: \(failure)") }
        for w in result.waiting {
            context.warn("saving plan '\(TextEscaping.escaped(w.plan))' waits at \(ISODate.dayText(w.day)) (\(w.reason.rawValue)): \(w.detail)")
        }
        if context.json {
            context.printJSON(.object([
                ("recorded", .array(result.recorded.map { r in
                    .object([("plan", .string(r.plan)), ("date", .string(ISODate.dayText(r.day))), ("transactionId", .string(UUIDText.lowercased(r.buy.id))),
                             ("assetId", .string(r.buy.assetId)), ("amount", .string(r.buy.amountValue.text)),
                             ("total", .string((r.buy.totalValue ?? .zero).text)), ("price", .string((r.buy.priceValue ?? .zero).text))])
                })),
                ("waiting", .array(result.waiting.map { w in
                    .object([("plan", .string(w.plan)), ("date", .string(ISODate.dayText(w.day))), ("reason", .string(w.reason.rawValue))])
                })),
            ]))
        } else if !quiet {
            for r in result.recorded { context.out((dryRun ? "Would record " : "Recorded ") + SavingText.describe(r, context: context) + "\n") }
            // Only a person at a terminal hears that nothing was due; cron gets no mail.
            if result.recorded.isEmpty && result.waiting.isEmpty && context.environment.stdoutIsTerminal { context.out("Nothing is due.\n") }
        }
        if result.waiting.isEmpty { return .success }
        return result.waiting.contains(where: \.serviceFailed) ? .service : .failure
    }
}

struct SavingDueCommand: Command {
    static let spec = CommandSpec(
        name: "saving due", summary: "Due and overdue dates that wait: manual plans, and plans stuck without a price or cash",
        group: "Goals and habits", examples: ["bitpal saving due", "bitpal saving due --json"])

    init(parsing a: inout ArgumentList) throws {}

    func run(_ context: Context) throws -> ExitCode {
        let session = try context.session()
        let waiting = try session.waitingSavingDates(timeZone: context.timeZone, names: context.names)
        if context.json {
            context.printJSON(.object([("due", .array(waiting.map { w in
                .object([("plan", .string(w.plan)), ("date", .string(ISODate.dayText(w.day))), ("assetId", .string(w.assetId)),
                         ("amount", .string(w.amount.text)), ("reason", .string(w.reason.rawValue))])
            }))]))
            return .success
        }
        if waiting.isEmpty {
            context.out("Nothing waits: every due date is recorded or left to 'bitpal saving run'.\n")
            return .success
        }
        var table = Table([("PLAN", .left), ("DATE", .left), ("ASSET", .left), ("AMOUNT", .right), ("REASON", .left)])
        let book = try session.repository.loadSettings()
        for w in waiting {
            let currency = book.savingPlans.first(named: w.plan).map { book.currency(of: $0) } ?? "USD"
            table.add([TextEscaping.escaped(w.plan), ISODate.dayText(w.day), context.assetLabel(w.assetId).symbol.uppercased(),
                       SavingText.money(w.amount, currency), w.reason.rawValue])
        }
        context.out(table.render(style: context.style))
        return .success
    }
}

struct SavingConfirmCommand: Command {
    static let spec = CommandSpec(
        name: "saving confirm", summary: "Record a saving plan's oldest open due date by hand", arguments: "NAME",
        options: [OptionSpec("--price", "PRICE", "the price paid (default: the newest price at or before the end of the due date)"),
                  OptionSpec("--date", "DATE", "the day the buy happened (default the due date)")],
        group: "Goals and habits",
        examples: ["bitpal saving confirm monthly-etf --price 101.20", "bitpal saving confirm monthly-etf --price 101.20 --date 2024-06-03"])

    var name: String
    var price: Fixed18?
    var date: DateArgument?

    init(parsing a: inout ArgumentList) throws {
        name = try a.popPositional("NAME")
        price = try a.popOption("--price").map { try ArgumentList.fixed($0, field: "Price") }
        date = try a.popOption("--date").map { text throws(UsageError) in try ArgumentList.date(text, field: "--date") }
    }

    func run(_ context: Context) throws -> ExitCode {
        let session = try context.session()
        let when = try date?.record(in: context.timeZone, now: context.now)
        if let price, price.units == 0 { throw PortfolioError.priceNotPositive }
        let recorded = try session.confirmSavingDate(name: name, price: price, date: when, timeZone: context.timeZone, names: context.names)
        if context.json {
            context.printJSON(.object([("plan", .string(recorded.plan)), ("date", .string(ISODate.dayText(recorded.day))),
                                       ("transactionId", .string(UUIDText.lowercased(recorded.buy.id))),
                                       ("assetId", .string(recorded.buy.assetId)), ("amount", .string(recorded.buy.amountValue.text)),
                                       ("total", .string((recorded.buy.totalValue ?? .zero).text)),
                                       ("price", .string((recorded.buy.priceValue ?? .zero).text))]))
        } else {
            context.out("Recorded " + SavingText.describe(recorded, context: context) + "\n")
        }
        return .success
    }
}

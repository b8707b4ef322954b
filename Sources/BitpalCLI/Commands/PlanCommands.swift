import Foundation
import PortfolioCore

/// `plan add|list|show|edit|remove` (allocation-plans.md, "Investment plans").
enum PlanText {
    static let options = [
        OptionSpec("--target", "AMOUNT", "the total value to reach (in the portfolio's base currency)", required: true),
        OptionSpec("--by", "DATE", "when to reach it", required: true),
        OptionSpec("--monthly", "AMOUNT", "what you put in each month (for the projection)"),
        OptionSpec("--return", "PCT", "expected yearly return in percent (default 0)"),
        OptionSpec("--risk", "LEVEL", "very-low, low, moderate (default), high or very-high", choices: InvestmentPlan.Risk.allCases.map(\.rawValue)),
        OptionSpec("--note", "TEXT", "a note to keep with it"),
    ]

    static func risk(_ text: String?) throws(UsageError) -> InvestmentPlan.Risk? {
        guard let text else { return nil }
        guard let r = InvestmentPlan.Risk(rawValue: text.lowercased()) else {
            throw .invalidChoice(option: "--risk", value: text, choices: InvestmentPlan.Risk.allCases.map(\.rawValue))
        }
        return r
    }

    /// A plan's or a saving plan's name: the rule of every name bitpal keeps (a portfolio's).
    static func name(_ text: String) throws(UsageError) -> String {
        guard Portfolio.isValidName(text) else {
            throw .invalidValue(option: "NAME", value: text, reason: "a plan name is 1–40 letters, digits, '-', '_' or '.'")
        }
        return text
    }

    /// The plan and where it stands today.
    static func progress(_ plan: InvestmentPlan, book: Book, context: Context) throws -> PlanProgress {
        let session = try context.session()
        let portfolios: Set<String> = plan.portfolio.map { [$0] } ?? Set(book.portfolios.filter(\.active).map(\.name))
        let reports = try session.reports(book, portfolios: portfolios, refresh: false, names: context.names)
        let summary = reports.summary()
        return PlanProgress(plan: plan, currentValue: summary.money(summary.totalValue), today: context.now, timeZone: context.timeZone)
    }

    /// The plan's fields (`InvestmentPlan.fields`), its dates as days in `zone`, then where it stands.
    static func json(_ p: InvestmentPlan, _ g: PlanProgress, zone: TimeZone) -> JSONValue {
        func money(_ d: Decimal?) -> JSONValue { .optional(d.map(DecimalFormatting.money)) }
        let days: [String: JSONValue] = ["byDate": .string(Human.day(p.byDate, in: zone)), "startDate": .string(Human.day(p.startDate, in: zone))]
        return .object(InvestmentPlan.fields.pairs(p, replacing: days, adding: [
            ("currentValue", ReportJSON.money(g.currentValue)), ("progressPercentage", ReportJSON.percent(g.progressPercentage)),
            ("daysRemaining", .number(String(g.daysRemaining))), ("monthsRemaining", .number(String(g.monthsRemaining))),
            ("projectedTotal", money(g.projectedTotal)), ("onTrack", .bool(g.onTrack)), ("requiredMonthly", money(g.requiredMonthly)),
        ]))
    }

}

struct PlanAddCommand: Command {
    static let spec = CommandSpec(
        name: "plan add", summary: "A goal: a total value by a date", arguments: "NAME",
        options: PlanText.options + [OptionSpec("--start", "DATE", "the day the plan began (default today; shown only)"),
                                     OptionSpec("--all", nil, "every active portfolio (default: the chosen portfolio)")],
        group: "Goals and habits",
        details: "'bitpal plan show NAME' tells how far along it is, whether it is on track and what monthly amount would reach it.",
        examples: ["bitpal plan add retirement --target 1000000 --by 2050-01-01 --monthly 2000 --return 6"])

    var name: String
    var target: Fixed18
    var by: DateArgument
    var monthly: Fixed18?
    var expectedReturn: Fixed18?
    var start: DateArgument?
    var risk: InvestmentPlan.Risk?
    var note: String?
    var all: Bool

    init(parsing a: inout ArgumentList) throws {
        name = try PlanText.name(try a.popPositional("NAME"))
        guard let t = a.popOption("--target") else { throw UsageError.missingValue(option: "--target", valueName: "AMOUNT") }
        target = try ArgumentList.fixed(t, field: "Target")
        guard let b = a.popOption("--by") else { throw UsageError.missingValue(option: "--by", valueName: "DATE") }
        by = try ArgumentList.date(b, field: "--by")
        monthly = try a.popOption("--monthly").map { try ArgumentList.fixed($0, field: "Monthly") }
        expectedReturn = try a.popOption("--return").map { try ArgumentList.fixed($0, field: "Return") }
        start = try a.popOption("--start").map { text throws(UsageError) in try ArgumentList.date(text, field: "--start") }
        risk = try PlanText.risk(a.popOption("--risk"))
        note = a.popOption("--note")
        all = a.popFlag("--all")
    }

    func run(_ context: Context) throws -> ExitCode {
        let session = try context.session()
        let settings = try session.repository.loadSettings()
        if all && context.globals.portfolio != nil { throw UsageError.conflict("--all covers every active portfolio; leave out --portfolio") }
        let portfolio = all ? nil : try context.portfolio(in: settings).name
        let plan = InvestmentPlan(name: name, portfolio: portfolio, target: target, byDate: try by.start(in: context.timeZone, now: context.now),
                                  monthly: monthly, expectedReturn: expectedReturn ?? .zero,
                                  startDate: try start?.start(in: context.timeZone, now: context.now) ?? context.now, risk: risk ?? .moderate,
                                  notes: note.flatMap { $0.isEmpty ? nil : $0 })
        let book = try session.repository.commit(.addPlan(plan), names: context.names).book
        let g = try PlanText.progress(plan, book: book, context: context)
        if context.json {
            context.printJSON(PlanText.json(plan, g, zone: context.timeZone))
        } else {
            context.out("Added plan '\(TextEscaping.escaped(name))': \(Human.money(g.money(Exact36(target)))) by \(Human.day(plan.byDate, in: context.timeZone)). "
                        + "See it with: bitpal plan show \(name.contains(" ") ? "\"\(name)\"" : name)\n")
        }
        return .success
    }
}

struct PlanListCommand: Command {
    static let spec = CommandSpec(name: "plan list", summary: "Your plans: progress, projection, on track", group: "Goals and habits",
                                  examples: ["bitpal plan list", "bitpal plan list --json"])

    init(parsing a: inout ArgumentList) throws {}

    func run(_ context: Context) throws -> ExitCode {
        let book = try context.session().repository.loadBook()
        let rows = try book.plans.map { ($0, try PlanText.progress($0, book: book, context: context)) }
        if context.json {
            context.printJSON(.array(rows.map { PlanText.json($0.0, $0.1, zone: context.timeZone) }))
            return .success
        }
        if rows.isEmpty {
            context.out("No plans yet: add one with 'bitpal plan add retirement --target 1000000 --by 2050-01-01 --monthly 2000 --return 6'.\n")
            return .success
        }
        var table = Table([("NAME", .left), ("PORTFOLIO", .left), ("STATUS", .left), ("TARGET", .right), ("BY", .left), ("NOW", .right),
                           ("PROGRESS", .right), ("PROJECTED", .right), ("ON TRACK", .left), ("NEEDS MONTHLY", .right)])
        for (p, g) in rows {
            table.add([TextEscaping.escaped(p.name), TextEscaping.escaped(p.portfolio ?? "all"), p.status.rawValue, Human.money(g.money(Exact36(p.target))),
                       Human.day(p.byDate, in: context.timeZone), Human.money(g.money(g.currentValue)),
                       g.progressPercentage.map { DecimalFormatting.percent($0) + "%" } ?? "—", Human.money(g.projectedTotal, in: g.currency),
                       g.onTrack ? "yes" : "no", g.requiredMonthly.map { Human.money($0, in: g.currency) } ?? "—"])
        }
        context.out(table.render(style: context.style))
        return .success
    }
}

struct PlanShowCommand: Command {
    static let spec = CommandSpec(name: "plan show", summary: "One plan: progress, time left, projection, the monthly amount that reaches it",
                                  arguments: "NAME", group: "Goals and habits", examples: ["bitpal plan show retirement"])

    var name: String

    init(parsing a: inout ArgumentList) throws { name = try a.popPositional("NAME") }

    func run(_ context: Context) throws -> ExitCode {
        let book = try context.session().repository.loadBook()
        let p = book.plans[try book.planIndex(name)]
        let g = try PlanText.progress(p, book: book, context: context)
        if context.json {
            context.printJSON(PlanText.json(p, g, zone: context.timeZone))
            return .success
        }
        var rows = Table([("", .left), ("", .right), ("", .left)])
        rows.showsHeader = false
        rows.add(["Plan", TextEscaping.escaped(p.name), "\(p.status.rawValue), risk \(p.risk.rawValue)" + (p.notes.map { " — " + TextEscaping.escaped($0) } ?? "")])
        rows.add(["Portfolio", TextEscaping.escaped(p.portfolio ?? "all"), ""])
        rows.add(["Target", Human.money(g.money(Exact36(p.target))),
                  "by \(Human.day(p.byDate, in: context.timeZone)) (started \(Human.day(p.startDate, in: context.timeZone)))"])
        rows.add(["Now", Human.money(g.money(g.currentValue)), g.progressPercentage.map { DecimalFormatting.percent($0) + "% of the target" } ?? ""])
        rows.add(["Time left", "\(g.monthsRemaining) months", "\(g.daysRemaining) days"])
        rows.add(["Projected", Human.money(g.projectedTotal, in: g.currency),
                  "with \(p.monthly.map { Human.money(g.money(Exact36($0))) } ?? "nothing") a month at \(p.expectedReturn.text)% a year"])
        rows.add(["On track", g.onTrack ? "yes" : "no", ""])
        rows.add(["Needs monthly", g.requiredMonthly.map { Human.money($0, in: g.currency) } ?? "—",
                  g.requiredMonthly == nil ? "no month left" : "to reach the target"])
        context.out(rows.render(style: context.style))
        return .success
    }
}

struct PlanEditCommand: Command {
    static let spec = CommandSpec(
        name: "plan edit", summary: "Change a plan", arguments: "NAME",
        options: PlanText.options.map { var o = $0; o.required = false; return o } + [OptionSpec("--status", "STATUS", "active, paused, completed or cancelled",
                                                choices: InvestmentPlan.Status.allCases.map(\.rawValue))],
        group: "Goals and habits", examples: ["bitpal plan edit retirement --monthly 2500", "bitpal plan edit house --status completed"])

    var name: String
    var target: Fixed18?
    var by: DateArgument?
    var monthly: Fixed18?
    var expectedReturn: Fixed18?
    var risk: InvestmentPlan.Risk?
    var status: InvestmentPlan.Status?
    var note: String?

    init(parsing a: inout ArgumentList) throws {
        name = try a.popPositional("NAME")
        target = try a.popOption("--target").map { try ArgumentList.fixed($0, field: "Target") }
        by = try a.popOption("--by").map { text throws(UsageError) in try ArgumentList.date(text, field: "--by") }
        monthly = try a.popOption("--monthly").map { try ArgumentList.fixed($0, field: "Monthly") }
        expectedReturn = try a.popOption("--return").map { try ArgumentList.fixed($0, field: "Return") }
        risk = try PlanText.risk(a.popOption("--risk"))
        if let text = a.popOption("--status") {
            guard let s = InvestmentPlan.Status(rawValue: text.lowercased()) else {
                throw UsageError.invalidChoice(option: "--status", value: text, choices: InvestmentPlan.Status.allCases.map(\.rawValue))
            }
            status = s
        }
        note = a.popOption("--note")
        if target == nil && by == nil && monthly == nil && expectedReturn == nil && risk == nil && status == nil && note == nil {
            throw UsageError.conflict("nothing to change: give at least one of --target, --by, --monthly, --return, --risk, --status, --note")
        }
    }

    func run(_ context: Context) throws -> ExitCode {
        let session = try context.session()
        let byDate = try by?.start(in: context.timeZone, now: context.now)
        var edit = PlanEdit()
        (edit.target, edit.byDate, edit.monthly, edit.expectedReturn) = (target, byDate, monthly, expectedReturn)
        (edit.risk, edit.status, edit.notes) = (risk, status, note)
        let (done, book) = try session.repository.commit(.editPlan(name, edit), names: context.names)
        guard let plan = done.plan else { return .success }
        if context.json {
            context.printJSON(PlanText.json(plan, try PlanText.progress(plan, book: book, context: context), zone: context.timeZone))
        } else {
            context.out("Changed plan '\(TextEscaping.escaped(plan.name))'.\n")
        }
        return .success
    }
}

struct PlanRemoveCommand: Command {
    static let spec = CommandSpec(name: "plan remove", summary: "Delete a plan", arguments: "NAME", group: "Goals and habits",
                                  examples: ["bitpal plan remove house"])

    var name: String

    init(parsing a: inout ArgumentList) throws { name = try a.popPositional("NAME") }

    func run(_ context: Context) throws -> ExitCode {
        let removed = try context.session().repository.commit(.removePlan(name), names: context.names).applied.name ?? name
        if context.json {
            context.printJSON(.object([("removed", .string(removed))]))
        } else {
            context.out("Removed plan '\(TextEscaping.escaped(removed))'.\n")
        }
        return .success
    }
}

import Foundation
import PortfolioCore

/// `target set|clear|show` and `allocation` (allocation-plans.md).
enum TargetText {
    static func percent(_ p: Fixed18) -> String { p.text }

    /// The targets' fields (`Targets.fields`) with the weights as a list, `targets`: `[{"class", "target"}]`;
    /// both `null` when there are none.
    static func json(_ t: Targets?) -> JSONValue {
        guard let t else { return .object([("by", .null), ("targets", .null)]) }
        let weights = t.weights.map { w in JSONValue.object([("class", .string(w.target)), ("target", .string(w.percent.text))]) }
        return .object(Targets.fields.pairs(t, leaving: ["weights"], adding: [("targets", .array(weights))]))
    }
}

struct TargetSetCommand: Command {
    static let spec = CommandSpec(
        name: "target set", summary: "Set the portfolio's target mix (percentages adding up to 100)", arguments: "CLASS=PCT...",
        options: [OptionSpec("--by", "BASIS", "type (default: asset types, and cash) or asset (assets, and cash)", choices: Targets.Basis.allCases.map(\.rawValue))],
        group: "Goals and habits",
        details: """
        Replaces the portfolio's target. By type, a CLASS is an asset type (crypto, stock, etf, bond,
        mutual-fund, commodity, real-estate, other) or cash, the portfolio's cash (it must track
        cash); by asset, an asset (a registered code or a coin) or cash. The percentages are plain
        decimals ≥ 0 and must add up to exactly 100. 'bitpal allocation' compares the mix with it.
        """,
        examples: ["bitpal target set stock=60 bond=30 cash=10", "bitpal target set --by asset AAPL=40 VOO=40 bitcoin=20"])

    var by: Targets.Basis
    var pairs: [(String, Fixed18)]

    init(parsing a: inout ArgumentList) throws {
        let basis = a.popOption("--by")
        if let basis, Targets.Basis(rawValue: basis.lowercased()) == nil {
            throw UsageError.invalidChoice(option: "--by", value: basis, choices: Targets.Basis.allCases.map(\.rawValue))
        }
        by = basis.flatMap { Targets.Basis(rawValue: $0.lowercased()) } ?? .type
        let words = a.popRemaining()
        if words.isEmpty { throw UsageError.missingArgument("CLASS=PCT", usage: "bitpal target set CLASS=PCT...") }
        pairs = try words.map { word in
            let parts = word.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty else {
                throw UsageError.invalidValue(option: "CLASS=PCT", value: word, reason: "write a class, '=' and a percentage, like stock=60")
            }
            return (String(parts[0]), try ArgumentList.fixed(String(parts[1]), field: "Target of \(parts[0])"))
        }
        if by == .type {
            for (c, _) in pairs where c.lowercased() != "cash" && AssetType(rawValue: c.lowercased()) == nil {
                throw UsageError.invalidChoice(option: "CLASS", value: c, choices: AssetType.allCases.map(\.rawValue))
            }
        }
    }

    func run(_ context: Context) throws -> ExitCode {
        let session = try context.session()
        let settings = try session.repository.loadSettings()
        var weights: [Targets.Weight] = []
        for (c, p) in pairs {
            let target: String
            if c.lowercased() == "cash" {
                target = "cash"
            } else if by == .type {
                target = c.lowercased()
            } else {
                target = try session.resolver.resolveAsset(c, in: settings).id
            }
            if weights.contains(where: { $0.target == target }) { throw UsageError.conflict("'\(TextEscaping.escaped(c))' is given twice") }
            weights.append(Targets.Weight(target, p))
        }
        let targets = Targets(by: by, weights: weights)
        guard let sum = targets.sum, sum == Fixed18(units: 100 * Fixed18.scale) else {
            throw CommandFailure("The targets add up to \(targets.sum?.text ?? "more than can be counted"), not 100")
        }
        let name = try context.portfolio(in: settings).name
        guard let portfolio = try session.repository.commit(.setTargets(portfolio: name, targets), names: context.names).applied.portfolio else { return .success }
        if context.json {
            context.printJSON(TargetText.json(portfolio.targets))
        } else {
            context.out("Target of '\(TextEscaping.escaped(name))' by \(by.rawValue): "
                        + weights.map { "\(context.targetLabel($0.target, by: by)) \($0.percent.text)%" }.joined(separator: ", ") + ".\n")
        }
        return .success
    }
}

struct TargetClearCommand: Command {
    static let spec = CommandSpec(name: "target clear", summary: "Remove the portfolio's target mix", group: "Goals and habits",
                                  examples: ["bitpal target clear"])

    init(parsing a: inout ArgumentList) throws {}

    func run(_ context: Context) throws -> ExitCode {
        let session = try context.session()
        let name = try context.portfolio(in: try session.repository.loadSettings()).name
        let had = try session.repository.commit(.setTargets(portfolio: name, nil), names: context.names).applied.changed
        if context.json {
            context.printJSON(TargetText.json(nil))
        } else {
            context.out(had ? "Cleared the target of '\(TextEscaping.escaped(name))'.\n" : "'\(TextEscaping.escaped(name))' had no target.\n")
        }
        return .success
    }
}

struct TargetShowCommand: Command {
    static let spec = CommandSpec(name: "target show", summary: "The portfolio's target mix", group: "Goals and habits",
                                  examples: ["bitpal target", "bitpal target show --json"])

    init(parsing a: inout ArgumentList) throws {}

    func run(_ context: Context) throws -> ExitCode {
        let session = try context.session()
        // The whole file, not its settings alone: a truncated store is refused as every command refuses it.
        let p = try context.portfolio(in: try session.repository.loadBook())
        if context.json {
            context.printJSON(TargetText.json(p.targets))
            return .success
        }
        guard let t = p.targets else {
            context.out("'\(TextEscaping.escaped(p.name))' has no target; set one with 'bitpal target set stock=60 bond=30 cash=10'.\n")
            return .success
        }
        var table = Table([("CLASS", .left), ("TARGET %", .right)])
        for w in t.weights { table.add([context.targetLabel(w.target, by: t.by), w.percent.text]) }
        context.out("Target of '\(TextEscaping.escaped(p.name))' by \(t.by.rawValue):\n" + table.render(style: context.style))
        return .success
    }
}

struct AllocationCommand: Command {
    static let spec = CommandSpec(
        name: "allocation", summary: "The mix against its target: weights, drift, where the next deposit goes",
        options: [OptionSpec("--deposit", "AMOUNT", "split new money over the classes without selling"),
                  OptionSpec("--rebalance", nil, "the buys (+) and sells (−) that reach every target")],
        group: "Goals and habits",
        details: """
        One row per class (every target class, and every held class at target 0): value, weight,
        target, drift in points and in money (value − target × total). With --deposit D, each
        receiving class ends exactly at its target share of the receiving classes (classes already
        over it get nothing); amounts are in cents and add up exactly to D. Unpriced holdings are
        left out with a warning.
        """,
        examples: ["bitpal allocation", "bitpal allocation --deposit 3000", "bitpal allocation --rebalance --json"])

    var deposit: Fixed18?
    var rebalance: Bool

    init(parsing a: inout ArgumentList) throws {
        deposit = try a.popOption("--deposit").map { try ArgumentList.fixed($0, field: "Deposit") }
        rebalance = a.popFlag("--rebalance")
        if deposit != nil && rebalance { throw UsageError.conflict("--deposit and --rebalance are two different questions; give one") }
    }

    func run(_ context: Context) throws -> ExitCode {
        let reports = try context.reports(refresh: true, all: false)
        let session = try context.session()
        let portfolio = try context.portfolio(in: try session.repository.loadSettings())
        let noTarget = "'\(TextEscaping.escaped(portfolio.name))' has no target; set one with 'bitpal target set stock=60 bond=30 cash=10'"
        if portfolio.targets == nil && (deposit != nil || rebalance) { throw CommandFailure(noTarget) }
        // Without a target every held class is shown at target 0 (allocation-plans.md), by asset type.
        let targets = portfolio.targets ?? Targets(by: .type, weights: [])
        if portfolio.targets == nil { context.note(noTarget + ".") }
        let move: AllocationMove = deposit.map { .deposit($0) } ?? (rebalance ? .rebalance : .none)
        let report = reports.allocation(targets, move: move)
        if !report.unpriced.isEmpty {
            context.warn("left out for want of a price: \(report.unpriced.map { TextEscaping.escaped($0.uppercased()) }.joined(separator: ", "))")
        }
        if context.json {
            context.printJSON(.object([
                ("by", .string(report.by.rawValue)), ("currency", .string(reports.baseCurrency)), ("total", ReportJSON.money(report.total)),
                ("classes", .array(report.rows.map { r in
                    .object([("class", .string(r.target)), ("value", ReportJSON.money(r.value)), ("weight", ReportJSON.percent(r.weight)),
                             ("target", .string(r.targetPercent.text)), ("drift", ReportJSON.percent(r.drift)),
                             ("driftValue", ReportJSON.money(r.driftValue)), ("suggested", ReportJSON.money(r.suggested))])
                })),
            ]))
            return .success
        }
        let style = context.style
        let extra: [(String, Table.Alignment)] = deposit != nil ? [("DEPOSIT", .right)] : rebalance ? [("BUY/SELL", .right)] : []
        var table = Table([("CLASS", .left), ("VALUE", .right), ("WEIGHT", .right), ("TARGET", .right), ("DRIFT", .right),
                           ("DRIFT VALUE", .right)] + extra)
        for r in report.rows {
            let drift = r.drift.map { ($0 > 0 ? "+" : "") + DecimalFormatting.percent($0) + " pts" } ?? "—"
            let cells: [Table.Cell] = [
                Table.Cell(context.targetLabel(r.target, by: report.by)),
                Table.Cell(Human.money(report.money(r.value))), Table.Cell(r.weight.map { DecimalFormatting.percent($0) + "%" } ?? "—"),
                Table.Cell(r.targetPercent.text + "%"), Table.Cell(drift), Table.Cell(Human.signedMoney(report.money(r.driftValue))),
            ]
            let suggested = r.suggested.map { deposit != nil ? Human.money(report.money($0)) : Human.signedMoney(report.money($0)) }
            table.add(cells + (extra.isEmpty ? [] : [Table.Cell(suggested ?? "")]))
        }
        table.addFooter([Table.Cell("TOTAL"), Table.Cell(Human.money(report.money(report.total))), Table.Cell(""), Table.Cell(""), Table.Cell(""), Table.Cell("")]
                        + (extra.isEmpty ? [] : [Table.Cell(deposit.map { Human.money(report.money(Exact36($0))) } ?? Human.money(report.money(.zero)))]))
        context.out(table.render(style: style))
        return .success
    }
}

extension Context {
    /// A target class for people: `cash`, an asset type, or an asset's symbol.
    func targetLabel(_ target: String, by: Targets.Basis) -> String {
        if target == "cash" || by == .type { return target }
        return TextEscaping.escaped(assetLabel(target).symbol.uppercased())
    }
}

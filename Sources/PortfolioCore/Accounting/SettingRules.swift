import Foundation

/// A rule broken by a record of the book that is not a transaction: a saving plan, an investment
/// plan, a target, a manual price, a rate set by hand, an alert or a registered asset.
///
/// `check` lists them, and every write refuses a change that would add one (the same rules).
public struct SettingProblem: Equatable, Sendable {
    /// What the record is: `saving plan 'weekly'`, `the target of 'main'`.
    public var subject: String
    /// What is wrong with it: `names portfolio 't', which does not exist`.
    public var fault: String

    public var description: String { subject + " " + fault }
}

extension SavingPlan {
    /// The last day bitpal stores: 9999-12-31.
    public static let lastStorableDay = ISODate.days(fromCivil: 9999, 12, 31)

    /// Whether the plan may be due on `day`: the due date after it must still be a day bitpal stores,
    /// since recording `day` makes that one the next.
    public func mayBeDue(on day: Int64) -> Bool { day <= Self.lastStorableDay && due(after: day) <= Self.lastStorableDay }
}

extension Book {
    /// Every rule the records other than transactions break, in the order of the file's sections.
    public func settingProblems() -> [SettingProblem] {
        var problems: [SettingProblem] = []
        let portfolioNames = Set(portfolios.map(\.name))
        let registered = Set(assets.map(\.id))
        func unknownAsset(_ id: String) -> Bool { Asset.isRegisteredID(id) && !registered.contains(id) }
        func add(_ subject: String, _ fault: String) { problems.append(SettingProblem(subject: subject, fault: fault)) }
        func quoted(_ name: String) -> String { "'\(TextEscaping.escaped(name))'" }

        if !portfolioNames.contains(defaultPortfolio) {
            add("the default portfolio", "is \(quoted(defaultPortfolio)), which does not exist")
        }
        for a in assets where a.id == Asset.reservedCashCode {
            add("asset CASH", "uses the name of a portfolio's cash, which no asset may take")
        }
        for p in portfolios {
            guard let targets = p.targets else { continue }
            let subject = "the target of \(quoted(p.name))"
            if let sum = targets.sum, sum != Fixed18(units: 100 * Fixed18.scale) {
                add(subject, "adds up to \(sum.text), not 100")
            } else if targets.sum == nil {
                add(subject, "adds up to more than can be computed, not 100")
            }
            if targets.by == .asset {
                for w in targets.weights where unknownAsset(w.target) || w.target == Asset.reservedCashCode {
                    add(subject, "names \(TextEscaping.escaped(w.target)), which is not a registered asset")
                }
            }
        }
        for q in manualPrices {
            let subject = "the manual price of \(TextEscaping.escaped(q.coinId))"
            if unknownAsset(q.coinId) { add(subject, "is for an asset that is not registered") }
            if !CurrencyCode.isSupported(q.currency) { add(subject, "is in \(quoted(q.currency)), not a supported currency") }
            if q.price <= 0 { add(subject, "is not greater than zero") }
        }
        for r in fxRates {
            let subject = "the rate \(TextEscaping.escaped(r.from))→\(TextEscaping.escaped(r.to)) of \(ISODate.format(r.date))"
            if !CurrencyCode.isSupported(r.from) || !CurrencyCode.isSupported(r.to) { add(subject, "names a currency bitpal does not support") }
            if r.from == r.to { add(subject, "converts a currency into itself") }
            if r.rate.units <= 0 { add(subject, "is not greater than zero") }
        }
        for plan in plans {
            let subject = "investment plan \(quoted(plan.name))"
            if !Self.isPrintableName(plan.name) { add(subject, "has a name with control characters") }
            if let p = plan.portfolio, !portfolioNames.contains(p) { add(subject, "names portfolio \(quoted(p)), which does not exist") }
            if plan.target.units <= 0 { add(subject, "has a target that is not greater than zero") }
            if !plan.projectionIsComputable {
                add(subject, "grows past what bitpal computes by its date (over 10^60 times at \(plan.expectedReturn.text)% a year): "
                    + "choose a nearer date or a lower return")
            }
        }
        for plan in savingPlans {
            let subject = "saving plan \(quoted(plan.name))"
            if !Self.isPrintableName(plan.name) { add(subject, "has a name with control characters") }
            if !portfolioNames.contains(plan.portfolio) { add(subject, "names portfolio \(quoted(plan.portfolio)), which does not exist") }
            if unknownAsset(plan.assetId) { add(subject, "buys \(TextEscaping.escaped(plan.assetId)), which is not a registered asset") }
            if plan.amount.units <= 0 { add(subject, "has an amount that is not greater than zero") }
            if plan.fee >= plan.amount { add(subject, "has a fee (\(plan.fee.text)) that is not below its amount (\(plan.amount.text))") }
            if let last = plan.lastExecutedDay, plan.nextDueDay <= last {
                add(subject, "is next due on \(ISODate.dayText(plan.nextDueDay)), not after its last recorded date "
                    + "\(ISODate.dayText(last)): a due date is never recorded twice")
            }
            if plan.nextDueDay < plan.startDay {
                add(subject, "is next due on \(ISODate.dayText(plan.nextDueDay)), before it starts (\(ISODate.dayText(plan.startDay)))")
            }
            if !plan.mayBeDue(on: plan.nextDueDay) {
                add(subject, "is next due on \(ISODate.dayText(plan.nextDueDay)), too late: the due date after it would fall "
                    + "past 9999-12-31, the last day bitpal keeps")
            }
        }
        for alert in alerts {
            let subject = "alert \(alert.id)"
            if unknownAsset(alert.assetId) { add(subject, "watches \(TextEscaping.escaped(alert.assetId)), which is not a registered asset") }
            if !CurrencyCode.isSupported(alert.currency) { add(subject, "is in \(quoted(alert.currency)), not a supported currency") }
        }
        return problems
    }

    /// Whether a name (kept from an older bitpal, which took any text on one line) has no control or
    /// direction-changing characters: what a terminal would act on instead of showing.
    static func isPrintableName(_ name: String) -> Bool {
        !name.isEmpty && name.unicodeScalars.allSatisfy { s in
            !(s.properties.generalCategory == .control || s.properties.generalCategory == .format)
        }
    }

    /// The problems of `settingProblems()` this book has that `original` did not (as many times as it had each).
    public func settingProblemsIntroduced(since original: Book) -> [SettingProblem] {
        let after = settingProblems()
        if after.isEmpty { return [] }
        var before: [String: Int] = [:]
        for p in original.settingProblems() { before[p.description, default: 0] += 1 }
        return after.filter { p in
            guard let n = before[p.description], n > 0 else { return true }
            before[p.description] = n - 1
            return false
        }
    }
}

extension Asset {
    /// The code no asset may take: `CASH` stands for a portfolio's cash in targets and reports.
    public static let reservedCashCode = "CASH"
}

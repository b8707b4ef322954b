import Foundation

/// What `portfolio edit` changes of one portfolio.
public struct PortfolioEdit: Sendable {
    public var name: String?
    /// A currency code as typed; the base changes only while nothing is stored in the old one.
    public var currency: String?
    /// An empty description removes it.
    public var description: String?
    public var active: Bool?
    public var method: CostBasisMethod?
    public var trackCash: Bool?
    /// A deposit labelled initial capital, made when cash is turned on.
    public var openingDeposit: (amount: Fixed18, date: RecordDate)?

    public init() {}
}

/// What `asset edit` changes of one registered asset (type and currency only while nothing uses it).
public struct AssetEdit: Sendable {
    public var name: String?
    public var type: AssetType?
    public var currency: String?
    /// Empty removes it.
    public var market: String?
    /// Empty removes it.
    public var notes: String?
    /// A new quote source (`.some(nil)`: by hand from now on; the quotes fetched stay).
    public var quote: AssetQuoteSource??

    public init() {}
}

/// What `plan edit` changes of one investment plan.
public struct PlanEdit: Sendable {
    public var target: Fixed18?
    public var byDate: Date?
    /// Zero removes it.
    public var monthly: Fixed18?
    public var expectedReturn: Fixed18?
    public var risk: InvestmentPlan.Risk?
    public var status: InvestmentPlan.Status?
    /// Empty removes it.
    public var notes: String?

    public init() {}
}

/// What `saving edit` changes of one saving plan.
public struct SavingPlanEdit: Sendable {
    public var amount: Fixed18?
    public var fee: Fixed18?
    /// A new cadence counts from the next due date.
    public var every: SavingPlan.Frequency?
    public var pause = false
    /// Resumes from the first due date on or after `today` (or the next due date, when later).
    public var resume = false
    public var today: Int64 = 0
    /// The first due date on or after this day becomes the next.
    public var nextDay: Int64?
    /// Empty removes it.
    public var notes: String?

    public init() {}
}

/// Every change of the book's settings: portfolios, assets, targets, plans, saving plans, alerts,
/// rates and prices set by hand, and the watchlist. With `TransactionChange`, the one door through
/// which the book changes: `Book.apply` holds every rule, and the store checks the whole book
/// (`SettingRules`) before it commits.
public enum SettingChange: Sendable {
    case addPortfolio(Portfolio, openingDeposit: (amount: Fixed18, date: RecordDate)?)
    case editPortfolio(String, PortfolioEdit)
    case setDefaultPortfolio(String)
    case removePortfolio(String)
    case addAsset(Asset)
    case editAsset(String, AssetEdit)
    /// With `withTransactions`, its transactions (and the other legs of their links) go with it.
    case removeAsset(String, withTransactions: Bool)
    /// `nil` clears them.
    case setTargets(portfolio: String, Targets?)
    case addPlan(InvestmentPlan)
    case editPlan(String, PlanEdit)
    case removePlan(String)
    case addSavingPlan(SavingPlan)
    case editSavingPlan(String, SavingPlanEdit)
    case removeSavingPlan(String)
    /// An alert on an asset (its id given by the book: one more than the largest in use).
    case addAlert(assetId: String, condition: PriceAlert.Condition, threshold: Fixed18, repeats: Bool)
    case removeAlert(Int)
    case setRate(FXRate)
    case setPrice(Quote)
    /// Coin ids; those already watched are skipped.
    case watch([String], at: Date)
    case unwatch([String])
}

/// What a setting change did: the record it made or changed, or what it removed.
public struct SettingApplied: Sendable {
    /// Whether anything changed (nothing is written otherwise).
    public var changed = true
    public var portfolio: Portfolio?
    public var asset: Asset?
    public var plan: InvestmentPlan?
    public var savingPlan: SavingPlan?
    public var alert: PriceAlert?
    /// The stored name of what was chosen or removed (a portfolio, a plan, a saving plan).
    public var name: String?
    /// Transactions removed with an asset.
    public var removedTransactions = 0
    /// Coins a watch added and skipped.
    public var added: [String] = [], skipped: [String] = []

    public init() {}
}

extension Book {
    /// Applies a setting change by its rules; see `SettingChange`.
    public mutating func apply(_ change: SettingChange, now: Date) throws -> SettingApplied {
        var done = SettingApplied()
        switch change {
        case let .addPortfolio(p, deposit):
            if portfolio(named: p.name) != nil { throw PortfolioError.portfolioExists(p.name) }
            portfolios.append(p)
            if let deposit { add([try openingDeposit(deposit, into: p, now: now)]) }
            done.portfolio = p
        case let .editPortfolio(name, e): done.portfolio = try editPortfolio(name, e, now: now)
        case let .setDefaultPortfolio(name):
            guard let p = portfolio(named: name) else { throw PortfolioError.portfolioNotFound(name) }
            defaultPortfolio = p.name
            done.name = p.name
        case let .removePortfolio(name):
            guard let p = portfolio(named: name) else { throw PortfolioError.portfolioNotFound(name) }
            if portfolios.count == 1 { throw PortfolioError.lastPortfolio(p.name) }
            if defaultPortfolio == p.name { throw PortfolioError.defaultPortfolioRemoval(p.name) }
            let count = lineCount(portfolio: p.name)
            if count > 0 { throw PortfolioError.portfolioInUse(name: p.name, count: count) }
            if let plan = savingPlans.first(where: { $0.portfolio == p.name }) {
                throw PortfolioError.refused("Saving plan '\(TextEscaping.escaped(plan.name))' buys into '\(TextEscaping.escaped(p.name))'; "
                    + "remove it first ('bitpal saving remove')")
            }
            portfolios.removeAll { $0.name == p.name }
            done.name = p.name
        case let .addAsset(a):
            if asset(id: a.id) != nil { throw PortfolioError.assetExists(a.id) }
            assets.append(a)
            done.asset = a
        case let .editAsset(code, e): done.asset = try editAsset(code, e)
        case let .removeAsset(code, withTransactions): done.removedTransactions = try removeAsset(code, withTransactions: withTransactions)
        case let .setTargets(name, targets):
            guard let i = portfolios.firstIndex(where: { $0.name == name }) else { throw PortfolioError.portfolioNotFound(name) }
            if let targets, targets.weights.contains(where: { $0.target == "cash" }), !portfolios[i].trackCash {
                throw PortfolioError.cashNotTracked(name)
            }
            done.changed = targets != nil || portfolios[i].targets != nil
            portfolios[i].targets = targets
            done.portfolio = portfolios[i]
        case let .addPlan(plan):
            if plans.contains(where: { $0.name.lowercased() == plan.name.lowercased() }) {
                throw PortfolioError.refused("A plan named '\(TextEscaping.escaped(plan.name))' exists already")
            }
            plans.append(plan)
            done.plan = plan
        case let .editPlan(name, e):
            let i = try planIndex(name)
            var p = plans[i]
            if let target = e.target { p.target = target }
            if let byDate = e.byDate { p.byDate = byDate }
            if let monthly = e.monthly { p.monthly = monthly.units == 0 ? nil : monthly }
            if let expectedReturn = e.expectedReturn { p.expectedReturn = expectedReturn }
            if let risk = e.risk { p.risk = risk }
            if let status = e.status { p.status = status }
            if let notes = e.notes { p.notes = notes.isEmpty ? nil : notes }
            plans[i] = p
            done.plan = p
        case let .removePlan(name): done.name = plans.remove(at: try planIndex(name)).name
        case let .addSavingPlan(plan):
            if savingPlans.first(named: plan.name) != nil {
                throw PortfolioError.refused("A saving plan named '\(TextEscaping.escaped(plan.name))' exists already")
            }
            savingPlans.append(plan)
            done.savingPlan = plan
        case let .editSavingPlan(name, e): done.savingPlan = try editSavingPlan(name, e)
        case let .removeSavingPlan(name): done.name = savingPlans.remove(at: try savingPlanIndex(name)).name
        case let .addAlert(assetId, condition, threshold, repeats):
            let currency = asset(id: assetId)?.currency ?? portfolio(named: defaultPortfolio)?.baseCurrency ?? "USD"
            // One more than the largest id in use; the smallest free one if that would overflow (a hand edit).
            let used = Set(alerts.map(\.id))
            let after = (used.max() ?? 0).addingReportingOverflow(1)
            let id = after.overflow ? (1...).first { !used.contains($0) } ?? 1 : after.partialValue
            let a = PriceAlert(id: id, assetId: assetId, condition: condition, threshold: threshold, currency: currency, repeats: repeats)
            alerts.append(a)
            done.alert = a
        case let .removeAlert(id):
            guard let i = alerts.firstIndex(where: { $0.id == id }) else {
                throw PortfolioError.refused("No alert has the id \(id); 'bitpal alert list' shows them")
            }
            done.alert = alerts.remove(at: i)
        case let .setRate(r):
            if r.from == r.to { throw PortfolioError.refused("An exchange rate needs two different currencies (both are \(r.from))") }
            if r.rate.units == 0 { throw PortfolioError.refused("Rate must be greater than zero") }
            if r.date > now { throw PortfolioError.futureDate }
            fxRates.append(r)
        case let .setPrice(q):
            if q.price <= 0 { throw PortfolioError.priceNotPositive }
            if q.time > now { throw PortfolioError.refused("Price date cannot be in the future") }
            manualPrices.append(q)
        case let .watch(ids, date):
            var seen = Set(watchlist.map(\.coinId))
            for id in ids {
                if seen.contains(id) {
                    if !done.skipped.contains(id) { done.skipped.append(id) }
                    continue
                }
                seen.insert(id)
                done.added.append(id)
                watchlist.append(WatchEntry(coinId: id, dateAdded: date))
            }
            done.changed = !done.added.isEmpty
        case let .unwatch(ids):
            for id in ids {
                guard let i = watchlist.firstIndex(where: { $0.coinId == id }) else { throw PortfolioError.notWatched(coinId: id) }
                watchlist.remove(at: i)
            }
        }
        return done
    }

    /// The lines `portfolio` has in `list`: its records, a link's two legs once.
    public func lineCount(portfolio: String) -> Int {
        var count = 0
        var links = Set<UUID>()
        for t in transactions where t.portfolio == portfolio {
            if let link = t.linkedId, !links.insert(link).inserted { continue }
            count += 1
        }
        return count
    }

    /// How many transactions and manual prices name the asset `id`.
    public func usage(ofAsset id: String) -> (transactions: Int, prices: Int) {
        (transactions.reduce(0) { $0 + ($1.assetId == id ? 1 : 0) }, manualPrices.reduce(0) { $0 + ($1.coinId == id ? 1 : 0) })
    }

    /// Where the investment plan `name` (any case) is.
    public func planIndex(_ name: String) throws -> Int {
        guard let i = plans.firstIndex(where: { $0.name.lowercased() == name.lowercased() }) else {
            throw PortfolioError.refused("No plan is named '\(TextEscaping.escaped(name))'; 'bitpal plan list' shows them")
        }
        return i
    }

    /// Where the saving plan `name` (any case) is.
    public func savingPlanIndex(_ name: String) throws -> Int {
        guard let i = savingPlans.firstIndex(where: { $0.name.lowercased() == name.lowercased() }) else { throw SavingPlanError.notFound(name) }
        return i
    }

    /// A portfolio's opening deposit, labelled initial capital, checked on its own.
    private func openingDeposit(_ d: (amount: Fixed18, date: RecordDate), into p: Portfolio, now: Date) throws -> Transaction {
        let t = try transaction(RecordRequest(portfolio: p.name, type: .deposit, amount: d.amount, currency: p.baseCurrency, date: d.date,
                                              notes: "initial capital"))
        try ValueRules.check(t, now: now)
        return t
    }

    private mutating func editPortfolio(_ name: String, _ e: PortfolioEdit, now: Date) throws -> Portfolio {
        guard let old = portfolio(named: name), let i = portfolios.firstIndex(of: old) else { throw PortfolioError.portfolioNotFound(name) }
        var p = old
        if let newName = e.name, newName != old.name {
            if let other = portfolio(named: newName), other.name != old.name { throw PortfolioError.portfolioExists(newName) }
            p.name = newName
            for j in transactions.indices where transactions[j].portfolio == old.name { transactions[j].portfolio = newName }
            if defaultPortfolio == old.name { defaultPortfolio = newName }
            // Plans follow in the same write.
            for j in plans.indices where plans[j].portfolio == old.name { plans[j].portfolio = newName }
            for j in savingPlans.indices where savingPlans[j].portfolio == old.name { savingPlans[j].portfolio = newName }
        }
        if let currency = e.currency {
            guard let code = CurrencyCode.parse(currency)?.code else { throw PortfolioError.unsupportedCurrency(currency) }
            if code != p.baseCurrency {
                // Every figure stored in the portfolio is in its base: the base changes only while there are none.
                let used = transactions.contains { $0.portfolio == old.name } || savingPlans.contains { $0.portfolio == old.name }
                    || plans.contains { $0.portfolio == old.name }
                if used {
                    throw PortfolioError.refused("'\(TextEscaping.escaped(old.name))' has transactions or plans in \(p.baseCurrency), so its base "
                        + "currency cannot change; make a new portfolio with 'bitpal portfolio add NAME --currency \(code)'")
                }
                p.baseCurrency = code
            }
        }
        if let description = e.description { p.description = description.isEmpty ? nil : description }
        if let active = e.active { p.active = active }
        if let method = e.method { p.costBasisMethod = method }
        if let on = e.trackCash {
            if !on, transactions.contains(where: { $0.portfolio == p.name && $0.rule.isCashOnly($0) }) {
                throw PortfolioError.refused("Portfolio '\(TextEscaping.escaped(p.name))' has cash records; delete them before turning cash off")
            }
            p.trackCash = on
        }
        portfolios[i] = p
        if p.trackCash, let deposit = e.openingDeposit { add([try openingDeposit(deposit, into: p, now: now)]) }
        return p
    }

    private mutating func editAsset(_ code: String, _ e: AssetEdit) throws -> Asset {
        guard let i = assets.firstIndex(where: { $0.id == code }) else { throw PortfolioError.assetNotFound(code) }
        var a = assets[i]
        let used = usage(ofAsset: code)
        if (e.type.map { $0 != a.type } ?? false) || (e.currency.map { $0 != a.currency } ?? false), used.transactions + used.prices > 0 {
            throw PortfolioError.assetLocked(code)
        }
        if let name = e.name { a.name = name }
        if let type = e.type { a.type = type }
        if let currency = e.currency { a.currency = currency }
        if let market = e.market { a.market = market.isEmpty ? nil : market }
        if let notes = e.notes { a.notes = notes.isEmpty ? nil : notes }
        if let quote = e.quote { a.quote = quote }
        assets[i] = a
        return a
    }

    private mutating func removeAsset(_ code: String, withTransactions: Bool) throws -> Int {
        guard asset(id: code) != nil else { throw PortfolioError.assetNotFound(code) }
        let used = usage(ofAsset: code).transactions
        if used > 0 && !withTransactions { throw PortfolioError.assetInUse(id: code, count: used) }
        if let plan = savingPlans.first(where: { $0.assetId == code }) {
            throw PortfolioError.refused("Saving plan '\(TextEscaping.escaped(plan.name))' buys \(code); remove it first ('bitpal saving remove')")
        }
        if let alert = alerts.first(where: { $0.assetId == code }) {
            throw PortfolioError.refused("Alert \(alert.id) watches \(code); remove it first ('bitpal alert remove \(alert.id)')")
        }
        var indices = Set<Int>()
        for i in transactions.indices where transactions[i].assetId == code { indices.formUnion(legs(of: i)) }
        delete(at: indices)
        assets.removeAll { $0.id == code }
        manualPrices.removeAll { $0.coinId == code }
        return indices.count
    }

    private mutating func editSavingPlan(_ name: String, _ e: SavingPlanEdit) throws -> SavingPlan {
        let i = try savingPlanIndex(name)
        var p = savingPlans[i]
        if let amount = e.amount { p.amount = amount }
        if let fee = e.fee { p.fee = fee }
        guard p.amount.units > 0 else { throw PortfolioError.amountNotPositive }
        guard p.fee < p.amount else { throw PortfolioError.refused("The fee (\(p.fee.text)) must be below the amount (\(p.amount.text))") }
        if let every = e.every, every != p.frequency {
            // The new cadence counts from the next due date.
            p.frequency = every
            p.startDay = p.nextDueDay
        }
        if e.pause { p.active = false }
        if e.resume && !p.active {
            p.active = true
            p.nextDueDay = p.firstDue(onOrAfter: max(e.today, p.nextDueDay))
        }
        if let next = e.nextDay { p.nextDueDay = p.firstDue(onOrAfter: next) }
        if let notes = e.notes { p.notes = notes.isEmpty ? nil : notes }
        savingPlans[i] = p
        return p
    }
}

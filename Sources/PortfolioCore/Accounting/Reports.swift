import Foundation

/// How reports name an asset: a coin from the catalog or a registered asset.
public struct AssetLabel: Hashable, Sendable {
    /// The stored id (`bitcoin`, `AAPL`).
    public var id: String
    /// Lower-case ticker for a coin (`btc`); the code for a registered asset (`AAPL`).
    public var symbol: String
    public var name: String
    public var type: AssetType

    public init(id: String, symbol: String, name: String, type: AssetType) {
        self.id = id
        self.symbol = symbol
        self.name = name
        self.type = type
    }

    public init(coin: Coin) { self.init(id: coin.id, symbol: coin.symbol, name: coin.name, type: .crypto) }

    public init(asset: Asset) { self.init(id: asset.id, symbol: asset.id, name: asset.name, type: asset.type) }

    /// A stand-in for an id nothing knows (a coin dropped from the list).
    public static func unknown(_ id: String) -> AssetLabel {
        AssetLabel(id: id, symbol: id, name: id, type: Asset.isRegisteredID(id) ? .other : .crypto)
    }
}

/// An open position valued at the latest known price.
public struct Holding: Sendable {
    public var asset: AssetLabel
    /// The portfolio, when holdings are kept apart by portfolio (`nil` when merged).
    public var portfolio: String?
    public var totalAmount: Decimal
    public var totalCost: Exact36
    public var avgCost: Exact36
    public var quote: Quote?
    public var currentValue: Exact36?
    public var profitLoss: Exact36?
    public var profitLossPercentage: Decimal?
    /// The price is more than 60 minutes old (false when unpriced).
    public var stale = false
}

/// How to order holdings.
public enum HoldingsSort: String, CaseIterable, Sendable {
    case value, pnl, name, amount
}

/// Open holdings with totals and the age of the prices used.
///
/// Money is exact (`Exact36`) from the replay to the printed digits: totals are exact sums,
/// and display rounds each figure once, from its exact value.
public struct HoldingsReport: InOneCurrency, Sendable {
    /// The currency of every figure but a cash line's balance.
    public var currency: CurrencyCode
    public var holdings: [Holding]
    /// Oldest quote time among priced holdings.
    public var pricesAsOf: Date?
    public var stale: Bool
    /// Holdings without any price: outside the totals.
    public var unpricedCount: Int
    /// Σ value of the priced holdings.
    public var holdingsValue: Exact36
    /// Cash of the chosen portfolios that track it, one line per currency (per portfolio too when
    /// holdings are kept apart); empty when none tracks cash.
    public var cash: [CashLine] = []
    /// Σ cash, or `nil` when no chosen portfolio tracks cash.
    public var cashBalance: Exact36?
    /// Holdings plus cash.
    public var totalValue: Exact36 { cashBalance.flatMap { try? holdingsValue + $0 } ?? holdingsValue }
    /// Σ cost basis of the priced holdings, so that `unrealizedPnL == holdingsValue − totalCost`.
    public var totalCost: Exact36
    public var unrealizedPnL: Exact36
    /// Cost basis of the holdings without a price.
    public var unpricedCost: Exact36
    /// Pairs (`USD→EUR`) whose missing rate left a priced holding unpriced.
    public var missingRates: [String] = []
    /// Positions of a portfolio in another base whose cost cannot be converted (no rate): counted
    /// apart, outside every total, and named (never dropped in silence).
    public var unconverted: [PositionKey] = []
    /// The portfolios of `unconverted`, and of cash that has no rate, sorted.
    public var unconvertedPortfolios: [String] = []
    /// A total passed what bitpal computes exactly (about 10^41): the totals leave out the holdings past it.
    public var totalsTooLarge = false
    /// Σ cost basis of every open holding, priced or not.
    public var openCost: Exact36 { (try? totalCost + unpricedCost) ?? totalCost }
    /// `unrealizedPnL / totalCost × 100`; `nil` when nothing priced cost anything.
    public var unrealizedPnLPercentage: Decimal? { Percent.of(unrealizedPnL, totalCost) }
}

/// Cash in one currency (of one portfolio, or of several added).
public struct CashLine: Sendable, Equatable {
    public var portfolio: String?
    public var currency: String
    public var balance: Exact36
    /// In the base currency at today's rate; `nil` when no rate is known.
    public var value: Exact36?

    /// The balance with its currency.
    public var money: Money { Money(balance, CurrencyCode(currency)) }

    public init(portfolio: String?, currency: String, balance: Exact36, value: Exact36?) {
        self.portfolio = portfolio
        self.currency = currency
        self.balance = balance
        self.value = value
    }
}

/// A closed cycle with its asset resolved.
public struct ClosedLine: Sendable {
    public var asset: AssetLabel
    public var position: ClosedPosition
}

/// The whole portfolio in a few numbers (accounting.md, "Portfolio summary").
public struct PortfolioSummary: InOneCurrency, Sendable {
    /// The currency of every figure.
    public var currency: CurrencyCode
    /// Holdings plus cash.
    public var totalValue: Exact36
    public var holdingsValue: Exact36
    /// Cash of the chosen portfolios that track it (`nil` when none does); net deposits and the
    /// effect of exchange rates on cash: `nil` unless every chosen portfolio tracks cash.
    public var cashBalance: Exact36?
    public var netDeposits: Exact36?
    public var fxEffect: Exact36?
    public var totalOpenCost: Exact36
    public var totalClosedCost: Exact36
    public var unrealizedPnL: Exact36
    public var realizedPnL: Exact36
    /// Σ reward values, dividends and interest net of tax withheld.
    public var income: Exact36
    public var taxWithheld: Exact36
    /// `unrealizedPnL + realizedPnL + income`.
    public var totalPnL: Exact36
    /// `totalPnL / (priced open cost + closed cost) × 100`: the same holdings on both sides; with
    /// cash tracked, `totalPnL / netDeposits × 100` (`nil` when net deposits are not positive).
    public var totalPnLPercentage: Decimal?
    public var holdingsCount: Int
    public var unpricedCount: Int
    /// Cost basis of the open holdings without a price (part of `totalOpenCost`, outside `totalValue`).
    public var unpricedCost: Exact36
    public var pricesAsOf: Date?
    public var stale: Bool
    /// At most 5 priced holdings, largest value first.
    public var topHoldings: [Holding]
}

/// Turns a ledger, prices and asset names into reports. Pure: no I/O, no clock of its own.
public struct Reports: InOneCurrency, Sendable {
    public var ledger: Ledger
    public var prices: PriceBook
    public var asset: @Sendable (String) -> AssetLabel
    public var now: Date
    /// The portfolios reported on; `nil` for every one.
    public var portfolios: Set<String>?
    /// The currency values are shown in, and the rates that turn a price's currency into it.
    public var baseCurrency: String
    public var currency: CurrencyCode { CurrencyCode(baseCurrency) }
    public var rates: FXTable
    /// Each portfolio's own base; figures of a portfolio in another base than `baseCurrency` are
    /// converted at today's rate (a view: `convertedPortfolios` names them).
    public var portfolioBases: [String: String] = [:]

    /// The chosen portfolios whose base is not the report's: their costs and sums are shown converted.
    public var convertedPortfolios: [String] {
        portfolioBases.filter { includes($0.key) && $0.value != baseCurrency && !unconvertible($0.key) }.map(\.key).sorted()
    }

    /// The chosen portfolios in another base with no rate into the report's today: none of their
    /// figures can be shown converted, so every total leaves them out, and says so.
    public var unconvertiblePortfolios: [String] {
        portfolioBases.filter { includes($0.key) && unconvertible($0.key) }.map(\.key).sorted()
    }

    private func unconvertible(_ name: String) -> Bool {
        guard let base = portfolioBases[name], base != baseCurrency else { return false }
        return rates.rate(from: base, to: baseCurrency, on: now) == nil
    }

    /// `money` of portfolio `name`'s base in the report's currency at today's rate (`nil` without a rate).
    func fromBase(of name: String, _ money: Exact36) -> Exact36? {
        guard let base = portfolioBases[name], base != baseCurrency else { return money }
        return inBase(money, base)
    }

    public init(ledger: Ledger, prices: PriceBook, now: Date, portfolios: Set<String>? = nil, baseCurrency: String = "USD",
                rates: FXTable = FXTable([]), asset: @escaping @Sendable (String) -> AssetLabel) {
        self.ledger = ledger
        self.prices = prices
        self.now = now
        self.portfolios = portfolios
        self.baseCurrency = baseCurrency
        self.rates = rates
        self.asset = asset
    }

    /// `quantity × price` in the base currency at today's rate; `nil` (unpriced) when no rate is known.
    private func value(_ quantity: Fixed18, at q: Quote) -> Exact36? {
        guard let inPriceCurrency = Exact36.product(quantity, q.price) else { return nil }
        guard q.currency != baseCurrency else { return inPriceCurrency }
        guard let rate = rates.rate(from: q.currency, to: baseCurrency, on: now)?.rate else { return nil }
        return try? inPriceCurrency.multiplied(by: rate, dividedBy: Fixed18(units: Fixed18.scale))
    }

    func includes(_ portfolio: String) -> Bool { portfolios?.contains(portfolio) ?? true }

    /// Open holdings of the chosen portfolios: one line per asset (quantities and bases of one
    /// asset in several portfolios add), or with `byPortfolio` one per portfolio and asset.
    public func holdings(sort: HoldingsSort = .value, byPortfolio: Bool = false) -> HoldingsReport {
        // Merge first: (portfolio?, asset) → quantity and basis.
        var merged: [PositionKey: (quantity: Fixed18, basis: Exact36)] = [:]
        var missingRates = Set<String>()
        var unconverted: [PositionKey] = []
        for p in ledger.positions.values where p.isOpen && includes(p.key.portfolio) {
            let key = PositionKey(portfolio: byPortfolio ? p.key.portfolio : "", assetId: p.key.assetId)
            guard let basis = fromBase(of: p.key.portfolio, p.lots.costBasis) else {
                missingRates.insert((portfolioBases[p.key.portfolio] ?? "?") + "→" + baseCurrency)
                unconverted.append(p.key)
                continue
            }
            if let m = merged[key], let q = try? m.quantity.adding(p.lots.quantity), let b = try? m.basis + basis {
                merged[key] = (q, b)
            } else {
                merged[key] = (p.lots.quantity, basis)
            }
        }
        var lines: [Holding] = []
        var asOf: Date?
        var value = Exact36.zero, cost = Exact36.zero, pnl = Exact36.zero, unpricedCost = Exact36.zero
        var unpriced = 0
        var totalsTooLarge = false
        for (key, m) in merged {
            let quote = prices.latest(key.assetId, preferring: baseCurrency)
            let basis = m.basis
            var line = Holding(asset: asset(key.assetId), portfolio: byPortfolio ? key.portfolio : nil, totalAmount: m.quantity.decimal,
                               totalCost: basis, avgCost: (try? basis.divided(by: m.quantity)) ?? .zero, quote: quote)
            // A value is exact when the price has at most 18 decimals (every manual price, nearly every
            // fetched one); otherwise Exact36 takes it rounded at the 36th decimal.
            if let q = quote, let v = self.value(m.quantity, at: q), let gain = try? v - basis {
                line.currentValue = v
                line.profitLoss = gain
                line.profitLossPercentage = Percent.of(gain, basis)
                // A registered asset's price is typed by hand: never "stale" (nothing could refresh it).
                // A trade's price (a holding never priced) is not a quote that could be refreshed either.
                line.stale = PriceBook.isStale(q.time, now: now) && !Asset.isRegisteredID(key.assetId) && q.source != .trade
                if q.source != .trade { asOf = asOf.map { min($0, q.time) } ?? q.time }
                // A sum past what is kept exactly is said to be too large, never taken for a missing price.
                if let v2 = try? value + v, let c2 = try? cost + basis, let g2 = try? pnl + gain {
                    (value, cost, pnl) = (v2, c2, g2)
                } else {
                    totalsTooLarge = true
                }
            } else {
                unpriced += 1
                unpricedCost = (try? unpricedCost + basis) ?? unpricedCost
                if let q = quote, q.currency != baseCurrency, rates.rate(from: q.currency, to: baseCurrency, on: now) == nil {
                    missingRates.insert(q.currency + "→" + baseCurrency)
                }
            }
            lines.append(line)
        }
        lines.sort(by: Reports.order(sort))
        let (cash, cashBalance) = cashLines(byPortfolio: byPortfolio, missingRates: &missingRates)
        unconverted.sort { ($0.portfolio, $0.assetId) < ($1.portfolio, $1.assetId) }
        var apart = Set(unconverted.map(\.portfolio))
        for (key, balance) in ledger.cash where includes(key.portfolio) && balance != .zero && inBase(balance, key.currency) == nil {
            apart.insert(key.portfolio)
        }
        var report = HoldingsReport(
            currency: currency, holdings: lines, pricesAsOf: asOf, stale: lines.contains { $0.stale },
            unpricedCount: unpriced, holdingsValue: value, cash: cash, cashBalance: cashBalance,
            totalCost: cost, unrealizedPnL: pnl, unpricedCost: unpricedCost, missingRates: missingRates.sorted())
        report.unconverted = unconverted
        report.totalsTooLarge = totalsTooLarge
        report.unconvertedPortfolios = apart.sorted()
        return report
    }

    /// Whether any chosen portfolio tracks cash, and whether every one does.
    private var cashTracking: (any: Bool, all: Bool) {
        let chosen = ledger.cashTracked.filter(includes)
        guard let portfolios else { return (!chosen.isEmpty, false) }
        return (!chosen.isEmpty, chosen.count == portfolios.count)
    }

    /// `money` of `currency` in the base currency at today's rate; `nil` when no rate is known.
    private func inBase(_ money: Exact36, _ currency: String) -> Exact36? {
        guard currency != baseCurrency else { return money }
        guard let rate = rates.rate(from: currency, to: baseCurrency, on: now)?.rate else { return nil }
        return try? money.multiplied(by: rate, dividedBy: Fixed18(units: Fixed18.scale))
    }

    /// The cash of the chosen portfolios that track it, by currency (and portfolio), and the sum of
    /// what is valued (cash in a currency without a known rate is left out, its pair named).
    private func cashLines(byPortfolio: Bool, missingRates: inout Set<String>) -> ([CashLine], Exact36?) {
        guard cashTracking.any else { return ([], nil) }
        var merged: [CashKey: Exact36] = [:]
        for (key, balance) in ledger.cash where includes(key.portfolio) {
            let k = CashKey(portfolio: byPortfolio ? key.portfolio : "", currency: key.currency)
            merged[k] = (try? (merged[k] ?? .zero) + balance) ?? balance
        }
        var total = Exact36.zero
        var lines: [CashLine] = []
        for (k, balance) in merged {
            let value = inBase(balance, k.currency)
            if let value { total = (try? total + value) ?? total } else { missingRates.insert(k.currency + "→" + baseCurrency) }
            lines.append(CashLine(portfolio: byPortfolio ? k.portfolio : nil, currency: k.currency, balance: balance, value: value))
        }
        lines.sort { ($0.portfolio ?? "", $0.currency) < ($1.portfolio ?? "", $1.currency) }
        return (lines, total)
    }

    /// The realized and income sums of the chosen portfolios, each converted from its base.
    private var convertedTotals: LedgerTotals {
        let foreign = portfolioBases.contains { includes($0.key) && $0.value != baseCurrency }
        guard foreign else { return (try? ledger.totals(for: portfolios)) ?? LedgerTotals() }
        var sum = LedgerTotals()
        // A portfolio that cannot be converted is left out (and named), never added as if in this currency.
        for (name, t) in ledger.portfolioTotals where includes(name) && !unconvertible(name) {
            func c(_ v: Exact36) -> Exact36 { fromBase(of: name, v) ?? .zero }
            var x = LedgerTotals()
            x.realized = c(t.realized)
            x.realizedBasis = c(t.realizedBasis)
            x.income = c(t.income)
            x.taxWithheld = c(t.taxWithheld)
            x.netDeposits = c(t.netDeposits)
            sum = (try? sum.adding(x)) ?? sum
        }
        return sum
    }

    /// What holding cash in currencies other than the base gained or lost from rate moves: today's
    /// value of the balances less what their movements were worth at their own dates' rates. Cash in
    /// the base costs its amount, except what a cash exchange brought in, which costs what left: so an
    /// exchange's fee and its gap from the day's rate are here too (cash-currencies.md).
    private var fxEffect: Exact36 {
        var effect = Exact36.zero
        for (key, balance) in ledger.cash where includes(key.portfolio) {
            guard let now = inBase(balance, key.currency), let cost = fromBase(of: key.portfolio, ledger.cashAtCost[key] ?? .zero),
                  let gain = try? now - cost else { continue }
            effect = (try? effect + gain) ?? effect
        }
        return effect
    }

    /// Closed cycles of the chosen portfolios, most recently closed first.
    public func closed() -> [ClosedLine] {
        // A portfolio that cannot be converted is left out (and named by the front end), never shown at zero.
        ledger.closed.enumerated().filter { includes($0.element.portfolio) && !unconvertible($0.element.portfolio) }.sorted { a, b in
            a.element.closedDate != b.element.closedDate
                ? a.element.closedDate > b.element.closedDate : a.offset > b.offset
        }.map { ClosedLine(asset: asset($0.element.assetId), position: converted($0.element)) }
    }

    /// A closed cycle's money in the report's currency (a view at today's rate when its portfolio's
    /// base differs; an amount without a rate stays unknown).
    private func converted(_ p: ClosedPosition) -> ClosedPosition {
        guard let base = portfolioBases[p.portfolio], base != baseCurrency else { return p }
        var c = p
        c.totalCost = fromBase(of: p.portfolio, p.totalCost) ?? .zero
        c.avgCostPrice = p.avgCostPrice.flatMap { fromBase(of: p.portfolio, $0) }
        c.avgSellPrice = p.avgSellPrice.flatMap { fromBase(of: p.portfolio, $0) }
        c.realizedPnL = fromBase(of: p.portfolio, p.realizedPnL) ?? .zero
        return c
    }

    public func summary() -> PortfolioSummary {
        let h = holdings(sort: .value)
        let t = convertedTotals
        let fx = cashTracking.any ? fxEffect : .zero
        let total = (try? h.unrealizedPnL + t.realized + t.income + fx) ?? h.unrealizedPnL
        let base = (try? h.totalCost + t.realizedBasis) ?? h.totalCost
        let allCash = cashTracking.all
        let percentage = allCash ? (t.netDeposits > .zero ? Percent.of(total, t.netDeposits) : nil) : Percent.of(total, base)
        return PortfolioSummary(
            currency: currency, totalValue: h.totalValue, holdingsValue: h.holdingsValue, cashBalance: h.cashBalance,
            netDeposits: allCash ? t.netDeposits : nil, fxEffect: cashTracking.any ? fx : nil,
            totalOpenCost: h.openCost, totalClosedCost: t.realizedBasis,
            unrealizedPnL: h.unrealizedPnL, realizedPnL: t.realized, income: t.income, taxWithheld: t.taxWithheld, totalPnL: total,
            totalPnLPercentage: percentage,
            holdingsCount: h.holdings.count, unpricedCount: h.unpricedCount, unpricedCost: h.unpricedCost, pricesAsOf: h.pricesAsOf,
            stale: h.stale, topHoldings: Array(h.holdings.filter { $0.currentValue != nil }.prefix(5)))
    }

    /// Dividends, interest and rewards of the chosen portfolios (in `year`, UTC, when given),
    /// oldest first, or grouped.
    /// Years and months are those of `timeZone`'s calendar, as `gains` counts them (a Tokyo dividend of
    /// 2025-01-01 is 2025's there, whatever UTC says).
    public func income(year: Int? = nil, by grouping: IncomeGrouping? = nil, timeZone: TimeZone = TimeZone(secondsFromGMT: 0) ?? .current) -> IncomeReport {
        var rows: [IncomeEvent] = []
        func local(_ e: IncomeEvent) -> (Int64, Int64, Int64) { ISODate.localDay(of: e.date, in: timeZone) }
        for var e in ledger.income where includes(e.portfolio) && !unconvertible(e.portfolio) {
            if let year, local(e).0 != Int64(year) { continue }
            if portfolioBases[e.portfolio].map({ $0 != baseCurrency }) ?? false {
                e.gross = fromBase(of: e.portfolio, e.gross) ?? .zero
                e.taxWithheld = fromBase(of: e.portfolio, e.taxWithheld) ?? .zero
                e.net = fromBase(of: e.portfolio, e.net) ?? .zero
            }
            rows.append(e)
        }
        var totals = IncomeReport.Sums()
        for e in rows { totals.add(e) }
        guard let grouping else { return IncomeReport(currency: currency, rows: rows, groups: nil, totals: totals) }
        var order: [String] = []
        var groups: [String: IncomeReport.Sums] = [:]
        for e in rows {
            let key: String = switch grouping {
            case .asset: e.assetId
            case .month: String(ISODate.dayText(ISODate.days(fromCivil: local(e).0, local(e).1, 1)).prefix(7))
            case .year: String(local(e).0)
            }
            if groups[key] == nil { order.append(key) }
            groups[key, default: IncomeReport.Sums()].add(e)
        }
        if grouping == .asset { order.sort() }
        return IncomeReport(currency: currency, rows: rows, groups: order.map { ($0, groups[$0] ?? IncomeReport.Sums()) }, totals: totals)
    }

    static func order(_ sort: HoldingsSort) -> (Holding, Holding) -> Bool {
        func byName(_ a: Holding, _ b: Holding) -> Bool {
            let x = a.asset.name.lowercased(), y = b.asset.name.lowercased()
            if x != y { return x < y }
            return a.asset.id != b.asset.id ? a.asset.id < b.asset.id : (a.portfolio ?? "") < (b.portfolio ?? "")
        }
        func unpricedOrder(_ a: Holding, _ b: Holding) -> Bool {
            a.totalCost != b.totalCost ? a.totalCost > b.totalCost : byName(a, b)
        }
        switch sort {
        case .value: return { a, b in KnownFirst.descending(a.currentValue, b.currentValue, tie: byName(a, b), unknown: unpricedOrder(a, b)) }
        case .pnl: return { a, b in KnownFirst.descending(a.profitLoss, b.profitLoss, tie: byName(a, b), unknown: unpricedOrder(a, b)) }
        case .name: return byName
        case .amount: return { a, b in a.totalAmount != b.totalAmount ? a.totalAmount > b.totalAmount : byName(a, b) }
        }
    }
}

/// Orders by a value that may be unknown: largest first, unknown last.
public enum KnownFirst {
    /// - Parameters:
    ///   - tie: the order when both values are equal.
    ///   - unknown: the order when both are unknown.
    public static func descending<T: Comparable>(_ x: T?, _ y: T?, tie: @autoclosure () -> Bool,
                                  unknown: @autoclosure () -> Bool) -> Bool {
        switch (x, y) {
        case let (x?, y?): x != y ? x > y : tie()
        case (.some, nil): true
        case (nil, .some): false
        case (nil, nil): unknown()
        }
    }
}

/// How `income --by` groups rows.
public enum IncomeGrouping: String, CaseIterable, Sendable {
    case asset, month, year
}

/// Dividends, interest and rewards: the rows, the groups when asked, and the totals.
public struct IncomeReport: InOneCurrency, Sendable {
    public struct Sums: Sendable, Equatable {
        public var gross: Exact36 = .zero
        public var taxWithheld: Exact36 = .zero
        public var net: Exact36 = .zero

        public init() {}

        /// One event's figures.
        public init(_ e: IncomeEvent) { add(e) }

        mutating func add(_ e: IncomeEvent) {
            gross = (try? gross + e.gross) ?? gross
            taxWithheld = (try? taxWithheld + e.taxWithheld) ?? taxWithheld
            net = (try? net + e.net) ?? net
        }
    }

    /// The currency of every figure.
    public var currency: CurrencyCode
    public var rows: [IncomeEvent]
    public var groups: [(group: String, sums: Sums)]?
    public var totals: Sums
}

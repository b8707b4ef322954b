import Foundation
import PortfolioCore
import Testing

/// A second, deliberately plain replay of the currency rules, written from the "Currencies" and
/// "Cash" sections of `cash-currencies.md` alone (not from the engine): Foundation `Decimal`, every
/// portfolio tracking cash, average-cost basis kept in the portfolio's base currency.
///
/// - A record in a currency other than its portfolio's base converts at its own `fxRate` (units of
///   base per unit of its currency); one in the base converts at 1.
/// - Cash stays in its own currency, per portfolio and currency, and never goes below zero; a record
///   that would overdraw, or remove more units than are held, is left out with no effect at all.
/// - `fxEffect` of a portfolio: every balance at today's rate (1 in the base), less each change of
///   that balance at its own record's rate (an exchange's deposit leg: what left, at its rate).
///
/// The only linked records here are cash exchanges (a withdrawal in one currency and a deposit in
/// another, in one portfolio). An exchange is never money put in or taken out (cash-currencies.md):
/// neither leg is a net deposit, and the cash received costs what the cash that left cost at the
/// withdrawal's rate (so the fee and any gap from the day's rate show in `fxEffect`).
/// A record left out takes its partner with it; since the deposit leg
/// replays first, "no effect at all" can reach back, so the replay starts over without the records
/// left out so far until a replay leaves nothing more out.
struct CurrencyReference {
    struct Holding {
        var quantity: Decimal = 0
        /// In the portfolio's base currency.
        var cost: Decimal = 0
    }

    struct Key: Hashable, CustomStringConvertible {
        var portfolio: String
        var currency: String
        var description: String { "\(portfolio)/\(currency)" }
    }

    /// Deliberate mistakes, to show that the comparison catches them (see `brokenReferencesDisagree`).
    enum Flaw: String, CaseIterable {
        /// Conversions at today's rate instead of the record's own.
        case todaysRate
        /// The fee of a buy or priced transfer-in added to the basis unconverted.
        case feeUnconverted
        /// Cash converted into the base on arrival instead of kept in its currency.
        case cashConverted
        /// fxEffect with its sign turned.
        case fxEffectSign
        /// A sale's proceeds converted but its fee not.
        case saleFeeUnconverted
    }

    /// Base currency by portfolio.
    let bases: [String: String]
    /// Today's rate of a currency into a base (units of base per unit).
    let today: (_ from: String, _ to: String) -> Decimal
    let flaw: Flaw?
    /// By "portfolio/asset".
    private(set) var holdings: [String: Holding] = [:]
    private(set) var cash: [Key: Decimal] = [:]
    /// Σ of each balance's changes, each at its own record's rate (in the portfolio's base).
    private(set) var cashAtCost: [Key: Decimal] = [:]
    private(set) var realized: [String: Decimal] = [:]
    private(set) var income: [String: Decimal] = [:]
    private(set) var netDeposits: [String: Decimal] = [:]
    /// Every record left out, and the rule it breaks.
    private(set) var leftOut: [UUID: StoreProblem.Rule] = [:]
    /// The records applied, in replay order.
    private(set) var applied: [Transaction] = []

    /// A cash exchange's partner leg, by the id of each leg.
    private var partner: [UUID: Transaction] = [:]

    init(_ transactions: [Transaction], bases: [String: String], today: @escaping (String, String) -> Decimal, flaw: Flaw? = nil) {
        self.bases = bases
        self.today = today
        self.flaw = flaw
        for t in transactions {
            guard let link = t.linkedId else { continue }
            for other in transactions where other.linkedId == link && other.id != t.id { partner[t.id] = other }
        }
        // Date order; at one instant deposits first; otherwise the order given.
        let ordered = transactions.enumerated().sorted { a, b in
            if a.element.date != b.element.date { return a.element.date < b.element.date }
            let depositA = a.element.type == .deposit, depositB = b.element.type == .deposit
            if depositA != depositB { return depositA }
            return a.offset < b.offset
        }
        replay: while true {
            holdings = [:]
            cash = [:]
            cashAtCost = [:]
            realized = [:]
            income = [:]
            netDeposits = [:]
            applied = []
            for (_, t) in ordered where leftOut[t.id] == nil {
                guard let rule = apply(t) else { applied.append(t); continue }
                leftOut[t.id] = rule
                if let link = t.linkedId {
                    for partner in transactions where partner.linkedId == link && partner.id != t.id && leftOut[partner.id] == nil {
                        leftOut[partner.id] = .partnerLeftOut
                    }
                }
                continue replay
            }
            break
        }
    }

    func ids(_ rule: StoreProblem.Rule) -> [String] { leftOut.filter { $0.value == rule }.map(\.key.uuidString).sorted() }

    /// Units of `t`'s portfolio's base per unit of its currency: 1 in the base, else the record's rate.
    func rate(of t: Transaction) -> Decimal {
        let base = bases[t.portfolio]!
        guard let currency = t.currency, currency != base else { return 1 }
        if flaw == .todaysRate { return today(currency, base) }
        return t.fxRateValue!.decimal
    }

    /// Σ of every position's basis in `portfolio` (base currency).
    func openCost(_ portfolio: String) -> Decimal {
        holdings.filter { $0.key.hasPrefix(portfolio + "/") }.values.reduce(0) { $0 + $1.cost }
    }

    /// Cash of `portfolio` in its base at today's rates.
    func cashValue(_ portfolio: String) -> Decimal {
        let base = bases[portfolio]!
        return cash.filter { $0.key.portfolio == portfolio }.reduce(0) { $0 + $1.value * ($1.key.currency == base ? 1 : today($1.key.currency, base)) }
    }

    /// What holding cash in other currencies than the base gained or lost from rate moves.
    func fxEffect(_ portfolio: String) -> Decimal {
        let base = bases[portfolio]!
        var sum: Decimal = 0
        for (k, balance) in cash where k.portfolio == portfolio {
            // Base cash costs its amount, but what an exchange brought in costs what left.
            sum += balance * (k.currency == base ? 1 : today(k.currency, base)) - cashAtCost[k, default: 0]
        }
        return flaw == .fxEffectSign ? -sum : sum
    }

    /// Applies `t`, or changes nothing and names the rule it breaks.
    private mutating func apply(_ t: Transaction) -> StoreProblem.Rule? {
        let p = t.portfolio
        let key = p + "/" + t.assetId
        var h = holdings[key, default: Holding()]
        let amount = t.amountValue.decimal
        let price = t.priceValue?.decimal
        let gross = t.totalValue?.decimal ?? amount * (price ?? 0)
        let fee = t.feeValue?.decimal ?? 0
        let rate = rate(of: t)
        var cashChange: Decimal?
        var realizedNow: Decimal = 0, incomeNow: Decimal = 0, deposited: Decimal = 0

        func basis(of units: Decimal) -> Decimal { units == h.quantity ? h.cost : h.cost * units / h.quantity }

        switch t.type {
        case .buy:
            h.quantity += amount
            h.cost += flaw == .feeUnconverted ? gross * rate + fee : (gross + fee) * rate
            cashChange = -(gross + fee)
        case .sell:
            if amount > h.quantity { return .oversell }
            let sold = basis(of: amount)
            h.quantity -= amount
            h.cost -= sold
            realizedNow = (flaw == .saleFeeUnconverted ? gross * rate - fee : (gross - fee) * rate) - sold
            cashChange = gross - fee
        case .dividend, .interest:
            incomeNow = (amount - fee) * rate
            cashChange = amount - fee
        case .deposit:
            cashChange = amount
            deposited = t.linkedId == nil ? amount * rate : 0
        case .withdrawal:
            cashChange = -amount
            deposited = t.linkedId == nil ? -amount * rate : 0
        case .transferIn:
            let cost = flaw == .feeUnconverted ? amount * (price ?? 0) * rate + fee : (amount * (price ?? 0) + fee) * rate
            h.quantity += amount
            h.cost += cost
            deposited = cost
        case .transferOut:
            if amount > h.quantity { return .oversell }
            let out = basis(of: amount)
            h.quantity -= amount
            h.cost -= out
            deposited = -out
        case .reward:
            let value = amount * (price ?? 0) * rate
            h.quantity += amount
            h.cost += value
            incomeNow = value
        default:
            preconditionFailure("not generated: \(t.type)")
        }
        if let cashChange, let currency = t.currency {
            let k = flaw == .cashConverted ? Key(portfolio: p, currency: bases[p]!) : Key(portfolio: p, currency: currency)
            let change = flaw == .cashConverted ? cashChange * rate : cashChange
            let balance = cash[k, default: 0] + change
            if balance < 0 { return .overdraw }
            cash[k] = balance
            if t.type == .deposit, t.linkedId != nil, let out = partner[t.id] {
                cashAtCost[k, default: 0] += out.amountValue.decimal * self.rate(of: out)  // what left, at its rate
            } else {
                cashAtCost[k, default: 0] += change * (flaw == .cashConverted ? 1 : rate)
            }
        }
        if !t.assetId.isEmpty { holdings[key] = h }
        realized[p, default: 0] += realizedNow
        income[p, default: 0] += incomeNow
        netDeposits[p, default: 0] += deposited
        return nil
    }
}

@Suite struct CurrencyReferenceTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let start = day("2024-01-01")
    static let currencies = ["EUR", "USD", "GBP"]

    /// What the random histories hold, to see that they exercise what they should.
    struct Tally {
        var kinds: [String: Int] = [:]
        mutating func count(_ kind: String, _ n: Int = 1) { kinds[kind, default: 0] += n }
        subscript(_ kind: String) -> Int { kinds[kind, default: 0] }
    }

    /// Today's rates (dated the day before `now`), with an older and a later-dated USD→EUR that
    /// must not count. A USD portfolio finds EUR→USD as the inverse of USD→EUR.
    struct Today {
        var usdEur: Decimal
        var gbpEur: Decimal
        var gbpUsd: Decimal

        var table: FXTable {
            FXTable([FXRate(from: "USD", to: "EUR", rate: Reference.exact(Reference.decimal(50, scale: 2)), date: start),
                     FXRate(from: "USD", to: "EUR", rate: Reference.exact(usdEur), date: now.addingTimeInterval(-86_400)),
                     FXRate(from: "GBP", to: "EUR", rate: Reference.exact(gbpEur), date: now.addingTimeInterval(-86_400)),
                     FXRate(from: "GBP", to: "USD", rate: Reference.exact(gbpUsd), date: now.addingTimeInterval(-86_400)),
                     FXRate(from: "USD", to: "EUR", rate: Reference.exact(Reference.decimal(2, scale: 0)), date: now.addingTimeInterval(30 * 86_400))])
        }

        /// Units of `to` per unit of `from`; an inverse rounded half-up at 18 decimals, as stored.
        func rate(_ from: String, _ to: String) -> Decimal {
            switch (from, to) {
            case _ where from == to: 1
            case ("USD", "EUR"): usdEur
            case ("GBP", "EUR"): gbpEur
            case ("GBP", "USD"): gbpUsd
            case ("EUR", "USD"): Reference.rounded(1 / usdEur, 18, .plain)
            default: preconditionFailure("no rate \(from)→\(to)")
            }
        }
    }

    /// A rate between 0.80 and 1.30 with up to 6 decimals.
    static func randomRate(_ g: inout SeededRandom) -> Decimal { Reference.decimal(800_000 + g.below(500_001), scale: 6) }

    /// A random history over `coins` in `eu` (EUR) and, when given, `us` (USD), both tracking cash:
    /// deposits and withdrawals (some more than there is) in EUR, USD and GBP, buys (by price or total,
    /// some with fees, some paid by a deposit recorded after them at the same instant, some more than
    /// the cash there is), sells and transfers out (all, part or more than held), dividends, interest
    /// on cash, rewards and priced transfers in. Foreign records carry a random rate.
    static func history(_ g: inout SeededRandom, coins: [String], portfolios: [String: String], tally: inout Tally) -> [Transaction] {
        var held: [String: Decimal] = [:]                           // by file order, to aim disposals
        var money: [CurrencyReference.Key: Decimal] = [:]           // by file order, to aim withdrawals and buys
        var out: [Transaction] = []
        let length = g.below(80) + 40
        var dayNumber = 0
        while out.count < length {
            if g.below(3) == 0 { dayNumber += 1 }
            let dayOf = g.below(12) == 0 ? max(0, dayNumber - g.below(4) - 1) : dayNumber
            let date = start.addingTimeInterval(Double(dayOf) * 86_400 + (g.below(10) == 0 ? 12 * 3600 : 0))
            let portfolio = portfolios.count == 1 || g.below(10) < 7 ? "eu" : "us"
            let base = portfolios[portfolio]!
            let currency = switch g.below(20) { case 0..<9: "EUR"; case 9..<17: "USD"; default: "GBP" }
            let foreign = currency != base
            let rate = foreign ? randomRate(&g) : nil
            let cashKey = CurrencyReference.Key(portfolio: portfolio, currency: currency)
            let coin = coins[g.below(coins.count)]
            let k = portfolio + "/" + coin
            let have = held[k] ?? 0
            let units = Reference.decimal(g.below(200_000_000) + 1, scale: 8)     // up to 2 units
            let price = Reference.decimal(g.below(100_000) + 1, scale: 2)         // up to 1,000.00
            let cashAmount = Reference.decimal(g.below(200_000) + 100, scale: 2)  // 1.00 to 2,000.99
            let fee = g.below(3) == 0 ? Reference.decimal(g.below(1000), scale: 2) : Decimal(0)
            func tx(_ type: TransactionType, _ amount: Decimal, price: Decimal? = nil, total: Decimal? = nil, fee: Decimal? = nil,
                    asset a: String = coin, currency c: String? = currency, rate r: Decimal? = rate, at d: Date = date,
                    id: UUID = UUID(), link: UUID? = nil) -> Transaction {
                let rule = KindRule.of(type)
                return Transaction(id: id, portfolio: portfolio, type: type, assetId: a, amount: Reference.exact(amount),
                                   price: price.map(Reference.exact), total: total.map(Reference.exact),
                                   fee: rule.fee == .none ? nil : Reference.exact(fee ?? 0),
                                   currency: rule.hasCurrency ? c : nil, fxRate: rule.hasCurrency ? r.map(Reference.exact) : nil, date: d,
                                   linkedId: link)
            }
            func named(_ what: String) -> String { what + (foreign ? " foreign" : " base") }
            /// A withdrawal's aim: all the cash there is, more, or a part.
            func aim() -> Decimal {
                let there = Reference.rounded(max(0, money[cashKey] ?? 0), 18, .down)
                let amount = Reference.aim(at: there, &g, choices: 4, more: 50_000, scale: 2)
                return amount > 0 ? amount : cashAmount
            }

            if (have > 0 && g.below(100) < 30) || g.below(100) < 2 {
                // A disposal: everything, more than held, or a part.
                var amount = Reference.aim(at: have, &g, choices: 6, more: 1000, scale: 8)
                if amount == 0 { amount = units }
                if g.below(5) == 0 {
                    tally.count("transfer-out")
                    out.append(tx(.transferOut, amount, fee: 0))
                } else if g.below(3) == 0 {
                    tally.count(named("sell by total"))
                    let total = max(Reference.rounded(amount * price, 2, .plain), Reference.decimal(1, scale: 2))
                    out.append(tx(.sell, amount, price: price, total: total, fee: fee))
                    money[cashKey, default: 0] += total - fee
                } else {
                    tally.count(named("sell"))
                    out.append(tx(.sell, amount, price: price, fee: fee))
                    money[cashKey, default: 0] += amount * price - fee
                }
                held[k] = max(0, have - amount)
                continue
            }
            switch g.below(100) {
            case 0..<18:
                tally.count(named("deposit"))
                out.append(tx(.deposit, cashAmount, asset: ""))
                money[cashKey, default: 0] += cashAmount
            case 18..<28:
                tally.count(named("withdrawal"))
                let amount = aim()
                out.append(tx(.withdrawal, amount, asset: ""))
                money[cashKey] = max(0, (money[cashKey] ?? 0) - amount)
            case 28..<56:
                let byTotal = g.below(4) == 0
                let total = max(Reference.rounded(units * price, 2, .plain), Reference.decimal(1, scale: 2))
                let cost = (byTotal ? total : units * price) + fee
                tally.count(named(byTotal ? "buy by total" : "buy"))
                if fee > 0 { tally.count(named("buy with fee")) }
                out.append(byTotal ? tx(.buy, units, price: g.below(2) == 0 ? price : nil, total: total, fee: fee)
                                   : tx(.buy, units, price: price, fee: fee))
                held[k, default: 0] += units
                if cost > max(0, money[cashKey] ?? 0) && g.below(3) != 0 {
                    // Its deposit recorded after it at the same instant: it replays first and pays for it.
                    let need = Reference.rounded(cost - max(0, money[cashKey] ?? 0), 2, .up) + Reference.decimal(g.below(10_000), scale: 2)
                    tally.count("deposit after a buy, same instant")
                    out.append(tx(.deposit, need, asset: "", rate: foreign ? randomRate(&g) : nil))
                    money[cashKey, default: 0] += need
                }
                money[cashKey, default: 0] -= cost
            case 56..<66:
                // A dividend, now and then interest paid on a coin; its tax withheld now and then (all of it, now and then).
                let onCoin = g.below(4) == 0
                tally.count(named(onCoin ? "interest on a coin" : "dividend"))
                let tax = g.below(2) == 0 ? (g.below(8) == 0 ? cashAmount : Reference.rounded(cashAmount * Reference.decimal(g.below(40), scale: 2), 2, .plain)) : 0
                if tax == cashAmount { tally.count("income withheld whole") }
                out.append(tx(onCoin ? .interest : .dividend, cashAmount, fee: tax))
                money[cashKey, default: 0] += cashAmount - tax
            case 66..<76:
                tally.count(named("interest on cash"))
                let tax = g.below(3) == 0 ? Reference.rounded(cashAmount * Reference.decimal(g.below(40), scale: 2), 2, .plain) : 0
                out.append(tx(.interest, cashAmount, fee: tax, asset: ""))
                money[cashKey, default: 0] += cashAmount - tax
            case 76..<88:
                tally.count(named("transfer-in"))
                out.append(tx(.transferIn, units, price: g.below(5) == 0 ? 0 : price, fee: fee))
                held[k, default: 0] += units
            case 88..<95:
                tally.count(named("reward"))
                out.append(tx(.reward, units, price: g.below(5) == 0 ? 0 : price))
                held[k, default: 0] += units
            default:
                // A cash exchange as `cash exchange AMOUNT FROM TO --rate R [--fee F]` stores it: − AMOUNT in FROM,
                // + (AMOUNT − F) × R (18 decimals) in TO, each leg with its rate to the base: from R when one side
                // is the base (1 ÷ R rounded half-up at 18 decimals for the TO leg), else the table's (random here).
                let to = currencies.filter { $0 != currency }[g.below(currencies.count - 1)]
                let amount = aim()
                let r = Reference.decimal(500_000 + g.below(1_500_001), scale: 6)
                let exchangeFee = g.below(3) == 0 ? min(Reference.decimal(g.below(1000), scale: 2), amount / 2) : Decimal(0)
                let received = Reference.rounded((amount - exchangeFee) * r, 18, .plain)
                let fromRate: Decimal? = currency == base ? nil : to == base ? r : randomRate(&g)
                let toRate: Decimal? = to == base ? nil : currency == base ? Reference.rounded(1 / r, 18, .plain) : randomRate(&g)
                tally.count(currency == base || to == base ? "exchange with the base" : "exchange between foreign currencies")
                if exchangeFee > 0 { tally.count("exchange with fee") }
                let id = UUID()
                out.append(tx(.withdrawal, amount, asset: "", rate: fromRate, id: id, link: id))
                out.append(tx(.deposit, received, asset: "", currency: to, rate: toRate, link: id))
                money[cashKey] = max(0, (money[cashKey] ?? 0) - amount)
                money[CurrencyReference.Key(portfolio: portfolio, currency: to), default: 0] += received
            }
        }
        return out
    }

    /// One random round: its book, prices, today's rates, and the engine's answers.
    struct Round {
        var book: Book
        var bases: [String: String]
        var quotes: [Quote]
        var today: Today
        var checked: CheckedHistory
    }

    static func rounds(count: Int, tally: inout Tally) -> [Round] {
        var g = SeededRandom(seed: 20260612)
        let allCoins = ["bitcoin", "ethereum", "solana", "cardano"]
        var out: [Round] = []
        for round in 0..<count {
            let bases = round % 3 == 2 ? ["eu": "EUR", "us": "USD"] : ["eu": "EUR"]
            let coins = Array(allCoins.prefix(2 + g.below(3)))
            var book = Book(portfolios: bases.keys.sorted().map { Portfolio(name: $0, baseCurrency: bases[$0]!, trackCash: true) },
                            defaultPortfolio: "eu")
            book.transactions = history(&g, coins: coins, portfolios: bases, tally: &tally)
            // Every coin priced, in a random currency.
            let quotes = coins.map { coin in
                Quote(coinId: coin, price: Reference.decimal(g.below(200_000) + 1, scale: 2), time: now.addingTimeInterval(-60),
                      source: .manual, currency: currencies[g.below(currencies.count)])
            }
            let today = Today(usdEur: randomRate(&g), gbpEur: randomRate(&g), gbpUsd: randomRate(&g))
            out.append(Round(book: book, bases: bases, quotes: quotes, today: today, checked: book.checked(now: now)))
        }
        return out
    }

    /// Every disagreement between the engine and the reference in `round`, described.
    static func disagreements(_ r: Round, _ reference: CurrencyReference, label: String) -> [String] {
        var found: [String] = []
        func check(_ ok: Bool, _ what: @autoclosure () -> String) { if !ok { found.append("\(label): \(what())") } }
        let ledger = r.checked.ledger
        // Which records are left out, and why.
        func engineIDs(_ rule: StoreProblem.Rule) -> [String] { r.checked.problems.filter { $0.rule == rule }.map(\.id.uuidString).sorted() }
        for rule: StoreProblem.Rule in [.overdraw, .oversell, .partnerLeftOut] {
            check(engineIDs(rule) == reference.ids(rule), "\(rule.rawValue): engine \(engineIDs(rule).count) vs reference \(reference.ids(rule).count)")
        }
        check(r.checked.problems.allSatisfy { [.overdraw, .oversell, .partnerLeftOut].contains($0.rule) }, "problems \(r.checked.problems.map(\.rule.rawValue))")

        // Cash per portfolio and currency, exactly; what each balance cost, within rounding.
        for p in r.bases.keys.sorted() {
            for c in currencies {
                let k = CurrencyReference.Key(portfolio: p, currency: c)
                let engine = ledger.cash[CashKey(portfolio: p, currency: c)]?.decimal ?? 0
                check(engine == reference.cash[k, default: 0], "cash \(k): engine \(engine) vs reference \(reference.cash[k, default: 0])")
                if c != r.bases[p], let atCost = ledger.cashAtCost[CashKey(portfolio: p, currency: c)] {
                    check(Reference.close(atCost.decimal, reference.cashAtCost[k, default: 0]),
                          "cash at cost \(k): engine \(atCost.decimal) vs reference \(reference.cashAtCost[k, default: 0])")
                }
            }
        }
        // Positions: quantity exactly, basis within rounding.
        for (name, h) in reference.holdings {
            let parts = name.split(separator: "/", maxSplits: 1).map(String.init)
            let position = ledger.positions[PositionKey(portfolio: parts[0], assetId: parts[1])]
            check((position?.quantity ?? 0) == h.quantity, "quantity \(name): engine \(position?.quantity ?? 0) vs reference \(h.quantity)")
            check(Reference.close(position?.costBasis.decimal ?? 0, h.cost),
                  "basis \(name): engine \(position?.costBasis.decimal ?? 0) vs reference \(h.cost)")
        }
        // Per portfolio: realized, income, net deposits in the ledger; the summary's figures and its identity.
        for (p, base) in r.bases.sorted(by: { $0.key < $1.key }) {
            let totals = ledger.totals(of: p)
            check(Reference.close(totals.realized.decimal, reference.realized[p, default: 0]),
                  "\(p) realized: engine \(totals.realized.decimal) vs reference \(reference.realized[p, default: 0])")
            check(Reference.close(totals.income.decimal, reference.income[p, default: 0]),
                  "\(p) income: engine \(totals.income.decimal) vs reference \(reference.income[p, default: 0])")
            check(Reference.close(totals.netDeposits.decimal, reference.netDeposits[p, default: 0]),
                  "\(p) net deposits: engine \(totals.netDeposits.decimal) vs reference \(reference.netDeposits[p, default: 0])")

            let reports = Reports(ledger: ledger, prices: PriceBook(manual: r.quotes), now: now, portfolios: [p], baseCurrency: base,
                                  rates: r.today.table) { AssetLabel.unknown($0) }
            let s = reports.summary()
            check(s.unpricedCount == 0, "\(p) unpriced \(s.unpricedCount)")
            var holdingsValue: Decimal = 0
            for (name, h) in reference.holdings where name.hasPrefix(p + "/") {
                let q = r.quotes.first { p + "/" + $0.coinId == name }!
                holdingsValue += h.quantity * q.price * r.today.rate(q.currency, base)
            }
            let cashValue = reference.cashValue(p)
            let fx = reference.fxEffect(p)
            let unrealized = holdingsValue - reference.openCost(p)
            let totalPnL = unrealized + reference.realized[p, default: 0] + reference.income[p, default: 0] + fx
            check(Reference.close(s.holdingsValue.decimal, holdingsValue), "\(p) holdings value: engine \(s.holdingsValue.decimal) vs reference \(holdingsValue)")
            check(Reference.close(s.cashBalance?.decimal ?? -1, cashValue), "\(p) cash value: engine \(s.cashBalance?.decimal ?? -1) vs reference \(cashValue)")
            check(Reference.close(s.netDeposits?.decimal ?? -1, reference.netDeposits[p, default: 0]),
                  "\(p) summary net deposits: engine \(s.netDeposits?.decimal ?? -1) vs reference \(reference.netDeposits[p, default: 0])")
            check(Reference.close(s.fxEffect?.decimal ?? -1, fx), "\(p) fxEffect: engine \(s.fxEffect?.decimal ?? -1) vs reference \(fx)")
            check(Reference.close(s.realizedPnL.decimal, reference.realized[p, default: 0]), "\(p) summary realized")
            check(Reference.close(s.income.decimal, reference.income[p, default: 0]), "\(p) summary income")
            check(Reference.close(s.totalPnL.decimal, totalPnL), "\(p) totalPnL: engine \(s.totalPnL.decimal) vs reference \(totalPnL)")
            // The contract's identity, from the engine alone: totalPnL = totalValue − netDeposits (to the cent).
            let gap = s.totalPnL.decimal - (s.totalValue.decimal - (s.netDeposits?.decimal ?? 0))
            check(Reference.rounded(gap, 2, .plain) == 0, "\(p) totalPnL \(s.totalPnL.decimal) ≠ totalValue \(s.totalValue.decimal) − netDeposits \(s.netDeposits?.decimal ?? 0)")
            // And beyond the cent: "holds exactly", up to the rounding of each converted amount at the 36th decimal.
            check(Reference.close(gap, 0), "\(p) totalPnL − (totalValue − netDeposits) = \(gap)")
        }
        return found
    }

    @Test func engineAgreesWithTheCurrencyReference() throws {
        var tally = Tally()
        for (i, r) in Self.rounds(count: 150, tally: &tally).enumerated() {
            let reference = CurrencyReference(r.book.transactions, bases: r.bases, today: r.today.rate)
            for d in Self.disagreements(r, reference, label: "round \(i)") { Issue.record(Comment(rawValue: d)) }

            // What this round exercised.
            let byID = Dictionary(uniqueKeysWithValues: r.book.transactions.map { ($0.id, $0) })
            for (id, rule) in reference.leftOut {
                let t = byID[id]!
                let foreign = t.currency != nil && t.currency != r.bases[t.portfolio]
                let kind = t.linkedId != nil ? "exchange " + t.type.rawValue : t.type.rawValue
                tally.count("\(rule == .overdraw ? "overdraw" : rule == .oversell ? "oversell" : "partner left out"): \(kind)\(foreign ? " foreign" : "")")
            }
            for t in reference.applied {
                let foreign = t.currency != nil && t.currency != r.bases[t.portfolio]
                tally.count("applied: \(t.linkedId != nil ? "exchange " : "")\(t.type.rawValue)\(foreign ? " foreign" : "")")
                if t.currency == "GBP" { tally.count("applied: GBP") }
                if t.type == .sell && reference.holdings[t.portfolio + "/" + t.assetId]?.quantity == 0 { tally.count("position closed") }
            }
            for p in r.bases.keys {
                if reference.fxEffect(p) != 0 { tally.count("portfolio with fxEffect ≠ 0") }
                for (k, v) in reference.cash where k.portfolio == p && k.currency != r.bases[p] && v > 0 { _ = v; tally.count("foreign cash balance at the end") }
            }
            if r.bases.count == 2 { tally.count("rounds with a USD portfolio") }
            if Set(r.quotes.map(\.currency)).count > 1 { tally.count("rounds with prices in several currencies") }
        }
        print("CurrencyReferenceTests tally:", tally.kinds.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", "))
        // The histories exercise what they claim to.
        for (what, least) in [("applied: buy", 600), ("applied: buy foreign", 700), ("applied: sell", 450), ("applied: sell foreign", 550),
                              ("applied: deposit", 550), ("applied: deposit foreign", 650), ("applied: withdrawal", 150), ("applied: withdrawal foreign", 170),
                              ("applied: dividend foreign", 200), ("applied: interest foreign", 250), ("applied: transfer-in foreign", 300),
                              ("applied: reward foreign", 300), ("applied: transfer-out", 250), ("applied: GBP", 900),
                              ("buy by total foreign", 180), ("buy with fee foreign", 250), ("sell by total foreign", 200), ("interest on a coin base", 40),
                              ("income withheld whole", 40),
                              ("applied: exchange withdrawal", 90), ("applied: exchange withdrawal foreign", 80), ("applied: exchange deposit foreign", 130),
                              ("exchange between foreign currencies", 70), ("exchange with fee", 90), ("overdraw: exchange withdrawal", 40),
                              ("overdraw: exchange withdrawal foreign", 45), ("partner left out: exchange deposit foreign", 60),
                              ("overdraw: buy", 50), ("overdraw: buy foreign", 90), ("overdraw: withdrawal", 50), ("overdraw: withdrawal foreign", 100),
                              ("oversell: sell", 100), ("oversell: sell foreign", 140), ("oversell: transfer-out", 60),
                              ("deposit after a buy, same instant", 300), ("position closed", 20), ("foreign cash balance at the end", 250),
                              ("portfolio with fxEffect ≠ 0", 150), ("rounds with a USD portfolio", 50), ("rounds with prices in several currencies", 90)] {
            #expect(tally[what] >= least, "\(what): \(tally[what])")
        }
    }

    /// Each deliberate mistake in the reference is caught by the same comparison.
    @Test(arguments: CurrencyReference.Flaw.allCases)
    func brokenReferencesDisagree(_ flaw: CurrencyReference.Flaw) {
        var tally = Tally()
        let found = Self.rounds(count: 20, tally: &tally).enumerated().flatMap { i, r in
            Self.disagreements(r, CurrencyReference(r.book.transactions, bases: r.bases, today: r.today.rate, flaw: flaw), label: "round \(i)")
        }
        print("flaw \(flaw.rawValue): \(found.count) disagreements; first: \(found.first ?? "none")")
        #expect(!found.isEmpty, "\(flaw.rawValue) went unnoticed")
    }
}

/// Portfolios of different bases reported together (`--all`: one `Reports` in the default
/// portfolio's base). The contract: "converting each portfolio's figures at current rates". The
/// engine once converted values (holdings, cash) but added a USD portfolio's realized, income, net
/// deposits and basis to the EUR figures as they are, unconverted, so `totalPnL = totalValue −
/// netDeposits` broke too. Found by this reference (and fixed: `Reports.portfolioBases`).
@Suite struct MixedBaseCurrencyTests {
    @Test func aUSDPortfolioReportedInEUR() {
        let now = day("2024-06-01")
        let us = Portfolio(name: "us", baseCurrency: "USD", trackCash: true)
        let book = Book(transactions: [Transaction(portfolio: "us", type: .deposit, assetId: "", amount: fixed("1000"), price: nil, fee: nil,
                                                   currency: "USD", date: day("2024-01-01"))],
                        portfolios: [Portfolio(name: "eu", baseCurrency: "EUR", trackCash: true), us], defaultPortfolio: "eu")
        let checked = book.checked(now: now)
        #expect(checked.problems.isEmpty)
        let rates = FXTable([FXRate(from: "USD", to: "EUR", rate: fixed("0.5"), date: day("2024-05-01"))])
        var reports = Reports(ledger: checked.ledger, prices: PriceBook(), now: now, portfolios: ["eu", "us"], baseCurrency: "EUR",
                              rates: rates) { AssetLabel.unknown($0) }
        reports.portfolioBases = ["eu": "EUR", "us": "USD"]
        let s = reports.summary()
        // 1000 USD at 0.5 today: worth 500 EUR, and 500 EUR put in.
        #expect(s.cashBalance.map(DecimalFormatting.money) == "500.00")
        #expect(DecimalFormatting.money(s.totalValue) == "500.00")
        #expect(s.netDeposits.map(DecimalFormatting.money) == "500.00")
        #expect(DecimalFormatting.money(s.totalPnL) == "0.00")
    }

    /// The same over the random histories: each portfolio's realized, income, net deposits and open
    /// basis in its base, converted at today's rate, sum to the EUR view's.
    @Test func figuresOfEachPortfolioAreConvertedAtTodaysRate() {
        var tally = CurrencyReferenceTests.Tally()
        var compared = 0
        do {
            for (i, r) in CurrencyReferenceTests.rounds(count: 60, tally: &tally).enumerated() where r.bases.count == 2 {
                let ref = CurrencyReference(r.book.transactions, bases: r.bases, today: r.today.rate)
                var reports = Reports(ledger: r.checked.ledger, prices: PriceBook(manual: r.quotes), now: CurrencyReferenceTests.now,
                                      portfolios: ["eu", "us"], baseCurrency: "EUR", rates: r.today.table) { AssetLabel.unknown($0) }
                reports.portfolioBases = ["eu": "EUR", "us": "USD"]
                let s = reports.summary()
                let u = r.today.rate("USD", "EUR")
                func both(_ f: [String: Decimal]) -> Decimal { f["eu", default: 0] + f["us", default: 0] * u }
                compared += 1
                #expect(Reference.close(s.realizedPnL.decimal, both(ref.realized)), "round \(i): realized \(s.realizedPnL.decimal) vs \(both(ref.realized))")
                #expect(Reference.close(s.income.decimal, both(ref.income)), "round \(i): income \(s.income.decimal) vs \(both(ref.income))")
                #expect(Reference.close(s.netDeposits?.decimal ?? -1, both(ref.netDeposits)),
                        "round \(i): net deposits \(s.netDeposits?.decimal ?? -1) vs \(both(ref.netDeposits))")
                let cost = ref.openCost("eu") + ref.openCost("us") * u
                #expect(Reference.close(s.totalOpenCost.decimal, cost), "round \(i): open cost \(s.totalOpenCost.decimal) vs \(cost)")
            }
        }
        #expect(compared >= 15)
    }
}

import Foundation
import PortfolioCore
import Testing

/// A second reference replay, for every kind, written from `assets.md` alone: Foundation `Decimal`,
/// one dictionary keyed by `"portfolio/asset"`, weighted average cost, nothing of the engine but
/// the fields of `Transaction`. The engine must agree with it on random mixed histories.
struct MixedReference {
    struct Holding {
        var quantity: Decimal = 0
        var cost: Decimal = 0
    }

    struct Sums {
        var realized: Decimal = 0
        /// Basis realized: sold, swapped away, sent as a network fee, lost by adjustment.
        var realizedBasis: Decimal = 0
        var income: Decimal = 0
        var taxWithheld: Decimal = 0
    }

    var holdings: [String: Holding] = [:]
    /// By portfolio name.
    var sums: [String: Sums] = [:]
    /// Times a holding came down to exactly zero.
    var closedCycles = 0
    /// Records that take more than is held at their date (left out, the replay goes on).
    var oversold: [UUID] = []
    /// A move's transfer-in whose transfer-out did not happen (left out).
    var unlinked: [UUID] = []
    /// Legs of a swap or a move left out because their partner was (a pair stands or falls whole).
    var partnersLeftOut: [UUID] = []
    private var brokenLinks: Set<UUID> = []
    /// Basis sent by a move's transfer-out, by link, until its transfer-in takes it.
    private var inTransit: [UUID: Decimal] = [:]

    init(_ transactions: [Transaction]) {
        // Date order; ties keep the order given.
        let ordered = transactions.enumerated().sorted { a, b in
            a.element.date != b.element.date ? a.element.date < b.element.date : a.offset < b.offset
        }.map(\.element)
        for t in ordered { apply(t) }
    }

    /// `value` rounded half up to 18 decimals (a split's new quantity).
    static func round18(_ value: Decimal) -> Decimal {
        var v = value
        var out = Decimal()
        NSDecimalRound(&out, &v, 18, .plain)
        return out
    }

    private mutating func apply(_ t: Transaction) {
        guard let link = t.linkedId else { return applyAlone(t) }
        if brokenLinks.contains(link) {
            partnersLeftOut.append(t.id)
            return
        }
        let failures = oversold.count + unlinked.count
        applyAlone(t)
        if oversold.count + unlinked.count > failures { brokenLinks.insert(link) }
    }

    private mutating func applyAlone(_ t: Transaction) {
        let name = t.portfolio + "/" + t.assetId
        var h = holdings[name, default: Holding()]
        var s = sums[t.portfolio, default: Sums()]
        let amount = t.amountValue.decimal
        let price = t.priceValue?.decimal
        let total = t.totalValue?.decimal
        let fee = t.feeValue?.decimal ?? 0
        let heldBefore = h.quantity

        /// The basis `units` carry at the average cost; all of it when they are all that is held.
        func basis(of units: Decimal) -> Decimal {
            units == h.quantity ? h.cost : h.cost * units / h.quantity
        }

        switch t.type {
        case .buy:
            h.quantity += amount
            h.cost += (total ?? amount * price!) + fee
        case .transferIn:
            if let price {
                h.cost += amount * price + fee
            } else if let link = t.linkedId, let moved = inTransit.removeValue(forKey: link) {
                h.cost += moved + fee
            } else {
                unlinked.append(t.id)
                return
            }
            h.quantity += amount
        case .reward:
            let value = amount * (price ?? 0)
            h.quantity += amount
            h.cost += value
            s.income += value
        case .dividend, .interest:
            s.income += amount - fee
            s.taxWithheld += fee
        case .adjustment where !t.negative:
            h.quantity += amount
        case .adjustment, .fee:
            if amount > h.quantity {
                oversold.append(t.id)
                return
            }
            let lost = basis(of: amount)
            s.realized -= lost
            s.realizedBasis += lost
            h.quantity -= amount
            h.cost -= lost
        case .sell, .spend:
            if amount > h.quantity {
                oversold.append(t.id)
                return
            }
            let sold = basis(of: amount)
            s.realized += (total ?? amount * price!) - fee - sold
            s.realizedBasis += sold
            h.quantity -= amount
            h.cost -= sold
        case .transferOut:
            if amount + fee > h.quantity {
                oversold.append(t.id)
                return
            }
            let sent = basis(of: amount)
            // The fee's units leave too, their basis a realized loss; the last units take what is left.
            let lost = fee == 0 ? 0 : amount + fee == h.quantity ? h.cost - sent : h.cost * fee / h.quantity
            s.realized -= lost
            s.realizedBasis += lost
            if let link = t.linkedId { inTransit[link] = sent }
            h.quantity -= amount + fee
            h.cost -= sent + lost
        case .deposit, .withdrawal, .expense:
            return  // cash alone: no holding (these histories track no cash)
        case .split:
            if h.quantity > 0 { h.quantity = Self.round18(h.quantity * amount / (price ?? 1)) }
        }
        if heldBefore > 0 && h.quantity == 0 { closedCycles += 1 }
        holdings[name] = h
        sums[t.portfolio] = s
    }
}

@Suite struct MixedReferenceTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let portfolios = ["main", "cold"]

    /// What one random history holds, to see that the histories exercise what they should.
    struct Tally {
        var kinds: [String: Int] = [:]
        /// Records, a swap or a move counted once.
        var events = 0
        var disposals = 0
        var records = 0
        mutating func count(_ kind: String) { kinds[kind, default: 0] += 1 }
    }

    /// A random mixed history in two portfolios: every kind, swaps and moves as linked legs, about
    /// 30% disposals (some of everything held, some of more than held), dates jittered so that
    /// file order and date order differ now and then, and ties.
    static func history(_ g: inout SeededRandom, tally: inout Tally) -> [Transaction] {
        let assets = Array(["bitcoin", "ethereum", "AAPL", "solana"].prefix(g.below(3) + 2))
        var held: [String: Decimal] = [:]  // by file order, to aim disposals
        var out: [Transaction] = []
        let length = g.below(120) + 30
        let jitter = g.below(4) == 0 ? 60 : 4  // some histories badly out of order
        while out.count < length {
            let portfolio = g.below(4) == 0 ? "cold" : "main"
            let other = portfolio == "main" ? "cold" : "main"
            let asset = assets[g.below(assets.count)]
            let k = portfolio + "/" + asset
            let have = held[k] ?? 0
            let dayNumber = max(0, out.count + g.below(2 * jitter + 1) - jitter)
            let date = Date(timeIntervalSince1970: 1_700_000_000 + Double(dayNumber) * 86_400)
            let units = Reference.decimal(g.below(500_000_000) + 1, scale: 8)       // up to 5 units
            let price = Reference.decimal(g.below(9_999_999) + 1, scale: 2)         // up to 99,999.99
            let money = Reference.decimal(g.below(100_000) + 1, scale: 2)           // up to 1,000.00
            let fee = g.below(3) == 0 ? Reference.decimal(g.below(1000), scale: 2) : Decimal(0)
            func tx(_ type: TransactionType, _ amount: Decimal, negative: Bool = false, price: Decimal? = nil, total: Decimal? = nil,
                    fee: Decimal? = nil, in p: String = portfolio, asset a: String = asset, id: UUID = UUID(), link: UUID? = nil) -> Transaction {
                Transaction(id: id, portfolio: p, type: type, assetId: a, amount: Reference.exact(amount), negative: negative, price: price.map(Reference.exact),
                            total: total.map(Reference.exact), fee: fee.map(Reference.exact), currency: KindRule.of(type).hasCurrency ? "USD" : nil, date: date,
                            linkedId: link)
            }

            tally.events += 1
            if (have > 0 && g.below(100) < 36) || g.below(100) < 2 {
                // A disposal: everything, more than held, or a part.
                tally.disposals += 1
                var amount = Reference.aim(at: have, &g, choices: 6, more: 1000, scale: 8)
                if amount == 0 { amount = units }
                switch g.below(20) {
                case 0..<8:
                    // A sell at a price, or by an exchange's total.
                    if g.below(3) == 0 {
                        tally.count("sell by total")
                        let total = max(Reference.rounded(amount * price, 2, .plain) + Reference.decimal(g.below(3), scale: 2), Reference.decimal(1, scale: 2))
                        out.append(tx(.sell, amount, price: price, total: total, fee: fee))
                    } else {
                        tally.count("sell")
                        out.append(tx(.sell, amount, price: price, fee: fee))
                    }
                    held[k] = max(0, have - amount)
                case 8..<12:
                    // A transfer-out, with a network fee in units now and then.
                    let unitFee = g.below(2) == 0 ? Reference.decimal(g.below(100_000) + 1, scale: 8) : Decimal(0)
                    if unitFee > 0, amount == have, have > unitFee { amount = have - unitFee }
                    tally.count(unitFee > 0 ? "transfer-out with fee" : "transfer-out")
                    out.append(tx(.transferOut, amount, fee: unitFee))
                    held[k] = max(0, have - amount - unitFee)
                case 12..<14:
                    // Units lost, paid as a fee on their own, or spent on goods at their value.
                    switch g.below(3) {
                    case 0:
                        tally.count("negative adjustment")
                        out.append(tx(.adjustment, amount, negative: true))
                    case 1:
                        tally.count("fee in units")
                        out.append(tx(.fee, amount))
                    default:
                        tally.count("spend")
                        out.append(tx(.spend, amount, price: price, fee: fee))
                    }
                    held[k] = max(0, have - amount)
                case 14..<17:
                    // A swap: a sell of this asset and a buy of another, both at the value.
                    let to = assets.filter { $0 != asset }[g.below(assets.count - 1)]
                    let toAmount = units
                    let value = Reference.rounded(amount * price, 2, .plain) + Reference.decimal(1, scale: 2)
                    let sellID = UUID()
                    tally.count("swap")
                    out.append(tx(.sell, amount, price: Reference.rounded(value / amount, 18, .plain), total: value, fee: fee, id: sellID, link: sellID))
                    out.append(tx(.buy, toAmount, price: Reference.rounded(value / toAmount, 18, .plain), total: value, fee: 0, asset: to, link: sellID))
                    held[k] = max(0, have - amount)
                    held[portfolio + "/" + to, default: 0] += toAmount
                default:
                    // A move to the other portfolio: the transfer-in takes its basis from the transfer-out.
                    let outID = UUID()
                    tally.count("move")
                    out.append(tx(.transferOut, amount, fee: 0, id: outID, link: outID))
                    out.append(tx(.transferIn, amount, in: other, link: outID))
                    held[k] = max(0, have - amount)
                    held[other + "/" + asset, default: 0] += amount
                }
                continue
            }
            switch g.below(100) {
            case 0..<35:
                switch g.below(4) {
                case 0:
                    tally.count("buy by total")
                    let total = max(Reference.rounded(units * price, 2, .plain), Reference.decimal(1, scale: 2))
                    out.append(tx(.buy, units, price: g.below(2) == 0 ? price : nil, total: total, fee: fee))
                default:
                    tally.count("buy")
                    out.append(tx(.buy, units, price: price, fee: fee))
                }
                held[k, default: 0] += units
            case 35..<45:
                tally.count("transfer-in")
                out.append(tx(.transferIn, units, price: g.below(5) == 0 ? 0 : price, fee: fee))
                held[k, default: 0] += units
            case 45..<55:
                tally.count("reward")
                out.append(tx(.reward, units, price: g.below(5) == 0 ? 0 : price))
                held[k, default: 0] += units
            case 55..<65:
                tally.count("dividend")
                out.append(tx(.dividend, money, fee: g.below(2) == 0 ? Reference.rounded(money * Reference.decimal(g.below(40), scale: 2), 2, .plain) : 0))
            case 65..<72:
                tally.count("interest")
                out.append(tx(.interest, money, fee: g.below(3) == 0 ? money : 0))
            case 72..<80:
                tally.count("positive adjustment")
                out.append(tx(.adjustment, units))
                held[k, default: 0] += units
            default:
                // A split: a ratio, or NEW:OLD.
                let ratios: [(Decimal, Decimal?)] = [(2, nil), (3, nil), (4, nil), (10, nil), (Reference.decimal(5, scale: 1), nil), (Reference.decimal(25, scale: 2), nil),
                                                     (1, 3), (2, 3), (3, 2), (1, 7), (1, 10), (7, 3)]
                let (new, old) = ratios[g.below(ratios.count)]
                tally.count(old == nil ? "split" : "split NEW:OLD")
                out.append(tx(.split, new, price: old))
                held[k] = Reference.rounded(have * new / (old ?? 1), 18, .plain)
            }
        }
        tally.records += out.count
        return out
    }

    static func sortedIDs(_ ids: [UUID]) -> [String] { ids.map(\.uuidString).sorted() }

    @Test func engineAgreesWithTheReferenceOnMixedHistories() throws {
        var g = SeededRandom(seed: 20261124)
        var tally = Tally()
        var oversells = 0, partners = 0, closings = 0, nonzeroIncome = 0
        let book0 = Book(portfolios: Self.portfolios.map { Portfolio(name: $0) },
                         assets: [Asset(id: "AAPL", name: "Apple Inc.", type: .stock, createdDate: day("2023-01-01"))])
        for round in 0..<200 {
            var book = book0
            book.transactions = Self.history(&g, tally: &tally)
            let reference = MixedReference(book.transactions)
            let checked = book.checked(now: Self.now)
            let ledger = checked.ledger

            // Which records are left out, and why.
            #expect(Self.sortedIDs(checked.problems.filter { $0.rule == .oversell }.map(\.id)) == Self.sortedIDs(reference.oversold),
                    "round \(round)")
            #expect(Self.sortedIDs(checked.problems.filter { $0.rule == .unlinked }.map(\.id)) == Self.sortedIDs(reference.unlinked),
                    "round \(round)")
            #expect(Self.sortedIDs(checked.problems.filter { $0.rule == .partnerLeftOut }.map(\.id)) == Self.sortedIDs(reference.partnersLeftOut),
                    "round \(round)")
            #expect(checked.problems.allSatisfy { $0.rule == .oversell || $0.rule == .unlinked || $0.rule == .partnerLeftOut },
                    "round \(round): \(checked.problems.map(\.rule))")

            // Every position: quantity exactly, basis within rounding.
            for (name, r) in reference.holdings {
                let parts = name.split(separator: "/", maxSplits: 1).map(String.init)
                let p = try #require(ledger.positions[PositionKey(portfolio: parts[0], assetId: parts[1])], "round \(round) \(name)")
                #expect(p.quantity == r.quantity, "round \(round) \(name): \(p.quantity) vs \(r.quantity)")
                #expect(Reference.close(p.costBasis.decimal, r.cost), "round \(round) \(name): \(p.costBasis.text) vs \(r.cost)")
            }
            for (k, p) in ledger.positions where reference.holdings[k.portfolio + "/" + k.assetId] == nil {
                #expect(p.quantity == 0 && p.costBasis == .zero, "round \(round): \(k) held only by the engine")
            }

            // Per portfolio: realized, realized basis, income, tax withheld.
            for name in Self.portfolios {
                let e = try ledger.totals(for: [name])
                let r = reference.sums[name] ?? MixedReference.Sums()
                #expect(Reference.close(e.realized.decimal, r.realized), "round \(round) \(name): realized \(e.realized.text) vs \(r.realized)")
                #expect(Reference.close(e.realizedBasis.decimal, r.realizedBasis),
                        "round \(round) \(name): realized basis \(e.realizedBasis.text) vs \(r.realizedBasis)")
                #expect(e.income.decimal == r.income, "round \(round) \(name): income \(e.income.text) vs \(r.income)")
                #expect(e.taxWithheld.decimal == r.taxWithheld, "round \(round) \(name): tax \(e.taxWithheld.text) vs \(r.taxWithheld)")
            }
            #expect(Reference.close(ledger.closedCost.decimal, reference.sums.values.reduce(0) { $0 + $1.realizedBasis }), "round \(round)")
            #expect(ledger.closed.count == reference.closedCycles, "round \(round): \(ledger.closed.count) vs \(reference.closedCycles)")

            oversells += reference.oversold.count
            partners += reference.partnersLeftOut.count
            closings += reference.closedCycles
            if reference.sums.values.contains(where: { $0.income != 0 }) { nonzeroIncome += 1 }
        }
        // The histories exercise what they claim to.
        let share = Double(tally.disposals) / Double(tally.events)
        #expect(share > 0.25 && share < 0.35, "disposals \(tally.disposals) of \(tally.events)")
        #expect(oversells > 100 && partners > 0 && closings > 100 && nonzeroIncome > 150,
                "oversells \(oversells), partners left out \(partners), closings \(closings), income in \(nonzeroIncome)")
        for kind in ["buy", "buy by total", "sell", "sell by total", "transfer-in", "transfer-out", "transfer-out with fee", "reward",
                     "dividend", "interest", "positive adjustment", "negative adjustment", "fee in units", "spend", "split", "split NEW:OLD",
                     "swap", "move"] {
            #expect(tally.kinds[kind, default: 0] > 50, "\(kind): \(tally.kinds[kind, default: 0])")
        }
    }
}

import Foundation
import PortfolioCore
import Testing

/// A second implementation of lot accounting, written from `cost-basis.md` (and the kinds of
/// `assets.md`) alone, deliberately simple: Foundation `Decimal`, every position a plain array of
/// lots, every disposal a scan for the next lot in the method's order. Nothing of the engine is
/// used but the fields of `Transaction`, `PositionKey` as a key and the names of the methods.
/// (Not read: `CostBasis.swift`, `Ledger.swift`.)
///
/// - fifo: oldest acquisition date first; lifo: newest first; hifo: highest unit cost (basis ÷
///   quantity) first, ties by older date. Ties left: recording order (the record's position in
///   the transaction array); fifo and hifo take the earlier-recorded lot first, lifo the later.
/// - A part of a lot carries basis × taken ÷ lot quantity; the lot keeps the rest.
/// - A transfer-out takes its amount first, then its fee (units; the fee's basis is a realized loss).
/// - A move's transfer-in receives the lots its transfer-out took, with their dates, bases, sources
///   and recording positions; an `average` destination adds them to its pool; a part of an
///   `average` pool arrives in a lot portfolio as one lot acquired on the move's date by the
///   transfer-in (the engine's documented choice; the spec is silent).
/// - A split multiplies every open lot's quantity by the ratio; bases stay. (Splits that would
///   round are not modelled: they are counted in `roundedSplits`, and the random histories make none.)
/// - `average`: one pool per portfolio and asset, a lot without date or source.
struct LotReference {
    struct Lot {
        var quantity: Decimal
        var basis: Decimal
        /// `nil`: the average pool.
        var acquired: Date?
        var source: UUID?
        /// The record's position in the transaction array.
        var position: Int
        /// basis ÷ quantity when made or split (HIFO's key; the same for every part of the lot).
        var unitCost: Decimal
    }

    struct Disposal {
        var transactionId: UUID
        var portfolio: String
        var assetId: String
        var isNetworkFee: Bool
        var realizes: Bool
        var quantity: Decimal
        var basis: Decimal
        var gain: Decimal
        var parts: [Lot]
    }

    struct Sums {
        var realized: Decimal = 0
        var realizedBasis: Decimal = 0
    }

    /// Unit costs closer than this are equal (both sides round: Decimal at 38 digits, the engine at 36 decimals).
    static let tie = Decimal(sign: .plus, exponent: -24, significand: 1)

    let methods: [String: CostBasisMethod]
    var positions: [PositionKey: [Lot]] = [:]
    /// In replay order.
    var disposals: [Disposal] = []
    var sums: [String: Sums] = [:]
    /// Splits whose new quantities would need rounding (not modelled).
    var roundedSplits = 0
    /// Lots taken while another open lot tied with them in the method's own order, by method.
    var ties: [CostBasisMethod: Int] = [:]
    /// Lot parts a move's transfer-out sent, by link, until its transfer-in takes them.
    private var inTransit: [UUID: [Lot]] = [:]

    init(_ transactions: [Transaction], methods: [String: CostBasisMethod]) {
        self.methods = methods
        // Date order; ties keep the order given.
        let order = transactions.indices.sorted { a, b in
            transactions[a].date != transactions[b].date ? transactions[a].date < transactions[b].date : a < b
        }
        for i in order { apply(transactions[i], position: i) }
    }

    func method(of portfolio: String) -> CostBasisMethod { methods[portfolio] ?? .average }

    /// `a` is taken before `b`.
    static func precedes(_ a: Lot, _ b: Lot, _ method: CostBasisMethod) -> Bool {
        let (da, db) = (a.acquired ?? .distantPast, b.acquired ?? .distantPast)
        switch method {
        case .average:
            return false
        case .fifo:
            return da != db ? da < db : a.position < b.position
        case .lifo:
            return da != db ? da > db : a.position > b.position
        case .hifo:
            let d = a.unitCost - b.unitCost
            if d > tie || d < -tie { return d > 0 }
            return da != db ? da < db : a.position < b.position
        }
    }

    /// `a` and `b` are equal in the method's own order (a tie that recording order, or the date under hifo, breaks).
    static func tied(_ a: Lot, _ b: Lot, _ method: CostBasisMethod) -> Bool {
        switch method {
        case .average: return false
        case .fifo, .lifo: return a.acquired == b.acquired
        case .hifo: return !(a.unitCost - b.unitCost > tie || b.unitCost - a.unitCost > tie)
        }
    }

    /// The open lots in the order the method takes them (lifo: from the end, like the engine's `open`).
    func open(_ key: PositionKey) -> [Lot] {
        let m = method(of: key.portfolio)
        let lots = positions[key] ?? []
        switch m {
        case .average: return lots
        case .lifo: return lots.sorted { Self.precedes($0, $1, .fifo) }
        default: return lots.sorted { Self.precedes($0, $1, m) }
        }
    }

    private mutating func take(_ amount: Decimal, from key: PositionKey) -> (basis: Decimal, parts: [Lot]) {
        let m = method(of: key.portfolio)
        var lots = positions[key] ?? []
        var parts: [Lot] = []
        var left = amount
        while left > 0 {
            precondition(!lots.isEmpty, "reference: \(key) takes more than it holds")
            var next = 0
            for i in lots.indices.dropFirst() where Self.precedes(lots[i], lots[next], m) { next = i }
            var lot = lots[next]
            if lots.indices.contains(where: { $0 != next && Self.tied(lots[$0], lot, m) }) { ties[m, default: 0] += 1 }
            var part = lot
            part.quantity = min(left, lot.quantity)
            if part.quantity == lot.quantity {
                lots.remove(at: next)
            } else {
                part.basis = lot.basis * part.quantity / lot.quantity
                lot.quantity -= part.quantity
                lot.basis -= part.basis
                lots[next] = lot
            }
            parts.append(part)
            left -= part.quantity
        }
        positions[key] = lots
        return (parts.reduce(0) { $0 + $1.basis }, parts)
    }

    private mutating func add(_ lot: Lot, to key: PositionKey) {
        var lots = positions[key] ?? []
        if method(of: key.portfolio) == .average {
            if lots.isEmpty {
                lots = [Lot(quantity: lot.quantity, basis: lot.basis, acquired: nil, source: nil, position: 0, unitCost: 0)]
            } else {
                lots[0].quantity += lot.quantity
                lots[0].basis += lot.basis
            }
        } else {
            lots.append(lot)
        }
        positions[key] = lots
    }

    private mutating func acquire(_ key: PositionKey, _ quantity: Decimal, cost: Decimal, _ t: Transaction, position: Int) {
        add(Lot(quantity: quantity, basis: cost, acquired: t.date, source: t.id, position: position, unitCost: cost / quantity), to: key)
    }

    private mutating func dispose(_ t: Transaction, _ key: PositionKey, _ quantity: Decimal, fee: Bool = false, realizes: Bool = true,
                                  proceeds: Decimal = 0) -> [Lot] {
        let (basis, parts) = take(quantity, from: key)
        let gain = realizes ? proceeds - basis : 0
        if realizes {
            sums[t.portfolio, default: Sums()].realized += gain
            sums[t.portfolio, default: Sums()].realizedBasis += basis
        }
        disposals.append(Disposal(transactionId: t.id, portfolio: t.portfolio, assetId: t.assetId, isNetworkFee: fee, realizes: realizes,
                                  quantity: quantity, basis: basis, gain: gain, parts: parts))
        return parts
    }

    private mutating func apply(_ t: Transaction, position: Int) {
        let key = PositionKey(portfolio: t.portfolio, assetId: t.assetId)
        let amount = t.amountValue.decimal
        let price = t.priceValue?.decimal
        let fee = t.feeValue?.decimal ?? 0
        switch t.type {
        case .buy:
            acquire(key, amount, cost: (t.totalValue?.decimal ?? amount * price!) + fee, t, position: position)
        case .transferIn:
            if let price {
                acquire(key, amount, cost: amount * price + fee, t, position: position)
                return
            }
            // A move's transfer-in: the lots its transfer-out took.
            let parts = inTransit.removeValue(forKey: t.linkedId!)!
            precondition(fee == 0, "reference: a move's transfer-in with a fee")
            if parts.first?.source == nil || method(of: t.portfolio) == .average {
                // From a pool, or into one: the units as one lot (a pool joins them to itself).
                let basis = parts.reduce(Decimal(0)) { $0 + $1.basis }
                acquire(key, amount, cost: basis, t, position: position)
            } else {
                for part in parts { add(part, to: key) }
            }
        case .reward:
            acquire(key, amount, cost: amount * (price ?? 0), t, position: position)
        case .adjustment where !t.negative:
            acquire(key, amount, cost: 0, t, position: position)
        case .adjustment, .fee:
            _ = dispose(t, key, amount)
        case .sell, .spend:
            _ = dispose(t, key, amount, proceeds: (t.totalValue?.decimal ?? amount * price!) - fee)
        case .transferOut:
            let parts = dispose(t, key, amount, realizes: false)
            if let link = t.linkedId { inTransit[link] = parts }
            if fee > 0 { _ = dispose(t, key, fee, fee: true) }
        case .split:
            let ratio = amount / (price ?? 1)
            positions[key] = positions[key]?.map { lot in
                var lot = lot
                lot.quantity *= ratio
                if Reference.rounded(lot.quantity, 18, .plain) != lot.quantity { roundedSplits += 1 }
                lot.unitCost = lot.basis / lot.quantity
                return lot
            }
        case .dividend, .interest, .deposit, .withdrawal, .expense:
            return
        }
    }
}

@Suite struct LotReferenceTests {
    static let portfolios = ["main", "trading"]

    /// The methods each random history is replayed under: each one in both portfolios, then two
    /// of four mixes (in turn) whose moves go between different methods both ways: fifo ↔ hifo,
    /// average ↔ fifo, hifo ↔ lifo, lifo ↔ average.
    static func assignments(round: Int) -> [[String: CostBasisMethod]] {
        let mixes: [[String: CostBasisMethod]] = [
            ["main": .fifo, "trading": .hifo], ["main": .average, "trading": .fifo],
            ["main": .hifo, "trading": .lifo], ["main": .lifo, "trading": .average],
        ]
        return CostBasisMethod.allCases.map { ["main": $0, "trading": $0] } + [mixes[(2 * round) % 4], mixes[(2 * round + 1) % 4]]
    }

    struct Tally {
        var kinds: [String: Int] = [:]
        mutating func count(_ kind: String) { kinds[kind, default: 0] += 1 }
    }

    /// A random valid history in `main` and `trading` (never more disposed of than held), made in
    /// replay order and then written to the array with dates interleaved (records of one date keep
    /// their order, so recording order is still the generation order). Same-date records are
    /// frequent; a third of the prices come from three round values and some acquisitions cost
    /// nothing, so HIFO meets equal unit costs. Splits are recorded in both portfolios at once (as a
    /// real split is), so the pieces of one lot that moves split apart stay alike; their ratios
    /// never need rounding.
    static func history(_ g: inout SeededRandom, tally: inout Tally) -> [Transaction] {
        let assets = Array(["bitcoin", "ethereum", "solana"].prefix(g.below(2) + 2))
        var held: [PositionKey: Decimal] = [:]
        var lastBuyDay: [PositionKey: Int] = [:]
        var records: [Transaction] = []
        var dayNumber = 0
        var splitsAddingDecimals = 0
        let length = g.below(50) + 20
        while records.count < length {
            if g.below(2) == 0 { dayNumber += g.below(3) + 1 }  // else the date of the record before: a tie
            let date = Date(timeIntervalSince1970: 1_700_000_000 + Double(dayNumber) * 86_400)
            let portfolio = g.below(3) == 0 ? "trading" : "main"
            let other = portfolio == "main" ? "trading" : "main"
            let asset = assets[g.below(assets.count)]
            let key = PositionKey(portfolio: portfolio, assetId: asset)
            let have = held[key] ?? 0
            let units = Reference.decimal(g.below(500_000_000) + 1, scale: 8)
            let price = g.below(3) == 0 ? Decimal([100, 250, 1000][g.below(3)]) : Reference.decimal(g.below(9_999_999) + 1, scale: 2)
            let fee = g.below(3) == 0 ? Reference.decimal(g.below(1000) + 1, scale: 2) : Decimal(0)
            func tx(_ type: TransactionType, _ amount: Decimal, negative: Bool = false, price: Decimal? = nil, total: Decimal? = nil,
                    fee: Decimal? = nil) -> Transaction {
                Transaction(portfolio: portfolio, type: type, assetId: asset, amount: Reference.exact(amount), negative: negative,
                            price: price.map(Reference.exact), total: total.map(Reference.exact), fee: fee.map(Reference.exact),
                            currency: KindRule.of(type).hasCurrency ? "USD" : nil, date: date)
            }
            /// All that is held, or a part of it at 8 decimals.
            func aim() -> Decimal {
                if g.below(5) == 0 { return have }
                let part = Reference.rounded(have * Reference.decimal(g.below(999) + 1, scale: 3), 8, .down)
                return part > 0 ? part : have
            }

            if have > 0 && g.below(100) < 40 {
                var amount = aim()
                switch g.below(20) {
                case 0..<6:
                    if g.below(3) == 0 {
                        tally.count("sell by total")
                        let total = max(Reference.rounded(amount * price, 2, .plain), Reference.decimal(1, scale: 2))
                        records.append(tx(.sell, amount, price: price, total: total, fee: fee))
                    } else {
                        tally.count("sell")
                        records.append(tx(.sell, amount, price: price, fee: fee))
                    }
                    held[key] = have - amount
                case 6..<10:
                    var unitFee = g.below(2) == 0 ? Reference.decimal(g.below(100_000) + 1, scale: 8) : Decimal(0)
                    if amount + unitFee > have { amount = have - unitFee }
                    if amount <= 0 { (amount, unitFee) = (have, 0) }
                    tally.count(unitFee > 0 ? "transfer-out with fee" : "transfer-out")
                    records.append(tx(.transferOut, amount, fee: unitFee))
                    held[key] = have - amount - unitFee
                case 10..<12:
                    tally.count("negative adjustment")
                    records.append(tx(.adjustment, amount, negative: true))
                    held[key] = have - amount
                case 12..<15:
                    let to = assets.filter { $0 != asset }[g.below(assets.count - 1)]
                    let value = max(Reference.rounded(amount * price, 2, .plain), Reference.decimal(1, scale: 2))
                    tally.count("swap")
                    records += try! Transaction.swap(portfolio: portfolio, from: asset, amount: Reference.exact(amount), to: to,
                                                     amount: Reference.exact(units), value: Reference.exact(value), fee: Reference.exact(fee),
                                                     currencies: ("USD", "USD"), date: .instant(date), notes: nil)
                    held[key] = have - amount
                    held[PositionKey(portfolio: portfolio, assetId: to), default: 0] += units
                default:
                    // Now and then a hand-written move whose transfer-out pays a network fee in units.
                    let unitFee = g.below(5) == 0 && amount < have
                        ? min(Reference.decimal(g.below(100_000) + 1, scale: 8), have - amount) : Decimal(0)
                    tally.count(unitFee > 0 ? "move with fee" : "move")
                    var legs = Transaction.move(asset, amount: Reference.exact(amount), from: portfolio, to: other, date: .instant(date), notes: nil)
                    legs[0].feeValue = Reference.exact(unitFee)
                    records += legs
                    held[key] = have - amount - unitFee
                    held[PositionKey(portfolio: other, assetId: asset), default: 0] += amount
                }
                continue
            }
            switch g.below(100) {
            case 0..<40:
                if lastBuyDay[key] == dayNumber { tally.count("same-date buys") }
                lastBuyDay[key] = dayNumber
                if fee > 0 { tally.count("buy with fee") }
                if g.below(4) == 0 {
                    tally.count("buy by total")
                    let total = max(Reference.rounded(units * price, 2, .plain), Reference.decimal(1, scale: 2))
                    records.append(tx(.buy, units, price: g.below(2) == 0 ? price : nil, total: total, fee: fee))
                } else {
                    tally.count("buy")
                    records.append(tx(.buy, units, price: price, fee: fee))
                }
                held[key, default: 0] += units
            case 40..<55:
                tally.count("transfer-in")
                records.append(tx(.transferIn, units, price: g.below(5) == 0 ? 0 : price, fee: fee))
                held[key, default: 0] += units
            case 55..<70:
                tally.count("reward")
                records.append(tx(.reward, units, price: g.below(4) == 0 ? 0 : price))
                held[key, default: 0] += units
            case 70..<85:
                tally.count("positive adjustment")
                records.append(tx(.adjustment, units))
                held[key, default: 0] += units
            default:
                // A split, in both portfolios (either first); a ratio or NEW:OLD, none that rounds.
                let whole: [(Decimal, Decimal?)] = [(2, nil), (3, nil), (4, nil), (10, nil), (6, 2)]
                let halving: [(Decimal, Decimal?)] = [(Reference.decimal(5, scale: 1), nil), (1, 2), (5, 2), (3, 2)]
                let adds = splitsAddingDecimals < 6 && g.below(2) == 0  // a ratio that adds a decimal (at most 6 a history)
                let (new, old) = adds ? halving[g.below(halving.count)] : whole[g.below(whole.count)]
                if adds { splitsAddingDecimals += 1 }
                tally.count(old == nil ? "split" : "split NEW:OLD")
                let first = g.below(2) == 0 ? portfolio : other
                for p in [first, first == "main" ? "trading" : "main"] {
                    records.append(Transaction(portfolio: p, type: .split, assetId: asset, amount: Reference.exact(new),
                                               price: old.map(Reference.exact),
                                               fee: nil, currency: nil, date: date))
                    let k = PositionKey(portfolio: p, assetId: asset)
                    if let h = held[k] { held[k] = h * new / (old ?? 1) }
                }
            }
        }
        // The file interleaves the dates; records of one date keep their order.
        if g.below(4) == 0 { return records }
        var runs: [[Transaction]] = []
        for t in records {
            if let last = runs.last?.last, last.date == t.date { runs[runs.count - 1].append(t) } else { runs.append([t]) }
        }
        var out: [Transaction] = []
        while !runs.isEmpty {
            let i = g.below(runs.count)
            out.append(runs[i].removeFirst())
            if runs[i].isEmpty { runs.remove(at: i) }
        }
        return out
    }

    /// A lot or a lot part as both sides can show it.
    struct View: CustomStringConvertible {
        var source: UUID?
        var acquired: Date?
        var quantity: Decimal
        var basis: Decimal

        init(_ lot: PortfolioCore.Lot) {
            (source, acquired, quantity, basis) = (lot.source, lot.acquired, lot.quantity.decimal, lot.basis.decimal)
        }

        init(_ lot: LotReference.Lot) {
            (source, acquired, quantity, basis) = (lot.source, lot.acquired, lot.quantity, lot.basis)
        }

        var description: String {
            let name = source.map { String($0.uuidString.prefix(8)) } ?? "pool"
            return "\(name)@\(acquired.map { Int($0.timeIntervalSince1970) } ?? 0) \(quantity) / \(basis)"
        }

        /// Neighbouring pieces of one lot joined: pieces that a move split apart and brought
        /// together again share date, source, recording position and unit cost, so the order of
        /// two such pieces (which the spec cannot say) changes nothing but how the units are cut.
        static func joined(_ views: [View]) -> [View] {
            var out: [View] = []
            for v in views {
                if let last = out.last, last.source != nil, last.source == v.source, last.acquired == v.acquired {
                    out[out.count - 1].quantity += v.quantity
                    out[out.count - 1].basis += v.basis
                } else {
                    out.append(v)
                }
            }
            return out
        }

        static func same(_ a: [View], _ b: [View]) -> Bool {
            let (a, b) = (joined(a), joined(b))
            return a.count == b.count
                && zip(a, b).allSatisfy {
                    $0.source == $1.source && $0.acquired == $1.acquired && $0.quantity == $1.quantity && Reference.close($0.basis, $1.basis)
                }
        }
    }

    /// Differences found in one replay (one `#expect` per replay keeps the test fast).
    struct Findings {
        var lines: [String] = []
        mutating func check(_ ok: Bool, _ line: @autoclosure () -> String) { if !ok { lines.append(line()) } }
    }

    /// The engine against the reference: every disposal with its lot parts, every position's open
    /// lots, and each portfolio's realized P&L.
    static func compare(_ ledger: Ledger, _ reference: LotReference, _ f: inout Findings) {
        let disposals = ledger.disposals
        f.check(disposals.count == reference.disposals.count, "\(disposals.count) disposals vs \(reference.disposals.count)")
        for (e, r) in zip(disposals, reference.disposals) {
            let what = "disposal \(r.transactionId.uuidString.prefix(8)) \(r.portfolio)/\(r.assetId)\(r.isNetworkFee ? " fee" : "")"
            f.check(e.transactionId == r.transactionId && e.isNetworkFee == r.isNetworkFee,
                    "\(what): the engine's is \(e.transactionId.uuidString.prefix(8))\(e.isNetworkFee ? " fee" : "")")
            f.check(e.portfolio == r.portfolio && e.assetId == r.assetId && e.realizes == r.realizes,
                    "\(what): realizes \(e.realizes) vs \(r.realizes)")
            f.check(e.quantity.decimal == r.quantity, "\(what): quantity \(e.quantity.decimal) vs \(r.quantity)")
            f.check(Reference.close(e.basis.decimal, r.basis), "\(what): basis \(e.basis.decimal) vs \(r.basis)")
            f.check(Reference.close(e.gain.decimal, r.gain), "\(what): gain \(e.gain.decimal) vs \(r.gain)")
            f.check(View.same(e.parts.map(View.init), r.parts.map(View.init)),
                    "\(what): parts \(View.joined(e.parts.map(View.init))) vs \(View.joined(r.parts.map(View.init)))")
        }
        var keys = Set(reference.positions.keys)
        keys.formUnion(ledger.positions.keys)
        for key in keys {
            let e = ledger.positions[key]?.lots.open ?? []
            let r = reference.open(key)
            let what = "\(key.portfolio)/\(key.assetId)"
            f.check(View.same(e.map(View.init), r.map(View.init)),
                    "\(what): open lots \(View.joined(e.map(View.init))) vs \(View.joined(r.map(View.init)))")
            if let lots = ledger.positions[key]?.lots {
                f.check(lots.method == reference.method(of: key.portfolio), "\(what): method \(lots.method)")
                f.check(lots.quantity.decimal == r.reduce(0) { $0 + $1.quantity }, "\(what): quantity \(lots.quantity.decimal)")
                f.check(Reference.close(lots.costBasis.decimal, r.reduce(0) { $0 + $1.basis }), "\(what): basis \(lots.costBasis.decimal)")
                if lots.method == .hifo {
                    // byAcquisition: the same lots from the oldest (under fifo and lifo, the order of `open`).
                    let byDate = r.sorted { LotReference.precedes($0, $1, .fifo) }
                    f.check(View.same(lots.byAcquisition.map(View.init), byDate.map(View.init)), "\(what): byAcquisition")
                }
            }
        }
        for p in portfolios {
            let e = ledger.totals(of: p)
            let r = reference.sums[p] ?? LotReference.Sums()
            f.check(Reference.close(e.realized.decimal, r.realized), "\(p): realized \(e.realized.decimal) vs \(r.realized)")
            f.check(Reference.close(e.realizedBasis.decimal, r.realizedBasis),
                    "\(p): realized basis \(e.realizedBasis.decimal) vs \(r.realizedBasis)")
        }
    }

    /// What each portfolio acquired (cost, fees included) and what its sales brought in, straight
    /// from the records: the same under every method.
    static func flows(_ transactions: [Transaction]) -> [String: (cost: Decimal, proceeds: Decimal)] {
        var out: [String: (cost: Decimal, proceeds: Decimal)] = [:]
        for t in transactions {
            let amount = t.amountValue.decimal
            let price = t.priceValue?.decimal ?? 0
            let fee = t.feeValue?.decimal ?? 0
            switch t.type {
            case .buy: out[t.portfolio, default: (0, 0)].cost += (t.totalValue?.decimal ?? amount * price) + fee
            case .transferIn where t.priceValue != nil: out[t.portfolio, default: (0, 0)].cost += amount * price + fee
            case .reward: out[t.portfolio, default: (0, 0)].cost += amount * price
            case .sell: out[t.portfolio, default: (0, 0)].proceeds += (t.totalValue?.decimal ?? amount * price) - fee
            default: break
            }
        }
        return out
    }

    @Test func engineAgreesWithTheLotReferenceOnRandomHistories() throws {
        var g = SeededRandom(seed: 20261125)
        var tally = Tally()
        var failedRounds = 0
        var moveParts = 0
        var ties: [CostBasisMethod: Int] = [:]
        for round in 0..<200 {
            let transactions = Self.history(&g, tally: &tally)
            let flows = Self.flows(transactions)
            /// Per replay: every position's quantity, and each portfolio's realized − open basis
            /// − basis sent out unrealized + basis moved in (= proceeds − cost).
            var quantities: [[PositionKey: Decimal]] = []
            var balances: [[String: Decimal]] = []
            let assignments = Self.assignments(round: round)
            for methods in assignments {
                let label = "round \(round) \(methods["main"]!)/\(methods["trading"]!)"
                let reference = LotReference(transactions, methods: methods)
                #expect(reference.roundedSplits == 0, "\(label): a split rounds")
                ties.merge(reference.ties, uniquingKeysWith: +)
                let ledger = try Ledger.replay(transactions, options: LedgerOptions(methods: methods, keepingDisposals: true))
                var f = Findings()
                Self.compare(ledger, reference, &f)

                // The same books under every method: quantities; cost = realized basis + open basis
                // + basis sent out (unrealized) − basis moved in; proceeds = realized + realized basis.
                quantities.append(ledger.positions.filter { $0.value.lots.quantity != .zero }.mapValues { $0.lots.quantity.decimal })
                var balance: [String: Decimal] = [:]
                var sent: [String: Decimal] = [:], movedIn: [String: Decimal] = [:], open: [String: Decimal] = [:]
                for d in ledger.disposals where !d.realizes {
                    sent[d.portfolio, default: 0] += d.basis.decimal
                    if d.linked { movedIn[d.portfolio == "main" ? "trading" : "main", default: 0] += d.basis.decimal }
                }
                for (k, position) in ledger.positions { open[k.portfolio, default: 0] += position.costBasis.decimal }
                for p in Self.portfolios {
                    let totals = ledger.totals(of: p)
                    let (open, sent, movedIn) = (open[p] ?? 0, sent[p] ?? 0, movedIn[p] ?? 0)
                    let flow = flows[p] ?? (0, 0)
                    f.check(Reference.close(totals.realizedBasis.decimal + open + sent - movedIn, flow.cost),
                            "\(p): realized basis \(totals.realizedBasis.decimal) + open \(open) + sent \(sent) − moved in \(movedIn)"
                                + " vs cost \(flow.cost)")
                    f.check(Reference.close(totals.realized.decimal + totals.realizedBasis.decimal, flow.proceeds),
                            "\(p): realized \(totals.realized.decimal) + basis \(totals.realizedBasis.decimal) vs proceeds \(flow.proceeds)")
                    balance[p] = totals.realized.decimal - open - sent + movedIn
                }
                balances.append(balance)
                moveParts += ledger.disposals.filter { $0.type == .transferOut && $0.linked }.reduce(0) { $0 + $1.parts.count }
                if !f.lines.isEmpty {
                    Issue.record("\(label): \(f.lines.count) differences:\n\(f.lines.prefix(12).joined(separator: "\n"))")
                    failedRounds += 1
                }
            }
            for (i, q) in quantities.enumerated().dropFirst() {
                #expect(q == quantities[0], "round \(round): quantities under \(assignments[i]) differ from \(assignments[0])")
            }
            for (i, b) in balances.enumerated().dropFirst() {
                for p in Self.portfolios {
                    #expect(Reference.close(b[p]!, balances[0][p]!), "round \(round) \(p): \(b[p]!) under \(assignments[i]) vs \(balances[0][p]!)")
                }
            }
            if failedRounds > 5 { break }
        }
        // The histories hold what they claim to.
        for kind in ["buy", "buy with fee", "buy by total", "same-date buys", "sell", "sell by total", "transfer-in", "transfer-out",
                     "transfer-out with fee", "reward", "positive adjustment", "negative adjustment", "split", "split NEW:OLD", "swap", "move",
                     "move with fee"] {
            #expect(tally.kinds[kind, default: 0] > 80, "\(kind): \(tally.kinds[kind, default: 0])")
        }
        #expect(moveParts > 1000, "lot parts moved: \(moveParts)")
        #expect(ties[.fifo, default: 0] > 100 && ties[.lifo, default: 0] > 100 && ties[.hifo, default: 0] > 100, "ties met: \(ties)")
    }

    // MARK: Tie rules and moves, by hand (cost-basis.md)

    static func replay(_ transactions: [Transaction], _ methods: [String: CostBasisMethod]) throws -> Ledger {
        try Ledger.replay(transactions, options: LedgerOptions(methods: methods, keepingDisposals: true))
    }

    /// Lots or lot parts as `"name date quantity basis"`, each named by the record that made it.
    static func shown(_ lots: [PortfolioCore.Lot], _ names: [UUID: String]) -> [String] {
        let format = ISO8601DateFormatter()
        format.formatOptions = [.withFullDate]
        return lots.map { lot in
            let name = lot.source.map { names[$0] ?? "?" } ?? "pool"
            return "\(name) \(lot.acquired.map(format.string) ?? "-") \(lot.quantity.text) \(lot.basis.text)"
        }
    }

    static func open(_ ledger: Ledger, _ assetId: String = "bitcoin", in portfolio: String = "main") -> [PortfolioCore.Lot] {
        ledger.positions[key(assetId, in: portfolio)]?.lots.open ?? []
    }

    /// Three buys, two of them on one date and recorded after a later-dated one, then a sale of 1.5.
    @Test func sameDateBuysAreTakenInRecordingOrder() throws {
        let c = record(.buy, "bitcoin", "1", price: "150", on: "2024-01-02")
        let t1 = record(.buy, "bitcoin", "1", price: "100", on: "2024-01-01")
        let t2 = record(.buy, "bitcoin", "1", price: "200", on: "2024-01-01")
        let sale = record(.sell, "bitcoin", "1.5", price: "300", on: "2024-01-03")
        let names = [c.id: "c", t1.id: "t1", t2.id: "t2"]
        let expected: [CostBasisMethod: (parts: [String], open: [String])] = [
            // Oldest date first; on the tie, the earlier-recorded t1.
            .fifo: (["t1 2024-01-01 1 100", "t2 2024-01-01 0.5 100"], ["t2 2024-01-01 0.5 100", "c 2024-01-02 1 150"]),
            // Newest date first (c); on the tie, the later-recorded t2. `open` lists from the oldest, LIFO takes from the end.
            .lifo: (["c 2024-01-02 1 150", "t2 2024-01-01 0.5 100"], ["t1 2024-01-01 1 100", "t2 2024-01-01 0.5 100"]),
            // Highest unit cost first: t2 (200), then c (150).
            .hifo: (["t2 2024-01-01 1 200", "c 2024-01-02 0.5 75"], ["c 2024-01-02 0.5 75", "t1 2024-01-01 1 100"]),
            .average: (["pool - 1.5 225"], ["pool - 1.5 225"]),
        ]
        for (method, want) in expected {
            let ledger = try Self.replay([c, t1, t2, sale], ["main": method])
            let sold = try #require(ledger.disposals.first, "\(method)")
            #expect(ledger.disposals.count == 1)
            #expect(Self.shown(sold.parts, names) == want.parts, "\(method)")
            #expect(Self.shown(Self.open(ledger), names) == want.open, "\(method)")
            let basis = try sold.parts.reduce(Exact36.zero) { try $0 + $1.basis }
            #expect(sold.basis == basis && sold.gain.decimal == 450 - basis.decimal, "\(method)")
        }
    }

    /// HIFO on equal unit costs: the older date first, then the earlier-recorded; lots that cost
    /// nothing (a reward at 0, a positive adjustment, a transfer-in at 0) tie too.
    @Test func hifoBreaksEqualUnitCostsByDateThenRecordingOrder() throws {
        let x = record(.buy, "bitcoin", "1", price: "100", on: "2024-01-02")
        let y = record(.buy, "bitcoin", "2", price: "99", fee: "2", on: "2024-01-01")  // 200 for 2: 100 a unit
        let z = record(.buy, "bitcoin", "1", price: "100", on: "2024-01-01")
        let w = record(.buy, "bitcoin", "1", price: "300", on: "2024-01-03")
        let s1 = record(.sell, "bitcoin", "3.5", price: "400", on: "2024-01-04")
        let r = record(.reward, "bitcoin", "1", price: "0", on: "2024-01-05")
        let a = record(.adjustment, "bitcoin", "1", on: "2024-01-05")
        let p = record(.transferIn, "bitcoin", "1", price: "0", on: "2024-01-04")
        let s2 = record(.sell, "bitcoin", "2.5", price: "10", on: "2024-01-06")
        let names = [x.id: "x", y.id: "y", z.id: "z", w.id: "w", r.id: "r", a.id: "a", p.id: "p"]
        let ledger = try Self.replay([x, y, z, w, s1, r, a, p, s2], ["main": .hifo])
        #expect(ledger.disposals.count == 2)
        #expect(Self.shown(ledger.disposals[0].parts, names) == ["w 2024-01-03 1 300", "y 2024-01-01 2 200", "z 2024-01-01 0.5 50"])
        #expect(ledger.disposals[0].basis.decimal == 550)
        #expect(Self.shown(ledger.disposals[1].parts, names) == ["z 2024-01-01 0.5 50", "x 2024-01-02 1 100", "p 2024-01-04 1 0"])
        #expect(ledger.disposals[1].basis.decimal == 150)
        #expect(Self.shown(Self.open(ledger), names) == ["r 2024-01-05 1 0", "a 2024-01-05 1 0"])
        #expect(ledger.totals(of: "main").realized.text == "725")  // (1400 − 550) + (25 − 150)
    }

    /// A move carries the lots its source's method took, with their dates and bases; the
    /// destination's method then orders them among its own lots.
    @Test func aMoveKeepsItsLotsDatesForTheDestinationsMethod() throws {
        let m1 = record(.buy, "bitcoin", "1", price: "100", on: "2024-01-01")
        let m2 = record(.buy, "bitcoin", "1", price: "300", on: "2024-02-01")
        let t1 = record(.buy, "bitcoin", "1", price: "200", on: "2024-03-01", portfolio: "trading")
        let move = moveLegs("bitcoin", "1.5", from: "main", to: "trading", on: "2024-04-01")
        let sale = record(.sell, "bitcoin", "1.2", price: "500", on: "2024-05-01", portfolio: "trading")
        let names = [m1.id: "m1", m2.id: "m2", t1.id: "t1"]
        let expected: [CostBasisMethod: [String]] = [
            .fifo: ["m1 2024-01-01 1 100", "m2 2024-02-01 0.2 60"],
            .lifo: ["t1 2024-03-01 1 200", "m2 2024-02-01 0.2 60"],  // the moved lots are older than t1
            .hifo: ["m2 2024-02-01 0.5 150", "t1 2024-03-01 0.7 140"],
            .average: ["pool - 1.2 216"],  // (200 + 250) ÷ 2.5 × 1.2
        ]
        for (method, parts) in expected {
            let ledger = try Self.replay([m1, m2, t1] + move + [sale], ["main": .fifo, "trading": method])
            #expect(ledger.disposals.count == 2, "\(method)")
            let moved = try #require(ledger.disposals.first)
            #expect(moved.transactionId == move[0].id && !moved.realizes && moved.gain == .zero, "\(method)")
            #expect(Self.shown(moved.parts, names) == ["m1 2024-01-01 1 100", "m2 2024-02-01 0.5 150"], "\(method)")
            #expect(Self.shown(ledger.disposals[1].parts, names) == parts, "\(method)")
            #expect(Self.shown(Self.open(ledger), names) == ["m2 2024-02-01 0.5 150"], "\(method)")
            #expect(ledger.totals(of: "main").realized == .zero)
        }
    }

    /// A moved lot keeps its recording position: against a lot of the same date in the
    /// destination, recorded after it, FIFO takes the moved lot first and LIFO last.
    @Test func aMovedLotKeepsItsRecordingPosition() throws {
        let early = record(.buy, "bitcoin", "1", price: "100", on: "2024-01-01")
        let mine = record(.buy, "bitcoin", "1", price: "100", on: "2024-01-01", portfolio: "trading")
        let late = record(.buy, "bitcoin", "1", price: "100", on: "2024-01-01")
        let move = moveLegs("bitcoin", "2", from: "main", to: "trading", on: "2024-02-01")
        let sale = record(.sell, "bitcoin", "1.5", price: "200", on: "2024-03-01", portfolio: "trading")
        let names = [early.id: "early", mine.id: "mine", late.id: "late"]
        let expected: [CostBasisMethod: [String]] = [
            .fifo: ["early 2024-01-01 1 100", "mine 2024-01-01 0.5 50"],
            .lifo: ["late 2024-01-01 1 100", "mine 2024-01-01 0.5 50"],
            .hifo: ["early 2024-01-01 1 100", "mine 2024-01-01 0.5 50"],
        ]
        for (method, parts) in expected {
            let ledger = try Self.replay([early, mine, late] + move + [sale], ["main": .fifo, "trading": method])
            #expect(Self.shown(ledger.disposals[0].parts, names) == ["early 2024-01-01 1 100", "late 2024-01-01 1 100"], "\(method)")
            #expect(Self.shown(ledger.disposals[1].parts, names) == parts, "\(method)")
        }
    }

    /// A move whose transfer-out pays a network fee in units: the amount's lots move, then the fee
    /// takes the next lot part and realizes its basis as a loss in the source.
    @Test func aMoveWithAUnitFeeSendsTheAmountsLots() throws {
        let t1 = record(.buy, "bitcoin", "1", price: "100", on: "2024-01-01")
        let t2 = record(.buy, "bitcoin", "1", price: "200", on: "2024-02-01")
        var move = moveLegs("bitcoin", "1.5", from: "main", to: "trading", on: "2024-03-01")
        move[0].feeValue = fixed("0.1")
        let names = [t1.id: "t1", t2.id: "t2"]
        let ledger = try Self.replay([t1, t2] + move, ["main": .fifo, "trading": .hifo])
        #expect(ledger.disposals.map(\.isNetworkFee) == [false, true])
        #expect(Self.shown(ledger.disposals[1].parts, names) == ["t2 2024-02-01 0.1 20"])
        #expect(ledger.totals(of: "main").realized.text == "-20")
        #expect(Self.shown(Self.open(ledger), names) == ["t2 2024-02-01 0.4 80"])
        #expect(Self.shown(Self.open(ledger, in: "trading"), names) == ["t2 2024-02-01 0.5 100", "t1 2024-01-01 1 100"])
    }

    /// From an `average` pool the units arrive as one lot, acquired on the move's date by the
    /// transfer-in (the engine's choice; the spec is silent); into an `average` pool they join it.
    @Test func aPoolArrivesAsOneLotOnTheMovesDate() throws {
        let b1 = record(.buy, "bitcoin", "1", price: "100", on: "2024-01-01")
        let b2 = record(.buy, "bitcoin", "1", price: "300", on: "2024-02-01")
        let own = record(.buy, "bitcoin", "1", price: "500", on: "2024-02-15", portfolio: "trading")
        let there = moveLegs("bitcoin", "1", from: "main", to: "trading", on: "2024-03-01")
        let sale = record(.sell, "bitcoin", "1.5", price: "1000", on: "2024-04-01", portfolio: "trading")
        let back = moveLegs("bitcoin", "0.5", from: "trading", to: "main", on: "2024-05-01")
        let names = [own.id: "own", there[1].id: "in"]
        let ledger = try Self.replay([b1, b2, own] + there + [sale] + back, ["main": .average, "trading": .fifo])
        #expect(ledger.disposals.map(\.transactionId) == [there[0].id, sale.id, back[0].id])
        #expect(Self.shown(ledger.disposals[0].parts, names) == ["pool - 1 200"])
        // FIFO in trading: its own older lot first, then the lot the move made on 2024-03-01.
        #expect(Self.shown(ledger.disposals[1].parts, names) == ["own 2024-02-15 1 500", "in 2024-03-01 0.5 100"])
        #expect(Self.shown(ledger.disposals[2].parts, names) == ["in 2024-03-01 0.5 100"])
        #expect(Self.open(ledger, in: "trading").isEmpty)
        #expect(Self.shown(Self.open(ledger), names) == ["pool - 1.5 300"])
    }

    /// A split multiplies the open lots of its own portfolio only; bases stay.
    @Test func aSplitScalesTheLotsOfItsPortfolioOnly() throws {
        let m1 = record(.buy, "bitcoin", "1", price: "100", on: "2024-01-01")
        let m2 = record(.buy, "bitcoin", "1", price: "300", on: "2024-02-01")
        let move = moveLegs("bitcoin", "0.5", from: "main", to: "trading", on: "2024-03-01")
        let split = record(.split, "bitcoin", "4", on: "2024-04-01")
        let reverse = record(.split, "bitcoin", "1", price: "2", on: "2024-04-01", portfolio: "trading")
        let names = [m1.id: "m1", m2.id: "m2"]
        let ledger = try Self.replay([m1, m2] + move + [split, reverse], ["main": .fifo, "trading": .hifo])
        #expect(Self.shown(Self.open(ledger), names) == ["m1 2024-01-01 2 50", "m2 2024-02-01 4 300"])
        #expect(Self.shown(Self.open(ledger, in: "trading"), names) == ["m1 2024-01-01 0.25 50"])
    }

    /// A transfer-out takes its amount first, then its fee in units (a realized loss).
    @Test func aTransferOutTakesItsAmountThenItsFee() throws {
        let t1 = record(.buy, "bitcoin", "1", price: "100", on: "2024-01-01")
        let t2 = record(.buy, "bitcoin", "1", price: "200", on: "2024-02-01")
        let out = record(.transferOut, "bitcoin", "1.5", fee: "0.1", on: "2024-03-01")
        let names = [t1.id: "t1", t2.id: "t2"]
        let expected: [CostBasisMethod: (amount: [String], fee: [String], open: [String])] = [
            .fifo: (["t1 2024-01-01 1 100", "t2 2024-02-01 0.5 100"], ["t2 2024-02-01 0.1 20"], ["t2 2024-02-01 0.4 80"]),
            .lifo: (["t2 2024-02-01 1 200", "t1 2024-01-01 0.5 50"], ["t1 2024-01-01 0.1 10"], ["t1 2024-01-01 0.4 40"]),
            .hifo: (["t2 2024-02-01 1 200", "t1 2024-01-01 0.5 50"], ["t1 2024-01-01 0.1 10"], ["t1 2024-01-01 0.4 40"]),
            .average: (["pool - 1.5 225"], ["pool - 0.1 15"], ["pool - 0.4 60"]),
        ]
        for (method, want) in expected {
            let ledger = try Self.replay([t1, t2, out], ["main": method])
            #expect(ledger.disposals.count == 2, "\(method)")
            let (amount, fee) = (ledger.disposals[0], ledger.disposals[1])
            #expect(!amount.realizes && !amount.isNetworkFee && amount.quantity == fixed("1.5"), "\(method)")
            #expect(fee.realizes && fee.isNetworkFee && fee.quantity == fixed("0.1") && fee.gain.decimal == -fee.basis.decimal, "\(method)")
            #expect(Self.shown(amount.parts, names) == want.amount, "\(method)")
            #expect(Self.shown(fee.parts, names) == want.fee, "\(method)")
            #expect(Self.shown(Self.open(ledger), names) == want.open, "\(method)")
            #expect(ledger.totals(of: "main").realized == fee.gain, "\(method)")
        }
    }

    /// Worked example J of cost-basis.md, under every method.
    @Test func workedExampleJ() throws {
        let history = [
            trade("2024-01-01 buy 1 bitcoin @ 30000"), trade("2024-02-01 buy 1 bitcoin @ 50000"),
            trade("2024-03-01 buy 1 bitcoin @ 40000"), trade("2024-04-01 sell 1.5 bitcoin @ 60000"),
        ]
        let expected: [CostBasisMethod: (basis: Decimal, realized: Decimal, open: Decimal)] = [
            .average: (60000, 30000, 60000), .fifo: (55000, 35000, 65000), .lifo: (65000, 25000, 55000), .hifo: (70000, 20000, 50000),
        ]
        for (method, want) in expected {
            let ledger = try Self.replay(history, ["main": method])
            #expect(ledger.disposals.map(\.basis.decimal) == [want.basis], "\(method)")
            #expect(ledger.totals(of: "main").realized.decimal == want.realized, "\(method)")
            #expect(ledger.positions[key("bitcoin")]?.costBasis.decimal == want.open, "\(method)")
        }
        let later = try Self.replay(history + [trade("2025-04-02 sell 1 bitcoin @ 80000")], ["main": .fifo])
        #expect(Self.shown(later.disposals[1].parts, [history[1].id: "2", history[2].id: "3"])
            == ["2 2024-02-01 0.5 25000", "3 2024-03-01 0.5 20000"])
        #expect(later.totals(of: "main").realized.text == "70000")  // 35000 + 35000
    }

    // MARK: A split that rounds (checked by its totals)

    /// 1:3 on lots of 1, 1 and 2: the position's quantity rounds once (half up, 18 decimals) and
    /// the lots still add up to it, each within 10^-18 of a third of what it was, each keeping its
    /// basis. Under FIFO the running sums round in taking order: 1/3, 2/3 and 4/3 rounded.
    @Test func aSplitThatRoundsKeepsTheTotals() throws {
        let buys = [
            record(.buy, "bitcoin", "1", price: "100", on: "2024-01-01"), record(.buy, "bitcoin", "1", price: "200", on: "2024-01-01"),
            record(.buy, "bitcoin", "2", price: "300", on: "2024-01-02"),
        ]
        let split = record(.split, "bitcoin", "1", price: "3", on: "2024-02-01")
        let dust = Decimal(sign: .plus, exponent: -18, significand: 1)
        for method in CostBasisMethod.allCases {
            let ledger = try Self.replay(buys + [split], ["main": method])
            let lots = try #require(ledger.positions[key("bitcoin")]?.lots, "\(method)")
            #expect(lots.quantity == fixed("1.333333333333333333"), "\(method)")
            #expect(lots.costBasis.decimal == 900, "\(method)")
            #expect(lots.open.reduce(Decimal(0)) { $0 + $1.quantity.decimal } == lots.quantity.decimal, "\(method)")
            #expect(lots.open.reduce(Decimal(0)) { $0 + $1.basis.decimal } == 900, "\(method)")
            guard method != .average else { continue }
            for lot in lots.byAcquisition {
                let before = buys.first { $0.id == lot.source }!
                let exact = before.amountValue.decimal / 3
                #expect(abs(lot.quantity.decimal - exact) <= dust, "\(method): \(lot.quantity.text)")
                #expect(lot.basis.decimal == before.amountValue.decimal * before.priceValue!.decimal, "\(method)")
            }
            if method == .fifo {
                #expect(lots.open.map(\.quantity.text) == ["0.333333333333333333", "0.333333333333333334", "0.666666666666666666"])
            }
            // Selling everything realizes every basis.
            let sale = record(.sell, "bitcoin", "1.333333333333333333", price: "1000", on: "2024-03-01")
            let sold = try Self.replay(buys + [split, sale], ["main": method])
            #expect(sold.totals(of: "main").realizedBasis.decimal == 900 && sold.positions[key("bitcoin")]?.lots.open.isEmpty == true, "\(method)")
        }
    }

    /// Dust lots that round to nothing give their basis on: the position keeps all of it in the
    /// lots that remain, and no open lot is empty.
    @Test func aSplitThatRoundsDustAwayKeepsTheBasis() throws {
        let buys = (0..<3).map { _ in record(.buy, "bitcoin", "0.000000000000000001", price: "1000000", on: "2024-01-01") }
        let split = record(.split, "bitcoin", "1", price: "3", on: "2024-02-01")
        for method in CostBasisMethod.allCases {
            let ledger = try Self.replay(buys + [split], ["main": method])
            let lots = try #require(ledger.positions[key("bitcoin")]?.lots, "\(method)")
            #expect(lots.quantity == fixed("0.000000000000000001"), "\(method)")
            #expect(lots.costBasis.decimal == dec("0.000000000003"), "\(method)")
            #expect(lots.open.allSatisfy { $0.quantity != .zero }, "\(method): \(lots.open.map(\.quantity.text))")
            #expect(lots.open.reduce(Decimal(0)) { $0 + $1.quantity.decimal } == lots.quantity.decimal, "\(method)")
            #expect(lots.open.reduce(Decimal(0)) { $0 + $1.basis.decimal } == dec("0.000000000003"), "\(method)")
            let sale = record(.sell, "bitcoin", "0.000000000000000001", price: "1", on: "2024-03-01")
            let sold = try Self.replay(buys + [split, sale], ["main": method])
            #expect(sold.totals(of: "main").realizedBasis.decimal == dec("0.000000000003"), "\(method)")
        }
    }
}

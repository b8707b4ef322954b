import Foundation
import PortfolioCore
import Testing

/// A second, deliberately simple weighted-average replay: Foundation `Decimal`, one dictionary,
/// no fixed-point types, no fast paths. The engine must agree with it on random histories.
struct ReferenceLedger {
    struct Coin { var quantity: Decimal = 0; var cost: Decimal = 0 }
    var coins: [String: Coin] = [:]
    var realized: Decimal = 0
    var closedCost: Decimal = 0
    var closedCycles = 0
    /// Sells that asked for more than was held at their date (left out, as the engine's check does).
    var oversold: [UUID] = []

    init(_ transactions: [Transaction]) {
        // Date order; ties keep the order given.
        let ordered = transactions.enumerated().sorted { a, b in
            a.element.date != b.element.date ? a.element.date < b.element.date : a.offset < b.offset
        }.map(\.element)
        for t in ordered {
            var c = coins[t.assetId, default: Coin()]
            let gross = t.amount * t.pricePerCoin
            switch t.type {
            case .buy:
                c.quantity += t.amount
                c.cost += gross + t.fee
            case .sell:
                if t.amount > c.quantity {
                    oversold.append(t.id)
                    continue
                }
                let basisSold = t.amount == c.quantity ? c.cost : c.cost * t.amount / c.quantity
                realized += gross - t.fee - basisSold
                closedCost += basisSold
                c.quantity -= t.amount
                c.cost -= basisSold
                if c.quantity == 0 { closedCycles += 1 }
            default:
                continue
            }
            coins[t.assetId] = c
        }
    }
}

@Suite struct ReferenceReplayTests {
    /// A random history: a few coins, buys and sells (some selling everything, some more than held),
    /// fees now and then, dates with ties, out of order.
    static func history(_ g: inout SeededRandom) -> [Transaction] {
        let coins = ["bitcoin", "ethereum", "solana", "dogecoin"].prefix(g.below(4) + 1)
        var held: [String: Int64] = [:]  // in 10^-8 units, to aim sells at what is held
        var out: [Transaction] = []
        for _ in 0..<(g.below(150) + 20) {
            let coin = coins[coins.startIndex + g.below(coins.count)]
            let date = Date(timeIntervalSince1970: 1_700_000_000 + Double(g.below(400)) * 86_400)
            let price = Decimal(g.below(9_999_999) + 1) / 100  // up to 99,999.99
            let fee = g.below(3) == 0 ? Decimal(g.below(1000)) / 100 : 0
            var units: Int64
            let type: TransactionType
            if g.below(10) < 6 || (held[coin] ?? 0) == 0 {
                type = .buy
                units = Int64(g.below(500_000_000) + 1)
                held[coin, default: 0] += units
            } else {
                type = .sell
                let have = held[coin] ?? 0
                switch g.below(6) {
                case 0: units = have                                 // everything: closes a cycle
                case 1: units = have + Int64(g.below(1000) + 1)      // more than held (by file order)
                default: units = Int64(g.below(Int(max(have, 1)))) + 1
                }
                held[coin] = max(0, have - units)
            }
            let amount = Decimal(units) / 100_000_000
            out.append(Transaction(coinId: coin, type: type, amount: amount, pricePerCoin: price, fee: fee, date: date))
        }
        return out
    }

    /// Within 10^-20: the engine rounds only at the 36th decimal and Decimal keeps 38 digits.
    static func close(_ a: Decimal, _ b: Decimal) -> Bool {
        let d = a - b
        return (d < 0 ? -d : d) < Decimal(sign: .plus, exponent: -20, significand: 1)
    }

    @Test func engineAgreesWithTheReferenceOnRandomHistories() throws {
        var g = SeededRandom(seed: 20261123)
        for round in 0..<200 {
            let txs = Self.history(&g)
            let reference = ReferenceLedger(txs)
            let checked = Book(transactions: txs).checked(now: Date(timeIntervalSince1970: 1_800_000_000))
            let ledger = checked.ledger
            #expect(checked.problems.filter { $0.rule == .oversell }.map(\.id).sorted { $0.uuidString < $1.uuidString }
                == reference.oversold.sorted { $0.uuidString < $1.uuidString }, "round \(round)")
            #expect(checked.problems.allSatisfy { $0.rule == .oversell }, "round \(round)")
            for (coin, r) in reference.coins {
                let p = try #require(ledger.positions[key(coin)], "round \(round) \(coin)")
                #expect(p.quantity == r.quantity, "round \(round) \(coin)")
                #expect(Self.close(p.costBasis.decimal, r.cost), "round \(round) \(coin): \(p.costBasis.text) vs \(r.cost)")
            }
            #expect(Self.close(ledger.realizedPnL.decimal, reference.realized), "round \(round): \(ledger.realizedPnL.text) vs \(reference.realized)")
            #expect(Self.close(ledger.closedCost.decimal, reference.closedCost), "round \(round)")
            #expect(ledger.closed.count == reference.closedCycles, "round \(round)")
            // Values at a price are exact products in both: the printed cents agree to the letter.
            let prices = PriceBook(manual: reference.coins.keys.map { Quote(coinId: $0, price: Decimal(1234567) / 100, time: .distantPast, source: .manual) })
            let report = Reports(ledger: ledger, prices: prices, now: .distantPast, asset: { AssetLabel.unknown($0) }).holdings()
            let referenceValue = reference.coins.values.filter { $0.quantity > 0 }.reduce(Decimal(0)) { $0 + $1.quantity * Decimal(1234567) / 100 }
            #expect(DecimalFormatting.money(report.totalValue) == DecimalFormatting.money(referenceValue), "round \(round)")
        }
    }
}

import Foundation
import PortfolioCore
import Testing

/// The order in which `Lots` hands out HIFO lots, against the plainest model of it: an array kept
/// sorted by (unit cost when the lot arrived or was last split, descending; acquisition date;
/// recording order), a lot equal to others in all three going after them, taken from the front.
///
/// The random histories of `LotReferenceTests` rarely make lots that tie in all three keys (only
/// the parts of one lot that two moves bring back); here many do: copies of one lot received
/// again, few distinct prices and dates, so the order among equals is checked on every take.
@Suite struct LotOrderTests {
    /// A lot in the model, with the key it is sorted by.
    struct Entry {
        var lot: Lot
        var unitCost: Exact36
    }

    /// `a` is taken before `b` (strictly; equal entries keep the order they arrived in).
    static func precedes(_ a: Entry, _ b: Entry) -> Bool {
        if a.unitCost != b.unitCost { return a.unitCost > b.unitCost }
        let (x, y) = (a.lot.acquired ?? .distantPast, b.lot.acquired ?? .distantPast)
        return x != y ? x < y : a.lot.order < b.lot.order
    }

    /// Puts `entry` after every entry that precedes it or ties with it.
    static func insert(_ entry: Entry, into model: inout [Entry]) {
        let at = model.firstIndex { precedes(entry, $0) } ?? model.count
        model.insert(entry, at: at)
    }

    /// What identifies a lot or a part of one in a comparison.
    static func same(_ a: [Lot], _ b: [Lot]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy {
            $0.source == $1.source && $0.order == $1.order && $0.acquired == $1.acquired && $0.quantity == $1.quantity && $0.basis == $1.basis
        }
    }

    @Test func hifoTakesLotsInTheModelsOrderTiesByArrival() throws {
        var g = SplitMix64(seed: 20_261_126)
        let days = (0..<3).map { Date(timeIntervalSince1970: 1_700_000_000 + Double($0) * 86_400) }
        let unit = Fixed18.scale
        var fullTies = 0, partialTakes = 0
        for round in 0..<40 {
            var lots = Lots(method: .hifo)
            var model: [Entry] = []
            var order = 0
            for step in 0..<400 {
                let what = "round \(round) step \(step)"
                let roll = g.below(20)
                if roll < 9 || model.isEmpty {
                    // A new lot: few quantities and costs, so unit costs tie often (1 @ 2 and 2 @ 4).
                    let quantity = Fixed18(units: UInt128(g.below(4) + 1) * unit)
                    let cost = Exact36(Fixed18(units: quantity.units * UInt128(g.below(3) + 1) * 100))
                    let lot = Lot(quantity: quantity, basis: cost, acquired: days[g.below(days.count)], source: UUID(), order: order)
                    order += g.below(3) == 0 ? 0 : 1  // now and then the next lot shares the recording order
                    try lots.receive(lot)
                    Self.insert(Entry(lot: lot, unitCost: Lot.costPerUnit(cost, quantity)), into: &model)
                } else if roll < 12 {
                    // A copy of an open lot under another source: equal to it in every key.
                    var copy = model[g.below(model.count)].lot
                    copy.source = UUID()
                    try lots.receive(copy)
                    Self.insert(Entry(lot: copy, unitCost: Lot.costPerUnit(copy.basis, copy.quantity)), into: &model)
                    fullTies += 1
                } else if roll < 19 {
                    // A disposal of a random amount, often ending inside a lot.
                    let held = model.reduce(UInt128(0)) { $0 + $1.lot.quantity.units }
                    let amount = Fixed18(units: UInt128(g.below(UInt64(held / (unit / 4)))) * (unit / 4) + unit / 4)
                    let (basis, parts) = try lots.dispose(quantity: amount, keepingParts: true)
                    var left = amount
                    var expected: [Lot] = []
                    var expectedBasis = Exact36.zero
                    while left.units > 0 {
                        var first = model[0]
                        if first.lot.quantity <= left {
                            expected.append(first.lot)
                            expectedBasis = try expectedBasis + first.lot.basis
                            left = Fixed18(units: left.units - first.lot.quantity.units)
                            model.removeFirst()
                        } else {
                            let part = try first.lot.basis.multiplied(by: left, dividedBy: first.lot.quantity)
                            var taken = first.lot
                            taken.quantity = left
                            taken.basis = part
                            expected.append(taken)
                            expectedBasis = try expectedBasis + part
                            first.lot.quantity = Fixed18(units: first.lot.quantity.units - left.units)
                            first.lot.basis = try first.lot.basis - part
                            model[0] = first  // its key stays: it keeps its place
                            left = .zero
                            partialTakes += 1
                        }
                    }
                    let sameParts = Self.same(parts, expected)
                    #expect(sameParts, "\(what): parts \(parts.map(\.source)) vs \(expected.map(\.source))")
                    #expect(basis == expectedBasis, "\(what): basis")
                } else {
                    // A 2-for-1 split: quantities double exactly, unit costs are taken again, the order re-sorted.
                    try lots.scale(by: Fixed18(units: 2 * unit), over: Fixed18(units: unit))
                    model = model.map {
                        var lot = $0.lot
                        lot.quantity = Fixed18(units: lot.quantity.units * 2)
                        return Entry(lot: lot, unitCost: Lot.costPerUnit(lot.basis, lot.quantity))
                    }
                    var sorted: [Entry] = []
                    for e in model { Self.insert(e, into: &sorted) }
                    model = sorted
                }
                let sameOpen = Self.same(lots.open, model.map(\.lot))
                #expect(sameOpen, "\(what): open lots \(lots.open.map(\.source)) vs \(model.map(\.lot.source))")
                #expect(lots.quantity.units == model.reduce(0) { $0 + $1.lot.quantity.units }, "\(what): quantity")
            }
        }
        #expect(fullTies > 1000 && partialTakes > 1000, "the histories exercise ties and partial takes")
    }
}

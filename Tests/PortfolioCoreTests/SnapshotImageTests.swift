import Foundation
@testable import PortfolioCore
import Testing

/// The ledger's binary image (the snapshot's heart): read back, a ledger is the one written, field for
/// field — and it goes on from there exactly as the ledger it was made of would have.
@Suite struct SnapshotImageTests {
    /// The image of `ledger`: its strings and its bytes.
    static func image(_ ledger: Ledger) -> (table: [String], bytes: [UInt8]) {
        var w = ImageWriter()
        ledger.write(to: &w)
        return (w.table, w.bytes)
    }

    static func read(_ image: (table: [String], bytes: [UInt8])) throws -> Ledger {
        var r = ImageReader(image.bytes)
        r.table = image.table
        let ledger = try Ledger.read(from: &r)
        #expect(r.atEnd)
        return ledger
    }

    /// Both the images and what the ledgers show (positions with their open lots and cycles, closed
    /// cycles, income, totals, cash, links, lots on the move, records applied): a field the image left
    /// out shows here.
    static func same(_ a: Ledger, _ b: Ledger) -> Bool {
        let x = image(a), y = image(b)
        return x.table == y.table && x.bytes == y.bytes && shown(a) == shown(b)
    }

    static func shown(_ l: Ledger) -> String {
        var out = ""
        for p in l.positions.values.sorted(by: { $0.key < $1.key }) {
            out += "\(p.key) \(p.lots.method) \(p.lots.quantity) \(p.lots.costBasis) \(p.lots.open) \(p.lots.byAcquisition) \(String(describing: p.cycleAcquired))"
            out += " \(String(describing: p.cycleAcquisitionCost)) \(String(describing: p.cycleSold)) \(String(describing: p.cycleSoldGross))"
            out += " \(p.cycleRealizedBasis) \(p.cycleRealized) \(String(describing: p.openedDate)) \(String(describing: p.lastDisposalDate))"
            out += " \(String(describing: p.openedDay)) \(String(describing: p.lastDisposalDay))\n"
        }
        out += "\(l.closed)\n\(l.income)\n\(l.portfolioTotals.map { "\($0.portfolio) \($0.totals)" })\n"
        out += "\(l.cash.sorted { "\($0.key)" < "\($1.key)" })\n\(l.cashAtCost.sorted { "\($0.key)" < "\($1.key)" })\n"
        out += "\(l.exchangeCosts.sorted { $0.key.uuidString < $1.key.uuidString })\n\(l.savingLinks.map(\.uuidString).sorted())\n"
        out += "\(l.moving.sorted { $0.key.uuidString < $1.key.uuidString })\n\(l.applied) \(l.damaged) \(l.options.trackingCash.sorted()) \(l.options.methods.sorted { $0.key < $1.key })"
        return out
    }

    /// Random lot histories under every method and mixes of them (moves between methods, splits,
    /// HIFO ties): the image of the whole replay reads back the same; and a replay stopped anywhere,
    /// imaged, read back and given the rest, ends where the replay in one go ends.
    @Test func aLedgerReadBackGoesOnAsTheOneWritten() throws {
        var g = SeededRandom(seed: 20261126)
        var tally = LotReferenceTests.Tally()
        var continued = 0
        for round in 0..<60 {
            let transactions = LotReferenceTests.history(&g, tally: &tally)
            for methods in LotReferenceTests.assignments(round: round) {
                let options = LedgerOptions(methods: methods, keepingCashMovements: false)
                let whole = try Ledger.replay(transactions, options: options)
                #expect(Self.same(try Self.read(Self.image(whole)), whole), "round \(round)")

                let ordered = Ledger.chronological(transactions)
                let cut = g.below(ordered.count + 1)
                var first = Ledger(options)
                first.exchangeCosts = Ledger.exchangeCosts(transactions)
                first.savingLinks = Ledger.savingLinks(transactions)
                for t in ordered[..<cut] { try first.apply(t) }
                var rest = try Self.read(Self.image(first))
                for t in ordered[cut...] { try rest.apply(t) }
                #expect(Self.same(rest, whole), "round \(round) \(methods): cut at \(cut) of \(ordered.count)")
                continued += 1
            }
        }
        #expect(continued == 360)
    }

    /// Mixed histories (every kind, cash, swaps, moves, records left out by the forgiving replay).
    @Test func mixedLedgersReadBackTheSame() throws {
        var g = SeededRandom(seed: 20261127)
        var tally = MixedReferenceTests.Tally()
        let book0 = Book(portfolios: MixedReferenceTests.portfolios.map { Portfolio(name: $0) },
                         assets: [Asset(id: "AAPL", name: "Apple Inc.", type: .stock, createdDate: Date(timeIntervalSince1970: 1_672_531_200))])
        var incomes = 0, closed = 0
        for round in 0..<60 {
            var book = book0
            book.transactions = MixedReferenceTests.history(&g, tally: &tally)
            let ledger = book.checked(now: MixedReferenceTests.now, cashMovements: false).ledger
            incomes += ledger.income.count
            closed += ledger.closed.count
            let back = try Self.read(Self.image(ledger))
            #expect(Self.same(back, ledger), "round \(round)")
            #expect(back.positions.count == ledger.positions.count && back.realizedPnL == ledger.realizedPnL, "round \(round)")
        }
        #expect(incomes > 0 && closed > 0)
    }

    /// An image cut anywhere or with any byte changed is refused or read: never a crash.
    @Test func aDamagedImageIsRefusedWithoutACrash() throws {
        var g = SeededRandom(seed: 7)
        var tally = LotReferenceTests.Tally()
        let transactions = LotReferenceTests.history(&g, tally: &tally)
        let ledger = try Ledger.replay(transactions, options: LedgerOptions(methods: ["main": .hifo, "trading": .fifo], keepingCashMovements: false))
        let good = Self.image(ledger)
        var refused = 0
        for cut in stride(from: 0, to: good.bytes.count, by: max(1, good.bytes.count / 200)) {
            if (try? Self.read((good.table, Array(good.bytes[..<cut])))) == nil { refused += 1 }
        }
        #expect(refused > 0)
        for _ in 0..<2000 {
            var bytes = good.bytes
            for _ in 0..<(g.below(4) + 1) { bytes[g.below(bytes.count)] = UInt8(truncatingIfNeeded: g.next()) }
            var r = ImageReader(bytes)
            r.table = good.table
            _ = try? Ledger.read(from: &r)
        }
    }

    /// The fingerprint does not depend on how the bytes are cut, and tells one changed byte.
    @Test func theFingerprintIsTheSameHoweverTheBytesAreCut() {
        var g = SeededRandom(seed: 11)
        let bytes = (0..<10_000).map { _ in UInt8(truncatingIfNeeded: g.next()) }
        var whole = ContentHash()
        whole.update(bytes)
        for _ in 0..<50 {
            var pieces = ContentHash()
            var at = 0
            while at < bytes.count {
                let n = min(bytes.count - at, g.below(100))
                pieces.update(Array(bytes[at..<at + n]))
                at += n
            }
            #expect(pieces.digest == whole.digest)
        }
        var changed = bytes
        changed[g.below(changed.count)] ^= 1
        var other = ContentHash()
        other.update(changed)
        #expect(other.digest != whole.digest)
        var shorter = ContentHash()
        shorter.update(Array(bytes.dropLast()))
        #expect(shorter.digest != whole.digest)
    }
}

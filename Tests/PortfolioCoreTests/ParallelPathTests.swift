import Foundation
@testable import PortfolioCore
import Testing

/// The paths that use a second core give what the one-thread paths give: the check that replays on a
/// guess while the records' own rules are checked, and the write that runs while the check does.
@Suite struct ParallelPathTests {
    /// A random history of `count` records over two portfolios (`trading` tracks cash), two coins and a
    /// registered asset: buys, sells within what is held, deposits, dividends, swaps and moves, oldest first
    /// (with now and then a record out of date order in the file).
    static func history(_ count: Int, seed: UInt64) -> Book {
        var g = SplitMix64(seed: seed)
        var book = Book(portfolios: [Portfolio(name: "main"), Portfolio(name: "trading", trackCash: true)])
        book.assets = [Asset(id: "AAPL", name: "Apple", type: .stock, createdDate: day("2020-01-01"))]
        let assets = ["bitcoin", "ethereum", "AAPL"]
        var held = [[Int]](repeating: [0, 0, 0], count: 2)
        var cash = 0
        let start = day("2020-01-01").timeIntervalSince1970
        var txs: [Transaction] = []
        while txs.count < count {
            let when = ISODate.format(Date(timeIntervalSince1970: start + Double(txs.count) * 3_600))
            let p = g.below(2), a = g.below(3)
            let portfolio = p == 0 ? "main" : "trading"
            let roll = g.below(10)
            if roll < 5 || held[p][a] == 0 {
                let units = 1 + g.below(1000)
                let price = 1 + g.below(100)
                if p == 1 && cash < units * price {
                    txs.append(record(.deposit, "", "\(units * price + 1000)", on: when, portfolio: "trading"))
                    txs[txs.count - 1].assetId = ""
                    cash += units * price + 1000
                }
                if p == 1 { cash -= units * price }
                txs.append(record(.buy, assets[a], "\(units)", price: "\(price)", on: when, portfolio: portfolio))
                held[p][a] += units
            } else if roll < 7 {
                let units = 1 + g.below(held[p][a])
                txs.append(record(.sell, assets[a], "\(units)", price: "\(1 + g.below(100))", on: when, portfolio: portfolio))
                held[p][a] -= units
                if p == 1 { cash += units }
            } else if roll == 7 {
                txs.append(record(.dividend, "AAPL", "\(1 + g.below(50))", fee: "0", on: when, portfolio: portfolio))
                if p == 1 { cash += 1 }
            } else if roll == 8 && p == 0 {
                let units = 1 + g.below(held[p][a])
                let b = (a + 1) % 3
                txs += swapLegs(assets[a], "\(units)", assets[b], "\(1 + g.below(100))", value: "\(1 + g.below(1000))", on: when)
                held[p][a] -= units
                held[p][b] += 1
            } else {
                let units = 1 + g.below(held[p][a])
                txs += moveLegs(assets[a], "\(units)", from: portfolio, to: p == 0 ? "trading" : "main", on: when)
                held[p][a] -= units
                held[1 - p][a] += units
            }
        }
        // Some records out of file order (their dates, all different but a swap's or a move's legs, say the order).
        for _ in 0..<(count / 50) {
            let i = g.below(txs.count), j = g.below(txs.count)
            if txs[i].linkedId == nil && txs[j].linkedId == nil { txs.swapAt(i, j) }
        }
        book.transactions = txs
        return book
    }

    /// Ways a hand edit breaks a book: a duplicated id (the copy after, or before, the first), an oversell,
    /// a future date, an unknown portfolio, an unregistered asset, a leg of a swap or move whose partner breaks.
    static func broken(_ book: Book, seed: UInt64) -> Book {
        var g = SplitMix64(seed: seed)
        var b = book
        let n = b.transactions.count
        for _ in 0..<(1 + g.below(4)) {
            let i = g.below(n)
            switch g.below(6) {
            case 0: b.transactions[i].id = b.transactions[g.below(n)].id
            case 1:
                if let s = b.transactions.firstIndex(where: { $0.type == .sell && $0.linkedId == nil }) {
                    b.transactions[s].amountValue = fixed("99999999")
                }
            case 2: b.transactions[i].date = day("2031-01-01")
            case 3: b.transactions[i].portfolio = "nowhere"
            case 4: b.transactions[i].assetId = "ZZZZ"
            default:
                if let l = b.transactions.indices.filter({ b.transactions[$0].linkedId != nil }).dropFirst(g.below(5)).first {
                    b.transactions[l].amountValue = fixed("88888888")
                }
            }
        }
        return b
    }

    /// Everything a replay leaves: positions, closed cycles, income, cash and the totals, as text.
    static func fingerprint(_ l: Ledger) -> String {
        var s = ""
        for (k, p) in l.positions.sorted(by: { $0.key < $1.key }) {
            s += "\(k.portfolio)/\(k.assetId) \(p.lots.quantity.text) \(p.costBasis) \(String(describing: p.cycleAcquired)) \(p.cycleRealized)\n"
        }
        s += "closed \(l.closed)\nincome \(l.income)\n"
        s += "cash \(l.cash.sorted { ($0.key.portfolio, $0.key.currency) < ($1.key.portfolio, $1.key.currency) })\n"
        s += "totals \(l.portfolioTotals.map { "\($0.portfolio) \($0.totals)" })\nmovements \(l.cashMovements)"
        return s
    }

    @Test func theCheckOnTwoCoresFindsWhatTheCheckOnOneFinds() {
        let now = day("2030-01-01")
        for seed in UInt64(1)...12 {
            let clean = Self.history(300 + Int(seed) * 40, seed: seed)
            for (what, book) in [("clean", clean), ("broken", Self.broken(clean, seed: seed &* 77))] {
                for cash in [false, true] {
                    let one = book.checked(now: now, replaying: true, cashMovements: cash, parallel: false)
                    let two = book.checked(now: now, replaying: true, cashMovements: cash, parallel: true)
                    #expect(one.problems == two.problems, "seed \(seed) \(what)")
                    #expect(Self.fingerprint(one.ledger) == Self.fingerprint(two.ledger), "seed \(seed) \(what)")
                    if what == "clean" { #expect(one.problems.isEmpty, "seed \(seed): the generator makes clean books") }
                }
            }
        }
    }

    @Test func theCheckBesideOtherWorkFindsWhatTheCheckOnOneThreadFinds() {
        let now = day("2030-01-01")
        for seed in UInt64(20)...26 {
            let clean = Self.history(400, seed: seed)
            for book in [clean, Self.broken(clean, seed: seed)] {
                let one = book.checked(now: now, replaying: true, cashMovements: false, parallel: false)
                let (two, work) = book.checked(now: now, cashMovements: false, alongside: { seed * 3 })
                #expect(work == seed * 3)
                #expect(one.problems == two.problems, "seed \(seed)")
                #expect(Self.fingerprint(one.ledger) == Self.fingerprint(two.ledger), "seed \(seed)")
                // And `admit`'s verdict beside work is `admit`'s.
                var base = book
                base.transactions.removeLast(3)
                let plain = Result { try book.admit(from: base, now: now) }
                let beside = book.admit(from: base, now: now, alongside: { 1 }).verdict.map { _ in () }
                #expect(String(describing: plain) == String(describing: beside), "seed \(seed)")
            }
        }
    }

    @Test func aLargeBookTakesTheTwoCorePathAndAgrees() {
        let now = day("2030-01-01")
        let book = Self.history(Parallel.minimumRecords + 500, seed: 99)
        let broken = Self.broken(book, seed: 5)
        for b in [book, broken] {
            let one = b.checked(now: now, replaying: true, cashMovements: false, parallel: false)
            let two = b.checked(now: now, cashMovements: false)
            #expect(one.problems == two.problems)
            #expect(Self.fingerprint(one.ledger) == Self.fingerprint(two.ledger))
        }
    }

    static func files(in dir: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).sorted()
    }

    @Test func aRefusedWriteLeavesTheFileAsItWasAndNoTempFile() throws {
        let store = PortfolioStore(directory: scratchDirectory())
        defer { try? FileManager.default.removeItem(atPath: store.directory) }
        let book = Self.history(500, seed: 3)
        let bytes = PortfolioCodec.encode(book)
        _ = FileManager.default.createFile(atPath: store.path, contents: Data(bytes))
        // A temp file a killed writer left: removed by a write that goes through, not by one refused.
        let leftover = store.directory + "/.portfolio.json.tmp.999.1"
        _ = FileManager.default.createFile(atPath: leftover, contents: Data("half".utf8))
        let before = Self.files(in: store.directory)
        let now = day("2030-01-01")
        // An oversell: refused with the record's own error.
        #expect(throws: PortfolioError.self) {
            try store.update(now: now) { b in
                b.add([record(.sell, "bitcoin", "99999999", price: "1", on: "2029-01-01")])
                return (true, ())
            }
        }
        // A duplicated id: refused (with the later record it breaks, or the store's problems).
        #expect(throws: (any Error).self) {
            try store.update(now: now) { b in
                b.transactions[7].id = b.transactions[3].id
                return (true, ())
            }
        }
        #expect(Self.files(in: store.directory) == before)
        #expect(try FileSystem.read(store.path) == bytes)
        // The same change accepted: written as a full encoding writes it, the leftover gone.
        let added = record(.buy, "bitcoin", "1", price: "5", on: "2029-01-01")
        try store.update(now: now) { b in
            b.add([added])
            return (true, ())
        }
        var expected = book
        expected.transactions.append(added)
        #expect(try FileSystem.read(store.path) == PortfolioCodec.encode(expected))
        // Beside it, the snapshot of what it wrote (`Snapshot`), and nothing else.
        #expect(Self.files(in: store.directory) == [Snapshot.fileName, "portfolio.json"])
    }

    @Test func aFailedWriteAfterAPassedCheckIsTheWritesError() throws {
        let store = PortfolioStore(directory: scratchDirectory())
        defer {
            chmod(store.directory, 0o700)
            try? FileManager.default.removeItem(atPath: store.directory)
        }
        let bytes = PortfolioCodec.encode(Self.history(200, seed: 4))
        _ = FileManager.default.createFile(atPath: store.path, contents: Data(bytes))
        // A folder no temp file can be made in (root may write anyway: then the write goes through).
        chmod(store.directory, 0o500)
        let canWrite = access(store.directory, W_OK) == 0
        do {
            try store.update(now: day("2030-01-01")) { b in
                b.add([record(.buy, "bitcoin", "1", price: "5", on: "2029-01-01")])
                return (true, ())
            }
            #expect(canWrite)
        } catch let error as StoreError {
            #expect(!canWrite)
            guard case .writeFailed = error.reason else { Issue.record("\(error)"); return }
        }
        if !canWrite { #expect(try FileSystem.read(store.path) == bytes) }
    }
}

import Foundation
@testable import PortfolioCore
import Testing

/// Records added after every stored one go on from the snapshot (`PortfolioStore.append`): the file is
/// byte for byte what a whole write makes, and the snapshot is the replay of the whole new book. Every
/// change it cannot make so is left, untouched, to `update`.
@Suite struct SnapshotAppendTests {
    static let now = day("2030-01-01")

    /// A store of `count` random records written by `update` (which leaves its snapshot).
    static func store(_ count: Int, seed: UInt64) throws -> (PortfolioStore, Book) {
        let store = PortfolioStore(directory: scratchDirectory(), timeZone: TimeZone(identifier: "UTC") ?? .current)
        let book = ParallelPathTests.history(count, seed: seed)
        try store.update(now: now) { b in
            b = book
            return (true, ())
        }
        return (store, book)
    }

    static func image(_ ledger: Ledger) -> [UInt8] {
        var w = ImageWriter()
        ledger.write(to: &w)
        return w.table.flatMap { Array($0.utf8) + [0] } + w.bytes
    }

    @Test func appendedRecordsAreWhatAWholeWriteMakes() throws {
        var g = SplitMix64(seed: 99)
        for seed in UInt64(1)...12 {
            let (store, book) = try Self.store(200 + Int(seed) * 37, seed: seed)
            defer { try? FileManager.default.removeItem(atPath: store.directory) }
            var expected = book
            for round in 0..<3 {
                // A buy, a sale of part of it, a dividend, or a swap: after the last record, in either portfolio.
                let when = ISODate.format(day("2025-01-01").addingTimeInterval(Double(round * 86_400 + Int(seed) * 60)))
                let legs: [Transaction] = switch g.below(4) {
                case 0: [record(.buy, "bitcoin", "\(1 + g.below(9))", price: "\(1 + g.below(90))", on: when)]
                case 1: [record(.buy, "ethereum", "5", price: "10", on: when), record(.sell, "ethereum", "2", price: "12", on: when)]
                case 2: [record(.dividend, "AAPL", "3", fee: "0", on: when, portfolio: "main")]
                default: [record(.buy, "bitcoin", "3", price: "1", on: when)] + swapLegs("bitcoin", "1", "ethereum", "2", value: "5", on: when)
                }
                let done = try store.append(now: Self.now) { b in
                    b.add(legs)
                    return [legs]
                }
                #expect(done != nil, "seed \(seed) round \(round): appended")
                expected.transactions += legs
                #expect(try FileSystem.read(store.path) == PortfolioCodec.encode(expected), "seed \(seed) round \(round)")
                let snapshot = try #require(store.loadSnapshot(now: Self.now), "seed \(seed) round \(round)")
                let whole = expected.checked(now: Self.now, cashMovements: false)
                #expect(whole.problems.isEmpty)
                #expect(Self.image(snapshot.ledger) == Self.image(whole.ledger), "seed \(seed) round \(round)")
                #expect(snapshot.facts.count == expected.transactions.count)
                let listed = Snapshot.load(directory: store.directory, store: store.path, zone: store.timeZone, now: Self.now, listing: true)?.listing
                #expect(listed == Listing(expected.transactions), "seed \(seed) round \(round): the records' order goes on too")
            }
        }
    }

    /// A book of many small rewards kept in FIFO lots (each reward a lot and an income event): the
    /// snapshot is never bigger than the file (when it would be, there is none).
    @Test func theSnapshotIsNeverBiggerThanTheFile() throws {
        for method in [CostBasisMethod.fifo, .hifo, .average] {
            let store = PortfolioStore(directory: scratchDirectory(), timeZone: TimeZone(identifier: "UTC") ?? .current)
            defer { try? FileManager.default.removeItem(atPath: store.directory) }
            var book = Book(portfolios: [Portfolio(name: "main", costBasisMethod: method)])
            book.transactions = (0..<500).map { i in
                record(.reward, "ethereum", "0.00\(i + 1)", price: "\(2000 + i)", on: ISODate.format(day("2024-01-01").addingTimeInterval(Double(i) * 3600)))
            }
            try store.update(now: Self.now) { b in
                b = book
                return (true, ())
            }
            let file = try #require(try FileSystem.read(store.path)).count
            let snapshot = (try? FileManager.default.attributesOfItem(atPath: Snapshot.path(in: store.directory))[.size] as? Int) ?? nil
            #expect(snapshot.map { $0 < file } ?? true, "\(method): \(snapshot ?? 0) bytes beside \(file)")
        }
    }

    /// Back-dated, a duplicate id, a sale of more than is held, a setting changed, no snapshot, a
    /// snapshot of another file: `append` writes nothing and says so (`nil`); `update` does the rest.
    @Test func whatCannotGoOnFromTheSnapshotIsLeftToUpdate() throws {
        let (store, book) = try Self.store(300, seed: 5)
        defer { try? FileManager.default.removeItem(atPath: store.directory) }
        let bytes = try FileSystem.read(store.path)
        let attempts: [(String, (inout Book) -> Void)] = [
            ("back-dated", { $0.add([record(.buy, "bitcoin", "1", price: "1", on: "2020-01-01")]) }),
            ("a duplicate id", { $0.add([record(.buy, "bitcoin", "1", price: "1", on: "2026-01-01", id: book.transactions[7].id)]) }),
            ("an oversell", { $0.add([record(.sell, "bitcoin", "99999999", price: "1", on: "2026-01-01")]) }),
            ("at the last record's instant", { $0.add([record(.buy, "bitcoin", "1", price: "1", on: ISODate.format(book.transactions.map(\.date).max() ?? Self.now))]) }),
            ("a deposit at the last instant", { $0.add([record(.deposit, "", "10", on: ISODate.format(book.transactions.map(\.date).max() ?? Self.now), portfolio: "trading")]) }),
            ("a future date", { $0.add([record(.buy, "bitcoin", "1", price: "1", on: "2031-01-01")]) }),
            ("a setting", { b in
                b.portfolios.append(Portfolio(name: "more"))
                b.add([record(.buy, "bitcoin", "1", price: "1", on: "2026-01-01")])
            }),
            ("an unknown portfolio", { $0.add([record(.buy, "bitcoin", "1", price: "1", on: "2026-01-01", portfolio: "nowhere")]) }),
            ("nothing", { _ in }),
        ]
        for (what, change) in attempts {
            let done = try store.append(now: Self.now) { b in
                change(&b)
                return [b.transactions]
            }
            #expect(done == nil, "\(what)")
            #expect(try FileSystem.read(store.path) == bytes, "\(what)")
        }
        // A thrown error is the builder's, and writes nothing.
        #expect(throws: PortfolioError.self) {
            try store.append(now: Self.now) { _ in throw PortfolioError.amountNotPositive }
        }
        #expect(try FileSystem.read(store.path) == bytes)
        // Without a snapshot, or beside another file: nothing.
        unlink(Snapshot.path(in: store.directory))
        #expect(try store.append(now: Self.now) { b in
            b.add([record(.buy, "bitcoin", "1", price: "1", on: "2026-01-01")])
            return [b.transactions]
        } == nil)
        #expect(try FileSystem.read(store.path) == bytes)
    }
}

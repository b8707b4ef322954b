import Foundation
@testable import PortfolioCore
import XCTest

/// The derived snapshot (`.portfolio.snapshot`) is a cache: every write leaves one for the file it
/// wrote, reports read it only while it stands for that very file, and nothing a person sees changes
/// with it — deleted, truncated, garbled, stale or made in another zone.
final class SnapshotTests: XCTestCase {
    /// The reports that may read the snapshot, in text and JSON.
    static let reports: [[String]] = [
        ["holdings", "--all"], ["holdings", "--json", "--all"], ["summary", "--all"], ["summary", "--json", "--all"], ["widget"],
        ["closed", "--all"], ["closed", "--json", "--all"], ["income", "--all"], ["income", "--json", "--all"], ["allocation"],
        ["cash", "--all"], ["cash", "--json", "--all"], ["gains", "--all"], ["holdings", "--portfolio", "eu"],
        ["summary", "--currency", "EUR", "--all"],
        ["list", "--limit", "1"], ["list", "--limit", "4", "--all"], ["list", "--limit", "100", "--all"], ["list", "--limit", "7", "--json", "--all"],
        ["list", "--limit", "2", "--portfolio", "lots"], ["list", "--limit", "3", "--portfolio", "eu"],
    ]

    /// A book of every kind that changes a position, in three portfolios (one in EUR tracking cash, one under FIFO).
    func sampleBook() -> Sandbox {
        let s = Sandbox(now: "2024-06-01T12:00:00Z")
        s.variables["TZ"] = "Europe/Berlin"
        s.ok(["portfolio", "add", "eu", "--currency", "EUR", "--cash"])
        s.ok(["portfolio", "add", "lots", "--method", "fifo"])
        s.ok(["asset", "add", "AAPL", "--name", "Apple", "--type", "stock", "--currency", "USD"])
        s.ok(["price", "set", "bitcoin", "60000"])
        s.ok(["price", "set", "ethereum", "3000"])
        s.ok(["price", "set", "AAPL", "190"])
        s.ok(["fx", "set", "EUR", "USD", "1.08", "--date", "2022-12-01"])
        s.ok(["add", "buy", "bitcoin", "0.5", "30000", "--fee", "10", "--date", "2023-01-02"])
        s.ok(["add", "buy", "bitcoin", "0.25", "42000", "--date", "2023-03-01T09:30:00Z"])
        s.ok(["add", "sell", "bitcoin", "0.1", "45000", "--date", "2023-04-01"])
        s.ok(["add", "buy", "ethereum", "2", "1800", "--date", "2023-02-01"])
        s.ok(["add", "sell", "ethereum", "2", "2100", "--date", "2023-05-01"])
        s.ok(["add", "buy", "AAPL", "10", "150", "--date", "2023-01-10"])
        s.ok(["add", "dividend", "AAPL", "2.40", "--fee", "0.36", "--date", "2023-05-15"])
        s.ok(["add", "split", "AAPL", "2", "--date", "2023-06-01"])
        s.ok(["add", "reward", "ethereum", "0.01", "2000", "--date", "2023-07-01"])
        s.ok(["cash", "deposit", "5000", "--portfolio", "eu", "--date", "2023-01-01"])
        s.ok(["add", "buy", "bitcoin", "0.05", "28000", "--portfolio", "eu", "--date", "2023-01-05"])
        s.ok(["add", "buy", "bitcoin", "0.1", "20000", "--portfolio", "lots", "--date", "2022-01-05"])
        s.ok(["add", "buy", "bitcoin", "0.1", "40000", "--portfolio", "lots", "--date", "2022-02-05"])
        s.ok(["add", "sell", "bitcoin", "0.15", "50000", "--portfolio", "lots", "--date", "2023-02-05"])
        // One line of two legs each: a swap, a move, and (in the file before older records) a cash exchange.
        s.ok(["add", "swap", "bitcoin", "0.05", "ethereum", "1", "--value", "2500", "--date", "2023-08-01"])
        s.ok(["move", "bitcoin", "0.01", "--to", "lots", "--date", "2023-08-02"])
        s.ok(["cash", "exchange", "100", "EUR", "USD", "--rate", "1.1", "--portfolio", "eu", "--date", "2023-01-03"])
        return s
    }

    func outputs(_ s: Sandbox) -> [String] {
        Self.reports.map { args in
            let r = s.run(args)
            return "\(args): exit \(r.code.rawValue)\n\(r.out)\(r.err)"
        }
    }

    var snapshotPath: (Sandbox) -> String { { $0.dir + "/" + Snapshot.fileName } }

    func snapshot(of s: Sandbox, zone: String = "Europe/Berlin") -> Snapshot? {
        PortfolioStore(directory: s.dir, timeZone: TimeZone(identifier: zone) ?? .current).loadSnapshot(now: s.now)
    }

    /// The newest lines of `list` as the snapshot gives them (`nil`: it gives none, and `list` reads the file).
    func latestLines(of s: Sandbox, _ limit: Int, in portfolios: Set<String>) -> [[Transaction]]? {
        let zone = TimeZone(identifier: "Europe/Berlin") ?? .current
        return Snapshot.load(directory: s.dir, store: s.storePath, zone: zone, now: s.now, keepingFile: true, listing: true)?
            .latestLines(limit, in: portfolios, zone: zone)?.lines
    }

    /// The reports from the snapshot are those of the JSON, and the snapshot is smaller than the file.
    func testReportsFromTheSnapshotAreTheReportsOfTheFile() throws {
        let s = sampleBook()
        XCTAssertNotNil(snapshot(of: s), "the last write left a snapshot for the file it wrote")
        let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: snapshotPath(s))[.size] as? Int)
        XCTAssertLessThan(size, try XCTUnwrap(s.storeBytes).count)
        let withSnapshot = outputs(s)
        XCTAssertTrue(withSnapshot[0].contains("BTC"), withSnapshot[0])
        // `list --limit` reads the newest records from it: the move (two legs, one line) is the newest.
        let newest = try XCTUnwrap(latestLines(of: s, 3, in: ["main", "lots", "eu"]))
        XCTAssertEqual(newest.map(\.count), [2, 2, 1])
        XCTAssertEqual(newest.first?.map(\.type), [.transferOut, .transferIn])
        unlink(snapshotPath(s))
        let fromFile = outputs(s)
        XCTAssertEqual(withSnapshot, fromFile)
        // The first report read the file and left a snapshot of it for the reports only (not `list`).
        let readMade = try XCTUnwrap(snapshot(of: s))
        XCTAssertFalse(readMade.canonical)
        XCTAssertNil(latestLines(of: s, 3, in: ["main"]))
        XCTAssertEqual(outputs(s), fromFile)
        // The next write makes it again, whole.
        s.ok(["add", "buy", "bitcoin", "0.01", "61000"])
        XCTAssertEqual(snapshot(of: s)?.canonical, true)
        let after = outputs(s)
        unlink(snapshotPath(s))
        XCTAssertEqual(after, outputs(s))
    }

    /// Truncated, garbled, emptied or replaced by a folder: the reports read the file, and are the same.
    func testABrokenSnapshotChangesNoOutput() throws {
        let s = sampleBook()
        let expected = outputs(s)
        let good = try XCTUnwrap(FileManager.default.contents(atPath: snapshotPath(s)))
        var generator = SplitMix64(seed: 7)
        var variants: [Data] = [Data(), good.prefix(good.count / 2), good.prefix(16), Data(repeating: 0x41, count: good.count)]
        for _ in 0..<20 {
            var flipped = good
            let at = Int(generator.below(UInt64(flipped.count)))
            flipped[at] ^= UInt8(1 << generator.below(8))
            variants.append(flipped)
        }
        for (i, bytes) in variants.enumerated() {
            XCTAssertTrue(FileManager.default.createFile(atPath: snapshotPath(s), contents: bytes))
            XCTAssertNil(snapshot(of: s), "variant \(i)")
            XCTAssertEqual(outputs(s), expected, "variant \(i)")
        }
        unlink(snapshotPath(s))
        try FileManager.default.createDirectory(atPath: snapshotPath(s), withIntermediateDirectories: false)
        XCTAssertEqual(outputs(s), expected)
        // A write still succeeds beside a folder of that name (the snapshot is left out, not the write).
        s.ok(["add", "buy", "bitcoin", "0.01", "61000"])
    }

    /// A hand edit that keeps the file's size and time, a copy, and a `git checkout` of an older file are
    /// all noticed: the reports show the file as it is.
    func testAnEditedOrReplacedFileIsNoticed() throws {
        let s = sampleBook()
        let before = outputs(s)
        let text = try XCTUnwrap(String(data: try XCTUnwrap(s.storeBytes), encoding: .utf8))
        // The same length, the same modification time to the nanosecond: only the fingerprint tells.
        let made = try XCTUnwrap(snapshot(of: s))
        let edited = text.replacingOccurrences(of: #""amount": "0.25""#, with: #""amount": "0.35""#)
        XCTAssertNotEqual(edited, text)
        var st = stat()
        XCTAssertEqual(stat(s.storePath, &st), 0)
        try Data(edited.utf8).write(to: URL(fileURLWithPath: s.storePath))
        var times = [st.st_atim, st.st_mtim]
        XCTAssertEqual(utimensat(AT_FDCWD, s.storePath, &times, 0), 0)
        let now = try XCTUnwrap(Snapshot.modification(of: s.storePath))
        XCTAssertTrue(now.size == made.key.size && now.time == made.key.modified, "only the bytes differ")
        XCTAssertNil(snapshot(of: s))
        let afterEdit = outputs(s)
        XCTAssertNotEqual(afterEdit, before)
        XCTAssertNotEqual(afterEdit[0], before[0])
        unlink(snapshotPath(s))
        XCTAssertEqual(outputs(s), afterEdit)

        // An older file checked out over the one the snapshot stands for.
        let t = sampleBook()
        let older = try XCTUnwrap(t.storeBytes)
        t.ok(["add", "sell", "bitcoin", "0.2", "70000"])
        let expected = outputs(t)
        XCTAssertNotNil(snapshot(of: t))
        try older.write(to: URL(fileURLWithPath: t.storePath))
        XCTAssertNil(snapshot(of: t))
        let checkedOut = outputs(t)
        XCTAssertNotEqual(checkedOut, expected)
        unlink(snapshotPath(t))
        XCTAssertEqual(outputs(t), checkedOut)
    }

    /// Days are placed in the reader's zone, and a record is in the future only against the clock: a
    /// snapshot made in another zone, or before the clock went back, is not used.
    func testAnotherZoneOrAnEarlierClockReadsTheFile() throws {
        let s = sampleBook()
        XCTAssertNotNil(snapshot(of: s))
        XCTAssertNil(snapshot(of: s, zone: "Asia/Tokyo"))
        s.variables["TZ"] = "Asia/Tokyo"
        let tokyo = outputs(s)
        // The reports in Tokyo read the file, and leave the write's snapshot (Berlin's) as it was.
        XCTAssertEqual(snapshot(of: s)?.canonical, true)
        XCTAssertNotNil(latestLines(of: s, 2, in: ["main"]))
        unlink(snapshotPath(s))
        XCTAssertEqual(outputs(s), tokyo)
        XCTAssertEqual(snapshot(of: s, zone: "Asia/Tokyo")?.canonical, false, "without one, they leave theirs")

        let t = sampleBook()
        t.now = t.now.addingTimeInterval(-86_400)
        XCTAssertNil(snapshot(of: t))
        t.now = t.now.addingTimeInterval(2 * 86_400)
        XCTAssertNotNil(snapshot(of: t), "a later clock keeps it")
    }

    /// A write that leaves the book breaking a rule (one it already broke) leaves no snapshot: the
    /// reports then warn and leave the record out, as they always have.
    func testABookThatBreaksARuleHasNoSnapshot() throws {
        let s = sampleBook()
        let text = try XCTUnwrap(String(data: try XCTUnwrap(s.storeBytes), encoding: .utf8))
        // Two sales of more than is held (a hand edit).
        let broken = text.replacingOccurrences(of: #""amount": "0.1", "price": "45000""#, with: #""amount": "9", "price": "45000""#)
            .replacingOccurrences(of: #""amount": "2", "price": "2100""#, with: #""amount": "9", "price": "2100""#)
        try Data(broken.utf8).write(to: URL(fileURLWithPath: s.storePath))
        let warned = s.run(["holdings"])
        XCTAssertTrue(warned.err.contains("breaks"), warned.description)
        // Deleting one leaves the other: the write is taken, and leaves no snapshot.
        let line = try XCTUnwrap(broken.split(separator: "\n", omittingEmptySubsequences: false).firstIndex { $0.contains(#""price": "2100""#) })
        s.ok(["delete", "@\(line + 1)"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: snapshotPath(s)))
        let after = s.run(["holdings"])
        XCTAssertTrue(after.err.contains("breaks"), after.description)
        XCTAssertFalse(FileManager.default.fileExists(atPath: snapshotPath(s)), "a read does not make one")
    }

    /// The reports do read it: a snapshot that stands for the file but holds other figures (made here on
    /// purpose) is what they show. (So the tests above, which find the same output, compared two paths.)
    func testTheReportsReadTheSnapshot() throws {
        let s = sampleBook()
        let shown = s.ok(["holdings", "--json"]).out
        let made = try XCTUnwrap(snapshot(of: s))
        var ledger = made.ledger
        ledger.positionList.removeAll { $0.key.assetId == "AAPL" }
        ledger.positionIndex = Dictionary(uniqueKeysWithValues: ledger.positionList.enumerated().map { ($1.key, $0) })
        var hash = ContentHash()
        hash.update(try XCTUnwrap(FileSystem.read(s.storePath)))
        Snapshot.write(made.facts, ledger: ledger, listing: Listing(), store: s.storePath, digest: hash.digest, layout: made.layout,
                       canonical: false, directory: s.dir, zone: TimeZone(identifier: "Europe/Berlin") ?? .current, now: s.now)
        XCTAssertNotNil(snapshot(of: s))
        let forged = s.ok(["holdings", "--json"]).out
        XCTAssertTrue(shown.contains("AAPL") && !forged.contains("AAPL"), forged)
        unlink(snapshotPath(s))
        XCTAssertEqual(s.ok(["holdings", "--json"]).out, shown)
    }

    /// `list --limit N` from the snapshot is `list --limit N` from the file, and the reports are the
    /// file's, on random books made by a run of adds (most after the last record, so going on from the
    /// snapshot; some back-dated): records out of date order in the file, many on one day, deposits on
    /// a buy's day, swaps, moves, cash transfers, three portfolios (one inactive), every limit and selection.
    func testTheNewestLinesAndTheReportsAreTheSameEitherWay() throws {
        var g = SplitMix64(seed: 20261126)
        for round in 0..<4 {
            let s = Sandbox(now: "2024-06-01T12:00:00Z")
            s.variables["TZ"] = ["UTC", "Asia/Tokyo", "America/Los_Angeles", "Europe/Berlin"][round]
            s.ok(["portfolio", "add", "cash", "--cash"])
            s.ok(["portfolio", "add", "spare", "--cash"])
            s.ok(["portfolio", "add", "old"])
            // Mostly later and later (so that sales find what they sell), now and then an earlier day, often the same one.
            var last = 0
            func day() -> String {
                last += g.below(3)
                let d = g.below(5) == 0 ? max(0, last - g.below(20)) : last
                let date = ISODate.format(Date(timeIntervalSince1970: 1_672_531_200 + Double(d) * 86_400)).prefix(10)
                return String(date) + (g.below(3) == 0 ? "T1\(g.below(9)):00:00Z" : "")
            }
            for _ in 0..<80 {
                let coin = ["bitcoin", "ethereum", "solana"][g.below(3)]
                switch g.below(8) {
                case 0, 1: s.run(["add", "buy", coin, "\(1 + g.below(9))", "\(10 + g.below(90))", "--date", day()])
                case 2: s.run(["add", "sell", coin, "0.\(1 + g.below(9))", "\(10 + g.below(90))", "--date", day()])
                case 3: s.run(["add", "swap", coin, "0.\(1 + g.below(5))", "ethereum", "1", "--value", "50", "--date", day()])
                case 4: s.run(["move", coin, "0.\(1 + g.below(5))", "--to", "old", "--date", day()])
                case 5: s.run(["cash", "deposit", "\(100 + g.below(900))", "--portfolio", "cash", "--date", day()])
                case 6: s.run(["cash", "transfer", "\(1 + g.below(50))", "--to", "spare", "--portfolio", "cash", "--date", day()])
                default: s.run(["add", "buy", coin, "1", "\(1 + g.below(20))", "--portfolio", "cash", "--date", day()])
                }
            }
            s.ok(["portfolio", "edit", "old", "--inactive"])
            XCTAssertNotNil(latestLinesAnyZone(of: s), "round \(round): a write left a listing")
            let every = s.ok(["list", "--all"]).out
            for kind in [" swap ", " move ", " transfer ", " deposit ", " sell "] { XCTAssertTrue(every.contains(kind), "round \(round): no\(kind)line") }
            XCTAssertGreaterThan(every.split(separator: "\n").count, 30, "round \(round)")
            let asks: [[String]] = [1, 2, 5, 13, 40, 200].flatMap { n in
                [["list", "--limit", "\(n)"], ["list", "--limit", "\(n)", "--all"], ["list", "--limit", "\(n)", "-p", "cash"],
                 ["list", "--limit", "\(n)", "-p", "spare"], ["list", "--limit", "\(n)", "-p", "old", "--json"]]
            }
            // The reports too: the snapshot most adds went on from (dates mostly rising) is the replay of the file.
            let reports: [[String]] = [["holdings", "--all", "--json"], ["summary", "--all"], ["closed", "--all"], ["cash", "--all"],
                                       ["holdings", "-p", "old"]]
            let fast = (asks + reports).map { s.run($0) }
            unlink(snapshotPath(s))
            for (args, shown) in zip(asks + reports, fast) { XCTAssertEqual(shown, s.run(args), "round \(round): \(args)") }
        }
    }

    func latestLinesAnyZone(of s: Sandbox) -> [[Transaction]]? {
        let zone = TimeZone(identifier: s.variables["TZ"] ?? "UTC") ?? .current
        return Snapshot.load(directory: s.dir, store: s.storePath, zone: zone, now: s.now, keepingFile: true, listing: true)?
            .latestLines(3, in: ["main"], zone: zone)?.lines
    }

    /// `check` never reads it: a garbled snapshot beside a good file is no problem of the book.
    func testCheckIgnoresTheSnapshot() throws {
        let s = sampleBook()
        let clean = s.ok(["check"])
        XCTAssertTrue(FileManager.default.createFile(atPath: snapshotPath(s), contents: Data("garbage".utf8)))
        XCTAssertEqual(s.ok(["check"]), clean)
    }
}

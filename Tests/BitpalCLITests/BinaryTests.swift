import Foundation
import PortfolioCore
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Runs the built `bitpal` binary as separate processes: real exit codes, stdout/stderr routing,
/// concurrent writers, a writer killed mid-write, and a write that fails.
final class BinaryTests: XCTestCase {
    var dir = ""
    var env: [String: String] = [:]

    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.path + "/bitpal-bin-\(UUID().uuidString)"
        env = ["BITPAL_HOME": dir, "BITPAL_OFFLINE": "1", "TZ": "UTC", "PATH": "/usr/bin:/bin",
               "SWIFT_BACKTRACE": "enable=no"]
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: dir)
    }

    func bitpal(_ args: [String], stdin: String? = nil) throws -> ProcessResult {
        try runProcess(try bitpalBinary(), args, env: env, stdin: stdin)
    }

    func load() throws -> Book { try PortfolioStore(directory: dir).load() }

    func testExitCodesAndStreams() throws {
        var r = try bitpal(["add", "buy", "btc", "1", "100", "--date", "2024-01-01"])
        XCTAssertEqual(r.status, 0)
        XCTAssertTrue(r.out.hasPrefix("Added buy 1 BTC"))
        XCTAssertEqual(r.err, "")
        r = try bitpal(["add", "buy", "btc", "12abc", "100"])
        XCTAssertEqual(r.status, 2)
        XCTAssertEqual(r.out, "")
        XCTAssertTrue(r.err.hasPrefix("error: Amount '12abc'"))
        r = try bitpal(["add", "sell", "btc", "2", "100"])
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.err, "error: You only own 1 BTC (Bitcoin). Cannot sell 2.\n")
        r = try bitpal(["holdings", "--json"])
        XCTAssertEqual(r.status, 0)
        XCTAssertTrue(r.out.hasPrefix("{\n  \"currency\": \"USD\",\n  \"holdings\": ["))
        env["BITPAL_OFFLINE"] = nil
        env["BITPAL_API_URL"] = "http://127.0.0.1:1/api/v3"
        r = try bitpal(["price", "refresh"])
        XCTAssertEqual(r.status, 3)
        XCTAssertTrue(r.err.hasPrefix("error: cannot reach the price service"), r.err)
        r = try bitpal(["import", "-"], stdin: "type,coin,amount,price,date\nbuy,eth,1,10,2024-01-01\n")
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertEqual(try load().transactions.count, 2)
    }

    /// 8 writer processes × 50 adds each at once, with a reader loop, a `price refresh` loop
    /// against the fake price service and a thread deleting `.portfolio.lock`: every acknowledged
    /// transaction is there, every read sees a whole store.
    func testConcurrentWritersLoseNothing() throws {
        let binary = try bitpalBinary()
        let server = try FakeCoinGecko()
        defer { server.stop() }
        var onlineEnv = env
        onlineEnv["BITPAL_OFFLINE"] = nil
        onlineEnv["BITPAL_API_URL"] = server.baseURL
        let writers = 8, each = 50
        let group = DispatchGroup()
        let failures = Failures()
        for w in 0..<writers {
            group.enter()
            Thread.detachNewThread { [env] in
                for i in 0..<each {
                    let note = "w\(w)-\(i)"
                    let r = try? runProcess(binary, ["add", "buy", "btc", "0.001", "100", "--date", "2024-01-01", "--note", note], env: env)
                    if r?.status != 0 { failures.add("\(note): \(r?.err ?? "no result")") }
                }
                group.leave()
            }
        }
        // Someone keeps deleting (and re-creating) the lock file earlier versions used: the lock is
        // the data folder itself now, so nothing a user can delete while writers run holds it.
        let deleting = Failures()
        let deleterDone = DispatchGroup()
        deleterDone.enter()
        Thread.detachNewThread { [dir] in
            let oldLock = dir + "/.portfolio.lock"
            while deleting.all.isEmpty {
                unlink(oldLock)
                let fd = open(oldLock, O_RDWR | O_CREAT, 0o600)
                if fd >= 0 { close(fd) }
                usleep(100)
            }
            deleterDone.leave()
        }
        defer {
            deleting.add("stop")
            deleterDone.wait()
        }
        // A reader loop and a refresh loop alongside: every read sees a whole, valid store.
        var reads = 0, refreshes = 0
        while group.wait(timeout: .now() + 0.01) == .timedOut {
            let r = try runProcess(binary, ["holdings", "--json"], env: env)
            XCTAssertEqual(r.status, 0, r.err)
            reads += 1
            let p = try runProcess(binary, ["price", "refresh", "--quiet"], env: onlineEnv)
            XCTAssertEqual(p.status, 0, p.err)
            refreshes += 1
        }
        XCTAssertGreaterThan(refreshes, 0)
        XCTAssertNoThrow(try PriceCache(directory: dir).load())
        XCTAssertEqual(failures.all, [])
        let notes = Set(try load().transactions.compactMap(\.notes))
        XCTAssertEqual(notes.count, writers * each)
        XCTAssertGreaterThan(reads, 0)
    }

    /// Writers killed with SIGKILL at random moments: the store is always readable and
    /// holds exactly the transactions of the writes that finished (and maybe the one killed).
    func testKillMidWriteNeverCorrupts() throws {
        let binary = try bitpalBinary()
        // A store big enough that a write takes a while.
        var rows = "type,coin,amount,price,date,notes\n"
        for i in 0..<3000 { rows += "buy,btc,0.01,100,2024-01-01T00:00:\(String(format: "%02d", i % 60))Z,seed \(i)\n" }
        XCTAssertEqual(try bitpal(["import", "-"], stdin: rows).status, 0)
        var count = try load().transactions.count
        var killed = 0
        for round in 0..<30 {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: binary)
            p.arguments = round % 3 == 0
                ? ["import", "-"]
                : ["add", "buy", "btc", "1", "100", "--date", "2024-02-01", "--note", "round \(round)"]
            p.environment = env
            let input = Pipe()
            p.standardInput = input
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            try p.run()
            if round % 3 == 0 {
                input.fileHandleForWriting.write(Data("type,coin,amount,price,date,notes\nbuy,eth,1,1,2024-03-01,import \(round)\nbuy,eth,2,1,2024-03-01,import \(round)\n".utf8))
            }
            try? input.fileHandleForWriting.close()
            usleep(UInt32.random(in: 0...40_000))
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
            if p.terminationReason == .uncaughtSignal { killed += 1 }
            let now = try load().transactions.count  // throws if the store were half-written
            let added = round % 3 == 0 ? 2 : 1
            XCTAssertTrue(now == count || now == count + added, "round \(round): \(count) → \(now)")
            count = now
        }
        // A writer killed between making its temp file and sweeping older ones leaves two; the next write that
        // finishes sweeps them all.
        XCTAssertEqual(try bitpal(["add", "buy", "btc", "1", "100", "--date", "2024-02-01", "--note", "after the kills"]).status, 0)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.contains(".tmp.") }
        XCTAssertEqual(leftovers, [], "the next write sweeps temp files of killed writers")
        XCTAssertGreaterThan(killed, 0)
    }

    /// A write that cannot finish (file size limit) leaves the old store and says why.
    func testFailedWriteKeepsTheOldStore() throws {
        XCTAssertEqual(try bitpal(["add", "buy", "btc", "1", "100", "--date", "2024-01-01", "--note", String(repeating: "x", count: 3000)]).status, 0)
        let before = FileManager.default.contents(atPath: dir + "/portfolio.json")
        let shell = "ulimit -f 4; exec \"$0\" \"$@\""
        var shellEnv = env
        shellEnv["BITPAL_NOTE"] = String(repeating: "y", count: 3000)
        let r = try runProcess("/bin/sh", ["-c", shell, try bitpalBinary(), "add", "buy", "btc", "1", "100", "--date", "2024-01-02",
                                           "--note", String(repeating: "y", count: 3000)], env: shellEnv)
        XCTAssertEqual(r.status, 1, r.err)
        XCTAssertTrue(r.err.hasPrefix("error: could not write \(dir)/portfolio.json: File too large (nothing was changed)"), r.err)
        XCTAssertEqual(FileManager.default.contents(atPath: dir + "/portfolio.json"), before)
        XCTAssertEqual(try load().transactions.count, 1)
    }

    /// Generated argument vectors and inputs: never a crash, only exit 0–3 with a message, and the
    /// store unchanged whenever the command failed.
    func testFuzzedArgumentsNeverCrash() throws {
        XCTAssertEqual(try bitpal(["add", "buy", "btc", "1", "100", "--date", "2024-01-01"]).status, 0)
        var generator = SplitMix(seed: 0xB17_0A1)
        let words = ["add", "buy", "sell", "btc", "eth", "list", "edit", "delete", "holdings", "closed", "summary", "price",
                     "set", "list", "history", "watch", "remove", "coins", "search", "widget", "import", "export", "help",
                     "--json", "--date", "--fee", "--note", "--limit", "--sort", "--since", "--until", "--type", "--size",
                     "--format", "--dry-run", "--", "-", "-5", "0", "1", "0.5", "1e5", "12abc", "2024-01-01", "2030-01-01",
                     "", " ", "\u{1b}[31m", "é", "9999999999999999999999999999999999999999", "0.0000000000000000001",
                     "--data-dir", "--offline", "--help", "--version", "value", "pnl", "csv", "json", "large", "completions", "fish"]
        for _ in 0..<150 {
            let count = Int(generator.next() % 6) + 1
            let args = (0..<count).map { _ in words[Int(generator.next() % UInt64(words.count))] }
                .filter { $0 != "--data-dir" && $0 != "demo" }
            let before = FileManager.default.contents(atPath: dir + "/portfolio.json")
            let r = try bitpal(args, stdin: "")
            XCTAssertFalse(r.signaled, "\(args) crashed: \(r.err)")
            XCTAssertTrue((0...3).contains(r.status), "\(args) → \(r.status)")
            if r.status != 0 {
                XCTAssertTrue(r.err.hasPrefix("error: ") || r.err.contains("\nerror: "), "\(args) failed without a message: \(r.err)")
                XCTAssertEqual(FileManager.default.contents(atPath: dir + "/portfolio.json"), before, "\(args) failed but changed the store")
            }
        }
    }
}

/// Thread-safe list of failure messages.
final class Failures: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String] = []
    func add(_ s: String) { lock.lock(); items.append(s); lock.unlock() }
    var all: [String] { lock.lock(); defer { lock.unlock() }; return items }
}

/// The seeded generator the fuzzers share.
typealias SplitMix = SplitMix64

import BitpalCLI
import Foundation
import PortfolioCore
import XCTest

/// What one bitpal run printed and returned.
struct CLIResult: Equatable, CustomStringConvertible {
    var out: String
    var err: String
    var code: ExitCode
    var description: String { "exit \(code.rawValue)\n--- stdout\n\(out)--- stderr\n\(err)" }
}

/// A throwaway data folder, a fixed clock and an environment for in-process runs.
final class Sandbox {
    let dir: String
    var now: Date
    var variables: [String: String]
    var sleeps: [TimeInterval] = []
    /// Replaces the real HTTP transport (tests that script the service's replies without a server).
    var transport: (any HTTPTransport)?

    init(now: String = "2024-06-01T12:00:00Z", offline: Bool = true) {
        dir = FileManager.default.temporaryDirectory.path + "/bitpal-cli-\(UUID().uuidString)"
        self.now = ISODate.parseTimestamp(utf8: now.utf8)!
        // The exchange-rate service at a closed port unless a test names its fake: never the internet.
        variables = ["BITPAL_HOME": dir, "HOME": dir + "/home", "TZ": "UTC", "BITPAL_FX_URL": "http://127.0.0.1:9"]
        if offline { variables["BITPAL_OFFLINE"] = "1" }
    }

    deinit { try? FileManager.default.removeItem(atPath: dir) }

    var storePath: String { dir + "/portfolio.json" }
    var storeBytes: Data? { FileManager.default.contents(atPath: storePath) }

    @discardableResult
    func run(_ args: [String], stdin: String = "", terminal: Bool = false) -> CLIResult {
        let console = Console(live: false)
        let fixedNow = now
        var env = Environment(variables: variables, now: { fixedNow }, stdoutIsTerminal: terminal,
                              readStandardInput: { Array(stdin.utf8) })
        env.sleep = { [weak self] seconds in self?.sleeps.append(seconds) }
        if let transport { env.transport = transport }
        nonisolated(unsafe) weak let me = self  // the budget clock counts the sleeps it only pretends
        env.clock = { NetworkBudget.monotonicNow() + (me?.sleeps.reduce(0, +) ?? 0) }
        let code = CLI(environment: env, console: console).run(args)
        return CLIResult(out: console.out, err: console.err, code: code)
    }

    /// Runs and fails the test unless it exits 0.
    @discardableResult
    func ok(_ args: [String], stdin: String = "", file: StaticString = #filePath, line: UInt = #line) -> CLIResult {
        let r = run(args, stdin: stdin)
        XCTAssertEqual(r.code, .success, "\(args) → \(r)", file: file, line: line)
        return r
    }

    /// Runs each command and fails the test unless every one exits 1 with `message` in its error and
    /// the store stays byte for byte.
    func refuses(_ commands: [[String]], saying message: String, file: StaticString = #filePath, line: UInt = #line) {
        let before = storeBytes
        XCTAssertNotNil(before, "no store to compare", file: file, line: line)
        for args in commands {
            let r = run(args)
            XCTAssertEqual(r.code, .failure, "\(args) → \(r)", file: file, line: line)
            XCTAssertTrue(r.err.contains(message), "\(args): \(r.err)", file: file, line: line)
        }
        XCTAssertEqual(storeBytes, before, "a refused command changed the store", file: file, line: line)
    }

    func write(_ name: String, _ content: String) -> String {
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let path = dir + "/" + name
        _ = FileManager.default.createFile(atPath: path, contents: Data(content.utf8))
        return path
    }

    func loadPortfolio() throws -> Book { try PortfolioStore(directory: dir).load() }
}

extension Sandbox {
    /// A EUR portfolio `eu` with cash: €1,000 deposited on 2024-01-01, half exchanged to dollars at 1.1 the
    /// next day, and the dollar worth 1/1.2 euro from 2024-05-01.
    func euroBookWithDollarCash() {
        ok(["portfolio", "add", "eu", "--currency", "EUR", "--cash"])
        ok(["-p", "eu", "cash", "deposit", "1000", "--date", "2024-01-01"])
        ok(["fx", "set", "EUR", "USD", "1.1", "--date", "2024-01-01"])
        ok(["-p", "eu", "cash", "exchange", "500", "EUR", "USD", "--rate", "1.1", "--date", "2024-01-02"])
        ok(["fx", "set", "EUR", "USD", "1.2", "--date", "2024-05-01"])
    }
}

/// Compares output with a golden file under Tests/BitpalCLITests/Golden; `BITPAL_RECORD=1` re-records (and fails).
func assertGolden(_ name: String, scenario: String, command: String, output: String,
                  file: StaticString = #filePath, line: UInt = #line) {
    let url = URL(fileURLWithPath: "\(#filePath)").deletingLastPathComponent().appendingPathComponent("Golden/\(name).txt")
    let content = "# \(scenario)\n$ \(command)\n\(output)"
    if ProcessInfo.processInfo.environment["BITPAL_RECORD"] == "1" {
        try? content.write(to: url, atomically: true, encoding: .utf8)
        XCTFail("Recorded new baseline for \(name)", file: file, line: line)
        return
    }
    guard let expected = try? String(contentsOf: url, encoding: .utf8) else {
        XCTFail("no golden file \(url.path); run with BITPAL_RECORD=1", file: file, line: line)
        return
    }
    XCTAssertEqual(content, expected, "golden \(name) differs", file: file, line: line)
}

/// The built `bitpal` binary next to the test bundle.
func bitpalBinary() throws -> String {
    let candidates = [
        Bundle.main.bundleURL.appendingPathComponent("bitpal").path,
        Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("bitpal").path,
        URL(fileURLWithPath: "\(#filePath)").deletingLastPathComponent().appendingPathComponent("../../.build/debug/bitpal").standardized.path,
    ]
    guard let path = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
        throw XCTSkip("bitpal binary not built next to the tests")
    }
    return path
}

/// Runs a process to completion and returns its output.
struct ProcessResult {
    var out: String
    var err: String
    var status: Int32
    var signaled: Bool
}

func runProcess(_ path: String, _ args: [String], env: [String: String], stdin: String? = nil) throws -> ProcessResult {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: path)
    p.arguments = args
    p.environment = env
    let out = Pipe(), err = Pipe()
    p.standardOutput = out
    p.standardError = err
    let input = Pipe()
    p.standardInput = input
    try p.run()
    if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
    try? input.fileHandleForWriting.close()
    let o = out.fileHandleForReading.readDataToEndOfFile()
    let e = err.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return ProcessResult(out: String(decoding: o, as: UTF8.self), err: String(decoding: e, as: UTF8.self),
                         status: p.terminationStatus, signaled: p.terminationReason == .uncaughtSignal)
}

/// A Decimal from a literal string; never through Double.
func dec(_ text: String) -> Decimal {
    (try? Decimal(parsing: text)) ?? Decimal.nan
}

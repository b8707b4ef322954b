import BitpalCLI
import Foundation
import PortfolioCore
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Files that are not what they seem, and literals of any length, through the command line.
final class FileCLITests: XCTestCase {
    func testAFIFOStoreFailsAtOnceNamingWhatItIs() throws {
        let s = Sandbox()
        try FileManager.default.createDirectory(atPath: s.dir, withIntermediateDirectories: true)
        XCTAssertEqual(mkfifo(s.storePath, 0o600), 0)
        for args in [["list"], ["holdings"], ["add", "buy", "btc", "1", "100"]] {
            let r = s.run(args)
            XCTAssertEqual(r.code, .failure, "\(args): \(r)")
            XCTAssertEqual(r.err, "error: cannot read \(s.storePath): it is a FIFO, not a regular file\n")
        }
    }

    func testImportStillReadsAPipeByName() throws {
        let s = Sandbox()
        try FileManager.default.createDirectory(atPath: s.dir, withIntermediateDirectories: true)
        let fifo = s.dir + "/rows.csv"
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let writer = Thread {
            let fd = open(fifo, O_WRONLY)
            let rows = Array("type,coin,amount,price,date\nbuy,btc,1,100,2024-01-01\n".utf8)
            _ = rows.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            close(fd)
        }
        writer.start()
        let r = s.run(["import", fifo])
        XCTAssertEqual(r.code, .success, "\(r)")
        XCTAssertEqual(try s.loadPortfolio().transactions.count, 1)
    }

    /// 166 and 167 digits (and 2,000) get the same answer: well-formed, too many digits, exit 1.
    func testLiteralsOfAnyLengthFollowOneRule() throws {
        let s = Sandbox()
        for n in [21, 39, 165, 166, 167, 168, 400, 2000] {
            for digit in ["1", "9"] {
                let big = String(repeating: digit, count: n)
                for args in [["add", "buy", "btc", big, "100"], ["add", "buy", "btc", "1", big], ["add", "buy", "btc", "1", "1", "--fee", big],
                             ["price", "set", "btc", big], ["add", "buy", "btc", big + ".5", "1"]] {
                    let r = s.run(args)
                    XCTAssertEqual(r.code, .failure, "\(n) digits: \(args.prefix(5)) → \(r.err)")
                    XCTAssertTrue(r.err.contains("digits before the point"), r.err)
                }
                let tiny = s.run(["add", "buy", "btc", "0." + String(repeating: digit, count: n), "1"])
                XCTAssertEqual(tiny.code, .failure, "\(n): \(tiny.err)")
                XCTAssertTrue(tiny.err.contains("fractional digits"), tiny.err)
                let limit = s.run(["list", "--limit", big])
                XCTAssertEqual(limit.code, n < 19 ? .success : .failure, "--limit \(n) digits: \(limit.err)")
                XCTAssertEqual(s.run(["coins", "search", "bit", "--limit", big]).code, .failure)
            }
        }
        XCTAssertNil(s.storeBytes)
        for bad in ["-1", "+3", "1.5", " 7", "", "1e3", "٣"] {
            XCTAssertEqual(s.run(["list", "--limit", bad]).code, .usage, bad)
        }
        s.ok(["list", "--limit", "0"])
        s.ok(["list", "--limit", String(Int.max)])
        XCTAssertEqual(s.run(["add", "buy", "btc", String(repeating: "1", count: 200) + "x", "1"]).code, .usage)
    }
}

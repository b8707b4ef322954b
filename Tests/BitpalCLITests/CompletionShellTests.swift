import BitpalCLI
import Foundation
import PortfolioCore
import XCTest

/// Completion as a person's shell runs it: bash, zsh and fish each source the generated script and
/// complete lines against a real book (the built binary answers `completions --list`).
final class CompletionShellTests: XCTestCase {
    /// A book with a second portfolio, a registered asset, a saving plan, an investment plan, an alert and a buy.
    func book() throws -> (home: String, buy: String) {
        let s = Sandbox()
        s.ok(["portfolio", "add", "trading"])
        s.ok(["asset", "add", "MSFT", "--name", "Microsoft", "--type", "stock"])
        s.ok(["saving", "add", "weekly", "--asset", "btc", "--amount", "10", "--every", "week", "--start", "2024-06-01"])
        s.ok(["plan", "add", "house", "--target", "1000", "--by", "2030-01-01"])
        s.ok(["alert", "add", "btc", "above", "70000"])
        s.ok(["add", "buy", "btc", "1", "100", "--date", "2024-01-01"])
        let id = try XCTUnwrap(try s.loadPortfolio().transactions.first).id.uuidString.lowercased()
        // The sandbox removes its folder when it goes: keep a copy for the shells.
        let home = FileManager.default.temporaryDirectory.path + "/bitpal-completion-book-\(UUID().uuidString)"
        try FileManager.default.copyItem(atPath: s.dir, toPath: home)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: home) }
        return (home, String(id.prefix(8)))
    }

    /// The lines every shell must complete, and what each must offer (a subset, in any order).
    func cases(buy: String) -> [(line: [String], offers: Set<String>, not: Set<String>)] {
        [
            (["-p", ""], ["main", "trading"], ["holdings"]),
            (["-p", "main", "hol"], ["holdings"], []),
            (["-p", "main", "add", ""], ["buy", "sell", "spend", "fee", "swap"], []),
            (["--portfolio", ""], ["main", "trading"], []),
            (["add", "buy", "MS"], ["MSFT"], []),
            (["asset", "show", ""], ["MSFT"], []),
            (["fx", "set", ""], ["EUR", "USD", "GBP"], ["btc"]),
            (["portfolio", "edit", ""], ["main", "trading"], []),
            (["portfolio", "remove", ""], ["main", "trading"], []),
            (["saving", "edit", ""], ["weekly"], []),
            (["plan", "show", ""], ["house"], []),
            (["alert", "remove", ""], ["1"], []),
            (["edit", ""], [buy], []),
            (["explain", ""], [buy], []),
            (["move", "btc", "1", "--to", ""], ["main", "trading"], []),
            (["add", "buy", "btc", "1", "100", "--currency", ""], ["EUR", "USD"], []),
        ]
    }

    func check(_ shell: String, _ offers: ([String]) throws -> Set<String>, buy: String) throws {
        for c in cases(buy: buy) {
            let got = try offers(c.line)
            let last = c.line.last ?? ""
            XCTAssertTrue(c.offers.filter { $0.hasPrefix(last) }.isSubset(of: got), "\(shell) \(c.line): \(got.sorted().prefix(20))")
            XCTAssertTrue(c.not.isDisjoint(with: got), "\(shell) \(c.line): offers \(c.not.intersection(got))")
        }
    }

    func testBash() throws {
        let (home, buy) = try book()
        let binary = try bitpalBinary()
        let script = try runProcess(binary, ["completions", "bash"], env: ["BITPAL_HOME": home]).out
        let path = home + "/completion.bash"
        try script.write(toFile: path, atomically: true, encoding: .utf8)
        try check("bash", { line in
            let words = ([binary] + line).map { "'" + $0 + "'" }.joined(separator: " ")
            let program = "source '\(path)'; COMP_WORDS=(\(words)); COMP_CWORD=\(line.count); _bitpal; printf '%s\\n' \"${COMPREPLY[@]}\""
            let r = try runProcess("/bin/bash", ["--norc", "-c", program], env: ["PATH": "/usr/bin:/bin", "BITPAL_HOME": home])
            XCTAssertEqual(r.status, 0, r.err)
            return Set(r.out.split(separator: "\n").map(String.init))
        }, buy: buy)
    }

    /// A `--data-dir` typed on the line is the book the lists come from, whatever BITPAL_HOME says.
    func testTheListsComeFromTheDataDirOnTheLine() throws {
        let (home, _) = try book()
        let binary = try bitpalBinary()
        let script = try runProcess(binary, ["completions", "bash"], env: [:]).out
        let path = home + "/completion.bash"
        try script.write(toFile: path, atomically: true, encoding: .utf8)
        let words = [binary, "--data-dir", home, "-p", ""].map { "'" + $0 + "'" }.joined(separator: " ")
        let program = "source '\(path)'; COMP_WORDS=(\(words)); COMP_CWORD=4; _bitpal; printf '%s\\n' \"${COMPREPLY[@]}\""
        let r = try runProcess("/bin/bash", ["--norc", "-c", program], env: ["PATH": "/usr/bin:/bin", "BITPAL_HOME": home + "/elsewhere"])
        XCTAssertEqual(Set(r.out.split(separator: "\n").map(String.init)), ["main", "trading"], r.err)
    }

    /// zsh: the script installed in fpath as `_bitpal`, autoloaded on the first TAB as compinit would,
    /// with compadd and _describe recording what would be offered.
    func testZsh() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/zsh") else { throw XCTSkip("zsh is not installed") }
        let (home, buy) = try book()
        let binary = try bitpalBinary()
        let dir = home + "/zfunc"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try runProcess(binary, ["completions", "zsh"], env: ["BITPAL_HOME": home]).out.write(toFile: dir + "/_bitpal", atomically: true, encoding: .utf8)
        try check("zsh", { line in
            let words = ([binary] + line).map { "'" + $0 + "'" }.joined(separator: " ")
            let program = """
                compadd() { while [[ "$1" == -* && "$1" != "--" ]]; do shift; done; [[ "$1" == "--" ]] && shift; print -rl -- "$@"; }
                _describe() { print -rl -- ${${(P)2}%%:*}; }
                _files() { :; }
                compdef() { :; }
                fpath=('\(dir)' $fpath)
                autoload -Uz _bitpal
                words=(\(words)); CURRENT=${#words}
                _bitpal
                """
            let r = try runProcess("/usr/bin/zsh", ["-f", "-c", program], env: ["PATH": "/usr/bin:/bin", "BITPAL_HOME": home])
            XCTAssertEqual(r.status, 0, r.err)
            return Set(r.out.split(separator: "\n").map(String.init))
        }, buy: buy)
    }

    /// fish: `complete -C` asks fish itself what it would offer for a command line.
    func testFish() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/fish") else { throw XCTSkip("fish is not installed") }
        let (home, buy) = try book()
        let binary = try bitpalBinary()
        let bin = home + "/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: bin + "/bitpal", withDestinationPath: binary)
        let path = home + "/bitpal.fish"
        try runProcess(binary, ["completions", "fish"], env: ["BITPAL_HOME": home]).out.write(toFile: path, atomically: true, encoding: .utf8)
        try check("fish", { line in
            let text = (["bitpal"] + line).joined(separator: " ")
            let r = try runProcess("/usr/bin/fish", ["--no-config", "-c", "source '\(path)'; complete -C '\(text)'"],
                                   env: ["PATH": bin + ":/usr/bin:/bin", "BITPAL_HOME": home, "HOME": home])
            XCTAssertEqual(r.status, 0, r.err)
            return Set(r.out.split(separator: "\n").map { String($0.split(separator: "\t").first ?? "") })
        }, buy: buy)
    }
}

import BitpalCLI
import Foundation
import PortfolioCore
import XCTest

/// The manual's command reference and the man page are generated from the command table: they
/// cannot drift from what bitpal accepts.
final class ManualTests: XCTestCase {
    static let catalog = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/BitpalCLI/Documentation.docc")

    /// `CommandReference.md` is what `bitpal help --reference` prints; regenerate it with
    /// `swift run bitpal help --reference > Sources/BitpalCLI/Documentation.docc/CommandReference.md`.
    func testTheReferenceIsTheCommandTable() throws {
        let committed = try String(contentsOf: Self.catalog.appendingPathComponent("CommandReference.md"), encoding: .utf8)
        let generated = Sandbox().ok(["help", "--reference"]).out
        XCTAssertEqual(committed, generated, "the command reference and the command table disagree: regenerate CommandReference.md")
        for c in CLI.commands { XCTAssertTrue(generated.contains("### `bitpal \(c.spec.name)`"), c.spec.name) }
    }

    func testTheManPageNamesEveryCommandAndOption() throws {
        let man = Sandbox().ok(["help", "--man"]).out
        XCTAssertTrue(man.hasPrefix(".TH BITPAL 1 "), man)
        for c in CLI.commands {
            XCTAssertTrue(man.contains(".B bitpal " + c.spec.name.replacingOccurrences(of: "-", with: "\\-")), c.spec.name)
            for o in c.spec.options { XCTAssertTrue(man.contains(".B " + o.name.replacingOccurrences(of: "-", with: "\\-")), "\(c.spec.name) \(o.name)") }
        }
        XCTAssertFalse(man.unicodeScalars.contains { !$0.isASCII }, "non-ASCII goes as \\[uXXXX]")
        // groff, where installed, reads it without a warning.
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/groff") else { return }
        let path = FileManager.default.temporaryDirectory.path + "/bitpal-\(UUID().uuidString).1"
        try man.write(toFile: path, atomically: true, encoding: .utf8)
        defer { unlink(path) }
        let r = try runProcess("/usr/bin/groff", ["-man", "-Tutf8", "-ww", "-z", path], env: ["PATH": "/usr/bin:/bin"])
        XCTAssertEqual(r.err, "", r.err)
    }

    /// Every article the manual's root page lists exists, and every article is listed.
    func testTheManualsTableOfContentsIsWhole() throws {
        let root = try String(contentsOf: Self.catalog.appendingPathComponent("Bitpal.md"), encoding: .utf8)
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.catalog.path).filter { $0.hasSuffix(".md") && $0 != "Bitpal.md" }
        for f in files { XCTAssertTrue(root.contains("<doc:\(f.dropLast(3))>"), "\(f) is not in the table of contents") }
        XCTAssertEqual(files.count, root.components(separatedBy: "<doc:").count - 1)
    }
}

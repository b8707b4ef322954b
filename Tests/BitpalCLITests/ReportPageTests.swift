import BitpalCLI
import Foundation
import PortfolioCore
import XCTest

/// `report --html`: one self-contained file (no scripts, nothing fetched), every figure equal to the CLI's.
final class ReportPageTests: XCTestCase {
    private func sample() -> Sandbox {
        let s = Sandbox()
        s.ok(["asset", "add", "AAPL", "--name", "Apple <Inc.> & \"Co\"", "--type", "stock"])
        s.ok(["add", "buy", "btc", "0.5", "42000", "--date", "2023-01-05", "--fee", "12"])
        s.ok(["add", "buy", "AAPL", "10", "185.20", "--date", "2023-02-01"])
        s.ok(["add", "dividend", "AAPL", "2.40", "--fee", "0.36", "--date", "2023-05-15"])
        s.ok(["add", "sell", "btc", "0.1", "60000", "--date", "2024-03-01"])
        s.ok(["price", "set", "btc", "67187.34"])
        s.ok(["price", "set", "AAPL", "229.87"])
        s.ok(["target", "set", "crypto=70", "stock=30"])
        return s
    }

    private func page(_ s: Sandbox, _ extra: [String] = []) throws -> String {
        let r = s.ok(["report", "--html", "-"] + extra)
        return r.out
    }

    func testThePageIsSelfContained() throws {
        let s = sample()
        let html = try page(s)
        XCTAssertTrue(html.hasPrefix("<!DOCTYPE html>"))
        XCTAssertTrue(html.hasSuffix("</html>\n"))
        for forbidden in ["<script", "<link", "<img", "<iframe", "src=", "href=", "url(", "@import", "http://", "https://"] {
            // The one namespace URI of inline SVG is not a fetch.
            let text = html.replacingOccurrences(of: "xmlns=\"http://www.w3.org/2000/svg\"", with: "")
            XCTAssertFalse(text.contains(forbidden), "the page contains \(forbidden)")
        }
        // What a user typed is text, never markup.
        XCTAssertTrue(html.contains("Apple &lt;Inc.&gt; &amp; &quot;Co&quot;"), html)
        XCTAssertFalse(html.contains("<Inc.>"))
        XCTAssertTrue(html.contains("<meta name=\"viewport\""))
        XCTAssertTrue(html.contains("@media print"))
    }

    func testEveryFigureIsTheCLIs() throws {
        let s = sample()
        let html = try page(s)
        var holdings = s.ok(["holdings"]).out + s.ok(["summary"]).out + s.ok(["allocation"]).out + s.ok(["income", "--by", "year"]).out
            + s.ok(["gains"]).out + s.ok(["history"]).out + s.ok(["performance"]).out
        for year in ["2023", "2024"] { holdings += s.ok(["performance", "--period", year]).out }
        // Every money figure and percentage of the page appears in the CLI's output.
        let pattern = try NSRegularExpression(pattern: #"[+-]?\$[0-9,]+\.[0-9]{2}|[+-]?[0-9]+\.[0-9]{2}(%| pts)"#)
        // The text of the page, without its tags (a bar's CSS width is not a figure).
        let text = html.replacingOccurrences(of: "<[^>]*>", with: " ", options: .regularExpression)
        let figures = pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap { Range($0.range, in: text).map { String(text[$0]) } }
        XCTAssertGreaterThan(figures.count, 20)
        for f in Set(figures) { XCTAssertTrue(holdings.contains(f), "\(f) is on the page but not in the CLI's reports") }
        for key in ["$26,874.94", "$2,298.70", "$29,173.64", "$2.40", "$0.36", "$2.04", "+$1,797.60"] {
            XCTAssertTrue(html.contains(key), "\(key) missing")
        }
    }

    func testWritesAFileOnlyItsOwnerReads() throws {
        let s = sample()
        let path = s.dir + "/out/report.html"
        XCTAssertEqual(s.run(["report", "--html", path]).code, .failure)  // no such folder: a clear error
        try FileManager.default.createDirectory(atPath: s.dir + "/out", withIntermediateDirectories: true)
        let r = s.ok(["report", "--html", path, "--all"])
        XCTAssertTrue(r.out.hasPrefix("Wrote "), r.out)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        XCTAssertEqual((attributes[.posixPermissions] as? NSNumber)?.intValue, 0o600)
        XCTAssertTrue(try String(contentsOfFile: path, encoding: .utf8).contains("All portfolios"))
        XCTAssertEqual(s.run(["report"]).code, .usage)
    }

    /// Worked example M on the page: the value chart, and 2024's TWR and IRR as `performance` gives them.
    func testExampleMOnThePage() throws {
        let s = Sandbox()
        s.now = ISODate.parseTimestamp(utf8: "2025-01-10T12:00:00Z".utf8) ?? s.now
        for (day, price) in [("2024-01-01", "40000"), ("2024-06-30", "45000"), ("2024-07-01", "50000"), ("2024-12-31", "60000")] {
            s.ok(["price", "set", "btc", price, "--date", day])
        }
        s.ok(["add", "buy", "btc", "1", "40000", "--date", "2024-01-01"])
        s.ok(["add", "buy", "btc", "1", "50000", "--date", "2024-07-01"])
        let html = try page(s)
        XCTAssertTrue(html.contains("<tr><td>2024</td><td class=\"num wide\">$0.00</td><td class=\"num wide\">$120,000.00</td>"
                                    + "<td class=\"num wide\">+$90,000.00</td><td class=\"num pos wide\">+$30,000.00</td>"
                                    + "<td class=\"num pos\">+42.11%</td><td class=\"num pos\">+47.69%</td></tr>"), html)
        XCTAssertTrue(html.contains("<svg viewBox=\"0 0 720 280\""))
        XCTAssertTrue(html.contains("<path class=\"total\" d=\"M"))
        XCTAssertTrue(html.contains("<path class=\"invested\" d=\"M"))
        XCTAssertTrue(s.ok(["performance", "--period", "2024"]).out.contains("+42.11%"))
    }
}

/// The page says what the CLI says, and its cards add up.
final class ReportPageWordsTests: XCTestCase {
    func page(_ s: Sandbox, _ args: [String] = []) throws -> String {
        let path = s.dir + "/page.html"
        s.ok(["report", "--html", path] + args)
        return try String(contentsOfFile: path, encoding: .utf8)
    }

    /// A EUR page with foreign cash shows the FX effect, so the cards add up to the total P&L; flows and
    /// drift are not coloured as gains; a cash row and the "with cash" row keep their labels on a phone.
    func testCardsAddUpAndOnlyGainsAreColoured() throws {
        let s = Sandbox()
        s.euroBookWithDollarCash()
        s.ok(["-p", "eu", "target", "set", "cash=100"])
        let html = try page(s, ["-p", "eu"])
        XCTAssertTrue(html.contains("<span>FX effect</span><b class=\"neg\">-€41.67</b>"), html)
        XCTAssertTrue(html.contains("<span>Total P&amp;L</span><b class=\"neg\">-€41.67</b>"), html)
        XCTAssertTrue(html.contains("<td>With cash</td>"), html)
        XCTAssertTrue(html.contains("<td>USD cash</td>"), html)
        XCTAssertFalse(html.contains("pts</td>") && html.contains("class=\"num pos\">+"), "drift is no gain")
    }

    /// Every warning of the CLI about what the totals leave out is on the page.
    func testWarningsOfTheCLIAreOnThePage() throws {
        let s = Sandbox()
        s.ok(["asset", "add", "GOLD", "--name", "Gold", "--type", "commodity", "--currency", "EUR"])
        s.ok(["add", "buy", "GOLD", "1", "2000", "--date", "2024-01-01", "--fx-rate", "1.1"])
        s.ok(["price", "set", "GOLD", "2100", "--currency", "EUR", "--date", "2024-05-01"])
        let cli = s.run(["holdings"])
        XCTAssertTrue(cli.err.contains("no EUR→USD rate is known"), cli.err)
        let html = try page(s)
        XCTAssertTrue(html.contains("No EUR→USD rate is known"), html)
        XCTAssertTrue(html.contains("1 holding has no price"), html)
    }
}

import Foundation
@testable import PortfolioCore
import XCTest

/// Every statement format and the mapping read hostile input — mutations of real headers and rows,
/// ragged rows, huge numbers, open quotes, random bytes — and only ever return rows or a named
/// failure: never a trap (a trap would end the test run).
final class StatementFuzzTests: XCTestCase {
    /// A header line per format, from the research, and cells to fill rows with.
    static let headers = StatementRecognitionTests.headers.compactMap { h in h.1.map { (h.0, $0) } }
    static let cells = ["", "-", "0", "-0", "1", "-1", "0.5", "1,234.56", "1.234,56", "(12.50)", "$1,000", "€-3", "USD 500", "0E-8",
                        "4.615E-06", "1e400", String(repeating: "9", count: 60), "0." + String(repeating: "0", count: 80) + "1",
                        "2024-01-01", "20240101;101500", "01-02-2024", "13/13/2024", "2024-02-30 25:61:61", "Feb 30, 2024, 1:00:00 PM",
                        "buy", "BUY", "SELL (Ca.)", "Dividends", "Withholding Tax", "trade", "deposit", "Transaction Buy", "crypto_purchase",
                        "Market buy", "Dividend (Dividend)", "YOU BOUGHT X (X) (Cash)", "Kauf", "BTC", "XXBT", "ZEUR", "EUR", "USD",
                        "US0378331005", "AAPL", "\"", "\u{FEFF}", "é", "🚀", "a\nb", String(repeating: "x", count: 3000)]

    func testEveryFormatReadsHostileRowsWithoutATrap() {
        var g = SplitMix64(seed: 2_026_112_601)
        var outcomes = (read: 0, failures: 0)
        for (header, format) in Self.headers {
            let columns = header.split(separator: ",", omittingEmptySubsequences: false).count
            for _ in 0..<40 {
                var text = header + "\n"
                for _ in 0..<g.below(6) {
                    // Ragged: fewer or more cells than the header.
                    let count = max(0, columns + g.below(5) - 2)
                    text += (0..<count).map { _ in
                        let cell = Self.cells[g.below(Self.cells.count)]
                        return g.below(3) == 0 ? "\"" + cell.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : cell
                    }.joined(separator: g.below(10) == 0 ? ";" : ",") + "\n"
                }
                if g.below(8) == 0 { text += "\"open quote,1,2\n" }
                var bytes = Array(text.utf8)
                if g.below(6) == 0, !bytes.isEmpty { bytes[g.below(bytes.count)] = UInt8(g.below(256)) }  // a flipped byte
                do {
                    _ = try StatementImport.rows(bytes, format: format, options: StatementOptions(tracksCash: g.below(2) == 0))
                    outcomes.read += 1
                } catch {
                    XCTAssertFalse((error as? ImportFailure)?.problems.isEmpty ?? true, "\(format): a failure names its problem")
                    outcomes.failures += 1
                }
            }
        }
        // Both outcomes happen: files read (rows skipped and counted) and files refused with their problems.
        XCTAssertGreaterThan(outcomes.read, 0)
        XCTAssertGreaterThan(outcomes.failures, 0)
    }

    func testRandomBytesAreRefusedOrEmptyForEveryFormat() {
        var g = SplitMix64(seed: 7)
        for format in StatementFormat.allCases {
            for size in [0, 1, 17, 400] {
                let bytes = (0..<size).map { _ in UInt8(g.below(256)) }
                do {
                    _ = try StatementImport.rows(bytes, format: format, options: StatementOptions(tracksCash: true))
                } catch {
                    XCTAssertFalse((error as? ImportFailure)?.problems.isEmpty ?? true)
                }
            }
        }
    }
}

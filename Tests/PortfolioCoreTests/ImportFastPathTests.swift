import Foundation
@testable import PortfolioCore
import Testing

/// The importer's shortcuts give what the plain ways give.
@Suite struct ImportFastPathTests {
    /// Trimming by indices into the UTF-8 view, as before the shortcut.
    static func trimmedByIndices(_ s: String) -> String {
        let u = s.utf8
        var start = u.startIndex
        var end = u.endIndex
        while start < end && (u[start] == 0x20 || u[start] == 0x09) { start = u.index(after: start) }
        while end > start {
            let before = u.index(before: end)
            guard u[before] == 0x20 || u[before] == 0x09 else { break }
            end = before
        }
        return String(decoding: u[start..<end], as: UTF8.self)
    }

    @Test func trimmingSpacesIsTrimmingByIndices() {
        var g = SplitMix64(seed: 9)
        let pieces = [" ", "\t", "a", "é", "\n", "1", "  ", "👍🏽", "\u{301}"]
        var texts = ["", " ", "\t", "a", " a ", "\ta\t", "a b", "é "]
        for _ in 0..<300 { texts.append((0..<g.below(8)).map { _ in g.pick(pieces) }.joined()) }
        // Bridged and substring-made texts too.
        texts.append(String(("  x  " as NSString) as String))
        texts.append(String(" long text that is not small ".dropFirst(0)))
        for t in texts {
            #expect(t.trimmedSpaces == Self.trimmedByIndices(t), "\(t.debugDescription)")
            #expect(Array(t.trimmedSpaces.utf8) == Array(Self.trimmedByIndices(t).utf8), "\(t.debugDescription)")
        }
    }

    @Test func legsPairAsTheLinkTableSays() {
        for a in TransactionType.allCases {
            for b in TransactionType.allCases {
                for samePortfolio in [true, false] {
                    let x = Transaction(portfolio: "p", type: a, assetId: "", amount: Fixed18(units: 1), price: nil, fee: nil, currency: nil, date: Date())
                    let y = Transaction(portfolio: samePortfolio ? "p" : "q", type: b, assetId: "", amount: Fixed18(units: 1), price: nil,
                                        fee: nil, currency: nil, date: Date())
                    let kinds = Set([a, b])
                    let expected: String? = switch (kinds, samePortfolio) {
                    case ([.sell, .buy], true): "swap"
                    case ([.transferOut, .transferIn], false): "move"
                    case ([.withdrawal, .deposit], false): "cash transfer"
                    case ([.withdrawal, .deposit], true): "cash exchange"
                    case ([.deposit, .buy], true): "saving plan"
                    default: nil
                    }
                    #expect(LinkKind.of(x, y)?.name == expected, "\(a) \(b) \(samePortfolio)")
                }
            }
        }
    }
}

import Foundation
import PortfolioCore
import Testing

/// Money shown with a few decimals takes a short way when its rounded magnitude fits 64 bits: it must
/// print what rounding the exact digits by hand prints, for every scale, sign and size around the edge.
@Suite struct FormattingFastPathTests {
    /// `digits` (an exact decimal, as `text` prints it) rounded half away from zero to `scale` places,
    /// trailing zeros trimmed or not, never `-0`: by hand, on the text.
    static func rounded(_ digits: String, scale: Int, trim: Bool) -> String {
        let negative = digits.hasPrefix("-")
        let body = negative ? String(digits.dropFirst()) : digits
        let parts = body.split(separator: ".", omittingEmptySubsequences: false)
        var integer = Array(parts[0]).map { Int($0.asciiValue! - 48) }
        var fraction = parts.count > 1 ? Array(parts[1]).map { Int($0.asciiValue! - 48) } : []
        fraction += [Int](repeating: 0, count: max(0, scale + 1 - fraction.count))
        let roundUp = fraction[scale] >= 5
        var kept = integer + fraction.prefix(scale)
        if roundUp {
            var i = kept.count - 1
            while i >= 0 {
                if kept[i] == 9 { kept[i] = 0; i -= 1 } else { kept[i] += 1; break }
            }
            if i < 0 { kept.insert(1, at: 0) }
        }
        integer = Array(kept.prefix(kept.count - scale))
        fraction = Array(kept.suffix(scale))
        if trim { while fraction.last == 0 { fraction.removeLast() } }
        while integer.count > 1 && integer.first == 0 { integer.removeFirst() }
        if integer.isEmpty { integer = [0] }
        let zero = !(integer + fraction).contains { $0 != 0 }
        return (negative && !zero ? "-" : "") + integer.map(String.init).joined() + (fraction.isEmpty ? "" : "." + fraction.map(String.init).joined())
    }

    @Test func roundingByTheShortWayIsRoundingByHand() {
        var g = SplitMix64(seed: 2026_11_26)
        var checked = 0
        for _ in 0..<20_000 {
            // Around the edge of 64 bits of cents and of smaller units, and anything below.
            let high: UInt128 = g.below(4) == 0 ? UInt128(g.below(1000)) : 0
            let low = UInt128(g.next()) << 64 | UInt128(g.next())
            let bits = g.below(129)
            let value = Exact36(negative: g.below(2) == 0, high: high, low: bits == 128 ? low : low >> (128 - UInt128(bits)))
            let exact = value.text
            for scale in [0, 2, 4, 8, 18] {
                #expect(value.fixed(scale: scale) == Self.rounded(exact, scale: scale, trim: false), "\(exact) at \(scale)")
                #expect(value.trimmed(maxScale: scale) == Self.rounded(exact, scale: scale, trim: true), "\(exact) at \(scale), trimmed")
                checked += 1
            }
        }
        #expect(checked == 100_000)
    }

    /// The `Decimal` view of a value of few digits is made without text: the same value, shown the same.
    @Test func theDecimalViewByTheShortWayIsTheTextsValue() throws {
        var g = SplitMix64(seed: 11_26)
        var short = 0
        for _ in 0..<20_000 {
            // Cents, satoshis and wei-sized values, and some of every size.
            let digits = UInt128(g.next() >> (g.below(64)))
            let scale = [0, 2, 8, 18, 30, 36][g.below(6)]
            var pow: UInt128 = 1
            for _ in 0..<(36 - scale) { pow *= 10 }
            let (magnitude, overflow) = digits.multipliedReportingOverflow(by: pow)
            let value = overflow ? Exact36(negative: g.below(2) == 0, high: UInt128(g.next()), low: UInt128(g.next()))
                : Exact36(negative: g.below(2) == 0, high: 0, low: magnitude)
            let expected = try #require(Decimal(string: value.text))
            if value.high == 0 { short += 1 }
            if value.text.filter(\.isNumber).drop(while: { $0 == "0" }).count <= 38 {
                #expect(value.decimal == expected, "\(value.text)")
                #expect("\(value.decimal)" == "\(expected)", "\(value.text)")
            }
        }
        #expect(short > 10_000)
    }
}

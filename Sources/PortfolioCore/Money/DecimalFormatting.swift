import Foundation

/// Every way bitpal turns a `Decimal` into text: fixed scale, half-up, no locale.
///
/// Display rounding happens here and nowhere else (accounting.md, "Numbers").
public enum DecimalFormatting {
    /// Rounds half away from zero to `scale` fractional digits.
    public static func rounded(_ value: Decimal, scale: Int) -> Decimal {
        var input = value
        var result = Decimal()
        NSDecimalRound(&result, &input, scale, .plain)
        return result
    }

    /// The exact value: no rounding, trailing zeros trimmed, never an exponent.
    public static func exact(_ value: Decimal) -> String {
        if value.isZero { return "0" }
        return value.description
    }

    /// Exactly `scale` fractional digits, half-up; a value that rounds to zero is `0.00`, never `-0.00`.
    public static func fixed(_ value: Decimal, scale: Int) -> String {
        let r = rounded(value, scale: scale)
        var text = r.isZero ? "0" : r.description
        guard scale > 0 else { return text }
        if let dot = text.firstIndex(of: ".") {
            let have = text.distance(from: text.index(after: dot), to: text.endIndex)
            if have < scale { text += String(repeating: "0", count: scale - have) }
        } else {
            text += "." + String(repeating: "0", count: scale)
        }
        return text
    }

    /// At most `maxScale` fractional digits, half-up, trailing zeros trimmed (`35000`, `0.00001234`).
    public static func trimmed(_ value: Decimal, maxScale: Int) -> String {
        let r = rounded(value, scale: maxScale)
        return r.isZero ? "0" : r.description
    }

    /// Money: exactly 2 fractional digits.
    public static func money(_ value: Decimal) -> String { fixed(value, scale: 2) }
    /// Exact money: exactly 2 fractional digits, rounded once from the exact value.
    public static func money(_ value: Exact36) -> String { value.fixed(scale: 2) }
    /// Exact prices and averages: at most 8 fractional digits, trimmed.
    public static func price(_ value: Exact36) -> String { value.trimmed(maxScale: 8) }
    /// Prices and average prices: at most 8 fractional digits, trimmed.
    public static func price(_ value: Decimal) -> String { trimmed(value, maxScale: 8) }
    /// Percentages: exactly 2 fractional digits.
    public static func percent(_ value: Decimal) -> String { fixed(value, scale: 2) }

    /// Inserts `,` between thousands in the integer part of a plain number string.
    public static func grouped(_ plain: String) -> String {
        // Printable ASCII (a number's text, as always): one byte a character, grouped byte by byte.
        var text = plain
        if let fast = text.withUTF8({ groupedASCII($0) }) { return fast }
        var sign = ""
        var body = Substring(plain)
        if body.first == "-" || body.first == "+" {
            sign = String(body.removeFirst())
        }
        let dot = body.firstIndex(of: ".") ?? body.endIndex
        let integer = Array(body[body.startIndex..<dot])
        var out = ""
        out.reserveCapacity(integer.count + integer.count / 3 + 16)
        for (i, ch) in integer.enumerated() {
            if i > 0 && (integer.count - i) % 3 == 0 { out.append(",") }
            out.append(ch)
        }
        return sign + out + body[dot...]
    }

    /// `grouped` of printable ASCII text; `nil` for any other text.
    private static func groupedASCII(_ b: UnsafeBufferPointer<UInt8>) -> String? {
        guard b.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
        var start = 0
        if let first = b.first, first == UInt8(ascii: "-") || first == UInt8(ascii: "+") { start = 1 }
        let dot = b[start...].firstIndex(of: UInt8(ascii: ".")) ?? b.count
        let digits = dot - start
        var out: [UInt8] = []
        out.reserveCapacity(b.count + digits / 3)
        out.append(contentsOf: b[..<start])
        for i in start..<dot {
            let k = i - start
            if k > 0 && (digits - k) % 3 == 0 { out.append(UInt8(ascii: ",")) }
            out.append(b[i])
        }
        out.append(contentsOf: b[dot...])
        return String(decoding: out, as: UTF8.self)
    }
}

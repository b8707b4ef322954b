import Foundation

/// Numbers from the price service, read exactly and checked before bitpal keeps them.
///
/// A server may send anything: `1e400`, `1e-400`, `-1`, a 500-digit integer, `1e12` as a
/// timestamp. None of it may trap (no conversion through `Double`/`Int` before a range
/// check) or reach the cache in a form its reader refuses. A value that fails a check is
/// dropped with a warning, never clamped.
public enum ServiceNumbers {
    /// The exact value of JSON number text, or `nil` when it is not a JSON number, has more
    /// than 38 significant digits (all `Decimal` keeps exactly), or needs a power of ten `Decimal` cannot hold.
    public static func exact(_ text: some StringProtocol) -> Decimal? {
        let bytes = Array(text.utf8)
        var i = 0
        let negative = i < bytes.count && bytes[i] == UInt8(ascii: "-")
        if negative { i += 1 }
        var digits: [UInt8] = []
        var scale = 0
        func isDigit(_ b: UInt8) -> Bool { b >= 48 && b <= 57 }
        // Integer part: 0, or 1-9 then digits (JSON allows no leading zeros).
        guard i < bytes.count, isDigit(bytes[i]) else { return nil }
        if bytes[i] == 48 {
            i += 1
        } else {
            while i < bytes.count, isDigit(bytes[i]) {
                if !(digits.isEmpty && bytes[i] == 48) { digits.append(bytes[i] - 48) }
                i += 1
            }
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            i += 1
            var fractionDigits = 0
            while i < bytes.count, isDigit(bytes[i]) {
                if !(digits.isEmpty && bytes[i] == 48) { digits.append(bytes[i] - 48) }
                scale -= 1
                fractionDigits += 1
                i += 1
            }
            guard fractionDigits > 0 else { return nil }
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            i += 1
            var exponentNegative = false
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") {
                exponentNegative = bytes[i] == UInt8(ascii: "-")
                i += 1
            }
            var exponent = 0
            var exponentDigits = 0
            while i < bytes.count, isDigit(bytes[i]) {
                exponent = min(exponent * 10 + Int(bytes[i] - 48), 1_000_000)  // saturates; far past any usable value
                exponentDigits += 1
                i += 1
            }
            guard exponentDigits > 0 else { return nil }
            scale += exponentNegative ? -exponent : exponent
        }
        guard i == bytes.count else { return nil }
        // Leading zeros were never kept; fold trailing zeros into the scale.
        while let last = digits.last, last == 0 {
            digits.removeLast()
            scale += 1
        }
        if digits.isEmpty { return Decimal(0) }
        guard digits.count <= 38, scale >= -128, scale <= 127 else { return nil }
        var significand = Decimal(0)
        for d in digits { significand = significand * 10 + Decimal(Int(d)) }
        return Decimal(sign: negative ? .minus : .plus, exponent: scale, significand: significand)
    }

    /// True when the cache writes `value` in a form its reader gives back exactly
    /// (`DecimalFormatting.exact`, read by `DecimalLiteral.parse` after an optional `-`).
    public static func survivesCache(_ value: Decimal) -> Bool {
        guard value.isFinite else { return false }
        let magnitude = value < 0 ? -value : value
        guard let back = DecimalLiteral.parse(utf8: DecimalFormatting.exact(magnitude).utf8) else { return false }
        return back.value == magnitude
    }

    /// The largest price bitpal accepts from the service, in USD (`10^15`).
    public static let maxPrice = Decimal(sign: .plus, exponent: 15, significand: 1)
    /// The smallest positive price bitpal accepts (`10^-18`): the smallest amount bitpal keeps exactly, so
    /// a price below it would value any holding at nothing and could not price a saving plan's buy.
    public static let minPrice = Decimal(sign: .plus, exponent: -18, significand: 1)
    /// The largest 24h change, in percent, either way (`10^9`).
    public static let maxChange = Decimal(sign: .plus, exponent: 9, significand: 1)
    /// The largest market cap, in USD (`10^18`).
    public static let maxMarketCap = Decimal(sign: .plus, exponent: 18, significand: 1)
    /// 1900-01-01T00:00:00Z and 9999-12-31T23:59:59Z in Unix seconds: the dates the store can write.
    public static let earliestSeconds: Int64 = -2_208_988_800
    public static let latestSeconds: Int64 = 253_402_300_799

    /// A usable price: positive, at most `maxPrice`, at least `minPrice`, and cacheable exactly.
    public static func price(_ text: some StringProtocol) -> Decimal? {
        guard let v = exact(text), v >= minPrice, v <= maxPrice, survivesCache(v) else { return nil }
        return v
    }

    /// A usable 24h change (percent, either sign).
    public static func change(_ text: some StringProtocol) -> Decimal? {
        guard let v = exact(text), v >= -maxChange, v <= maxChange, survivesCache(v) else { return nil }
        return v
    }

    /// A usable market cap (zero or more).
    public static func marketCap(_ text: some StringProtocol) -> Decimal? {
        guard let v = exact(text), v >= 0, v <= maxMarketCap, survivesCache(v) else { return nil }
        return v
    }

    /// A Unix time in seconds (fractions kept to the millisecond) between 1900-01-01 and 9999-12-31.
    public static func date(_ text: some StringProtocol) -> Date? {
        guard let v = exact(text),
              v >= Decimal(earliestSeconds), v <= Decimal(latestSeconds) else { return nil }
        // In range, so the conversions below cannot overflow.
        var millis = v * 1000
        var rounded = Decimal()
        NSDecimalRound(&rounded, &millis, 0, .plain)
        let whole = NSDecimalNumber(decimal: rounded).int64Value
        return Date(timeIntervalSince1970: TimeInterval(whole) / 1000)
    }

    /// A Unix time in milliseconds (`market_chart`'s timestamps; fractions rounded to the millisecond)
    /// between 1900-01-01 and 9999-12-31.
    public static func dateMillis(_ text: some StringProtocol) -> Date? {
        guard let v = exact(text), v >= Decimal(earliestSeconds) * 1000, v <= Decimal(latestSeconds) * 1000 + 999 else { return nil }
        var value = v
        var rounded = Decimal()
        NSDecimalRound(&rounded, &value, 0, .plain)
        return ISODate.date(millis: NSDecimalNumber(decimal: rounded).int64Value)
    }
}

import Foundation

/// A non-negative decimal with at most 18 fractional digits, held exactly as a count of 10⁻¹⁸.
///
/// This is how amounts, prices and fees are stored: every value the rules allow (at most
/// 18 fractional and 20 integer digits) fits, parsing and printing are integer work, and
/// the replay does its arithmetic on these integers instead of on Foundation's `Decimal`
/// (which costs over a microsecond an operation). `decimal` gives the same value as a `Decimal`.
public struct Fixed18: Hashable, Comparable, Sendable {
    public static let scale: UInt128 = 1_000_000_000_000_000_000
    /// The most digits allowed before the point: every such value fits in 128 bits.
    public static let maxIntegerDigits = 20
    /// 10^(20 + 18): the first value with more than `maxIntegerDigits` digits before the point,
    /// which the store's reader refuses (so nothing computed at or above it may be stored).
    public static let storableLimit: UInt128 = 100_000_000_000_000_000_000_000_000_000_000_000_000

    /// Whether the value has at most `maxIntegerDigits` digits before the point.
    public var isStorable: Bool { units < Fixed18.storableLimit }

    public var units: UInt128

    public init(units: UInt128) { self.units = units }

    public static let zero = Fixed18(units: 0)

    public static func < (a: Fixed18, b: Fixed18) -> Bool { a.units < b.units }

    /// Parses a literal of `PlainDecimal`'s grammar with at most 20 integer and 18 fractional digits; `nil` otherwise.
    @inlinable
    public static func parse<C: Collection>(utf8 bytes: C) -> Fixed18? where C.Element == UInt8 {
        guard let units = PlainDecimal.scan(utf8: bytes)?.units else { return nil }
        return Fixed18(units: units)
    }

    @usableFromInline
    static let powersOfTen: [UInt64] = (0...18).map { n in (0..<n).reduce(UInt64(1)) { acc, _ in acc * 10 } }

    /// The same value from a `Decimal`, if it is non-negative with at most 18 fractional and 20 integer digits.
    public init?(_ value: Decimal) {
        guard !value.isNaN, value >= 0 else { return nil }
        guard let parsed = Fixed18.parse(utf8: DecimalFormatting.exact(value).utf8) else { return nil }
        self = parsed
    }

    /// The value as a `Decimal` (exact).
    public var decimal: Decimal {
        if units == 0 { return 0 }
        var m = units
        var exponent = -18
        while exponent < 0 && m % 10 == 0 { m /= 10; exponent += 1 }
        if m <= UInt128(UInt64.max) {
            return Decimal(sign: .plus, exponent: exponent, significand: Decimal(UInt64(m)))
        }
        return Decimal(string: text) ?? 0
    }

    /// Exact digits, trailing zeros trimmed (`0.5`, `42000`, `0.000000000000000001`).
    public var text: String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(40)
        write(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `text` as UTF-8.
    public func write(to out: inout [UInt8]) {
        // units = hi·2⁶⁴ + lo; divide by 10¹⁸ with 64-bit hardware division.
        let s = UInt64(Fixed18.scale)
        let hi = UInt64(truncatingIfNeeded: units >> 64)
        let lo = UInt64(truncatingIfNeeded: units)
        let (qHigh, rHigh) = hi.quotientAndRemainder(dividingBy: s)
        let (qLow, fraction) = s.dividingFullWidth((high: rHigh, low: lo))
        if qHigh == 0 {
            Fixed18.appendDigits(qLow, to: &out)
        } else {
            Fixed18.appendDigits(UInt128(qHigh) << 64 | UInt128(qLow), to: &out)
        }
        guard fraction != 0 else { return }
        out.append(46)
        var frac = fraction
        var digits = 18
        while frac % 10 == 0 { frac /= 10; digits -= 1 }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 18) { buffer in
            var i = digits - 1
            while i >= 0 {
                buffer[i] = UInt8(truncatingIfNeeded: 48 &+ frac % 10)
                frac /= 10
                i -= 1
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[0..<digits]))
        }
    }

    static func appendDigits(_ value: UInt64, to out: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { buffer in
            var v = value
            var i = 20
            repeat {
                i -= 1
                buffer[i] = UInt8(truncatingIfNeeded: 48 &+ v % 10)
                v /= 10
            } while v > 0
            out.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[i..<20]))
        }
    }

    static func appendDigits(_ value: UInt128, to out: inout [UInt8]) {
        if value <= UInt128(UInt64.max) {
            appendDigits(UInt64(value), to: &out)
            return
        }
        let start = out.count
        var v = value
        while v > 0 { out.append(UInt8(48 + v % 10)); v /= 10 }
        out[start...].reverse()
    }
}

/// A signed exact decimal with 36 fractional digits in 256 bits: the replay's money.
///
/// A product of two `Fixed18` values is exact here; sums are exact; the one division
/// of weighted-average cost (`basis × sold / held`) is rounded half-up at the 36th
/// decimal — far below anything displayed. Values up to about 10⁴¹ fit; beyond that
/// the operations report overflow instead of wrapping.
public struct Exact36: Hashable, Sendable {
    public var negative: Bool
    public var high: UInt128
    public var low: UInt128

    public static let zero = Exact36(negative: false, high: 0, low: 0)

    public init(negative: Bool, high: UInt128, low: UInt128) {
        self.negative = negative && (high != 0 || low != 0)
        self.high = high
        self.low = low
    }

    public var isZero: Bool { high == 0 && low == 0 }

    /// `a × b` exactly (18 + 18 fractional digits).
    public static func product(_ a: Fixed18, _ b: Fixed18) -> Exact36 {
        let (h, l) = a.units.multipliedFullWidth(by: b.units)
        return Exact36(negative: false, high: h, low: l)
    }

    /// A `Fixed18` value at this scale.
    public init(_ a: Fixed18) {
        self = Exact36.product(a, Fixed18(units: Fixed18.scale))
    }

    public static func + (a: Exact36, b: Exact36) throws(PortfolioError) -> Exact36 {
        if a.negative == b.negative {
            let (l, c) = a.low.addingReportingOverflow(b.low)
            let (h1, o1) = a.high.addingReportingOverflow(b.high)
            let (h, o2) = h1.addingReportingOverflow(c ? 1 : 0)
            if o1 || o2 { throw .valueTooLarge }
            return Exact36(negative: a.negative, high: h, low: l)
        }
        // Different signs: subtract the smaller magnitude from the larger.
        if magnitudeLess(a, b) {
            return Exact36(negative: b.negative, high: subHigh(b, a), low: b.low &- a.low)
        }
        return Exact36(negative: a.negative, high: subHigh(a, b), low: a.low &- b.low)
    }

    public static func - (a: Exact36, b: Exact36) throws(PortfolioError) -> Exact36 {
        try a + Exact36(negative: !b.negative, high: b.high, low: b.low)
    }

    static func magnitudeLess(_ a: Exact36, _ b: Exact36) -> Bool {
        a.high != b.high ? a.high < b.high : a.low < b.low
    }

    private static func subHigh(_ big: Exact36, _ small: Exact36) -> UInt128 {
        big.high &- small.high &- (big.low < small.low ? 1 : 0)
    }

    /// `self × numerator / denominator`, rounded half away from zero at the 36th decimal.
    public func multiplied(by numerator: Fixed18, dividedBy denominator: Fixed18) throws(PortfolioError) -> Exact36 {
        guard denominator.units != 0 else { throw .divisionByZero }
        // 256 × 128 → 384 bits: [w2, w1, w0].
        let (lh, ll) = low.multipliedFullWidth(by: numerator.units)
        let (hh, hl) = high.multipliedFullWidth(by: numerator.units)
        let (w1, carry) = hl.addingReportingOverflow(lh)
        let w2 = hh &+ (carry ? 1 : 0)
        let d = denominator.units
        let q2 = w2 / d
        let (q1, r1) = d.dividingFullWidth((high: w2 % d, low: w1))
        var (q0, r) = d.dividingFullWidth((high: r1, low: ll))
        guard q2 == 0 else { throw .valueTooLarge }
        var qh = q1
        if r >= d - r {  // remainder ≥ half: round away from zero
            let (sum, over) = q0.addingReportingOverflow(1)
            q0 = sum
            if over {
                let (h, o) = qh.addingReportingOverflow(1)
                if o { throw .valueTooLarge }
                qh = h
            }
        }
        return Exact36(negative: negative, high: qh, low: q0)
    }

    /// Exact digits (up to 36 after the point, trailing zeros trimmed).
    public var text: String { formatted(scale: 36, trimZeros: true) }

    /// Rounded half away from zero to exactly `scale` decimals (0…36); a value that rounds to
    /// zero prints without a sign (`0.00`, never `-0.00`). Display rounding of money happens here.
    public func fixed(scale: Int) -> String { formatted(scale: scale, trimZeros: false) }

    /// Rounded half away from zero to at most `maxScale` decimals, trailing zeros trimmed (`35000`, `0.00001234`).
    public func trimmed(maxScale: Int) -> String { formatted(scale: maxScale, trimZeros: true) }

    /// `self / divisor`, rounded half away from zero at the 36th decimal (an average price).
    public func divided(by divisor: Fixed18) throws(PortfolioError) -> Exact36 {
        try multiplied(by: Fixed18(units: Fixed18.scale), dividedBy: divisor)
    }

    private func formatted(scale requested: Int, trimZeros: Bool) -> String {
        let scale = min(max(requested, 0), 36)
        let (high, low) = magnitude(roundedTo: scale)
        if high == 0, low <= UInt128(UInt64.max) { return Self.formatted(UInt64(low), scale: scale, negative: negative, trimZeros: trimZeros) }
        var digits = Exact36.decimalDigits(high: high, low: low)
        if digits.count <= scale { digits = [UInt8](repeating: 48, count: scale + 1 - digits.count) + digits }
        var integer = Array(digits[..<(digits.count - scale)])
        var fraction = Array(digits[(digits.count - scale)...])
        if trimZeros { while fraction.last == 48 { fraction.removeLast() } }
        if integer.isEmpty { integer = [48] }
        let isZero = !digits.contains { $0 != 48 }
        var out: [UInt8] = negative && !isZero ? [45] : []
        out += integer
        if !fraction.isEmpty { out.append(46); out += fraction }
        return String(decoding: out, as: UTF8.self)
    }

    /// `formatted` of a magnitude that fits 64 bits (`units` of 10^−`scale`), the usual case: made in place.
    private static func formatted(_ units: UInt64, scale: Int, negative: Bool, trimZeros: Bool) -> String {
        // At most 20 digits, the leading zeros of a small value, a sign and a point.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { buffer in
            var digits = 0
            var v = units
            var end = 63
            repeat {
                buffer[end] = UInt8(48 + v % 10)
                v /= 10
                end -= 1
                digits += 1
            } while v > 0
            while digits <= scale {
                buffer[end] = 48
                end -= 1
                digits += 1
            }
            // buffer[end + 1 ... 63] holds the digits, the last `scale` of them the fraction.
            let first = end + 1
            var last = 63
            if trimZeros { while last > 63 - scale && buffer[last] == 48 { last -= 1 } }
            let fraction = last - (63 - scale)
            var out = [UInt8]()
            out.reserveCapacity(digits + 2)
            if negative && units != 0 { out.append(45) }
            for i in first...(63 - scale) { out.append(buffer[i]) }
            if fraction > 0 {
                out.append(46)
                for i in (64 - scale)...last { out.append(buffer[i]) }
            }
            return String(decoding: out, as: UTF8.self)
        }
    }

    /// Rounded half away from zero to `scale` decimals (0…36), as an exact value (cents: 2).
    public func rounded(scale requested: Int) -> Exact36 {
        let scale = min(max(requested, 0), 36)
        guard scale < 36 else { return self }
        let (high, low) = magnitude(roundedTo: scale)
        let quotient = Exact36(negative: negative, high: high, low: low)
        let back = (try? quotient.multiplied(by: Fixed18(units: Exact36.pow10(36 - scale)), dividedBy: Fixed18(units: 1))) ?? self
        return back.isZero ? .zero : back
    }

    /// The magnitude in units of 10^−`scale` (0…36), rounded half away from zero.
    private func magnitude(roundedTo scale: Int) -> (high: UInt128, low: UInt128) {
        guard scale < 36 else { return (high, low) }
        let divisor = Exact36.pow10(36 - scale)
        let (qh, rh) = high.quotientAndRemainder(dividingBy: divisor)
        var (ql, r) = divisor.dividingFullWidth((high: rh, low: low))
        var carry: UInt128 = 0
        if r >= divisor - r {
            let (sum, over) = ql.addingReportingOverflow(1)
            ql = sum
            carry = over ? 1 : 0
        }
        return (qh &+ carry, ql)
    }

    static func pow10(_ n: Int) -> UInt128 { n >= 0 && n < powers.count ? powers[n] : (0..<n).reduce(UInt128(1)) { acc, _ in acc * 10 } }

    /// 10⁰ … 10³⁸, the powers that fit.
    private static let powers: [UInt128] = (0...38).map { n in (0..<n).reduce(UInt128(1)) { acc, _ in acc * 10 } }

    /// The decimal digits of `high·2¹²⁸ + low` ("0" for zero), by repeated division by 10¹⁹.
    static func decimalDigits(high: UInt128, low: UInt128) -> [UInt8] {
        let chunk = UInt128(10_000_000_000_000_000_000)
        var (h, l) = (high, low)
        var parts: [UInt64] = []
        while h != 0 || l != 0 {
            let (qh, rh) = h.quotientAndRemainder(dividingBy: chunk)
            let (ql, r) = chunk.dividingFullWidth((high: rh, low: l))
            parts.append(UInt64(r))
            (h, l) = (qh, ql)
        }
        guard let top = parts.popLast() else { return [48] }
        var out: [UInt8] = []
        Fixed18.appendDigits(top, to: &out)
        for part in parts.reversed() {
            var chunkDigits = [UInt8](repeating: 48, count: 19)
            var v = part
            var i = 18
            while v > 0 { chunkDigits[i] = UInt8(48 + v % 10); v /= 10; i -= 1 }
            out += chunkDigits
        }
        return out
    }

    /// The value as a `Decimal`: exact up to 38 significant digits, truncated toward zero beyond
    /// (never rounded up), so rounding it to fewer decimals for display matches rounding the exact value.
    public var decimal: Decimal {
        if isZero { return 0 }
        if high == 0 {
            // The usual case: few significant digits, made without text (a report makes many).
            var m = low
            var exponent = -36
            while exponent <= -18 && m % 1_000_000_000_000_000_000 == 0 {
                m /= 1_000_000_000_000_000_000
                exponent += 18
            }
            while exponent < 0 && m % 10 == 0 {
                m /= 10
                exponent += 1
            }
            if m <= UInt128(UInt64.max) {
                return Decimal(sign: negative ? .minus : .plus, exponent: exponent, significand: Decimal(UInt64(m)))
            }
        }
        var digits = text
        var significant = 0
        var cut = digits.endIndex
        for i in digits.indices where digits[i].isNumber {
            if significant == 0 && digits[i] == "0" { continue }
            significant += 1
            if significant > 38 { cut = i; break }
        }
        if cut != digits.endIndex {
            // Past the point, drop the rest; before it, keep the places as zeros.
            if let point = digits.firstIndex(of: "."), point < cut {
                digits = String(digits[..<cut])
            } else {
                let point = digits.firstIndex(of: ".") ?? digits.endIndex
                digits = String(digits[..<cut]) + String(repeating: "0", count: digits.distance(from: cut, to: point))
            }
        }
        return Decimal(string: digits) ?? 0
    }

    /// `a × price` for a `Decimal` price: exact when the price has at most 36 decimals and fits
    /// below 10^41 (nearly always: 18 digits or fewer); `nil` for a price it cannot hold.
    public static func product(_ a: Fixed18, _ price: Decimal) -> Exact36? {
        if let p = Fixed18(price) { return product(a, p) }
        // More than 18 decimals: scale the price to 36 decimals as an integer, then divide the product by 10^18.
        guard price >= 0, !price.isNaN else { return nil }
        let scaled = DecimalFormatting.rounded(price * Decimal(sign: .plus, exponent: 18, significand: 1), scale: 18)
        guard let p36 = Fixed18(scaled) else { return nil }
        return try? Exact36.product(a, p36).multiplied(by: Fixed18(units: 1), dividedBy: Fixed18(units: Fixed18.scale))
    }
}

extension Exact36: Comparable {
    public static func < (a: Exact36, b: Exact36) -> Bool {
        if a.negative != b.negative { return a.negative }
        return a.negative ? magnitudeLess(b, a) : magnitudeLess(a, b)
    }

    public var isNegative: Bool { negative }

    /// `|self| ≥ 1`.
    public var magnitudeAtLeastOne: Bool { high != 0 || low >= Exact36.pow10(36) }
}

extension Exact36: ExpressibleByIntegerLiteral {
    /// A whole number (for tables and tests: `Exact36 = 150`).
    public init(integerLiteral value: Int) {
        let whole = Exact36(Fixed18(units: UInt128(value.magnitude) * Fixed18.scale))
        self.init(negative: value < 0, high: whole.high, low: whole.low)
    }
}

extension Exact36 {
    /// The value rounded half up to 18 decimals, as a `Fixed18` (a stored computed value: a swap
    /// leg's price, a split's new quantity); `valueTooLarge` when negative or past 128 bits.
    public func roundedToFixed18() throws(PortfolioError) -> Fixed18 {
        if negative { throw .valueTooLarge }
        let n = try multiplied(by: Fixed18(units: 1), dividedBy: Fixed18(units: Fixed18.scale))
        guard n.high == 0 else { throw .valueTooLarge }
        return Fixed18(units: n.low)
    }
}

import Foundation

/// Why a piece of text is not a well-formed literal.
///
/// These are syntax errors (the CLI reports them as usage errors, exit 2). A
/// well-formed value that breaks a rule (zero, too many digits, a future date)
/// is a `PortfolioError` instead.
public enum LiteralError: Error, Equatable, Sendable {
    /// Text that should have been a plain decimal number was not one.
    case notANumber(field: String, text: String)
    /// Text that should have been a date was not one.
    case notADate(field: String, text: String)
    /// Text that should have been a whole number was not one.
    case notAnInteger(field: String, text: String)
}

extension LiteralError: CustomStringConvertible {
    public var description: String {
        switch self {
        case let .notANumber(field, text):
            "\(field) '\(TextEscaping.shortened(text))' is not a plain decimal number (use digits and an optional '.', e.g. 0.25)"
        case let .notADate(field, text):
            "\(field) '\(TextEscaping.shortened(text))' is not a date (use YYYY-MM-DD, YYYY-MM-DD HH:MM, today, yesterday, or an ISO 8601 time such as 2024-01-31T14:00:00Z)"
        case let .notAnInteger(field, text):
            "\(field) '\(TextEscaping.shortened(text))' is not a whole number"
        }
    }
}

/// The one grammar of bitpal's own decimal literals, and its one scanner.
///
/// A literal is digits with at most one `.`, at least one digit in all: `42000`, `0.5`,
/// `.5` and `5.` (both unambiguous, as hledger reads them). No sign, exponent, grouping,
/// currency symbol or surrounding space. Arguments, bitpal's CSV and JSON, the store and
/// the caches all go through `scan`; outside formats (exchange exports, server numbers)
/// are first rewritten into this grammar by named normalisers (`ExchangeNumber`).
public struct PlainDecimal: Equatable, Sendable {
    /// Digits before the point, leading zeros not counted (`007.5` has 1).
    public var integerDigits: Int
    /// Digits after the point, as typed (`1.50` has 2).
    public var fractionDigits: Int
    /// The value in units of 10⁻¹⁸ when it fits a `Fixed18` (at most 20 integer and 18 fractional digits).
    public var units: UInt128?

    /// Scans UTF-8 bytes; `nil` when they are not a well-formed literal.
    @inlinable
    public static func scan<C: Collection>(utf8 bytes: C) -> PlainDecimal? where C.Element == UInt8 {
        if C.self != UnsafeBufferPointer<UInt8>.self,
           let fast = bytes.withContiguousStorageIfAvailable({ scan(buffer: $0) }) {
            return fast
        }
        return scan(buffer: bytes)
    }

    @inlinable
    static func scan<C: Collection>(buffer bytes: C) -> PlainDecimal? where C.Element == UInt8 {
        var whole: UInt128 = 0    // significant integer digits, while at most 20
        var fraction: UInt64 = 0  // the first 18 fractional digits
        var intDigits = 0         // significant integer digits
        var fracDigits = 0
        var anyDigit = false
        var seenPoint = false
        for b in bytes {
            if b == 46 {
                if seenPoint { return nil }
                seenPoint = true
                continue
            }
            let d = b &- 48
            guard d <= 9 else { return nil }
            anyDigit = true
            if seenPoint {
                fracDigits += 1
                if fracDigits <= 18 { fraction = fraction &* 10 &+ UInt64(d) }
            } else if intDigits > 0 || d != 0 {
                intDigits += 1
                if intDigits <= Fixed18.maxIntegerDigits { whole = whole &* 10 &+ UInt128(d) }
            }
        }
        guard anyDigit else { return nil }
        var units: UInt128?
        if intDigits <= Fixed18.maxIntegerDigits && fracDigits <= 18 {
            units = whole &* Fixed18.scale &+ UInt128(fraction) &* UInt128(Fixed18.powersOfTen[18 - fracDigits])
        }
        return PlainDecimal(integerDigits: intDigits, fractionDigits: fracDigits, units: units)
    }

    @inlinable
    init(integerDigits: Int, fractionDigits: Int, units: UInt128?) {
        self.integerDigits = integerDigits
        self.fractionDigits = fractionDigits
        self.units = units
    }
}

/// A plain decimal literal as the user typed it, with the facts the rules need.
public struct DecimalLiteral: Equatable, Sendable {
    /// The exact value.
    public var value: Decimal
    /// Digits after the point, as typed (`"1.50"` has 2).
    public var fractionDigits: Int
    /// Digits before the point, leading zeros not counted.
    public var integerDigits: Int

    /// The most fractional digits an amount, price or fee may have (ETH has 18).
    public static let maxFractionDigits = 18

    /// Parses text that must be a literal of `PlainDecimal`'s grammar.
    ///
    /// This is the one way bitpal turns user text into a number. It rejects what
    /// `Decimal(string:)` would silently accept (`12abc`, ` 1`, `1,5`, `1e5`), and never
    /// goes through `Double`.
    ///
    /// - Throws: `LiteralError.notANumber` naming `field` when the text is not well-formed.
    public init(parsing text: some StringProtocol, field: String = "Value") throws(LiteralError) {
        guard let parsed = DecimalLiteral.parse(utf8: text.utf8) else {
            throw .notANumber(field: field, text: String(text))
        }
        self = parsed
    }

    /// Parses UTF-8 bytes in the literal grammar; `nil` when they are not well-formed.
    public static func parse<C: Collection>(utf8 bytes: C) -> DecimalLiteral? where C.Element == UInt8 {
        guard let scanned = PlainDecimal.scan(utf8: bytes) else { return nil }
        let value: Decimal
        if let units = scanned.units {
            value = Fixed18(units: units).decimal
        } else {
            // Beyond Fixed18: Foundation reads the (already validated) digits; a leading or
            // trailing point is completed first, as Decimal(string:) wants `0.5` and `5`.
            var text = String(decoding: Array(bytes), as: UTF8.self)
            if text.hasPrefix(".") { text = "0" + text }
            if text.hasSuffix(".") { text.removeLast() }
            guard let slow = Decimal(string: text), !slow.isNaN else { return nil }
            value = slow
        }
        return DecimalLiteral(value: value, fractionDigits: scanned.fractionDigits, integerDigits: scanned.integerDigits)
    }

    /// Memberwise initializer.
    public init(value: Decimal, fractionDigits: Int, integerDigits: Int) {
        self.value = value
        self.fractionDigits = fractionDigits
        self.integerDigits = integerDigits
    }
}

extension Decimal {
    /// Parses a plain decimal literal exactly; see `DecimalLiteral`.
    public init(parsing text: some StringProtocol, field: String = "Value") throws(LiteralError) {
        self = try DecimalLiteral(parsing: text, field: field).value
    }
}

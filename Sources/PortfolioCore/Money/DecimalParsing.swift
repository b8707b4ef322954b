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
            "\(field) '\(TextEscaping.escaped(text))' is not a plain decimal number (use digits and an optional '.', e.g. 0.25)"
        case let .notADate(field, text):
            "\(field) '\(TextEscaping.escaped(text))' is not a date (use YYYY-MM-DD or an ISO 8601 time such as 2024-01-31T14:00:00Z)"
        case let .notAnInteger(field, text):
            "\(field) '\(TextEscaping.escaped(text))' is not a whole number"
        }
    }
}

/// A plain decimal literal as the user typed it, with the facts the rules need.
public struct DecimalLiteral: Equatable, Sendable {
    /// The exact value.
    public var value: Decimal
    /// Digits after the point, as typed (`"1.50"` has 2).
    public var fractionDigits: Int
    /// Significant digits, ignoring leading zeros.
    public var significantDigits: Int

    /// The most fractional digits an amount, price or fee may have (ETH has 18).
    public static let maxFractionDigits = 18
    /// The most significant digits `Decimal` holds without silently rounding.
    public static let maxSignificantDigits = 38

    /// Parses text that must be entirely `digits(.digits)?`.
    ///
    /// This is the one way bitpal turns user text into a `Decimal`. It rejects
    /// what `Decimal(string:)` would silently accept (`12abc`, ` 1`, `1,5`,
    /// `1e5`), and never goes through `Double`.
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
        var mantissa: UInt64 = 0
        var digits = 0            // significant digits accumulated
        var fraction = 0
        var seenPoint = false
        var intDigits = 0
        var count = 0
        var overflow = false
        for byte in bytes {
            count += 1
            if byte == UInt8(ascii: ".") {
                if seenPoint || intDigits == 0 { return nil }
                seenPoint = true
                continue
            }
            guard byte >= 48 && byte <= 57 else { return nil }
            if seenPoint { fraction += 1 } else { intDigits += 1 }
            let d = UInt64(byte - 48)
            if digits == 0 && d == 0 { continue }
            digits += 1
            if digits <= 19 {
                mantissa = mantissa &* 10 &+ d
            } else {
                overflow = true
            }
        }
        guard count > 0, intDigits > 0 else { return nil }
        if seenPoint && fraction == 0 { return nil }
        let value: Decimal
        if !overflow {
            value = mantissa == 0
                ? Decimal(0)
                : Decimal(sign: .plus, exponent: -fraction, significand: Decimal(mantissa))
        } else {
            guard let slow = Decimal(string: String(decoding: Array(bytes), as: UTF8.self)) else { return nil }
            value = slow
        }
        return DecimalLiteral(value: value, fractionDigits: fraction, significantDigits: digits)
    }

    /// Memberwise initializer.
    public init(value: Decimal, fractionDigits: Int, significantDigits: Int) {
        self.value = value
        self.fractionDigits = fractionDigits
        self.significantDigits = significantDigits
    }
}

extension Decimal {
    /// Parses a plain decimal literal exactly; see `DecimalLiteral`.
    public init(parsing text: some StringProtocol, field: String = "Value") throws(LiteralError) {
        self = try DecimalLiteral(parsing: text, field: field).value
    }
}

import Foundation
import PortfolioCore
import Testing

@Suite struct DecimalParsingTests {
    @Test(arguments: ["12abc", "1,5", "1e5", "1E5", " 1", "1 ", "", "-5", "-0.5", "+3", ".", "..5", "5..", "1.2.3", "$100", "0x10",
                      "1_000", "abc", "NaN", "Infinity", "１", "1\n"])
    func rejects(_ text: String) {
        #expect(DecimalLiteral.parse(utf8: text.utf8) == nil)
        #expect(throws: LiteralError.notANumber(field: "Amount", text: text)) { try Decimal(parsing: text, field: "Amount") }
    }

    @Test(arguments: [
        ("0", "0"), ("42000", "42000"), ("0.5", "0.5"), ("1.50", "1.5"), ("007", "7"), ("0.00000001", "0.00000001"),
        ("0.000000000000000001", "0.000000000000000001"), ("12345678901234.123456789012", "12345678901234.123456789012"),
        ("123456789012345678901234567890.12345678", "123456789012345678901234567890.12345678"),
        (".5", "0.5"), ("5.", "5"), ("0000000000000000000001", "1"), (".000000000000000001", "0.000000000000000001"),
    ])
    func acceptsExactly(_ text: String, _ printed: String) throws {
        let value = try Decimal(parsing: text)
        #expect(DecimalFormatting.exact(value) == printed)
        #expect(value == Decimal(string: text))
    }

    @Test func countsDigits() throws {
        let lit = try DecimalLiteral(parsing: "0.1234567890123456789")
        #expect(lit.fractionDigits == 19)
        #expect(throws: PortfolioError.tooManyFractionDigits(field: "Amount", text: "0.1234567890123456789")) {
            try ValueRules.fixed("0.1234567890123456789", field: "Amount")
        }
        #expect(try ValueRules.fixed("1.123456789012345678", field: "Amount").decimal == dec("1.123456789012345678"))
        // One rule at any length, with or without a point at either end.
        for huge in [String(repeating: "9", count: 40), String(repeating: "9", count: 400), String(repeating: "9", count: 400) + "."] {
            #expect(throws: PortfolioError.tooManyDigits(field: "Amount", text: huge)) { try ValueRules.fixed(huge, field: "Amount") }
        }
        let longFraction = "." + String(repeating: "0", count: 300) + "1"
        #expect(throws: PortfolioError.tooManyFractionDigits(field: "Amount", text: longFraction)) {
            try ValueRules.fixed(longFraction, field: "Amount")
        }
        #expect(throws: LiteralError.notANumber(field: "Amount", text: "1e5")) { try ValueRules.fixed("1e5", field: "Amount") }
    }

    @Test func errorWording() {
        #expect(LiteralError.notANumber(field: "Amount", text: "12abc").description
            == "Amount '12abc' is not a plain decimal number (use digits and an optional '.', e.g. 0.25)")
        #expect(LiteralError.notANumber(field: "Amount", text: "a\u{1b}b").description.contains("a\\u{1b}b"))
    }
}

@Suite struct DecimalFormattingTests {
    @Test(arguments: [
        ("2.345", 2, "2.35"), ("2.355", 2, "2.36"), ("-2.345", 2, "-2.35"), ("42000", 2, "42000.00"),
        ("42000.125", 2, "42000.13"), ("0.004", 2, "0.00"), ("-0.004", 2, "0.00"), ("-0.005", 2, "-0.01"),
        ("66.6666666666666", 2, "66.67"), ("1", 0, "1"), ("0.1", 4, "0.1000"),
    ])
    func fixedHalfUp(_ text: String, _ scale: Int, _ expected: String) {
        #expect(DecimalFormatting.fixed(dec(text), scale: scale) == expected)
    }

    @Test(arguments: [
        ("35000", "35000"), ("0.00001234", "0.00001234"), ("0.000012345", "0.00001235"), ("1005.00", "1005"),
        ("46666.666666666666", "46666.66666667"), ("0.000000004", "0"),
    ])
    func priceTrimmed(_ text: String, _ expected: String) {
        #expect(DecimalFormatting.price(dec(text)) == expected)
    }

    @Test func nonTerminatingKeepsPrecision() {
        let avg = (dec("100") + dec("100")) / dec("3")
        #expect(avg != dec("66.67"))
        #expect(DecimalFormatting.money(avg) == "66.67")
    }

    @Test(arguments: [("1234567.891", "1,234,567.891"), ("-1234.5", "-1,234.5"), ("999", "999"), ("1000", "1,000"), ("0.5", "0.5")])
    func grouping(_ plain: String, _ expected: String) {
        #expect(DecimalFormatting.grouped(plain) == expected)
    }

    /// The grouping by characters the byte-wise one replaced, for any text.
    static func groupedByCharacters(_ plain: String) -> String {
        var sign = ""
        var body = Substring(plain)
        if body.first == "-" || body.first == "+" { sign = String(body.removeFirst()) }
        let dot = body.firstIndex(of: ".") ?? body.endIndex
        let integer = Array(body[body.startIndex..<dot])
        var out = ""
        for (i, ch) in integer.enumerated() {
            if i > 0 && (integer.count - i) % 3 == 0 { out.append(",") }
            out.append(ch)
        }
        return sign + out + body[dot...]
    }

    @Test func groupingByBytesIsGroupingByCharacters() {
        var g = SplitMix64(seed: 11)
        let pieces = ["0", "1", "9", ".", "-", "+", ",", "e", " ", "é", "\r\n", "👍🏽", "\u{301}"]
        var texts = ["", "-", "+", ".", "-.", "+1", "--1", "1..2", "1234.5678.9", "é123", "12\r\n345"]
        for _ in 0..<400 { texts.append((0..<g.below(12)).map { _ in g.pick(pieces) }.joined()) }
        for t in texts { #expect(DecimalFormatting.grouped(t) == Self.groupedByCharacters(t), "\(t.debugDescription)") }
    }
}

@Suite struct ISODateTests {
    @Test func roundTrips() {
        for text in ["2024-01-01T00:00:00Z", "2024-02-29T23:59:59Z", "1999-12-31T12:30:45.123Z", "2026-11-22T02:04:00Z"] {
            let d = ISODate.parseTimestamp(utf8: text.utf8)
            #expect(d != nil)
            #expect(d.map(ISODate.format) == text)
        }
    }

    @Test func offsetsAndRejections() {
        #expect(ISODate.parseTimestamp(utf8: "2024-01-01T02:00:00+02:00".utf8) == day("2024-01-01"))
        #expect(ISODate.parseTimestamp(utf8: "2024-01-01T00:00:00-0130".utf8) == day("2024-01-01T01:30:00Z"))
        for bad in ["2024-02-30T00:00:00Z", "2024-13-01T00:00:00Z", "2024-01-01 00:00:00Z", "2024-01-01T24:00:00Z",
                    "2024-01-01T00:00:00", "2024-01-01", "yesterday", "2023-02-29"] {
            #expect(ISODate.parseTimestamp(utf8: bad.utf8) == nil, "\(bad)")
        }
        #expect(ISODate.parseDay(utf8: "2023-02-29".utf8) == nil)
        #expect(ISODate.parseDay(utf8: "2024-02-29".utf8) != nil)
    }

    @Test func localMidnightFollowsTimeZone() throws {
        let parts = try #require(ISODate.parseDay(utf8: "2024-07-01".utf8))
        let ny = try #require(TimeZone(identifier: "America/New_York"))
        #expect(ISODate.format(ISODate.startOfDay(parts, in: ny)) == "2024-07-01T04:00:00Z")
    }
}

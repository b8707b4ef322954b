import Foundation

/// The price files `price import` and `fx import` read.
public enum PriceFileFormat: String, CaseIterable, Sendable {
    /// ledger's and hledger's `P DATE [TIME] COMMODITY AMOUNT` directives.
    case ledger
    /// beancount's `DATE price COMMODITY NUMBER CURRENCY` directives.
    case beancount
    /// A CSV file with a header: bitpal's `date,asset,price[,currency]` or pricehist's
    /// `date,base,quote,amount,source,type`.
    case csv
}

/// One price as a file states it, before its commodity is resolved and its date placed in a zone.
public struct PriceLine: Equatable, Sendable {
    /// The line it is on (the first line is 1).
    public var line: Int
    /// The commodity priced, as written (without quotes): `BTC`, `AAPL`, `EUR`.
    public var commodity: String
    /// The currency of the price (a supported code; `$` is USD), `nil` when the line names none.
    public var currency: String?
    public var price: Fixed18
    /// A day (local midnight once a zone applies), a local time, or an instant.
    public var date: DateInput

    public init(line: Int, commodity: String, currency: String?, price: Fixed18, date: DateInput) {
        self.line = line
        self.commodity = commodity
        self.currency = currency
        self.price = price
        self.date = date
    }
}

/// What a price file holds: the prices it states and the lines that could not be read.
public struct PriceFile: Sendable {
    public var format: PriceFileFormat
    public var prices: [PriceLine]
    /// Each unreadable line and why, in file order.
    public var problems: [(line: Int, message: String)]
}

/// Reads the price files people already keep: ledger/hledger `P` lines, beancount `price`
/// directives, and CSV (bitpal's own columns or pricehist's).
///
/// Blank lines and comment lines (first non-blank character `;`, `#` or `*`) are skipped in every
/// format. Amounts are exact: `42000.00`, `$42,000.00` (a `,` only between groups of three
/// digits), `42000 USD`, `USD 42000`, `"USD" 42000`; never through binary floating point, with the
/// limits of every bitpal value (18 decimals, 20 digits before the point). `$` is USD, `€` EUR,
/// `£` GBP and `¥` JPY. A bad line does not stop the reading: every one is reported.
public enum PriceImport {
    /// The format a file's first content line shows; `nil` when it shows none.
    public static func detect(_ bytes: [UInt8]) -> PriceFileFormat? {
        var found: PriceFileFormat?
        eachLine(bytes) { _, text in
            guard !isSkipped(text) else { return true }
            found = format(ofFirstLine: text)
            return false
        }
        return found
    }

    private static func format(ofFirstLine text: String) -> PriceFileFormat? {
        let trimmed = text.trimmedSpace
        if trimmed.hasPrefix("P ") || trimmed.hasPrefix("P\t") { return .ledger }
        let words = trimmed.split(whereSeparator: { $0 == " " || $0 == "\t" })
        if words.count >= 2, day(String(words[0])) != nil, words[1] == "price" { return .beancount }
        if trimmed.contains(",") { return .csv }
        return nil
    }

    /// The prices of a file in `format`, or in the format its content shows.
    ///
    /// - Throws: `ImportFailure` when no format is given and the content shows none.
    public static func read(_ bytes: [UInt8], format: PriceFileFormat?) throws(ImportFailure) -> PriceFile {
        var prices: [PriceLine] = []
        var problems: [(line: Int, message: String)] = []
        let format = try scan(bytes, format: format, price: { prices.append($0) }, problem: { problems.append(($0, $1)) })
        return PriceFile(format: format, prices: prices, problems: problems)
    }

    /// Reads a file one line at a time, without holding its lines: `price` gets each price it
    /// states and `problem` each line that cannot be read (its number and why), in file order.
    ///
    /// - Returns: the format read (`format`, or the one the content shows).
    /// - Throws: `ImportFailure` when no format is given and the content shows none.
    public static func scan(_ bytes: [UInt8], format: PriceFileFormat?, price: (PriceLine) -> Void,
                            problem: (Int, String) -> Void) throws(ImportFailure) -> PriceFileFormat {
        guard let format = format ?? detect(bytes) else {
            throw ImportFailure(problems: [
                "cannot tell the format: expected ledger 'P DATE COMMODITY PRICE' lines, beancount 'DATE price COMMODITY PRICE CURRENCY' "
                    + "lines or a CSV header 'date,asset,price[,currency]' (choose one with --format)",
            ])
        }
        switch format {
        case .ledger, .beancount:
            eachLine(bytes) { number, raw in
                // Most lines of a long file are plain ASCII ledger lines: read those from their bytes.
                if format == .ledger, let fast = plainLedger(raw, line: number) {
                    if case let .price(p) = fast { price(p) }
                    return true
                }
                let text = String(decoding: raw, as: UTF8.self)
                guard !isSkipped(text) else { return true }
                if format == .beancount && isMetadata(text) { return true }
                do throws(LineError) {
                    price(format == .ledger ? try ledger(text, line: number) : try beancount(text, line: number))
                } catch {
                    problem(number, error.message)
                }
                return true
            }
        case .csv:
            csv(bytes, price: price, problem: problem)
        }
        return format
    }

    /// A line that cannot be read, and why.
    struct LineError: Error {
        var message: String
        init(_ message: String) { self.message = message }
    }

    // MARK: Lines

    /// Each line with its number, in order, until `body` returns false; UTF-8 (or Windows-1252)
    /// without BOM, LF or CRLF. No array of lines is made: a price file may have millions.
    static func eachLine(_ bytes: [UInt8], _ body: (Int, String) -> Bool) {
        eachLine(bytes) { number, raw in body(number, String(decoding: raw, as: UTF8.self)) }
    }

    /// `eachLine` handing over each line's bytes (valid during the call) instead of a `String`.
    static func eachLine(_ bytes: [UInt8], _ body: (Int, UnsafeBufferPointer<UInt8>) -> Bool) {
        let text = TextDecoding.utf8Bytes(bytes)
        text.withUnsafeBufferPointer { all in
            guard let base = all.baseAddress else {
                _ = body(1, UnsafeBufferPointer(start: nil, count: 0))
                return
            }
            var start = all.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
            var number = 1
            while true {
                let rest = all.count - start
                let hit = rest > 0 ? memchr(base + start, 0x0A, rest) : nil
                let stop = hit.map { base.distance(to: $0.assumingMemoryBound(to: UInt8.self)) } ?? all.count
                var end = stop
                if end > start && base[end - 1] == UInt8(ascii: "\r") { end -= 1 }
                guard body(number, UnsafeBufferPointer(start: base + start, count: end - start)) else { return }
                guard hit != nil else { return }
                start = stop + 1
                number += 1
            }
        }
    }

    /// What `plainLedger` made of a line.
    enum PlainLine {
        /// Blank, or a comment.
        case skip
        case price(PriceLine)
    }

    /// A line of printable ASCII read from its bytes, when it is blank, a comment, or the plain
    /// shape `P YYYY-MM-DD COMMODITY|"COMMODITY" NUMBER [CODE]` with nothing unusual (no comment,
    /// time, symbol, sign, thousands separator, more than 18 decimals, or zero): the same
    /// `PriceLine` `ledger` reads from its text, without making strings of the rest. `nil` for
    /// every other line: `ledger` reads it (and words what is wrong).
    static func plainLedger(_ line: UnsafeBufferPointer<UInt8>, line number: Int) -> PlainLine? {
        let n = line.count
        guard let base = line.baseAddress else { return .skip }
        var i = 0
        for k in 0..<n {
            let b = base[k]
            guard (b >= 0x20 && b < 0x7F) || b == 0x09 else { return nil }
        }
        func blank(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 }
        while i < n && blank(base[i]) { i += 1 }
        if i == n { return .skip }
        if base[i] == UInt8(ascii: ";") || base[i] == UInt8(ascii: "#") || base[i] == UInt8(ascii: "*") { return .skip }
        var end = n
        while end > i && blank(base[end - 1]) { end -= 1 }
        // No comment (nor a quote that could hide one).
        for k in i..<end where base[k] == UInt8(ascii: ";") { return nil }
        // `P`, blanks, a date of exactly YYYY-MM-DD, blanks.
        guard end - i > 2, base[i] == UInt8(ascii: "P"), blank(base[i + 1]) else { return nil }
        i += 1
        while i < end && blank(base[i]) { i += 1 }
        guard i + 10 <= end, i + 10 == end || blank(base[i + 10]),
              let (y, m, d) = ISODate.parseDay(buffer: UnsafeBufferPointer(start: base + i, count: 10)) else { return nil }
        i += 10
        while i < end && blank(base[i]) { i += 1 }
        // The commodity: quoted, or a word (a word with ':' may be a time: left to `ledger`).
        var nameStart = i, nameEnd = i
        if i < end && base[i] == UInt8(ascii: "\"") {
            nameStart = i + 1
            var j = nameStart
            while j < end && base[j] != UInt8(ascii: "\"") { j += 1 }
            guard j < end else { return nil }
            nameEnd = j
            i = j + 1
        } else {
            while i < end && !blank(base[i]) {
                if base[i] == UInt8(ascii: ":") || base[i] == UInt8(ascii: "\"") { return nil }
                i += 1
            }
            nameEnd = i
        }
        guard nameEnd > nameStart else { return nil }
        while i < end && blank(base[i]) { i += 1 }
        // The number: digits with at most one point, a digit first.
        let numberStart = i
        guard i < end, base[i] >= 0x30 && base[i] <= 0x39 else { return nil }
        while i < end && ((base[i] >= 0x30 && base[i] <= 0x39) || base[i] == UInt8(ascii: ".")) { i += 1 }
        guard let scanned = PlainDecimal.scan(utf8: UnsafeBufferPointer(start: base + numberStart, count: i - numberStart)),
              scanned.fractionDigits <= DecimalLiteral.maxFractionDigits, let units = scanned.units, units > 0 else { return nil }
        // Nothing, or blanks and a currency code.
        var currency: String?
        if i < end {
            guard blank(base[i]) else { return nil }
            while i < end && blank(base[i]) { i += 1 }
            let code = String(decoding: UnsafeBufferPointer(start: base + i, count: end - i), as: UTF8.self)
            guard code.utf8.allSatisfy({ ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) }), let parsed = CurrencyCode.parse(code)?.code
            else { return nil }
            currency = parsed
        }
        let commodity = String(decoding: UnsafeBufferPointer(start: base + nameStart, count: nameEnd - nameStart), as: UTF8.self)
        return .price(PriceLine(line: number, commodity: commodity, currency: currency, price: Fixed18(units: units), date: .day(y, m, d)))
    }

    /// Blank lines and comments: first non-blank character `;`, `#` or `*`.
    static func isSkipped(_ line: String) -> Bool {
        if let ascii = line.utf8.withContiguousStorageIfAvailable({ bytes -> Bool? in
            // Plain ASCII (the common case): its bytes are its characters.
            guard bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
            guard let first = bytes.first(where: { $0 != 0x20 && $0 != 0x09 }) else { return true }
            return first == UInt8(ascii: ";") || first == UInt8(ascii: "#") || first == UInt8(ascii: "*")
        }), let skipped = ascii {
            return skipped
        }
        guard let first = line.first(where: { $0 != " " && $0 != "\t" }) else { return true }
        return first == ";" || first == "#" || first == "*"
    }

    /// A beancount metadata line under a directive: indented `key: value`.
    static func isMetadata(_ line: String) -> Bool {
        guard line.first == " " || line.first == "\t" else { return false }
        let trimmed = line.trimmedSpace
        guard let colon = trimmed.firstIndex(of: ":"), colon != trimmed.startIndex else { return false }
        return trimmed[..<colon].allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }
    }

    /// The text before a `;` comment that is not inside double quotes.
    static func withoutComment(_ text: Substring) -> Substring {
        var quoted = false
        if text.utf8.allSatisfy({ $0 < 0x80 }) {
            // Plain ASCII: the same scan over bytes.
            for i in text.utf8.indices {
                let b = text.utf8[i]
                if b == UInt8(ascii: "\"") { quoted.toggle() }
                if b == UInt8(ascii: ";") && !quoted { return text[..<i] }
            }
            return text
        }
        for i in text.indices {
            if text[i] == "\"" { quoted.toggle() }
            if text[i] == ";" && !quoted { return text[..<i] }
        }
        return text
    }

    // MARK: Formats

    /// `P DATE [TIME] COMMODITY AMOUNT [; comment]`.
    static func ledger(_ text: String, line: Int) throws(LineError) -> PriceLine {
        var s = Scanner(withoutComment(Substring(text)).trimmedSpace)
        guard s.word() == "P", s.skipBlanks() else {
            throw LineError("not a price line (expected 'P DATE COMMODITY PRICE', e.g. 'P 2024-01-15 BTC 42000.00 USD')")
        }
        guard let dayText = s.word(), !dayText.isEmpty else { throw LineError("a P line needs a date") }
        guard let parts = day(dayText) else { throw LineError("'\(TextEscaping.shortened(dayText))' is not a date (YYYY-MM-DD)") }
        s.skipBlanks()
        var date = DateInput.day(parts.0, parts.1, parts.2)
        if let time = s.peekWord(), time.first?.isNumber == true, time.contains(":") {
            _ = s.word()
            guard let millis = timeOfDay(time) else { throw LineError("'\(TextEscaping.shortened(time))' is not a time (HH:MM or HH:MM:SS)") }
            date = .localTime(parts.0, parts.1, parts.2, millisOfDay: millis)
            s.skipBlanks()
        }
        let commodity = try s.commodity()
        guard !commodity.isEmpty else { throw LineError("a P line needs a commodity and a price") }
        let (price, currency) = try amount(s.rest)
        return PriceLine(line: line, commodity: commodity, currency: currency, price: price, date: date)
    }

    /// `DATE price COMMODITY NUMBER CURRENCY [; comment]`.
    static func beancount(_ text: String, line: Int) throws(LineError) -> PriceLine {
        let content = withoutComment(Substring(text))
        // Plain ASCII: split its bytes (the same words, without breaking it into characters).
        let words = content.utf8.allSatisfy({ $0 < 0x80 })
            ? content.utf8.split(whereSeparator: { $0 == 0x20 || $0 == 0x09 }).map { String(decoding: $0, as: UTF8.self) }
            : content.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard words.count >= 2, words[1] == "price" else {
            throw LineError("not a price directive (expected 'DATE price COMMODITY PRICE CURRENCY', e.g. '2024-01-15 price BTC 42000.00 USD')")
        }
        guard let parts = day(words[0]) else { throw LineError("'\(TextEscaping.shortened(words[0]))' is not a date (YYYY-MM-DD)") }
        guard words.count == 5 else {
            throw LineError("a price directive has a date, 'price', a commodity, a number and a currency (found \(words.count) words)")
        }
        let (price, currency) = try amount(words[3] + " " + words[4])
        return PriceLine(line: line, commodity: words[2], currency: currency, price: price, date: .day(parts.0, parts.1, parts.2))
    }

    /// A header naming its columns (any case), then one price per line. `asset` may be called
    /// `base`, `commodity`, `symbol` or `coin`; `price` may be `amount` or `rate`; `currency` may be
    /// `quote`. Other columns (pricehist's `source` and `type`) are ignored.
    static func csv(_ bytes: [UInt8], price: (PriceLine) -> Void, problem: (Int, String) -> Void) {
        var columns: [String: Int]?
        var width = 0
        var problems = 0
        eachLine(bytes) { number, text in
            guard !isSkipped(text) else { return true }
            let fields: [String]
            do throws(LineError) {
                fields = try split(text)
            } catch {
                problem(number, error.message)
                problems += 1
                return true
            }
            guard let cols = columns else {
                var found: [String: Int] = [:]
                for (i, name) in fields.enumerated() {
                    let key = name.trimmedSpace.lowercased()
                    let canonical = ["base": "asset", "commodity": "asset", "symbol": "asset", "coin": "asset", "amount": "price",
                                     "rate": "price", "quote": "currency"][key] ?? key
                    if found[canonical] == nil { found[canonical] = i }
                }
                let missing = ["date", "asset", "price"].filter { found[$0] == nil }
                if !missing.isEmpty {
                    problem(number, "the header needs the columns date, asset and price (missing: \(missing.joined(separator: ", ")))")
                    problems += 1
                    return false
                }
                columns = found
                width = fields.count
                return true
            }
            guard fields.count == width else {
                problem(number, "\(fields.count) field\(fields.count == 1 ? "" : "s") where the header has \(width)")
                problems += 1
                return true
            }
            func cell(_ name: String) -> String { cols[name].map { fields[$0].trimmedSpace } ?? "" }
            do throws(LineError) {
                let dateText = cell("date")
                guard !dateText.isEmpty else { throw LineError("no date") }
                guard let date = dateInput(dateText) else { throw LineError("'\(TextEscaping.shortened(dateText))' is not a date (YYYY-MM-DD)") }
                let commodity = unquoted(cell("asset"))
                guard !commodity.isEmpty else { throw LineError("no asset") }
                let priceText = cell("price")
                guard !priceText.isEmpty else { throw LineError("no price") }
                var (value, currency) = try amount(priceText)
                let given = cell("currency")
                if !given.isEmpty {
                    let code = try currencyCode(given)
                    if let currency, currency != code {
                        throw LineError("the price is in \(currency) but the currency column says \(code)")
                    }
                    currency = code
                }
                price(PriceLine(line: number, commodity: commodity, currency: currency, price: value, date: date))
            } catch {
                problem(number, error.message)
                problems += 1
            }
            return true
        }
        if columns == nil && problems == 0 {
            problem(1, "no header: the first line names the columns, e.g. 'date,asset,price,currency'")
        }
    }

    /// The fields of one CSV line: commas, double quotes with `""` inside.
    static func split(_ line: String) throws(LineError) -> [String] {
        if line.utf8.allSatisfy({ $0 < 0x80 }) { return try splitASCII(Array(line.utf8)) }
        return try splitCharacters(line)
    }

    /// `split` character by character (any text).
    static func splitCharacters(_ line: String) throws(LineError) -> [String] {
        var fields: [String] = []
        var field = ""
        var quoted = false
        var chars = Array(line)
        var i = 0
        if chars.last == "\r" { chars.removeLast() }
        while i < chars.count {
            let c = chars[i]
            if quoted {
                if c == "\"" {
                    if i + 1 < chars.count && chars[i + 1] == "\"" {
                        field.append("\"")
                        i += 1
                    } else {
                        quoted = false
                    }
                } else {
                    field.append(c)
                }
            } else if c == "\"" && field.trimmedSpace.isEmpty {
                field = ""
                quoted = true
            } else if c == "," {
                fields.append(field)
                field = ""
            } else {
                field.append(c)
            }
            i += 1
        }
        if quoted { throw LineError("a quoted field is not closed") }
        fields.append(field)
        return fields
    }

    /// `split` of a line of plain ASCII, whose bytes are its characters: the same fields.
    static func splitASCII(_ line: [UInt8]) throws(LineError) -> [String] {
        var fields: [String] = []
        var field: [UInt8] = []
        var blank = true  // the field so far is white space only (a quote may still open it)
        var quoted = false
        var n = line.count
        if n > 0 && line[n - 1] == UInt8(ascii: "\r") { n -= 1 }
        var i = 0
        while i < n {
            let c = line[i]
            /// White space as `trimmedSpace` has it in ASCII.
            let space = c == 0x20 || (c >= 0x09 && c <= 0x0D)
            if quoted {
                if c == UInt8(ascii: "\"") {
                    if i + 1 < n && line[i + 1] == UInt8(ascii: "\"") {
                        field.append(c)
                        blank = false
                        i += 1
                    } else {
                        quoted = false
                    }
                } else {
                    field.append(c)
                    if !space { blank = false }
                }
            } else if c == UInt8(ascii: "\"") && blank {
                field.removeAll(keepingCapacity: true)
                quoted = true
            } else if c == UInt8(ascii: ",") {
                fields.append(String(decoding: field, as: UTF8.self))
                field.removeAll(keepingCapacity: true)
                blank = true
            } else {
                field.append(c)
                if !space { blank = false }
            }
            i += 1
        }
        if quoted { throw LineError("a quoted field is not closed") }
        fields.append(String(decoding: field, as: UTF8.self))
        return fields
    }

    // MARK: Values

    /// `YYYY-MM-DD`, `YYYY/MM/DD` or `YYYY.MM.DD` (hledger also writes `2024/1/5`), a real calendar day.
    static func day(_ text: String) -> (Int64, Int64, Int64)? {
        // YYYY-MM-DD as it is most often written: read as it is.
        if text.utf8.count == 10, Array(text.utf8).enumerated().allSatisfy({ $0 == 4 || $0 == 7 ? $1 == 45 : $1 >= 48 && $1 <= 57 }) {
            return ISODate.parseDay(utf8: text.utf8)
        }
        guard let separator = text.first(where: { $0 == "-" || $0 == "/" || $0 == "." }) else { return nil }
        let parts = text.split(separator: separator, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].utf8.count == 4, (1...2).contains(parts[1].utf8.count), (1...2).contains(parts[2].utf8.count),
              parts.allSatisfy({ $0.utf8.allSatisfy { $0 >= 48 && $0 <= 57 } }) else { return nil }
        func two(_ p: Substring) -> String { p.count == 1 ? "0" + p : String(p) }
        return ISODate.parseDay(utf8: Array("\(parts[0])-\(two(parts[1]))-\(two(parts[2]))".utf8))
    }

    /// `HH:MM` or `HH:MM:SS` as milliseconds of the day.
    static func timeOfDay(_ text: String) -> Int64? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2 || parts.count == 3,
              parts.allSatisfy({ $0.utf8.count == 2 && $0.utf8.allSatisfy { $0 >= 48 && $0 <= 57 } }),
              let h = Int64(parts[0]), let m = Int64(parts[1]), h < 24, m < 60 else { return nil }
        let sec = parts.count == 3 ? Int64(parts[2]) ?? 60 : 0
        guard sec < 60 else { return nil }
        return ((h * 60 + m) * 60 + sec) * 1000
    }

    /// A CSV date: a day in any of `day`'s spellings, or anything a DATE argument takes.
    static func dateInput(_ text: String) -> DateInput? {
        if let parts = day(text) { return .day(parts.0, parts.1, parts.2) }
        guard let input = DateInput.parse(text) else { return nil }
        if case .relativeDay = input { return nil }  // `today` in a file would change meaning every day
        return input
    }

    static func unquoted(_ text: String) -> String {
        if text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") { return String(text.dropFirst().dropLast()) }
        return text
    }

    /// Currency symbols taken for codes.
    static let symbols: [String: String] = ["$": "USD", "US$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY"]

    /// A supported currency code (any case, maybe quoted) or symbol.
    static func currencyCode(_ text: String) throws(LineError) -> String {
        let t = unquoted(text.trimmedSpace)
        if let code = symbols[t] ?? CurrencyCode.parse(t)?.code { return code }
        throw LineError(PortfolioError.unsupportedCurrency(t).description)
    }

    /// An amount: a number with an optional currency before or after it (`$42,000.00`, `42000 USD`).
    static func amount(_ raw: String) throws(LineError) -> (Fixed18, String?) {
        let text = raw.trimmedSpace
        guard !text.isEmpty else { throw LineError("no price") }
        // Unicode scalars, not characters: a price file is long and grapheme breaking is slow.
        let chars = text.unicodeScalars
        func digit(_ c: Unicode.Scalar) -> Bool { ("0"..."9").contains(c) }
        func string(_ part: Substring.UnicodeScalarView) -> String { String(Substring(part)) }
        // The number: the first run of digits, '.' and ',' (with a sign just before it); around it, the currency.
        guard let start = chars.firstIndex(where: { digit($0) || $0 == "." }) else {
            throw LineError("'\(TextEscaping.shortened(text))' has no number")
        }
        var end = start
        while end < chars.endIndex, digit(chars[end]) || chars[end] == "." || chars[end] == "," { end = chars.index(after: end) }
        var before = string(chars[..<start]).trimmedSpace
        let after = string(chars[end...]).trimmedSpace
        var negative = false
        if before.hasSuffix("-") || before.hasPrefix("-") {
            negative = true
            before = before.hasSuffix("-") ? String(before.dropLast()) : String(before.dropFirst())
            before = before.trimmedSpace
        }
        if before.hasSuffix("+") { before = String(before.dropLast()).trimmedSpace }
        var number = string(chars[start..<end])
        // An exponent glued to the number (1e5, 2.5E-3) is a number bitpal does not read, not a currency.
        if let first = after.unicodeScalars.first, first == "e" || first == "E",
           after.unicodeScalars.dropFirst().first.map({ digit($0) || $0 == "-" || $0 == "+" }) ?? false {
            let word = String(after.prefix { !$0.isWhitespace })
            throw LineError("'\(TextEscaping.shortened(number + word))' is not a plain decimal number (write 100000, not 1e5)")
        }
        if !before.isEmpty && !after.isEmpty {
            throw LineError("'\(TextEscaping.shortened(text))' names a currency on both sides of the number")
        }
        let currencyText = before.isEmpty ? after : before
        let currency: String? = currencyText.isEmpty ? nil : try currencyCode(currencyText)
        if number.contains(",") {
            // Thousands separators only: 1-3 digits, then groups of exactly three.
            let parts = number.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
            let groups = parts[0].split(separator: ",", omittingEmptySubsequences: false)
            guard let first = groups.first, (1...3).contains(first.count), groups.dropFirst().allSatisfy({ $0.count == 3 }),
                  parts.count == 1 || !parts[1].contains(",") else {
                throw LineError("'\(TextEscaping.shortened(number))' is not a number: ',' may only separate thousands (write 42000.50 or 42,000.50)")
            }
            number = number.replacingOccurrences(of: ",", with: "")
        }
        if negative { throw LineError(PortfolioError.priceNotPositive.description) }
        let value: Fixed18
        do {
            value = try ValueRules.fixed(number, field: "Price")
        } catch let error as LiteralError {
            throw LineError(error.description)
        } catch let error as PortfolioError {
            throw LineError(error.description)
        } catch {
            throw LineError("\(error)")
        }
        guard value.units > 0 else { throw LineError(PortfolioError.priceNotPositive.description) }
        return (value, currency)
    }

    /// Words of a ledger line, with a double-quoted commodity kept whole.
    struct Scanner {
        /// Unicode scalars, not characters: a price file is long and grapheme breaking is slow.
        let chars: String.UnicodeScalarView
        var i: String.Index
        init(_ text: String) {
            chars = text.unicodeScalars
            i = chars.startIndex
        }

        private func string(_ part: Substring.UnicodeScalarView) -> String { String(Substring(part)) }
        private func blank(_ c: Unicode.Scalar) -> Bool { c == " " || c == "\t" }

        var rest: String { string(chars[i...]) }

        @discardableResult
        mutating func skipBlanks() -> Bool {
            let start = i
            while i < chars.endIndex, blank(chars[i]) { i = chars.index(after: i) }
            return i > start
        }

        private func wordEnd() -> String.Index {
            var j = i
            while j < chars.endIndex, !blank(chars[j]) { j = chars.index(after: j) }
            return j
        }

        func peekWord() -> String? {
            let j = wordEnd()
            return j > i ? string(chars[i..<j]) : nil
        }

        mutating func word() -> String? {
            let j = wordEnd()
            guard j > i else { return nil }
            defer { i = j }
            return string(chars[i..<j])
        }

        /// `"ANY TEXT"` or a run up to the next blank.
        mutating func commodity() throws(LineError) -> String {
            guard i < chars.endIndex else { return "" }
            if chars[i] == "\"" {
                let open = chars.index(after: i)
                guard let close = chars[open...].firstIndex(of: "\"") else { throw LineError("a quoted commodity is not closed") }
                let name = string(chars[open..<close])
                i = chars.index(after: close)
                skipBlanks()
                return name
            }
            // An unquoted symbol ends at a blank.
            let name = word() ?? ""
            skipBlanks()
            return name
        }
    }
}

extension String {
    /// Without white space at either end: what `trimmingCharacters(in: .whitespaces)` gives for a
    /// line of a price file (a carriage return too), without going through `NSString` or grapheme
    /// breaking (most of an import's time on a long file).
    var trimmedSpace: String { Substring(self).trimmedSpace }
}

extension Substring {
    /// See `String.trimmedSpace`.
    var trimmedSpace: String {
        let scalars = unicodeScalars
        /// White space as Unicode has it; ASCII's (tab to carriage return, space) without asking.
        func space(_ s: Unicode.Scalar) -> Bool { s.value < 0x80 ? s.value == 0x20 || (s.value >= 0x09 && s.value <= 0x0D) : s.properties.isWhitespace }
        guard let first = scalars.firstIndex(where: { !space($0) }),
              let last = scalars.lastIndex(where: { !space($0) }) else { return "" }
        return String(Substring(scalars[first...last]))
    }
}

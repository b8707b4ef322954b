/// Makes text from users, files and servers safe to print on a terminal.
public enum TextEscaping {
    /// Replaces control characters (C0, DEL, C1) and the invisible characters that reorder or hide
    /// text on a terminal (bidirectional overrides and isolates such as U+202E, line and paragraph
    /// separators, zero-width and BOM characters) with visible escapes such as `\n`, `\t` or `\u{202e}`.
    public static func escaped(_ text: String) -> String {
        var needs = false
        for scalar in text.unicodeScalars where isControl(scalar) {
            needs = true
            break
        }
        guard needs else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            guard isControl(scalar) else {
                out.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default: out += "\\u{" + String(scalar.value, radix: 16) + "}"
            }
        }
        return out
    }

    /// Escaped, and cut to `limit` characters with `…` in the middle: a 5,000-digit amount is
    /// named in an error, not echoed whole.
    public static func shortened(_ text: String, limit: Int = 60) -> String {
        let safe = escaped(text)
        guard safe.count > limit else { return safe }
        let half = (limit - 1) / 2
        return String(safe.prefix(half)) + "…" + String(safe.suffix(half)) + " (\(text.count) characters)"
    }

    /// The same, line by line: line breaks stay (for a whole document shown on a terminal, such as an export).
    public static func escapedKeepingLines(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { escaped(String($0)) }.joined(separator: "\n")
    }

    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        if v < 0x20 || v == 0x7F || (v >= 0x80 && v < 0xA0) { return true }
        guard v >= 0x061C else { return false }
        return v == 0x061C                      // Arabic letter mark
            || v == 0x200B || v == 0x200E || v == 0x200F  // zero-width space, LRM, RLM (not the joiners emoji use)
            || (v >= 0x2028 && v <= 0x202E)     // line/paragraph separators, LRE RLE PDF LRO RLO
            || (v >= 0x2066 && v <= 0x2069)     // LRI RLI FSI PDI
            || v == 0xFEFF                      // zero-width no-break space (BOM)
    }
}

extension String {
    /// Without leading and trailing spaces and tabs (ASCII only; much cheaper than Foundation's trimming).
    public var trimmedSpaces: String {
        // The common case, nothing to trim, decided on the contiguous bytes when the text has them.
        let untouched = utf8.withContiguousStorageIfAvailable { b -> Bool in
            guard let first = b.first, let last = b.last else { return true }
            return first != 0x20 && first != 0x09 && last != 0x20 && last != 0x09
        }
        if untouched == true { return self }
        let u = utf8
        guard let first = u.first, let last = u.last else { return self }
        if first != 0x20 && first != 0x09 && last != 0x20 && last != 0x09 { return self }
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
}

/// Makes text from users, files and servers safe to print on a terminal.
public enum TextEscaping {
    /// Replaces control characters (C0, DEL, C1) with visible escapes such as `\n`, `\t` or `\u{1b}`.
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

    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        return v < 0x20 || v == 0x7F || (v >= 0x80 && v < 0xA0)
    }
}

extension String {
    /// Without leading and trailing spaces and tabs (ASCII only; much cheaper than Foundation's trimming).
    public var trimmedSpaces: String {
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

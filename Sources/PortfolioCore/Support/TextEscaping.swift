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

import Foundation

/// ISO 8601 dates without `DateFormatter` (which costs ~60 µs a call on Linux).
///
/// Writing always gives UTC with a `Z`; milliseconds are written only when present.
public enum ISODate {
    /// `2024-01-31T14:00:00Z`, or `…:00.250Z` when the date has milliseconds.
    public static func format(_ date: Date) -> String {
        var out = [UInt8]()
        out.reserveCapacity(24)
        write(date, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends `format(date)` as UTF-8.
    public static func write(_ date: Date, to out: inout [UInt8]) {
        let totalMillis = millis(date)
        var seconds = totalMillis / 1000
        var ms = totalMillis % 1000
        if ms < 0 { ms += 1000; seconds -= 1 }
        var days = seconds / 86_400
        var secOfDay = seconds % 86_400
        if secOfDay < 0 { secOfDay += 86_400; days -= 1 }
        let (y, m, d) = civil(fromDays: days)
        guard y >= 0 && y <= 9999 else {
            out.append(contentsOf: Array(String(describing: date).utf8))
            return
        }
        func two(_ v: Int64) {
            out.append(UInt8(48 + v / 10))
            out.append(UInt8(48 + v % 10))
        }
        two(y / 100); two(y % 100)
        out.append(45); two(m); out.append(45); two(d)
        out.append(84)
        two(secOfDay / 3600); out.append(58); two(secOfDay / 60 % 60); out.append(58); two(secOfDay % 60)
        if ms != 0 {
            out.append(46)
            out.append(UInt8(48 + ms / 100)); two(ms % 100)
        }
        out.append(90)
    }

    /// The calendar day of `date` in UTC, `YYYY-MM-DD`.
    public static func day(_ date: Date) -> String {
        String(format(date).prefix(10))
    }

    /// Parses a full timestamp: `YYYY-MM-DDTHH:MM:SS[.fff…](Z|±HH:MM|±HHMM)`; `nil` if not one.
    public static func parseTimestamp<C: Collection>(utf8 s: C) -> Date? where C.Element == UInt8 {
        if let fast = s.withContiguousStorageIfAvailable({ parseTimestamp(utf8: $0) }) { return fast }
        return Array(s).withUnsafeBufferPointer { parseTimestamp(utf8: $0) }
    }

    /// The same over bytes in place, without copying them.
    public static func parseTimestamp(utf8 s: UnsafeBufferPointer<UInt8>) -> Date? {
        let b = Bytes(s)
        guard b.count >= 20, b[10] == 84 || b[10] == 116 else { return nil }
        guard let (y, mo, d) = parseDayParts(b), b[13] == 58, b[16] == 58,
              let hh = num(b, 11, 2), let mi = num(b, 14, 2), let ss = num(b, 17, 2),
              hh < 24, mi < 60, ss < 60 else { return nil }
        var i = 19
        var millis: Int64 = 0
        if i < b.count && b[i] == 46 {
            i += 1
            var n = 0
            while i < b.count, b[i] >= 48, b[i] <= 57 {
                if n < 3 { millis = millis * 10 + Int64(b[i] - 48) }
                n += 1; i += 1
            }
            guard n > 0 else { return nil }
            while n < 3 { millis *= 10; n += 1 }
        }
        guard i < b.count else { return nil }
        var offset: Int64 = 0
        if b[i] == 90 || b[i] == 122 {
            i += 1
        } else if b[i] == 43 || b[i] == 45 {
            let sign: Int64 = b[i] == 45 ? -1 : 1
            i += 1
            guard let oh = num(b, i, 2) else { return nil }
            i += 2
            var om: Int64 = 0
            if i < b.count && b[i] == 58 { i += 1 }
            if i < b.count {
                guard let m = num(b, i, 2) else { return nil }
                om = m; i += 2
            }
            guard oh <= 23, om < 60 else { return nil }
            offset = sign * (oh * 3600 + om * 60)
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        let secs = days(fromCivil: y, mo, d) * 86_400 + hh * 3600 + mi * 60 + ss - offset
        return Date(timeIntervalSince1970: TimeInterval(secs) + TimeInterval(millis) / 1000)
    }

    /// Parses a bare day `YYYY-MM-DD` into (year, month, day) if it is a real calendar day.
    public static func parseDay<C: Collection>(utf8 s: C) -> (Int64, Int64, Int64)? where C.Element == UInt8 {
        let b = Array(s)
        guard b.count == 10 else { return nil }
        return parseDayParts(b)
    }

    /// Midnight starting `day` in `timeZone`.
    public static func startOfDay(_ parts: (Int64, Int64, Int64), in timeZone: TimeZone) -> Date {
        let utcMidnight = Date(timeIntervalSince1970: TimeInterval(days(fromCivil: parts.0, parts.1, parts.2) * 86_400))
        // Adjust by the zone's offset at that moment (twice, for days that change offset).
        var guess = utcMidnight.addingTimeInterval(-TimeInterval(timeZone.secondsFromGMT(for: utcMidnight)))
        guess = utcMidnight.addingTimeInterval(-TimeInterval(timeZone.secondsFromGMT(for: guess)))
        return guess
    }

    /// The calendar day `n` days after `parts`.
    public static func adding(days n: Int64, to parts: (Int64, Int64, Int64)) -> (Int64, Int64, Int64) {
        civil(fromDays: days(fromCivil: parts.0, parts.1, parts.2) + n)
    }

    /// Milliseconds since 1970, to the nearest one (so a parsed `.123` comes back as 123).
    public static func millis(_ date: Date) -> Int64 {
        let t = date.timeIntervalSince1970 * 1000
        return Int64(t.rounded())
    }

    /// `date` at whole-millisecond precision, the precision the store keeps.
    public static func truncatedToMillis(_ date: Date) -> Date {
        Date(timeIntervalSince1970: TimeInterval(millis(date)) / 1000)
    }

    /// Zero-based indexing into a slice without copying it.
    struct Bytes {
        let buffer: UnsafeBufferPointer<UInt8>
        init(_ buffer: UnsafeBufferPointer<UInt8>) { self.buffer = buffer }
        var count: Int { buffer.count }
        subscript(_ i: Int) -> UInt8 { buffer[i] }
    }

    private static func parseDayParts(_ b: [UInt8]) -> (Int64, Int64, Int64)? {
        b.withUnsafeBufferPointer { parseDayParts(Bytes($0)) }
    }

    private static func parseDayParts(_ b: Bytes) -> (Int64, Int64, Int64)? {
        guard b.count >= 10, b[4] == 45, b[7] == 45,
              let y = num(b, 0, 4), let m = num(b, 5, 2), let d = num(b, 8, 2),
              m >= 1, m <= 12, d >= 1, d <= daysInMonth(y, m) else { return nil }
        return (y, m, d)
    }

    private static func num(_ b: Bytes, _ at: Int, _ width: Int) -> Int64? {
        guard at + width <= b.count else { return nil }
        var v: Int64 = 0
        for i in at..<(at + width) {
            let c = b[i]
            guard c >= 48, c <= 57 else { return nil }
            v = v * 10 + Int64(c - 48)
        }
        return v
    }

    static func daysInMonth(_ y: Int64, _ m: Int64) -> Int64 {
        switch m {
        case 2: return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 for a proleptic Gregorian date (H. Hinnant's algorithm).
    static func days(fromCivil y0: Int64, _ m: Int64, _ d: Int64) -> Int64 {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civil(fromDays z0: Int64) -> (Int64, Int64, Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp + (mp < 10 ? 3 : -9)
        return (m <= 2 ? y + 1 : y, m, d)
    }
}

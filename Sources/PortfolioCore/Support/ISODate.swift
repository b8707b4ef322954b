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

    /// The earliest instant bitpal stores: 1900-01-01T00:00:00Z, in milliseconds since 1970.
    public static let minMillis: Int64 = -2_208_988_800_000
    /// The latest instant bitpal stores: 9999-12-31T23:59:59.999Z, in milliseconds since 1970.
    public static let maxMillis: Int64 = 253_402_300_799_999
    /// The range in words, for error messages.
    /// 2024-01-01T00:00:00Z: the creation date of portfolios read from files that did not keep one.
    public static let epoch2024 = Date(timeIntervalSince1970: 1_704_067_200)
    public static let rangeText = "1900-01-01T00:00:00Z … 9999-12-31T23:59:59.999Z"

    /// True when `date` (to the millisecond) lies in the range bitpal reads and writes.
    public static func isInRange(_ date: Date) -> Bool {
        let m = millis(date)
        return m >= minMillis && m <= maxMillis
    }

    /// Appends `format(date)` as UTF-8.
    ///
    /// Every input path refuses dates outside `minMillis...maxMillis`; a date that still lies
    /// outside (a broken system clock) is written clamped to the nearest end, so the text
    /// written is always text `parseTimestamp` accepts.
    public static func write(_ date: Date, to out: inout [UInt8]) {
        write(millis: millis(date), to: &out)
    }

    /// Appends the text of the instant `ms` milliseconds after 1970 (clamped as `write(_:to:)` does).
    static func write(millis ms: Int64, to out: inout [UInt8]) {
        let totalMillis = min(max(ms, minMillis), maxMillis)
        var seconds = totalMillis / 1000
        var ms = totalMillis % 1000
        if ms < 0 { ms += 1000; seconds -= 1 }
        var days = seconds / 86_400
        var secOfDay = seconds % 86_400
        if secOfDay < 0 { secOfDay += 86_400; days -= 1 }
        let (y, m, d) = civil(fromDays: days)
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

    /// The same over bytes in place, without copying them; `nil` also for a time outside
    /// `minMillis...maxMillis` (use `parseTimestampMillis` to tell the two apart).
    public static func parseTimestamp(utf8 s: UnsafeBufferPointer<UInt8>) -> Date? {
        guard let ms = parseTimestampMillis(utf8: s), ms >= minMillis, ms <= maxMillis else { return nil }
        return date(millis: ms)
    }

    /// The instant `ms` milliseconds after 1970 (the same `Date` a parse of its text gives).
    static func date(millis ms: Int64) -> Date {
        var secs = ms / 1000
        var frac = ms % 1000
        if frac < 0 { frac += 1000; secs -= 1 }
        return Date(timeIntervalSince1970: TimeInterval(secs) + TimeInterval(frac) / 1000)
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fff…](Z|±HH|±HH:MM|±HHMM)` into milliseconds since 1970,
    /// whatever the year; `nil` if the text is not one. Digits past milliseconds are dropped.
    public static func parseTimestampMillis(utf8 s: UnsafeBufferPointer<UInt8>) -> Int64? {
        let b = Bytes(s)
        guard b.count >= 20, b[10] == 84 || b[10] == 116 else { return nil }
        guard let (y, mo, d) = parseDayParts(b), b[13] == 58, b[16] == 58,
              let hh = num(b, 11, 2), let mi = num(b, 14, 2), let ss = num(b, 17, 2),
              hh < 24, mi < 60, ss < 60 else { return nil }
        var i = 19
        guard let millis = fractionMillis(b, &i) else { return nil }
        guard i < b.count, let (offset, end) = parseOffset(b, i), end == b.count else { return nil }
        let secs = days(fromCivil: y, mo, d) * 86_400 + hh * 3600 + mi * 60 + ss - offset
        return secs * 1000 + millis
    }

    /// `Z`, `z`, `±HH`, `±HH:MM` or `±HHMM` at `i`: the offset in seconds and where it ends.
    static func parseOffset(_ b: Bytes, _ start: Int) -> (Int64, Int)? {
        var i = start
        if b[i] == 90 || b[i] == 122 { return (0, i + 1) }
        guard b[i] == 43 || b[i] == 45 else { return nil }
        let sign: Int64 = b[i] == 45 ? -1 : 1
        i += 1
        guard let oh = num(b, i, 2) else { return nil }
        i += 2
        var om: Int64 = 0
        if i < b.count {
            if b[i] == 58 { i += 1 }
            // A colon must be followed by minutes: `+01:` is not an offset.
            guard let m = num(b, i, 2) else { return nil }
            om = m; i += 2
        }
        guard oh <= 23, om < 60 else { return nil }
        return (sign * (oh * 3600 + om * 60), i)
    }

    /// Parses a bare day `YYYY-MM-DD` into (year, month, day) if it is a real calendar day.
    public static func parseDay<C: Collection>(utf8 s: C) -> (Int64, Int64, Int64)? where C.Element == UInt8 {
        let b = Array(s)
        guard b.count == 10 else { return nil }
        return parseDayParts(b)
    }

    /// The same over bytes in place.
    static func parseDay(buffer s: UnsafeBufferPointer<UInt8>) -> (Int64, Int64, Int64)? {
        guard s.count == 10 else { return nil }
        return parseDayParts(Bytes(s))
    }

    /// The first instant of `day` in `timeZone`: local midnight, or the first time that exists
    /// when the zone skips midnight (2018-11-04 in America/Sao_Paulo begins at 01:00).
    public static func startOfDay(_ parts: (Int64, Int64, Int64), in timeZone: TimeZone) -> Date {
        let dayNumber = days(fromCivil: parts.0, parts.1, parts.2)
        // Far outside the range bitpal keeps (refused anyway) Calendar's Julian years would
        // disagree with this proleptic Gregorian arithmetic: use the zone's offset there.
        if parts.0 < 1800 || parts.0 > 9999 {
            let utcMidnight = Date(timeIntervalSince1970: TimeInterval(dayNumber * 86_400))
            return utcMidnight.addingTimeInterval(-TimeInterval(timeZone.secondsFromGMT(for: utcMidnight)))
        }
        // Fast path (about 50 times cheaper than Calendar, for imports of many bare days): the
        // zone's offset gives an instant that reads 00:00 on that day, and the offset was the same
        // three hours before (no clock change just before it, so midnight did not come earlier).
        let midnight = dayNumber * 86_400
        func offset(_ t: Int64) -> Int64 { Int64(timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(t)))) }
        var guess = midnight - offset(midnight)
        guess = midnight - offset(guess)
        if guess + offset(guess) == midnight, offset(guess - 10_800) == midnight - guess {
            return Date(timeIntervalSince1970: TimeInterval(guess))
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        // Noon exists on every day in every zone; its day's start is what a bare day means.
        let noon = DateComponents(year: Int(parts.0), month: Int(parts.1), day: Int(parts.2), hour: 12)
        guard let midday = calendar.date(from: noon) else {
            return Date(timeIntervalSince1970: TimeInterval(dayNumber * 86_400))
        }
        return calendar.startOfDay(for: midday)
    }

    /// The calendar day (year, month, day) that `date` falls on in `timeZone`.
    public static func localDay(of date: Date, in timeZone: TimeZone) -> (Int64, Int64, Int64) {
        let m = millis(date)
        // Whole seconds rounded down, also before 1970 (−0.001 s is the day before).
        let local = (m >= 0 ? m / 1000 : (m - 999) / 1000) + Int64(timeZone.secondsFromGMT(for: date))
        let dayNumber = local >= 0 ? local / 86_400 : (local - 86_399) / 86_400
        return civil(fromDays: dayNumber)
    }

    /// A local wall-clock time (no offset written) as the instant it names in `timeZone`.
    /// A time skipped by a clock change is taken as the first time after the gap.
    public static func localTime(_ parts: (Int64, Int64, Int64), millisOfDay: Int64, in timeZone: TimeZone) -> Date {
        if parts.0 < 1800 || parts.0 > 9999 {
            let utc = Date(timeIntervalSince1970: TimeInterval(days(fromCivil: parts.0, parts.1, parts.2) * 86_400)
                + TimeInterval(millisOfDay) / 1000)
            return utc.addingTimeInterval(-TimeInterval(timeZone.secondsFromGMT(for: utc)))
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let seconds = millisOfDay / 1000
        let c = DateComponents(year: Int(parts.0), month: Int(parts.1), day: Int(parts.2),
                               hour: Int(seconds / 3600), minute: Int(seconds / 60 % 60), second: Int(seconds % 60))
        let whole = calendar.date(from: c)
            ?? Date(timeIntervalSince1970: TimeInterval(days(fromCivil: parts.0, parts.1, parts.2) * 86_400 + seconds))
        return whole.addingTimeInterval(TimeInterval(millisOfDay % 1000) / 1000)
    }

    /// The calendar day `n` days after `parts`.
    public static func adding(days n: Int64, to parts: (Int64, Int64, Int64)) -> (Int64, Int64, Int64) {
        civil(fromDays: days(fromCivil: parts.0, parts.1, parts.2) + n)
    }

    /// Milliseconds since 1970, to the nearest one (so a parsed `.123` comes back as 123).
    public static func millis(_ date: Date) -> Int64 {
        let t = (date.timeIntervalSince1970 * 1000).rounded()
        // Dates bitpal keeps are far inside Int64; anything else (distantFuture, a broken clock) clamps, never traps.
        guard t.isFinite, t > -9.2e18, t < 9.2e18 else { return t < 0 ? Int64.min : Int64.max }
        return Int64(t)
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

    static func digits(_ b: Bytes, _ at: Int, _ width: Int) -> Int64? { num(b, at, width) }

    /// An optional `.fraction` of a second at `i` (digits past the third are dropped), as milliseconds;
    /// moves `i` past it. `nil` for a point with no digit after it.
    static func fractionMillis(_ b: Bytes, _ i: inout Int) -> Int64? {
        guard i < b.count, b[i] == 46 else { return 0 }
        i += 1
        var millis: Int64 = 0
        var n = 0
        while i < b.count, b[i] >= 48, b[i] <= 57 {
            if n < 3 { millis = millis * 10 + Int64(b[i] - 48) }
            n += 1
            i += 1
        }
        guard n > 0 else { return nil }
        while n < 3 { millis *= 10; n += 1 }
        return millis
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
    public static func days(fromCivil y0: Int64, _ m: Int64, _ d: Int64) -> Int64 {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The local calendar day `date` falls on in `timeZone`, as days since 1970-01-01.
    public static func dayNumber(of date: Date, in timeZone: TimeZone) -> Int64 {
        let (y, m, d) = localDay(of: date, in: timeZone)
        return days(fromCivil: y, m, d)
    }

    /// The calendar day (year, month, day) `n` days after 1970-01-01.
    public static func civilDay(fromDays n: Int64) -> (Int64, Int64, Int64) { civil(fromDays: n) }

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

/// A date outside the range bitpal keeps (exit 1: the text was a well-formed date).
public struct DateRangeError: Error, Equatable, Sendable, CustomStringConvertible {
    public var field: String
    public var text: String
    /// Set for a local time the clocks skipped (a daylight-saving change), named by its zone.
    public var skippedIn: String?
    public init(field: String, text: String, skippedIn: String? = nil) {
        self.field = field
        self.text = text
        self.skippedIn = skippedIn
    }
    public var description: String {
        let what = text.isEmpty ? field : "\(field) '\(TextEscaping.shortened(text))'"
        if let zone = skippedIn {
            return "\(what) does not exist in \(zone): the clocks skipped it (write the time with an explicit UTC offset instead)"
        }
        return "\(what) is outside the dates bitpal keeps (\(ISODate.rangeText))"
    }
}

/// A record's date: a calendar day (`day`, days since 1970-01-01) or an instant.
///
/// `date` is when it counts: the instant itself, or the day's first instant in the zone it was
/// resolved in, so ordering, filters and valuations treat a day as its first moment there.
public struct RecordDate: Hashable, Sendable {
    public var date: Date
    public var day: Int64?

    public init(date: Date, day: Int64? = nil) {
        self.date = date
        self.day = day
    }

    public static func instant(_ date: Date) -> RecordDate { RecordDate(date: date) }

    /// The day `n` (days since 1970), counted from its first instant in `zone`.
    public static func day(_ n: Int64, in zone: TimeZone) -> RecordDate {
        RecordDate(date: ISODate.truncatedToMillis(ISODate.startOfDay(ISODate.civilDay(fromDays: n), in: zone)), day: n)
    }

    /// `2024-01-15` for a day, else the instant in UTC (`2024-01-15T10:00:00Z`): as the store and JSON write it.
    public var text: String {
        if let day { return ISODate.dayText(day) }
        return ISODate.format(date)
    }
}

extension ISODate {
    /// `YYYY-MM-DD` of day number `n`.
    public static func dayText(_ n: Int64) -> String {
        var out = [UInt8]()
        writeDay(n, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends a transaction's date: its day, or its instant.
    static func write(_ t: Transaction, to out: inout [UInt8]) {
        if let day = t.day { writeDay(day, to: &out) } else { write(t.date, to: &out) }
    }

    /// Appends `YYYY-MM-DD` of day number `n` (years outside 0…9999 clamped as `write(millis:to:)` clamps).
    static func writeDay(_ n: Int64, to out: inout [UInt8]) {
        let (y, m, d) = civil(fromDays: min(max(n, minMillis / 86_400_000), maxMillis / 86_400_000))
        func two(_ v: Int64) {
            out.append(UInt8(48 + v / 10))
            out.append(UInt8(48 + v % 10))
        }
        two(y / 100); two(y % 100)
        out.append(45); two(m); out.append(45); two(d)
    }
}

/// A date as a person types it, before the time zone is applied.
///
/// - `YYYY-MM-DD`: that day, from its first instant in the local zone (`TZ`);
/// - `today`, `yesterday`: the same, for the current local day or the one before;
/// - `YYYY-MM-DD[T| ]HH:MM[:SS[.fff]]`: a local wall-clock time;
/// - the same with `Z` or an offset (`T` required): that exact instant.
public enum DateInput: Equatable, Sendable {
    case day(Int64, Int64, Int64)
    /// `today` (0) or `yesterday` (-1): days from the current local day.
    case relativeDay(Int64)
    case localTime(Int64, Int64, Int64, millisOfDay: Int64)
    case instant(Date)

    /// The text as a date, or `nil` when it is not a well-formed one (a usage error).
    /// An instant outside the range is still returned (`start` refuses it) so that the two
    /// errors can differ: malformed is exit 2, out of range exit 1.
    public static func parse(_ text: String) -> DateInput? {
        var text = text
        return text.withUTF8 { parse(utf8: $0) }
    }

    public static func parse(utf8 s: UnsafeBufferPointer<UInt8>) -> DateInput? {
        let b = ISODate.Bytes(s)
        if b.count == 10 {
            guard let parts = ISODate.parseDay(utf8: s) else { return nil }
            return .day(parts.0, parts.1, parts.2)
        }
        if let word = asciiLowercased(s) {
            if word == "today" { return .relativeDay(0) }
            if word == "yesterday" { return .relativeDay(-1) }
        }
        if let ms = ISODate.parseTimestampMillis(utf8: s) { return .instant(ISODate.date(millis: ms)) }
        // A local time: `YYYY-MM-DD`, `T`/`t`/space, `HH:MM`, optional `:SS`, optional `.fff…`;
        // with a zone after it (`2024-01-31 14:00Z`, `…T14:00+01:00`) it is that instant instead.
        guard b.count >= 16, b[10] == 84 || b[10] == 116 || b[10] == 32, b[13] == 58,
              let parts = ISODate.parseDay(utf8: UnsafeBufferPointer(rebasing: s[0..<10])),
              let hh = ISODate.digits(b, 11, 2), let mi = ISODate.digits(b, 14, 2), hh < 24, mi < 60 else { return nil }
        var i = 16
        var ss: Int64 = 0, ms: Int64 = 0
        if i < b.count, b[i] == 58 {
            guard let sec = ISODate.digits(b, i + 1, 2), sec < 60 else { return nil }
            ss = sec
            i += 3
            guard let fraction = ISODate.fractionMillis(b, &i) else { return nil }
            ms = fraction
        }
        let millisOfDay = ((hh * 60 + mi) * 60 + ss) * 1000 + ms
        if i == b.count { return .localTime(parts.0, parts.1, parts.2, millisOfDay: millisOfDay) }
        guard let (offset, end) = ISODate.parseOffset(b, i), end == b.count else { return nil }
        let utc = ISODate.days(fromCivil: parts.0, parts.1, parts.2) * 86_400_000 + millisOfDay - offset * 1000
        return .instant(ISODate.date(millis: utc))
    }

    private static func asciiLowercased(_ s: UnsafeBufferPointer<UInt8>) -> String? {
        guard s.count <= 9 else { return nil }
        var out = [UInt8]()
        for c in s {
            guard c < 0x80 else { return nil }
            out.append(c >= 65 && c <= 90 ? c + 32 : c)
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The calendar day this names, for day forms.
    private func civilDay(in zone: TimeZone, now: Date) -> (Int64, Int64, Int64)? {
        switch self {
        case let .day(y, m, d): return (y, m, d)
        case let .relativeDay(n): return ISODate.adding(days: n, to: ISODate.localDay(of: now, in: zone))
        case .localTime, .instant: return nil
        }
    }

    /// The moment it names: a day's first instant in `zone`, truncated to milliseconds.
    ///
    /// - Throws: `DateRangeError` naming `field` and `text` when that moment is outside the range.
    public func start(in zone: TimeZone, now: Date, field: String = "Date", text: String = "") throws(DateRangeError) -> Date {
        let date: Date
        switch self {
        case let .localTime(y, m, d, ms):
            date = ISODate.localTime((y, m, d), millisOfDay: ms, in: zone)
            // A wall-clock time the clocks jumped over names no instant: say so rather than move it.
            let back = ISODate.localDay(of: date, in: zone)
            let local = ISODate.millis(date) + Int64(zone.secondsFromGMT(for: date)) * 1000
            let backMillis = local - ISODate.days(fromCivil: back.0, back.1, back.2) * 86_400_000
            if ISODate.isInRange(date), back != (y, m, d) || backMillis != ms {
                throw DateRangeError(field: field, text: text, skippedIn: zone.identifier)
            }
        case let .instant(instant): date = instant
        case let .day(y, m, d): date = ISODate.startOfDay((y, m, d), in: zone)
        case let .relativeDay(n): date = ISODate.startOfDay(ISODate.adding(days: n, to: ISODate.localDay(of: now, in: zone)), in: zone)
        }
        guard ISODate.isInRange(date) else { throw DateRangeError(field: field, text: text) }
        return ISODate.truncatedToMillis(date)
    }

    /// What a record dated by this text is dated: a day (`YYYY-MM-DD`, `today`, `yesterday`) stays a
    /// calendar day; a time is an instant.
    ///
    /// - Throws: `DateRangeError` as `start` does.
    public func record(in zone: TimeZone, now: Date, field: String = "Date", text: String = "") throws(DateRangeError) -> RecordDate {
        let date = try start(in: zone, now: now, field: field, text: text)
        guard let (y, m, d) = civilDay(in: zone, now: now) else { return .instant(date) }
        return RecordDate(date: date, day: ISODate.days(fromCivil: y, m, d))
    }

    /// As a filter's bound, a date outside the range keeps everything on its side (`--since
    /// 1900-01-01` in Berlin starts before the range: no lower bound) instead of failing.
    /// - Returns: `nil` for "no bound"; `.distantPast`/`.distantFuture` for a bound past every date.
    public func filterBound(in zone: TimeZone, now: Date, lower: Bool) -> Date? {
        do {
            return lower ? try start(in: zone, now: now) : try end(in: zone, now: now)
        } catch {
            let early: Bool = switch self {
            case let .day(y, _, _), let .localTime(y, _, _, _): y <= 1900
            case let .instant(d): d.timeIntervalSince1970 < 0
            case .relativeDay: true
            }
            if lower { return early ? nil : .distantFuture }
            return early ? .distantPast : nil
        }
    }

    /// The last moment it covers, for `--until`: a day runs to its end (the next day's start, less 1 ms).
    public func end(in zone: TimeZone, now: Date, field: String = "Date", text: String = "") throws(DateRangeError) -> Date {
        guard let day = civilDay(in: zone, now: now) else { return try start(in: zone, now: now, field: field, text: text) }
        _ = try start(in: zone, now: now, field: field, text: text)
        let next = ISODate.startOfDay(ISODate.adding(days: 1, to: day), in: zone).addingTimeInterval(-0.001)
        // The end of 9999-12-31 is the last instant kept.
        return ISODate.isInRange(next) ? ISODate.truncatedToMillis(next) : ISODate.date(millis: ISODate.maxMillis)
    }
}

import Foundation
import PortfolioCore

/// How numbers and times read in tables: money in its own currency, with thousands separators,
/// signs on P&L.
enum Human {
    /// `$`, `€`, `£`, `¥`; other currencies by their code (`CHF 1,234.00`).
    static func symbol(of currency: CurrencyCode) -> String {
        switch currency.code {
        case "USD": "$"
        case "EUR": "€"
        case "GBP": "£"
        case "JPY": "¥"
        case let code: code + " "
        }
    }

    /// Exact money, rounded once to cents from its exact value.
    static func money(_ m: Money) -> String { shown(m.amount.fixed(scale: 2), in: m.currency) }

    /// A typed amount in `currency`, to cents.
    static func money(_ v: Decimal, in currency: CurrencyCode) -> String { shown(DecimalFormatting.money(v), in: currency) }

    /// `-1234.5` in dollars as `-$1,234.5`.
    private static func shown(_ plain: String, in currency: CurrencyCode) -> String {
        let symbol = symbol(of: currency)
        return plain.hasPrefix("-") ? "-" + symbol + DecimalFormatting.grouped(String(plain.dropFirst())) : symbol + DecimalFormatting.grouped(plain)
    }

    /// `+$1,234.56`, `-$3.00`, `$0.00`.
    static func signedMoney(_ m: Money) -> String {
        let s = money(m)
        return s == symbol(of: m.currency) + "0.00" || s.hasPrefix("-") ? s : "+" + s
    }

    /// How much one amount differs from another, in words: the gap `m` (this − that) as
    /// `$5.00 more` or `$5.00 less` (never `plus -$5.00`).
    static func moneyApart(_ m: Money) -> String {
        let s = money(m)
        return s.hasPrefix("-") ? String(s.dropFirst()) + " less" : s + " more"
    }

    /// A price for people: cents from $1 up (`$48,333.33`), up to 8 decimals below (`$0.00001234`).
    /// JSON keeps the contract's 8-decimal rounding.
    static func price(_ v: Decimal, in currency: CurrencyCode) -> String {
        v >= 1 || v <= -1 ? money(v, in: currency) : smallPrice(DecimalFormatting.price(v), in: currency)
    }

    /// The same for an exact price or average.
    static func price(_ m: Money) -> String {
        m.amount.magnitudeAtLeastOne ? money(m) : smallPrice(m.amount.trimmed(maxScale: 8), in: m.currency)
    }

    /// A stored price in `currency`, from its exact digits (no `Decimal` on the way).
    static func price(_ v: Fixed18, in currency: CurrencyCode) -> String { price(Money(Exact36(v), currency)) }

    /// A stored amount of money in `currency`, to cents, from its exact digits.
    static func money(_ v: Fixed18, in currency: CurrencyCode) -> String { money(Money(Exact36(v), currency)) }

    /// A quote's price in its own currency.
    static func price(_ q: Quote) -> String { price(q.price, in: CurrencyCode(q.currency)) }

    /// A price below 1, already rounded to at most 8 decimals: shown with at least 2.
    private static func smallPrice(_ plain: String, in currency: CurrencyCode) -> String {
        var s = plain
        if let dot = s.firstIndex(of: ".") {
            let frac = s.distance(from: dot, to: s.endIndex) - 1
            if frac < 2 { s += String(repeating: "0", count: 2 - frac) }
        } else {
            s += ".00"
        }
        return shown(s, in: currency)
    }

    /// The most decimals a table shows of a quantity (JSON and export stay exact).
    static let quantityDecimals = 8

    /// A quantity for a table: at most 8 decimals, half-up, trailing zeros dropped (`0.30517523` for
    /// 0.30517522607507903); a holding smaller than that shows as `<0.00000001`, never as 0.
    /// A quantity exactly as stored, for what confirms a write (`Added buy 0.000833333333333333 BTC`).
    static func exactQuantity(_ v: Decimal) -> String { DecimalFormatting.grouped(DecimalFormatting.exact(v)) }

    /// `quantity` of a stored quantity (negative for an adjustment that removes units), from its exact digits.
    static func quantity(_ v: Fixed18, negative: Bool = false) -> String {
        let shown = Exact36(v).trimmed(maxScale: quantityDecimals)
        let sign = negative && v.units != 0 ? "-" : ""
        if shown == "0" && v.units != 0 { return sign + "<0." + String(repeating: "0", count: quantityDecimals - 1) + "1" }
        return sign + DecimalFormatting.grouped(shown)
    }

    static func quantity(_ v: Decimal) -> String {
        let shown = DecimalFormatting.rounded(v, scale: quantityDecimals)
        if shown.isZero && !v.isZero { return (v < 0 ? "-" : "") + "<0." + String(repeating: "0", count: quantityDecimals - 1) + "1" }
        return DecimalFormatting.grouped(DecimalFormatting.exact(shown))
    }

    static func percent(_ v: Decimal?) -> String {
        guard let v else { return "—" }
        let s = DecimalFormatting.percent(v)
        return (s == "0.00" || s.hasPrefix("-") ? s : "+" + s) + "%"
    }

    /// `just now`, `5 minutes ago`, `3 days ago`.
    static func age(_ date: Date, now: Date) -> String {
        let seconds = Int(now.timeIntervalSince(date))
        if seconds < 0 { return "in the future" }
        if seconds < 60 { return "just now" }
        func unit(_ n: Int, _ word: String) -> String { "\(n) \(word)\(n == 1 ? "" : "s") ago" }
        if seconds < 3600 { return unit(seconds / 60, "minute") }
        if seconds < 86_400 { return unit(seconds / 3600, "hour") }
        return unit(seconds / 86_400, "day")
    }

    /// The zone's name in headers and after times: `UTC` for UTC, else its identifier (`Europe/Berlin`).
    static func zoneLabel(_ zone: TimeZone) -> String {
        let utcNames: Set<String> = ["UTC", "GMT", "Etc/UTC", "Etc/GMT", "UCT", "Etc/UCT", "Universal", "Etc/Universal", "Zulu", "Etc/Zulu", "GMT0", "Etc/GMT0"]
        return utcNames.contains(zone.identifier) ? "UTC" : zone.identifier
    }

    /// Wall-clock parts of `date` in `zone`: its calendar day and minutes into it.
    private static func local(_ date: Date, in zone: TimeZone) -> (day: (Int64, Int64, Int64), minutes: Int64, exact: Bool) {
        let ms = ISODate.millis(date) + Int64(zone.secondsFromGMT(for: date)) * 1000
        let day = ms >= 0 ? ms / 86_400_000 : (ms - 86_399_999) / 86_400_000
        let msOfDay = ms - day * 86_400_000
        return (ISODate.civilDay(fromDays: day), msOfDay / 60_000, msOfDay == 0)
    }

    private static func dayText(_ d: (Int64, Int64, Int64), minutes: Int64? = nil) -> String {
        // Years 1…9999 in four digits (a listing makes one a row: no formatting machinery).
        guard (1...9999).contains(d.0), (1...12).contains(d.1), (1...31).contains(d.2) else {
            func pad(_ v: Int64, _ width: Int) -> String {
                let t = String(v)
                return String(repeating: "0", count: max(0, width - t.count)) + t
            }
            return "\(pad(d.0, 4))-\(pad(d.1, 2))-\(pad(d.2, 2))" + (minutes.map { " " + two($0 / 60) + ":" + two($0 % 60) } ?? "")
        }
        var out: [UInt8] = []
        out.reserveCapacity(16)
        func digits(_ v: Int64, _ width: Int) {
            var divisor: Int64 = 1
            for _ in 1..<width { divisor *= 10 }
            while divisor > 0 {
                out.append(UInt8(48 + (v / divisor) % 10))
                divisor /= 10
            }
        }
        digits(d.0, 4)
        out.append(45)
        digits(d.1, 2)
        out.append(45)
        digits(d.2, 2)
        if let minutes {
            out.append(32)
            digits(minutes / 60, 2)
            out.append(58)
            digits(minutes % 60, 2)
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `2024-01-31 14:00` in `zone`: short, sortable; the zone is named in the header or after it.
    static func time(_ date: Date, in zone: TimeZone) -> String {
        let l = local(date, in: zone)
        return dayText(l.day, minutes: l.minutes)
    }

    private static func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }

    /// The calendar day of `date` in `zone`, `2024-01-15`.
    static func day(_ date: Date, in zone: TimeZone) -> String { dayText(local(date, in: zone).day) }

    /// A transaction's date as typed: `2024-01-15` when it is the first instant of its local day
    /// (a bare day, even where the zone skips midnight), else `2024-01-15 10:00`.
    static func when(_ date: Date, in zone: TimeZone) -> String {
        let l = local(date, in: zone)
        if l.exact || (l.minutes < 180 && ISODate.startOfDay(l.day, in: zone) == date) { return dayText(l.day) }
        return time(date, in: zone)
    }

    /// `when` followed by the zone when it shows a time: `2024-01-15`, `2024-01-15 10:00 UTC`.
    static func whenLabelled(_ date: Date, in zone: TimeZone) -> String {
        let text = when(date, in: zone)
        return text.count == 10 ? text : text + " " + zoneLabel(zone)
    }

    static func shortID(_ id: UUID) -> String { String(UUIDText.lowercased(id).prefix(8)) }

    /// A rate of return (a fraction) as a signed percentage with 2 decimals: `+42.11%`; `—` when unknown.
    static func rate(_ fraction: Double?) -> String {
        guard let text = rateText(fraction, decimals: 2) else { return "—" }
        return (text.hasPrefix("-") || text == "0.00" ? text : "+" + text) + "%"
    }

    /// `fraction × 100` rounded half away from zero to `decimals` places, never `-0.00`; `nil` when
    /// unknown or not finite. (Rates are statistics in `Double`; money never goes through here.)
    static func rateText(_ fraction: Double?, decimals: Int) -> String? {
        guard let fraction, fraction.isFinite else { return nil }
        let percent = fraction * 100
        let scale = pow(10, Double(decimals))
        let scaled = (abs(percent) * scale).rounded(.toNearestOrAwayFromZero)
        guard scaled < 9e15 else { return String(format: "%.\(decimals)f", percent) }
        var digits = String(UInt64(scaled))
        if digits.count <= decimals { digits = String(repeating: "0", count: decimals + 1 - digits.count) + digits }
        let integer = digits.dropLast(decimals), decimalsText = digits.suffix(decimals)
        let negative = percent < 0 && scaled != 0
        return (negative ? "-" : "") + integer + (decimals > 0 ? "." + decimalsText : "")
    }
}

/// ANSI colours, used only when stdout is a terminal and colour is not turned off.
struct Style {
    var enabled: Bool

    func green(_ s: String) -> String { enabled ? "\u{1B}[32m\(s)\u{1B}[0m" : s }
    func red(_ s: String) -> String { enabled ? "\u{1B}[31m\(s)\u{1B}[0m" : s }
    func yellow(_ s: String) -> String { enabled ? "\u{1B}[33m\(s)\u{1B}[0m" : s }
    func cyan(_ s: String) -> String { enabled ? "\u{1B}[36m\(s)\u{1B}[0m" : s }
    func bold(_ s: String) -> String { enabled ? "\u{1B}[1m\(s)\u{1B}[0m" : s }
    func dim(_ s: String) -> String { enabled ? "\u{1B}[2m\(s)\u{1B}[0m" : s }

    /// Green for a gain, red for a loss, plain for what rounds to zero cents, or unknown.
    func pnl(_ text: String, _ value: Exact36?) -> String {
        guard let value else { return text }
        let cents = value.fixed(scale: 2)
        if cents == "0.00" { return text }
        return cents.hasPrefix("-") ? red(text) : green(text)
    }

    /// The same for a rate of return (a fraction), as it is shown (2 decimals of a percent).
    func pnl(_ text: String, rate: Double?) -> String {
        guard let shown = Human.rateText(rate, decimals: 2), shown != "0.00" else { return text }
        return shown.hasPrefix("-") ? red(text) : green(text)
    }

    /// The same for a percentage.
    func pnl(_ text: String, _ value: Decimal?) -> String {
        guard let value else { return text }
        let rounded = DecimalFormatting.rounded(value, scale: 2)
        if rounded > 0 { return green(text) }
        if rounded < 0 { return red(text) }
        return text
    }
}

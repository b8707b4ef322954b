import Foundation
import PortfolioCore

/// A Decimal from a literal string; never through Double.
func dec(_ text: String) -> Decimal {
    guard let v = DecimalLiteral.parse(utf8: text.utf8)?.value else {
        if text.hasPrefix("-"), let v = DecimalLiteral.parse(utf8: text.dropFirst().utf8)?.value { return -v }
        preconditionFailure("bad test literal \(text)")
    }
    return v
}

/// A UTC date from `YYYY-MM-DD` or a full timestamp.
func day(_ text: String) -> Date {
    if let parts = ISODate.parseDay(utf8: text.utf8) {
        return ISODate.startOfDay(parts, in: TimeZone(identifier: "UTC")!)
    }
    guard let d = ISODate.parseTimestamp(utf8: text.utf8) else { preconditionFailure("bad test date \(text)") }
    return d
}

/// `"2024-01-01 buy 0.5 bitcoin @ 30000 fee 10"` → a transaction.
func trade(_ text: String) -> Transaction {
    let w = text.split(separator: " ").map(String.init)
    precondition(w.count >= 6 && w[4] == "@", "bad trade literal \(text)")
    let fee = w.count >= 8 && w[6] == "fee" ? dec(w[7]) : 0
    return Transaction(coinId: w[3], type: TransactionType(rawValue: w[1])!, amount: dec(w[2]), pricePerCoin: dec(w[5]),
                       fee: fee, date: day(w[0]))
}

/// A scratch folder removed by the caller.
func scratchDirectory() -> String {
    let path = FileManager.default.temporaryDirectory.path + "/bitpal-test-\(UUID().uuidString)"
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// Where fixture files live.
let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

/// The position of `assetId` in `main`.
func key(_ assetId: String, in portfolio: String = "main") -> PositionKey { PositionKey(portfolio: portfolio, assetId: assetId) }

/// A shortfall of a record in `main` (what `insufficientQuantity` and `breaksLater` carry).
func shortfall(_ type: TransactionType, _ assetId: String, held: Decimal, requested: Decimal, fee: Decimal? = nil,
               date: Date, id: UUID, portfolio: String = "main", linked: Bool = false) -> Shortfall {
    Shortfall(type: type, portfolio: portfolio, assetId: assetId, held: held, requested: requested, fee: fee, date: date, id: id, linked: linked)
}

/// An exact value from a literal string.
func fixed(_ text: String) -> Fixed18 {
    guard let v = Fixed18.parse(utf8: text.utf8) else { preconditionFailure("bad fixed literal \(text)") }
    return v
}

/// A record of any kind as `add` stores it: a fee of 0 where the kind has a fee and none is
/// given, no fee where it has none, USD where the kind has money. `"-0.5"` is an adjustment that removes units.
func record(_ type: TransactionType, _ assetId: String, _ amount: String, price: String? = nil, total: String? = nil,
            fee: String? = nil, on date: String, portfolio: String = "main", id: UUID = UUID(), linkedId: UUID? = nil,
            notes: String? = nil) -> Transaction {
    let rule = KindRule.of(type)
    let negative = amount.hasPrefix("-")
    return Transaction(id: id, portfolio: portfolio, type: type, assetId: assetId, amount: fixed(negative ? String(amount.dropFirst()) : amount),
                       negative: negative, price: price.map(fixed), total: total.map(fixed),
                       fee: fee.map(fixed) ?? (rule.fee == .none ? nil : .zero), currency: rule.hasCurrency ? "USD" : nil,
                       date: day(date), notes: notes, linkedId: linkedId)
}

/// A swap as `add swap` stores it: a sell of FROM and a buy of TO, both with `total` = the value and
/// `price` = value ÷ amount (18 decimals), linked by the sell's id; the fee is on the sell.
func swapLegs(_ from: String, _ fromAmount: String, _ to: String, _ toAmount: String, value: String, fee: String = "0",
              on date: String, portfolio: String = "main") -> [Transaction] {
    let sellID = UUID()
    func price(_ amount: String) -> String { (try? Exact36(fixed(value)).divided(by: fixed(amount)).roundedToFixed18().text) ?? "0" }
    return [
        record(.sell, from, fromAmount, price: price(fromAmount), total: value, fee: fee, on: date, portfolio: portfolio,
               id: sellID, linkedId: sellID),
        record(.buy, to, toAmount, price: price(toAmount), total: value, on: date, portfolio: portfolio, linkedId: sellID),
    ]
}

/// A move as `move` stores it: a transfer-out (fee 0 units) linked by its own id to a transfer-in
/// with no price, no fee and no currency.
func moveLegs(_ assetId: String, _ amount: String, from: String, to: String, on date: String) -> [Transaction] {
    let outID = UUID()
    let out = record(.transferOut, assetId, amount, fee: "0", on: date, portfolio: from, id: outID, linkedId: outID)
    var into = record(.transferIn, assetId, amount, on: date, portfolio: to, linkedId: outID)
    into.feeValue = nil
    into.currency = nil
    return [out, into]
}

/// The Decimal arithmetic of the reference replays (MixedReferenceTests, CashReferenceTests).
enum Reference {
    /// `units` × 10^-scale.
    static func decimal(_ units: Int, scale: Int16) -> Decimal { Decimal(sign: .plus, exponent: -Int(scale), significand: Decimal(units)) }

    static func exact(_ d: Decimal) -> Fixed18 {
        guard let f = Fixed18(d) else { preconditionFailure("\(d) does not fit 18 decimals") }
        return f
    }

    static func rounded(_ value: Decimal, _ scale: Int, _ mode: NSDecimalNumber.RoundingMode) -> Decimal {
        var v = value
        var out = Decimal()
        NSDecimalRound(&out, &v, scale, mode)
        return out
    }

    /// What a random disposal or withdrawal aims at: all of `held` (one time in `choices`), more
    /// than it (by up to `more` units of the last decimal), or a part of it at `scale` decimals.
    static func aim(at held: Decimal, _ g: inout SeededRandom, choices: Int, more: Int, scale: Int16) -> Decimal {
        switch g.below(choices) {
        case 0: return held
        case 1: return held + decimal(g.below(more) + 1, scale: scale)
        default: return max(rounded(held * decimal(g.below(999) + 1, scale: 3), Int(scale), .down), decimal(1, scale: scale))
        }
    }

    /// Within 10^-20: the engine rounds a basis at the 36th decimal, Decimal keeps 38 digits.
    static func close(_ a: Decimal, _ b: Decimal) -> Bool {
        let d = a - b
        return (d < 0 ? -d : d) < Decimal(sign: .plus, exponent: -20, significand: 1)
    }
}

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

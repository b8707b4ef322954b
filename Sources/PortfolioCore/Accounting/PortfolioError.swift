import Foundation

/// Errors raised when a change would break a rule of the portfolio.
///
/// All are "the operation failed" (exit 1): the values were well-formed but not allowed.
public enum PortfolioError: Error, Equatable, Sendable {
    case amountNotPositive
    case priceNotPositive
    /// More than 18 fractional digits (`field` names what was typed).
    case tooManyFractionDigits(field: String, text: String)
    /// More than 20 digits before the point.
    case tooManyDigits(field: String, text: String)
    case futureDate
    case coinNotFound(query: String, suggestions: [String])
    /// A sell (the one being written) asks for more than is held at its date.
    case insufficientQuantity(coinId: String, held: Decimal, requested: Decimal)
    /// The change leaves an existing later sell asking for more than would be held.
    case breaksLaterSell(coinId: String, held: Decimal, requested: Decimal, date: Date, id: UUID)
    case transactionNotFound(String)
    case ambiguousID(prefix: String, matches: [String])
    case idTooShort(String)
    /// Several records share this id (a hand edit or a merge): they are addressed by line.
    case duplicatedID(id: String, lines: [Int])
    case alreadyWatched(coinId: String)
    case notWatched(coinId: String)
    /// A total beyond what bitpal computes exactly (about 10^41).
    case valueTooLarge
    /// A quantity held (or bought in one cycle) past what is kept exactly (about 3.4 × 10^20 units).
    case quantityTooLarge
    /// A division whose divisor is zero (a bug or a corrupt history, never a rounding).
    case divisionByZero
}

extension PortfolioError: CustomStringConvertible {
    public var description: String { description(names: .plain) }

    /// The message, with coins and dates named by `names` (the CLI passes "BTC (Bitcoin)" and local times).
    public func description(names: MessageNames) -> String {
        let coin = names.coin
        let fmt = DecimalFormatting.exact
        switch self {
        case .amountNotPositive: return "Amount must be greater than zero"
        case .priceNotPositive: return "Price must be greater than zero"
        case let .tooManyFractionDigits(field, text):
            return "\(field) '\(TextEscaping.shortened(text))' has more than \(DecimalLiteral.maxFractionDigits) fractional digits"
        case let .tooManyDigits(field, text):
            return "\(field) '\(TextEscaping.shortened(text))' has more than \(Fixed18.maxIntegerDigits) digits before the point"
        case .futureDate: return "Transaction date cannot be in the future"
        case let .coinNotFound(query, suggestions):
            let base = "Cryptocurrency '\(TextEscaping.escaped(query))' not found"
            if suggestions.isEmpty { return base + " (try 'bitpal coins search')" }
            return base + ". Did you mean " + suggestions.map { "'\(TextEscaping.escaped($0))'" }.joined(separator: ", ")
                + "? (if '\(TextEscaping.escaped(query))' is a coin, run 'bitpal coins update')"
        case let .insufficientQuantity(id, held, requested):
            return "You only own \(fmt(held)) \(coin(id)). Cannot sell \(fmt(requested))."
        case let .breaksLaterSell(coinId, held, requested, date, id):
            let coin = coin(coinId)
            let short = String(id.uuidString.lowercased().prefix(8))
            return "This would break the later sell of \(fmt(requested)) \(coin) on \(names.date(date)) (\(short)): "
                + "you would only own \(fmt(held)) \(coin) then."
        case let .transactionNotFound(id):
            return id.hasPrefix("@")
                ? "No transaction record starts on line \(TextEscaping.escaped(String(id.dropFirst()))) of the store (see 'bitpal check')"
                : "No transaction matches '\(TextEscaping.escaped(id))'"
        case let .ambiguousID(prefix, matches):
            return "'\(TextEscaping.escaped(prefix))' matches \(matches.count) transactions: "
                + matches.joined(separator: ", ") + "; use more characters"
        case let .duplicatedID(id, lines):
            let at = lines.filter { $0 > 0 }.map { "@\($0)" }
            return "\(lines.count) records share the id \(id)"
                + (at.isEmpty ? "" : "; name one by its line: " + at.joined(separator: " or "))
        case let .idTooShort(prefix):
            return "'\(TextEscaping.escaped(prefix))' is too short to name a transaction (use at least 4 characters of its id)"
        case let .alreadyWatched(id): return "\(coin(id)) is already in your watchlist"
        case let .notWatched(id): return "\(coin(id)) is not in your watchlist"
        case .valueTooLarge: return "A total is too large to compute exactly (over 10^41)"
        case .quantityTooLarge: return "A quantity is too large to keep exactly (over 3.4 × 10^20 units of one coin)"
        case .divisionByZero: return "A division by zero was asked for (the history may be corrupt; run 'bitpal check')"
        }
    }
}

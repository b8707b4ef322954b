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
    /// A transaction (the one being written) removes more than is held at its date.
    case insufficientQuantity(Shortfall)
    /// The change leaves an existing later transaction removing more than would be held.
    case breaksLater(Shortfall)
    /// A record that takes more cash than the portfolio has at its point of the replay.
    case insufficientCash(CashShortfall)
    /// Money in a currency other than the portfolio's base, with no rate given and none in the table.
    case fxRateMissing(from: String, to: String, date: Date)
    /// A cash record (or command) in a portfolio that does not track cash.
    case cashNotTracked(String)
    /// A move's transfer-in with no transfer-out before it to take its basis from.
    case unlinkedTransferIn(id: UUID)
    /// A buy or sell with neither price nor total, a transfer-in or reward without a price.
    case priceMissing(TransactionType)
    /// Tax withheld larger than the gross payment.
    case taxAboveGross
    case portfolioNotFound(String)
    case portfolioExists(String)
    /// A portfolio that still has transactions.
    case portfolioInUse(name: String, count: Int)
    case lastPortfolio(String)
    case defaultPortfolioRemoval(String)
    case assetNotFound(String)
    case assetExists(String)
    case assetInUse(id: String, count: Int)
    case assetLocked(String)
    /// A currency other than the one the transaction must be in (a registered asset's own).
    case currencyMismatch(given: String, expected: String, reason: String)
    case unsupportedCurrency(String)
    /// Money of two currencies added, subtracted or compared without a rate (a bug, never the user's).
    case differentCurrencies(String, String)
    /// A linked leg whose partner is missing or whose kind cannot change.
    case linkedLeg(String)
    /// Records sharing one `linkedId` that make no whole link of `LinkKind.table` (legs as they are).
    case brokenLink(legs: [Transaction], link: UUID)
    /// A rule of a record's own (a deposit naming an asset, say), as `check` words it.
    indirect case recordRule(StoreProblem)
    /// A change that would leave a record other than a transaction (a plan, a target, a price) breaking a rule.
    case brokenSetting(String)
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
    /// A split whose ratio would round every unit held to zero (18 decimals), taking the basis with them.
    case splitToNothing(held: Fixed18)
    /// A division whose divisor is zero (a bug or a corrupt history, never a rounding).
    case divisionByZero
    /// A change a rule of its own refuses (two legs in one portfolio, a fee above the amount), in words.
    case refused(String)
    /// An option that does not fit the record it is given for (a fee on a kind without one): a usage error.
    case misusedOption(String)
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
            // A code like a ticker (AAPL, VWCE.DE) is most likely a stock or a fund not registered yet.
            if let code = Asset.code(query), code == query, query.contains(where: \.isLetter) {
                return base + (suggestions.isEmpty ? "" : " (did you mean " + suggestions.map { "'\(TextEscaping.escaped($0))'" }.joined(separator: ", ") + "?)")
                    + "; if \(code) is a stock, an ETF or a fund, register it first: bitpal asset add \(code) --name NAME --type stock"
            }
            if suggestions.isEmpty { return base + " (try 'bitpal coins search')" }
            return base + ". Did you mean " + suggestions.map { "'\(TextEscaping.escaped($0))'" }.joined(separator: ", ")
                + "? (if '\(TextEscaping.escaped(query))' is a coin, run 'bitpal coins update')"
        case let .insufficientQuantity(s):
            let fee = s.fee.map { " (plus a fee of \(fmt($0)))" } ?? ""
            // A back-dated record (before the run's clock, when the reader gave it) says when it would have held too little.
            let when = names.now.map { s.date < $0.addingTimeInterval(-86_400) } == true ? " on \(names.date(s.date))" : ""
            return "You only own \(fmt(s.held)) \(coin(s.assetId))\(names.portfolio(s.portfolio))\(when). "
                + "Cannot \(s.action(fmt(s.requested)))\(fee)."
        case let .breaksLater(s):
            let c = coin(s.assetId)
            let short = String(s.id.uuidString.lowercased().prefix(8))
            let fee = s.fee.map { " (plus a fee of \(fmt($0)))" } ?? ""
            return "This would break the later \(s.noun) of \(fmt(s.requested)) \(c)\(fee) on \(names.date(s.date)) (\(short)): "
                + "you would only own \(fmt(s.held)) \(c)\(names.portfolio(s.portfolio)) then."
        case let .insufficientCash(s):
            let money = { (v: Exact36) in DecimalFormatting.grouped(DecimalFormatting.money(v)) }
            return "Not enough \(s.currency) cash in '\(TextEscaping.escaped(s.portfolio))': the \(s.type.rawValue) on \(names.date(s.date)) "
                + "needs \(money(s.needed)), \(money(s.available)) is available."
        case let .fxRateMissing(from, to, date):
            // The suggested --date is the day as typed (UTC); a bare day stands for all of it.
            let day = String(ISODate.format(date).prefix(10))
            return "No \(from)→\(to) rate on or before \(names.date(date)): fetch the ECB's with 'bitpal fx fetch-history \(from) --since \(day)', "
                + "give --fx-rate, or record one with 'bitpal fx set \(from) \(to) RATE --date \(day)'"
        case let .cashNotTracked(name):
            return "Portfolio '\(TextEscaping.escaped(name))' does not track cash; turn it on with 'bitpal portfolio edit \(TextEscaping.escaped(name)) --cash'"
        case let .unlinkedTransferIn(id):
            return "The transfer-in \(String(id.uuidString.lowercased().prefix(8))) of a move has no transfer-out before it to take its cost basis from"
        case let .priceMissing(type):
            if KindRule.of(type).takesTotal { return "A \(type.rawValue) needs a PRICE or --total" }
            if type == .transferIn { return "A transfer-in needs its cost basis per unit (COST)" }
            return "A \(type.rawValue) needs a price"
        case .taxAboveGross: return "Tax withheld (--fee) cannot be larger than the gross amount"
        case let .portfolioNotFound(name): return "No portfolio named '\(TextEscaping.escaped(name))' (see 'bitpal portfolio list')"
        case let .portfolioExists(name): return "A portfolio named '\(TextEscaping.escaped(name))' already exists"
        case let .portfolioInUse(name, count):
            return "Portfolio '\(TextEscaping.escaped(name))' has \(count) transaction\(count == 1 ? "" : "s"); move or delete them first"
        case let .lastPortfolio(name): return "'\(TextEscaping.escaped(name))' is the only portfolio; there must always be one"
        case let .defaultPortfolioRemoval(name):
            return "'\(TextEscaping.escaped(name))' is the default portfolio; make another the default first ('bitpal portfolio default NAME')"
        case let .assetNotFound(id): return "No registered asset '\(TextEscaping.escaped(id))' (see 'bitpal asset list')"
        case let .assetExists(id): return "\(TextEscaping.escaped(id)) is already registered (change it with 'bitpal asset edit \(TextEscaping.escaped(id))')"
        case let .assetInUse(id, count):
            return "\(TextEscaping.escaped(id)) is used by \(count) transaction\(count == 1 ? "" : "s"); delete them first or use --with-transactions"
        case let .assetLocked(id):
            return "Asset type and currency cannot change once \(TextEscaping.escaped(id)) has transactions or prices; remove it and add it again"
        case let .currencyMismatch(given, expected, reason):
            return "Currency \(given) is not \(expected), \(reason)"
        case let .unsupportedCurrency(text):
            return "Unsupported currency '\(TextEscaping.shortened(text))'; supported: " + CurrencyCode.supported.joined(separator: ", ")
        case let .linkedLeg(message): return message
        case let .brokenLink(legs, link): return LinkKind.fault(of: legs, link: link, names: names) ?? "its link is broken"
        case let .brokenSetting(message): return message
        case let .recordRule(problem):
            let text = problem.describe(names: names)
            return text.prefix(1).uppercased() + text.dropFirst()
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
        case let .differentCurrencies(a, b): return "Money in \(a) and in \(b) cannot be added or compared without a rate"
        case .valueTooLarge: return "A total is too large to compute exactly (over 10^41)"
        case .quantityTooLarge: return "A quantity is too large to keep exactly (over 3.4 × 10^20 units of one coin)"
        case let .splitToNothing(held):
            return "The split's ratio would round the \(held.text) units held to zero, and their basis with them; check the ratio (NEW:OLD)"
        case .divisionByZero: return "A division by zero was asked for (the history may be corrupt; run 'bitpal check')"
        case let .refused(message), let .misusedOption(message): return message
        }
    }
}

extension Shortfall {
    /// What was asked, as a verb: "sell", "transfer out", "swap", "move".
    var verb: String {
        if linked { return type == .sell ? "swap" : type == .transferOut ? "move" : type.verb }
        return type.verb
    }

    /// What was asked, with its quantity: "sell 5", "remove 5 by an adjustment".
    func action(_ quantity: String) -> String {
        switch type {
        case .adjustment: "remove \(quantity) by an adjustment"
        case .fee: "pay \(quantity) as a fee"
        default: "\(verb) \(quantity)"
        }
    }

    /// The same as a noun: "sell", "transfer-out", "swap", "move", "adjustment".
    var noun: String {
        if linked { return type == .sell ? "swap" : type == .transferOut ? "move" : type.rawValue }
        return type.rawValue
    }
}

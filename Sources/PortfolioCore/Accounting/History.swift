import Foundation

/// The rules every value must meet before it enters the history.
public enum ValueRules {
    /// An amount, price or fee: at most 18 fractional digits and 20 before the point.
    public static func precise(_ literal: DecimalLiteral, field: String, text: String) throws(PortfolioError) -> Decimal {
        if literal.fractionDigits > DecimalLiteral.maxFractionDigits {
            throw .tooManyFractionDigits(field: field, text: text)
        }
        if literal.integerDigits > Fixed18.maxIntegerDigits {
            throw .tooManyDigits(field: field, text: text)
        }
        return literal.value
    }

    /// Checks what `add` checks of one transaction on its own.
    public static func check(_ tx: Transaction, now: Date) throws(PortfolioError) {
        if tx.amountValue.units == 0 { throw .amountNotPositive }
        if tx.priceValue.units == 0 { throw .priceNotPositive }
        if tx.date > now { throw .futureDate }
    }
}

extension Portfolio {
    /// Replays the history of the coins in `coins` and rewords the first broken sell.
    ///
    /// Validity is per coin, so a change is checked against the whole history of
    /// every coin it touches (a back-dated sell can be refused because of a later one).
    ///
    /// - Parameter changed: ids of the transactions being written; a broken sell
    ///   among them reads "You only own …", any other "This would break the later sell …".
    public static func validate(_ transactions: [Transaction], coins: Set<String>, changed: Set<UUID>) throws(PortfolioError) {
        let relevant = coins.count == 0 ? [] : transactions.filter { coins.contains($0.coinId) }
        do {
            _ = try Ledger.replay(relevant)
        } catch let PortfolioError.breaksLaterSell(coin, held, requested, _, id) where changed.contains(id) {
            throw .insufficientQuantity(coinId: coin, held: held, requested: requested)
        }
    }

    /// Appends transactions after checking each one's rules and the merged history.
    public mutating func add(_ new: [Transaction], now: Date) throws(PortfolioError) {
        for tx in new { try ValueRules.check(tx, now: now) }
        let merged = transactions + new
        try Portfolio.validate(merged, coins: Set(new.map(\.coinId)), changed: Set(new.map(\.id)))
        transactions = merged
    }

    /// Replaces the transaction with the same id after checking the edited history.
    public mutating func replace(_ edited: Transaction, now: Date) throws(PortfolioError) {
        guard let index = transactions.firstIndex(where: { $0.id == edited.id }) else {
            throw .transactionNotFound(edited.id.uuidString.lowercased())
        }
        try ValueRules.check(edited, now: now)
        var copy = transactions
        let oldCoin = copy[index].coinId
        copy[index] = edited
        try Portfolio.validate(copy, coins: [oldCoin, edited.coinId], changed: [edited.id])
        transactions = copy
    }

    /// Deletes transactions if what remains is still a valid history.
    public mutating func delete(_ ids: Set<UUID>) throws(PortfolioError) {
        let removed = transactions.filter { ids.contains($0.id) }
        let remaining = transactions.filter { !ids.contains($0.id) }
        try Portfolio.validate(remaining, coins: Set(removed.map(\.coinId)), changed: [])
        transactions = remaining
    }

    /// The transaction whose id is `text` or starts with it (4+ characters, any case).
    public func transaction(matching text: String) throws(PortfolioError) -> Transaction {
        let prefix = text.lowercased()
        if prefix.count < 4 { throw .idTooShort(text) }
        let matches = transactions.filter { $0.id.uuidString.lowercased().hasPrefix(prefix) }
        if matches.count == 1 { return matches[0] }
        if matches.isEmpty { throw .transactionNotFound(text) }
        throw .ambiguousID(prefix: text, matches: matches.prefix(5).map { $0.id.uuidString.lowercased() })
    }
}

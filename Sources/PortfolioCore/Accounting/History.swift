import Foundation

/// The rules every value must meet before it enters the history.
public enum ValueRules {
    /// An amount, price or fee from text, exactly, by the one grammar and the one rule, wherever
    /// it comes from (an argument, an import): not `PlainDecimal`'s grammar is `LiteralError`
    /// (a usage error), too many digits before or after the point is `PortfolioError`, at any length.
    public static func fixed(_ text: String, field: String) throws -> Fixed18 {
        guard let scanned = PlainDecimal.scan(utf8: text.utf8) else { throw LiteralError.notANumber(field: field, text: text) }
        if scanned.fractionDigits > DecimalLiteral.maxFractionDigits { throw PortfolioError.tooManyFractionDigits(field: field, text: text) }
        guard let units = scanned.units else { throw PortfolioError.tooManyDigits(field: field, text: text) }
        return Fixed18(units: units)
    }

    /// Checks what `add` checks of one transaction on its own.
    public static func check(_ tx: Transaction, now: Date) throws(PortfolioError) {
        if tx.amountValue.units == 0 { throw .amountNotPositive }
        if tx.priceValue.units == 0 { throw .priceNotPositive }
        if tx.date > now { throw .futureDate }
    }
}

extension Portfolio {
    /// Replays the history of the coins in `coins` and rewords the first sell the change breaks.
    ///
    /// Validity is per coin, so a change is checked against the whole history of
    /// every coin it touches (a back-dated sell can be refused because of a later one).
    /// A sell that was already broken before the change (a hand-edited store, see
    /// `Portfolio.checked`) does not block it: a change may not break anything new.
    ///
    /// - Parameter changed: ids of the transactions being written; a broken sell
    ///   among them reads "You only own …", any other "This would break the later sell …".
    public static func validate(_ transactions: [Transaction], before: [Transaction], coins: Set<String>,
                                changed: Set<UUID>) throws(PortfolioError) {
        guard !coins.isEmpty else { return }
        let relevant = transactions.filter { coins.contains($0.coinId) }
        let failures = Ledger.replayForgiving(relevant).failures
        guard !failures.isEmpty else { return }
        let earlier = before.filter { coins.contains($0.coinId) }
        var known: [UUID: Int] = [:]
        for f in Ledger.replayForgiving(earlier).failures { known[earlier[f.index].id, default: 0] += 1 }
        for (index, error) in failures {
            let id = relevant[index].id
            if let n = known[id], n > 0, !changed.contains(id) {
                known[id] = n - 1
                continue
            }
            if case let .breaksLaterSell(coin, held, requested, _, _) = error, changed.contains(id) {
                throw .insufficientQuantity(coinId: coin, held: held, requested: requested)
            }
            throw error
        }
    }

    /// Appends transactions after checking each one's rules and the merged history.
    public mutating func add(_ new: [Transaction], now: Date) throws(PortfolioError) {
        for tx in new { try ValueRules.check(tx, now: now) }
        let merged = transactions + new
        try Portfolio.validate(merged, before: transactions, coins: Set(new.map(\.coinId)), changed: Set(new.map(\.id)))
        transactions = merged
    }

    /// Replaces the transaction at `index` after checking the edited history.
    public mutating func replace(at index: Int, with edited: Transaction, now: Date) throws(PortfolioError) {
        try ValueRules.check(edited, now: now)
        var copy = transactions
        let oldCoin = copy[index].coinId
        copy[index] = edited
        try Portfolio.validate(copy, before: transactions, coins: [oldCoin, edited.coinId], changed: [edited.id])
        transactions = copy
    }

    /// Replaces the (first) transaction with the same id after checking the edited history.
    public mutating func replace(_ edited: Transaction, now: Date) throws(PortfolioError) {
        guard let index = transactions.firstIndex(where: { $0.id == edited.id }) else {
            throw .transactionNotFound(edited.id.uuidString.lowercased())
        }
        try replace(at: index, with: edited, now: now)
    }

    /// Deletes the records at `indices` if what remains is still a valid history.
    public mutating func delete(at indices: Set<Int>) throws(PortfolioError) {
        let removed = indices.map { transactions[$0] }
        var remaining = transactions
        for i in indices.sorted(by: >) { remaining.remove(at: i) }
        try Portfolio.validate(remaining, before: transactions, coins: Set(removed.map(\.coinId)), changed: [])
        transactions = remaining
    }

    /// Deletes transactions (every record with one of these ids) if what remains is still a valid history.
    public mutating func delete(_ ids: Set<UUID>) throws(PortfolioError) {
        try delete(at: Set(transactions.indices.filter { ids.contains(transactions[$0].id) }))
    }

    /// The transaction whose id is `text` or starts with it (4+ characters, any case).
    public func transaction(matching text: String) throws(PortfolioError) -> Transaction {
        transactions[try index(matching: text, lines: { [] })]
    }

    /// The position of the record `text` names: an id or a unique prefix of 4+ characters (any case),
    /// or `@LINE`, the record that starts on that line of the file (`lines` gives each record's line).
    ///
    /// A prefix that matches records sharing one duplicated id is an error that names their
    /// lines, so the user can pick one with `@LINE`.
    public func index(matching text: String, lines: () -> [Int]) throws(PortfolioError) -> Int {
        if text.hasPrefix("@") {
            let lineText = text.dropFirst()
            guard !lineText.isEmpty, lineText.count <= 12, lineText.allSatisfy({ $0.isASCII && $0.isNumber }), let line = Int(lineText),
                  let i = lines().firstIndex(of: line), i < transactions.count else {
                throw .transactionNotFound(text)
            }
            return i
        }
        let prefix = text.lowercased()
        if prefix.count < 4 { throw .idTooShort(text) }
        let matches = transactions.indices.filter { transactions[$0].id.uuidString.lowercased().hasPrefix(prefix) }
        if matches.count == 1 { return matches[0] }
        if matches.isEmpty { throw .transactionNotFound(text) }
        let ids = matches.map { transactions[$0].id }
        if Set(ids).count == 1 {
            let all = lines()
            throw .duplicatedID(id: ids[0].uuidString.lowercased(), lines: matches.map { $0 < all.count ? all[$0] : 0 })
        }
        var seen = Set<UUID>()
        let distinct = ids.filter { seen.insert($0).inserted }
        throw .ambiguousID(prefix: text, matches: distinct.prefix(5).map { $0.uuidString.lowercased() })
    }
}

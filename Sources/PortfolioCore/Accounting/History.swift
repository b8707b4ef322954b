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

    /// Checks what `add` checks of one transaction on its own (the rules of its kind, the date: never
    /// after `now`). With `dayAsStored`, a record dated a day stands while that day is today somewhere
    /// (`Transaction.isDated(after:)`): a stored one edited where it is still the day before.
    public static func check(_ tx: Transaction, now: Date, dayAsStored: Bool = false) throws(PortfolioError) {
        switch tx.rule.brokenRule(tx) {
        case .amountNotPositive?: throw .amountNotPositive
        case .priceNotPositive?: throw .priceNotPositive
        case .priceMissing?: throw .priceMissing(tx.type)
        case .taxAboveGross?: throw .taxAboveGross
        default: break
        }
        if dayAsStored ? tx.isDated(after: now) : tx.date > now { throw .futureDate }
        // A computed value (a swap leg's price, a saving plan's units) could pass what the store reads back.
        for (field, value) in [("Amount", tx.amountValue), ("Price", tx.priceValue), ("Total", tx.totalValue), ("Fee", tx.feeValue),
                               ("Rate", tx.fxRateValue)] {
            if let value, !value.isStorable { throw .tooManyDigits(field: field, text: value.text) }
        }
    }
}

/// A change that would leave problems not of its own making (see `Book.admit`).
public struct BookRejection: Error, Sendable {
    public var problems: [StoreProblem]
}

extension Book {
    /// The one gate every change passes before it is written: replays the whole book (every
    /// portfolio, in date order) and refuses a result that breaks a rule the original did not.
    ///
    /// - Throws: the changed record's own `PortfolioError` ("You only own …"), the later record
    ///   it breaks (`breaksLater`), or `BookRejection` with the problems.
    public func admit(from original: Book, now: Date) throws {
        _ = try admitted(from: original, now: now)
    }

    /// `admit`; returns the replay when the result breaks no rule at all (not only none of its own making).
    @discardableResult
    func admitted(from original: Book, now: Date) throws -> Ledger? {
        let history = checked(now: now, cashMovements: false)
        return try admitted(after: history.problems, from: original, now: now) ? history.ledger : nil
    }

    /// The verdict of `admit` on this book's problems (`after`).
    private func admitted(after: [StoreProblem], from original: Book, now: Date) throws -> Bool {
        guard let broken = blockers(after: after, problemsBefore: { original.checked(now: now, cashMovements: false).problems }) else { return after.isEmpty }
        if broken.introduced, let error = error(for: broken.problems) { throw error }
        throw BookRejection(problems: broken.problems)
    }

    /// `admit`, with `work` done on a second thread while the book is replayed on this one (see
    /// `checked(now:cashMovements:alongside:)`): the verdict (`admit`'s error, if any) and what `work` gave.
    /// The verdict carries the replay when the book breaks no rule at all.
    func admit<W: Sendable>(from original: Book, now: Date, alongside work: @escaping @Sendable () -> W) -> (verdict: Result<Ledger?, any Error>, work: W) {
        let (history, done) = checked(now: now, cashMovements: false, alongside: work)
        do {
            let clean = try admitted(after: history.problems, from: original, now: now)
            return (.success(clean ? history.ledger : nil), done)
        } catch {
            return (.failure(error), done)
        }
    }

    /// `admit`; when the result breaks no rule at all, also remembers what was checked (`admission`),
    /// so that a later `admit` of the very same book at the same time need not replay it again.
    public mutating func admitRemembering(from original: Book, now: Date) throws {
        admission = nil
        if let ledger = try admitted(from: original, now: now) {
            admission = Admission(now: now, portfolios: portfolios, assets: assets, transactions: transactions, ledger: ledger)
        }
    }

    /// `admit`, skipped when `admission` shows this very book (every record bit for bit, the same
    /// portfolios and assets) was found to break no rule at `now`: such a book is admitted whatever
    /// the original (the original counts only when the result has problems).
    public func admitUnlessAdmitted(from original: Book, now: Date) throws {
        if let admission, admission.covers(self, now: now) { return }
        try admit(from: original, now: now)
    }

    /// Appends transactions (checked when the change is admitted).
    public mutating func add(_ new: [Transaction]) {
        transactions += new
        for t in new { changed.insert(t.id) }
    }

    /// Replaces the transaction at `index`.
    public mutating func replace(at index: Int, with edited: Transaction) {
        transactions[index] = edited
        changed.insert(edited.id)
    }

    /// Deletes the records at `indices`.
    public mutating func delete(at indices: Set<Int>) {
        var remaining: [Transaction] = []
        remaining.reserveCapacity(transactions.count - indices.count)
        for (i, t) in transactions.enumerated() where !indices.contains(i) { remaining.append(t) }
        transactions = remaining
    }

    /// `add`, then `admit` (for callers outside the store, and tests).
    public func adding(_ new: [Transaction], now: Date) throws -> Book {
        for t in new { try ValueRules.check(t, now: now) }
        var copy = self
        copy.add(new)
        try copy.admit(from: self, now: now)
        copy.changed = []
        return copy
    }

    /// `replace`, then `admit`.
    public func replacing(at index: Int, with edited: Transaction, now: Date) throws -> Book {
        try ValueRules.check(edited, now: now)
        var copy = self
        copy.replace(at: index, with: edited)
        try copy.admit(from: self, now: now)
        copy.changed = []
        return copy
    }

    /// `delete`, then `admit`.
    public func deleting(_ ids: Set<UUID>, now: Date) throws -> Book {
        var copy = self
        copy.delete(at: Set(transactions.indices.filter { ids.contains(transactions[$0].id) }))
        try copy.admit(from: self, now: now)
        return copy
    }

    /// The indices of the record at `index` and of its linked partner legs (a swap's or a move's).
    public func legs(of index: Int) -> [Int] {
        let t = transactions[index]
        guard let link = t.linkedId else { return [index] }
        return transactions.indices.filter { transactions[$0].linkedId == link }
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

/// What a clean `admit` checked: a book with the same records, portfolios and assets at the same
/// time breaks no rule either (the check depends on nothing else).
public struct Admission: Sendable {
    let now: Date
    let portfolios: [Portfolio]
    let assets: [Asset]
    let transactions: [Transaction]
    /// The replay that found no rule broken (what the store's snapshot keeps).
    let ledger: Ledger

    func covers(_ book: Book, now: Date) -> Bool {
        guard now == self.now, book.transactions.count == transactions.count, book.portfolios == portfolios, book.assets == assets else { return false }
        // The values the replay sees (`==`, as it compares them); padding bytes and string storage
        // may differ between equal copies, so a comparison of bits would miss them.
        return book.transactions == transactions
    }
}

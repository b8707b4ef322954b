import Foundation

/// The book: the store, reading it, and the one door through which it changes (`commit`).
public final class Repository {
    public let directory: String
    public let now: Date
    /// The zone records dated a calendar day are placed in.
    public let timeZone: TimeZone
    let prices: Prices
    let resolver: Resolver
    let notices: Notices

    public init(_ environment: SessionEnvironment, prices: Prices, resolver: Resolver, notices: Notices) {
        directory = environment.directory
        now = environment.now
        timeZone = environment.timeZone
        self.prices = prices
        self.resolver = resolver
        self.notices = notices
    }

    public var store: PortfolioStore {
        var store = PortfolioStore(directory: directory, timeZone: timeZone)
        let notices = self.notices
        nonisolated(unsafe) let send = { (n: SessionNotice) in notices.send(n) }
        store.migrated = { send(.storeMigrated(backup: $0, days: $1)) }
        return store
    }

    /// Reads the whole store and remembers what names need of it.
    public func loadBook() throws -> Book { prepared(try store.load()) }

    /// `book` as reads hand it on: its names remembered, the price cache's rates beside its own.
    private func prepared(_ book: Book) -> Book {
        var book = book
        resolver.remember(book)
        book.moreRates = prices.cachedRates
        return book
    }

    /// What reports read: from the snapshot the last write left (`Snapshot`), when it stands for the
    /// store as it is now, the book without its transactions (`Book.omitted`) and its replay; else the
    /// whole book, read and checked as `loadBook` reads it, and no replay.
    ///
    /// Read whole, the book comes with its `source`, so that the report can leave a snapshot of it
    /// (`Session.reports`) for the next one.
    public func loadForReports() throws -> (book: Book, ledger: Ledger?, source: SnapshotSource?) {
        let store = self.store
        if let snapshot = store.loadSnapshot(now: now) { return (prepared(snapshot.book), snapshot.ledger, nil) }
        let (book, source) = try store.loadKeyed()
        return (prepared(book), nil, source)
    }

    /// The snapshot with the records' order and the file's bytes, for `list --limit` (`Snapshot.latestLines`),
    /// when it stands for the store as it is now; else `nil` (the caller reads the store).
    public func loadListing() -> Snapshot? {
        let store = self.store
        guard var snapshot = Snapshot.load(directory: directory, store: store.path, zone: timeZone, now: now, keepingFile: true, listing: true)
        else { return nil }
        snapshot.book = prepared(snapshot.book)
        return snapshot
    }

    /// The portfolios and registered assets only, for commands that resolve arguments and then
    /// write through the store (which reads the whole book under its lock).
    public func loadSettings() throws -> Book { prepared(try store.loadSettings()) }

    /// Makes `change` to the book through the store (which checks the whole history under its lock):
    /// the records added, changed or removed, grouped by link. Rates come from the book's table and
    /// the price cache, as every report finds them; online, a rate missing for a day is fetched from the ECB.
    public func commit(_ change: TransactionChange, names: MessageNames) throws -> [[Transaction]] {
        let store = self.store
        let rates = prices.cachedRates
        // Records added after every stored one (an add from a shell or cron) go on from the snapshot.
        if !change.changesStoredRecords, let done = try store.append(now: now, { book in
            book.moreRates = rates
            book.fetchRates = prices.rateFetcher(for: book)
            return try book.apply(change, now: now)
        }) {
            return done
        }
        return try store.update(now: now, names: names) { book in
            book.moreRates = rates
            book.fetchRates = prices.rateFetcher(for: book)
            return (true, try book.apply(change, now: now, lines: { (try? store.transactionLines()) ?? [] }))
        }
    }

    /// Makes a setting change through the store: what it did, and the book as written.
    public func commit(_ change: SettingChange, names: MessageNames) throws -> (applied: SettingApplied, book: Book) {
        try store.update(now: now, names: names) { book in
            let done = try book.apply(change, now: now)
            return (done.changed, (done, book))
        }
    }

    /// Imports `document` through the store, all or nothing (`TransactionImport.merge`): into
    /// `portfolio` where a row names none, rates found as every report finds them; with `dryRun`,
    /// what it would do, writing nothing.
    public func commitImport(_ document: ImportDocument, portfolio: String, allowDuplicates: Bool, dryRun: Bool, names: MessageNames,
                             resolveAsset: (String) throws -> String) throws -> ImportOutcome {
        let rates = prices.cachedRates
        return try store.update(now: now, names: names) { book in
            book.moreRates = rates  // a row in another currency finds fetched and imported rates too
            book.fetchRates = prices.rateFetcher(for: book)
            let outcome = try TransactionImport.merge(document, into: &book, portfolio: portfolio, now: now, allowDuplicates: allowDuplicates,
                                                      timeZone: timeZone, names: names, resolveAsset: resolveAsset)
            return (!dryRun && outcome.changesStore, outcome)
        }
    }
}

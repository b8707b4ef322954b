import Foundation

/// Where bitpal keeps its files: `--data-dir`, else `$BITPAL_HOME`, else
/// `$XDG_DATA_HOME/bitpal` (when absolute), else `$HOME/.local/share/bitpal`.
public enum DataLocation {
    public static func resolve(explicit: String?, environment: [String: String]) throws(StoreError) -> String {
        if let explicit, !explicit.isEmpty { return absolute(explicit, environment) }
        if let home = environment["BITPAL_HOME"], !home.isEmpty { return absolute(home, environment) }
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") { return xdg + "/bitpal" }
        if let home = environment["HOME"], home.hasPrefix("/") { return home + "/.local/share/bitpal" }
        throw StoreError(path: "~", reason: .noDataDirectory(
            "HOME is not set; use --data-dir DIR or set BITPAL_HOME"))
    }

    private static func absolute(_ path: String, _ env: [String: String]) -> String {
        if path.hasPrefix("/") { return path }
        let cwd = FileManager.default.currentDirectoryPath
        return (cwd as NSString).appendingPathComponent(path)
    }
}

/// The portfolio file: portfolios, registered assets, every transaction, the watchlist and manual prices.
///
/// Reads need no lock (a rename swaps whole files). Every change runs
/// read-check-write under an exclusive `flock` on the data folder itself (and on the
/// folder of the real file, when `portfolio.json` is a link elsewhere), so concurrent
/// processes never lose an update, and an unreadable file is never overwritten. Nothing
/// the user can delete while the data exists holds the lock (an old `.portfolio.lock` left
/// by earlier versions is no longer used and may be deleted).
public struct PortfolioStore: Sendable {
    public let directory: String
    public var path: String { directory + "/portfolio.json" }

    /// Told the path of the backup a first write of an older file made, and how many of its records
    /// that write dated as calendar days.
    public var migrated: (@Sendable (_ backup: String, _ days: Int) -> Void)?
    /// The zone records dated a calendar day are placed in, and in which an older file's midnights are days.
    public var timeZone: TimeZone

    public init(directory: String, timeZone: TimeZone = .current) {
        self.directory = directory
        self.timeZone = timeZone
    }

    /// The largest store read: 1 GiB (about 6 million transactions at ~170 bytes each).
    public static let readLimit = FileSystem.defaultReadLimit

    /// The saved portfolio, or an empty one when there is no file yet.
    public func load() throws(StoreError) -> Book {
        guard let buffer = try FileSystem.readBuffer(path, limit: PortfolioStore.readLimit) else { return Book() }
        return try PortfolioCodec.decode(buffer, path: path, releasingConsumed: true, timeZone: timeZone)
    }

    /// The portfolios and registered assets only (no transactions): what resolving an argument needs,
    /// read without the cost of the history. The book's transactions, watchlist and prices are empty.
    ///
    /// The file is read from its start only as far as needed (the settings come first in every file
    /// bitpal writes): a prefix is used only when the reader reached the transactions inside it, so the
    /// result, and any error, is the same as that of reading the whole file.
    public func loadSettings() throws(StoreError) -> Book {
        let path = self.path
        let book = try FileSystem.readPrefixes(path, limit: PortfolioStore.readLimit, first: 1 << 16) { buffer, complete throws(StoreError) in
            complete ? try PortfolioCodec.decode(buffer, path: path, settingsOnly: true) : PortfolioCodec.decodeSettings(prefix: buffer, path: path)
        }
        return book ?? Book()
    }

    private func loadKeepingRecords() throws(StoreError) -> (Book, StoredRecords?) {
        guard let buffer = try FileSystem.readBuffer(path, limit: PortfolioStore.readLimit) else { return (Book(), nil) }
        return try PortfolioCodec.decodeKeepingRecords(buffer, path: path, timeZone: timeZone)
    }

    /// Locks, loads, lets `change` edit the portfolio, and writes the result in one atomic step.
    ///
    /// If `change` throws, nothing is written. `change` returns whether to write.
    /// Every write goes through here, and so through one last check: the result may break no rule
    /// (`Portfolio.checked`) unless it only removes problems the stored file already had.
    public func update<T>(now: Date = Date(), names: MessageNames = .plain, _ change: (inout Book) throws -> (write: Bool, result: T)) throws -> T {
        try FileSystem.ensureDirectory(directory)
        let locks = try lockFolders()
        defer { for lock in locks.reversed() { lock.unlock() } }
        // The file as read stays in memory until the write, which copies the lines of unchanged records from it.
        var (read, stored) = try loadKeepingRecords()
        // A file of an older version is written in this one: its records at a local midnight become days.
        let days = read.readVersion < Book.formatVersion ? read.transactions.dateMidnightsAsDays(in: timeZone) : 0
        var book = read
        var original = book
        let outcome = try change(&book)
        if outcome.write {
            try Self.refuseSettingProblems(of: book, since: original)
            // An import has already checked this very book (when it broke no rule): not twice.
            let checked = book.admission?.covers(book, now: now) ?? false
            if !checked, original.readVersion == Book.formatVersion, let target = try? FileSystem.resolvingSymlink(path) {
                try writeWhileChecking(book, original: original, stored: stored, target: target, now: now, names: names)
                // The books are not needed any more: destroyed on another thread.
                Parallel.discard(&book, leaving: Book())
                Parallel.discard(&original, leaving: Book())
                Parallel.discard(&read, leaving: Book())
                Parallel.discard(&stored, leaving: nil)
                return outcome.result
            }
            if !checked { try admit(book, original: original, now: now, names: names) }
            let target = try FileSystem.resolvingSymlink(path)
            FileSystem.removeLeftoverTempFiles(of: target)
            if original.readVersion < Book.formatVersion, let old = try FileSystem.read(target) {
                // The first write of a version-1 file: keep it, as it was, beside the new one, under a
                // name nothing has yet (a file, a folder or a link of that name is never replaced).
                let folder = (target as NSString).deletingLastPathComponent
                let keep = try Self.freeBackupPath(in: folder, version: original.readVersion)
                try FileSystem.writeAtomically(old, to: keep)
                migrated?(keep, days)
            }
            let ledger = checked ? book.admission?.ledger : nil
            book.changed = []
            book.admission = nil
            let written = book
            var layout = PortfolioCodec.StoreLayout(head: 0, tail: 0)
            let digest = try FileSystem.writeAtomically(to: path) { sink throws(StoreError) in
                layout = try PortfolioCodec.encode(written, reusing: stored) { piece throws(StoreError) in try sink.write(piece) }
            }
            writeSnapshot(of: written, ledger: ledger, digest: digest, layout: layout, now: now)
        }
        return outcome.result
    }

    /// Adds the records `build` appends to the book, when they can go on from the snapshot (`Snapshot`)
    /// without reading the records already stored: the snapshot stands for the file, `build` changes no
    /// setting, every new record is dated after every stored one (so it comes last in the replay), and
    /// each breaks no rule of its own nor, applied to the snapshot's ledger, the replay's. Then the file
    /// is its old bytes with the new lines put before the array's end (flushed and renamed as every
    /// write), and the snapshot goes on with them. The result is byte for byte what `update` writes.
    ///
    /// Returns `nil`, having written nothing, whenever any of that does not hold: `update` then makes
    /// the change the long way, with its own checks and messages. `build` runs on the book's settings
    /// (its `transactions` empty, `omitted` set) and may throw, as it would in `update`.
    public func append(now: Date, _ build: (inout Book) throws -> [[Transaction]]) throws -> [[Transaction]]? {
        var st = stat()
        guard stat(directory, &st) == 0 else { return nil }
        let locks = try lockFolders()
        defer { for lock in locks.reversed() { lock.unlock() } }
        guard let snapshot = Snapshot.load(directory: directory, store: path, zone: timeZone, now: now, keepingFile: true, listing: true),
              snapshot.canonical, let file = snapshot.file, var listing = snapshot.listing, snapshot.facts.count > 0, let latest = snapshot.facts.latest else { return nil }
        var book = snapshot.book
        let done = try build(&book)
        let legs = book.transactions
        var settings = book
        settings.transactions = []
        guard !legs.isEmpty, settings == snapshot.book, legs.allSatisfy({ $0.date > latest }),
              book.recordProblems(now: now).problems.isEmpty,
              !legs.contains(where: { Self.holdsRecord(id: $0.id, in: file, records: snapshot.layout) }), listing.append(legs) else { return nil }
        // The replay goes on from where the snapshot left it, as the whole replay would reach these records.
        var ledger = snapshot.ledger
        ledger.exchangeCosts.merge(Ledger.exchangeCosts(legs)) { a, _ in a }
        ledger.savingLinks.formUnion(Ledger.savingLinks(legs))
        do {
            for t in Ledger.chronological(legs) { try ledger.apply(t) }
        } catch {
            return nil
        }
        guard !ledger.damaged else { return nil }
        // The new records' lines as a whole write would put them: the records of a book of them alone.
        var alone: [UInt8] = []
        let span = PortfolioCodec.encode(book, reusing: nil) { piece in alone.append(contentsOf: piece) }
        var inserted = Array(",".utf8)
        inserted += alone[span.head..<span.tail]
        let target = try FileSystem.resolvingSymlink(path)
        FileSystem.removeLeftoverTempFiles(of: target)
        let cut = snapshot.layout.tail
        let digest = try FileSystem.writeAtomically(to: path) { sink throws(StoreError) in
            try file.withUnsafeBufferPointer { old throws(StoreError) in
                try sink.write(UnsafeBufferPointer(rebasing: old[..<cut]))
                try inserted.withUnsafeBufferPointer { piece throws(StoreError) in try sink.write(piece) }
                try sink.write(UnsafeBufferPointer(rebasing: old[cut...]))
            }
        }
        let facts = Snapshot.Facts(count: snapshot.facts.count + legs.count,
                                   currencies: snapshot.facts.currencies.union(legs.compactMap(\.currency)),
                                   latest: max(latest, legs.map(\.date).max() ?? latest))
        Snapshot.write(facts, ledger: ledger, listing: listing, store: path, digest: digest,
                       layout: PortfolioCodec.StoreLayout(head: snapshot.layout.head, tail: cut + inserted.count),
                       directory: directory, zone: timeZone, now: now)
        return done
    }

    /// Whether the records of a store written by bitpal (`bytes`, its records between `records.head`
    /// and `records.tail`) hold one with the id `id` (every record begins with its id, as it writes it).
    static func holdsRecord(id: UUID, in bytes: [UInt8], records: PortfolioCodec.StoreLayout) -> Bool {
        let needle = Array("{\"id\": \"\(UUIDText.lowercased(id))\"".utf8)
        return bytes.withUnsafeBytes { all in
            needle.withUnsafeBytes { n in
                guard let base = all.baseAddress, let first = n.baseAddress, records.head <= records.tail, records.tail <= all.count else { return false }
                var at = records.head
                // Each `{` is a record's start (or inside a text): compared there.
                while at + n.count <= records.tail, let hit = memchr(base + at, 0x7B, records.tail - at) {
                    let offset = UnsafeRawPointer(hit) - base
                    if offset + n.count <= records.tail && memcmp(hit, first, n.count) == 0 { return true }
                    at = offset + 1
                }
                return false
            }
        }
    }

    /// `portfolio.v1.json`, else `portfolio.v1.2.json`, `portfolio.v1.3.json` …: the first name in `folder`
    /// that nothing (no file, folder or link, even a broken one) has.
    static func freeBackupPath(in folder: String, version: Int) throws(StoreError) -> String {
        for n in 1...1000 {
            let path = folder + "/portfolio.v\(version)" + (n == 1 ? "" : ".\(n)") + ".json"
            var st = stat()
            if lstat(path, &st) != 0 && errno == ENOENT { return path }
        }
        throw StoreError(path: folder + "/portfolio.v\(version).json", reason: .writeFailed(
            "no free name for the backup of the version-\(version) file (portfolio.v\(version).json … .1000.json all exist)"))
    }

    /// Refuses a change that leaves a plan, a target, a price or a rate breaking a rule it did not break before.
    static func refuseSettingProblems(of book: Book, since original: Book) throws(PortfolioError) {
        let introduced = book.settingProblemsIntroduced(since: original)
        guard let first = introduced.first else { return }
        throw .brokenSetting("This change would break a rule: \(first.description)"
            + (introduced.count > 1 ? " (and \(introduced.count - 1) more problem\(introduced.count == 2 ? "" : "s"))" : "")
            + "; nothing was written")
    }

    /// `book.admit`, a rejection worded with the lines of the stored file.
    private func admit(_ book: Book, original: Book, now: Date, names: MessageNames) throws {
        do {
            try book.admit(from: original, now: now)
        } catch {
            throw worded(error, book: book, original: original, names: names)
        }
    }

    /// An error of `admit` as `update` throws it: a rejection worded with the lines of the stored file.
    private func worded(_ error: any Error, book: Book, original: Book, names: MessageNames) -> any Error {
        guard let rejection = error as? BookRejection else { return error }
        let lines = Self.lines(of: book, from: original, originalLines: (try? transactionLines()) ?? [])
        return StoreError(path: path, reason: .brokenRules(rejection.problems.map { Self.describe($0, lines: lines, names: names) }))
    }

    /// The end of `update` for a version-2 file, with the same effects and errors as checking first and
    /// writing after: the new file is written to its temp file (and flushed) on a second thread while
    /// the book is checked on this one, and renamed into place only when the check passed. A refused
    /// change removes the temp file and throws the check's error, leaving every other file as it was;
    /// a failed write (after a passed check) throws the write's error.
    private func writeWhileChecking(_ book: Book, original: Book, stored: StoredRecords?, target: String, now: Date,
                                    names: MessageNames) throws {
        // Temp files that killed writers left, listed before this write makes its own.
        let leftovers = FileSystem.leftoverTempFiles(of: target)
        var written = book
        written.changed = []
        written.admission = nil
        let path = self.path
        // The replay (the longest part) on this thread; the records' own rules, then the write, on the other.
        let (checked, pending) = book.admit(from: original, now: now, alongside: {
            [written] () -> Result<(file: FileSystem.PendingFile, layout: PortfolioCodec.StoreLayout), StoreError> in
            do throws(StoreError) {
                var layout = PortfolioCodec.StoreLayout(head: 0, tail: 0)
                let file = try FileSystem.writeTemporary(to: path) { sink throws(StoreError) in
                    layout = try PortfolioCodec.encode(written, reusing: stored) { piece throws(StoreError) in try sink.write(piece) }
                }
                return .success((file, layout))
            } catch {
                return .failure(error)
            }
        })
        if case let .failure(error) = checked {
            if case let .success(done) = pending { done.file.discard() }
            throw worded(error, book: book, original: original, names: names)
        }
        for leftover in leftovers { unlink(leftover) }
        let done = try pending.get()
        try done.file.commit()
        writeSnapshot(of: written, ledger: try checked.get(), digest: done.file.digest, layout: done.layout, now: now)
    }

    /// The snapshot of the file just written (`Snapshot`), when the replay that checked it broke no
    /// rule; else no snapshot (the old one no longer matches anyway).
    private func writeSnapshot(of book: Book, ledger: Ledger?, digest: (UInt64, UInt64), layout: PortfolioCodec.StoreLayout, now: Date) {
        guard let ledger else { return Snapshot.remove(in: directory) }
        Snapshot.write(Snapshot.Facts(book.transactions), ledger: ledger, listing: Listing(book.transactions), store: path, digest: digest,
                       layout: layout, directory: directory, zone: timeZone, now: now)
    }

    /// The snapshot beside the store, when it stands for the file as it is now (`Snapshot.load`).
    public func loadSnapshot(now: Date) -> Snapshot? {
        Snapshot.load(directory: directory, store: path, zone: timeZone, now: now)
    }

    /// `load`, and what a snapshot of the book read needs (`refreshSnapshot`): the file's key and where
    /// its records are; `nil` with a file of an older version, or one that changed while it was read.
    public func loadKeyed() throws(StoreError) -> (book: Book, source: SnapshotSource?) {
        guard let target = try? FileSystem.resolvingSymlink(path), let before = Snapshot.modification(of: target),
              let buffer = try FileSystem.readBuffer(path, limit: PortfolioStore.readLimit) else { return (try load(), nil) }
        var hash = ContentHash()
        hash.update(UnsafeRawBufferPointer(start: buffer.base, count: buffer.count))
        var records: PortfolioCodec.StoreLayout?
        let book = try PortfolioCodec.decode(buffer, path: path, releasingConsumed: true, timeZone: timeZone) { records = $0 }
        guard let records, book.readVersion == Book.formatVersion, before.size == UInt64(buffer.count),
              let after = Snapshot.modification(of: target), after.size == before.size, after.time == before.time else { return (book, nil) }
        let key = Snapshot.Key(size: before.size, modified: before.time, digest: hash.digest, zone: timeZone.identifier)
        return (book, SnapshotSource(key: key, layout: records))
    }

    /// Leaves a snapshot of `book` (read by `loadKeyed` as `source`) and its replay `ledger` (as reports
    /// replay it, breaking no rule) when the store is not being written and is still the file read: so
    /// the next report need not read it again (after a hand edit, a `git checkout`, an upgrade). Such a
    /// snapshot serves reports only (`Snapshot.canonical` is false). A cache: nothing is said of a failure.
    public func refreshSnapshot(_ source: SnapshotSource, book: Book, ledger: Ledger, now: Date) {
        guard let locks = lockFoldersIfFree() else { return }
        defer { for lock in locks.reversed() { lock.unlock() } }
        guard let target = try? FileSystem.resolvingSymlink(path), let modified = Snapshot.modification(of: target),
              modified.size == source.key.size, modified.time == source.key.modified,
              // A write's snapshot of this very file (made in another zone, say) serves `list` and `add`: kept.
              !Snapshot.keepsWrite(in: directory, digest: source.key.digest) else { return }
        Snapshot.write(Snapshot.Facts(book.transactions), ledger: ledger, listing: Listing(), store: path, digest: source.key.digest,
                       layout: source.layout, canonical: false, directory: directory, zone: timeZone, now: now)
    }

    /// Locks the data folder and, when `portfolio.json` is a link to a file in another folder,
    /// that folder too: always in the order of their real paths, so two processes never wait
    /// on each other.
    private func lockFolders() throws(StoreError) -> [FileLock] {
        var locks: [FileLock] = []
        for folder in try lockedFolders() { locks.append(try FileLock(directory: folder)) }
        return locks
    }

    /// The folders a write locks, in the order it locks them.
    private func lockedFolders() throws(StoreError) -> [String] {
        var folders = [realPath(directory)]
        let target = try FileSystem.resolvingSymlink(path)
        let targetFolder = realPath((target as NSString).deletingLastPathComponent)
        if targetFolder != folders[0] { folders.append(targetFolder) }
        return folders.sorted()
    }

    /// The locks of a write when nobody holds them now; `nil` (at once, holding none) otherwise.
    private func lockFoldersIfFree() -> [FileLock]? {
        var locks: [FileLock] = []
        for folder in (try? lockedFolders()) ?? [] {
            guard let lock = FileLock.ifFree(directory: folder) else {
                for held in locks.reversed() { held.unlock() }
                return nil
            }
            locks.append(lock)
        }
        return locks.isEmpty ? nil : locks
    }

    private func realPath(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}

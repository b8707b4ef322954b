import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What the replay of `portfolio.json` derived, kept beside it (`.portfolio.snapshot`) so that a
/// report need not read every record and replay them again.
///
/// It is a cache and nothing else: every write of the store (under its lock, after its check) writes
/// it anew, keyed to the exact file it was made from — its size, its modification time and a
/// fingerprint of its bytes (`ContentHash`) — and to the zone its days were placed in. A reader uses
/// it only when all of these match, the file broke no rule when it was made, and the clock has not
/// gone back since; otherwise (a hand edit, a `git checkout`, a copy, a truncated or garbled snapshot,
/// an older bitpal's) it reads `portfolio.json` as it always has. `check` never looks at it.
///
/// The image: a magic line, a version, the payload's length and fingerprint, then the payload — the
/// key, where the store's records begin and end (the file without them is the book's settings, read
/// by the store's own codec), facts of the transactions the reports ask for, and the ledger
/// (`Ledger.write`). It holds no record, so it stays smaller than the file it stands for.
public struct Snapshot: Sendable {
    public static let fileName = ".portfolio.snapshot"
    static let magic = Array("bitpal-snapshot\n".utf8)
    /// Raised whenever the image or what the replay derives changes: an image of another version is ignored.
    static let version: UInt32 = 1

    /// The file a snapshot stands for.
    struct Key: Equatable {
        var size: UInt64
        var modified: (seconds: Int64, nanoseconds: Int64)
        var digest: (UInt64, UInt64)
        /// The zone the records dated by day were placed in.
        var zone: String

        static func == (a: Key, b: Key) -> Bool {
            a.size == b.size && a.modified == b.modified && a.digest == b.digest && a.zone == b.zone
        }
    }

    /// The book without its transactions (`Book.omitted` says what the reports need of them).
    public var book: Book
    /// The replay of every record, as reports replay it (no cash movements, disposals or changes kept).
    public var ledger: Ledger
    /// What it knows of the records beyond the ledger.
    var facts: Facts
    var key: Key
    var layout: PortfolioCodec.StoreLayout
    /// The bytes of the store it stands for, when asked for (`PortfolioStore.append` copies them).
    var file: [UInt8]?

    /// What a snapshot keeps of the records themselves.
    struct Facts {
        var count: Int
        /// The currencies their money is in.
        var currencies: Set<String>
        /// The latest date of any (`nil` without records): a record dated after it is last in the replay.
        var latest: Date?

        init(count: Int, currencies: Set<String>, latest: Date?) {
            self.count = count
            self.currencies = currencies
            self.latest = latest
        }

        init(_ transactions: [Transaction]) {
            var currencies = Set<String>()
            var latest: Date?
            for t in transactions {
                if let c = t.currency { currencies.insert(c) }
                if latest.map({ t.date > $0 }) ?? true { latest = t.date }
            }
            self.init(count: transactions.count, currencies: currencies, latest: latest)
        }
    }

    static func path(in directory: String) -> String { directory + "/" + fileName }

    /// The image of `book` (as written to a file of `key`) and its replay `ledger`, checked at `now`.
    static func image(facts: Facts, ledger: Ledger, key: Key, layout: PortfolioCodec.StoreLayout, now: Date) -> [UInt8] {
        var body = ImageWriter(capacity: 1 << 16)
        let sorted = facts.currencies.sorted()
        body.count(sorted.count)
        for c in sorted { body.string(c) }
        ledger.write(to: &body)

        var payload = ImageWriter(capacity: body.bytes.count + 4096)
        payload.u64(key.size)
        payload.i64(key.modified.seconds)
        payload.i64(key.modified.nanoseconds)
        payload.u64(key.digest.0)
        payload.u64(key.digest.1)
        payload.rawString(key.zone)
        payload.date(now)
        payload.int(facts.count)
        payload.optional(facts.latest) { $0.date($1) }
        payload.int(layout.head)
        payload.int(layout.tail)
        payload.count(body.table.count)
        for s in body.table { payload.rawString(s) }
        var bytes = magic
        var out = ImageWriter(capacity: payload.bytes.count + body.bytes.count + 64)
        out.u32(version)
        out.u64(UInt64(payload.bytes.count + body.bytes.count))
        var hash = ContentHash()
        hash.update(payload.bytes)
        hash.update(body.bytes)
        let d = hash.digest
        out.u64(d.0)
        out.u64(d.1)
        bytes += out.bytes
        bytes += payload.bytes
        bytes += body.bytes
        return bytes
    }

    /// Writes the snapshot of `book` beside the store, for the file just written (`digest` is its
    /// fingerprint). A cache: any failure leaves no snapshot, and is not an error.
    static func write(_ facts: Facts, ledger: Ledger, store: String, digest: (UInt64, UInt64), layout: PortfolioCodec.StoreLayout,
                      directory: String, zone: TimeZone, now: Date) {
        let path = path(in: directory)
        guard !ledger.damaged, let target = try? FileSystem.resolvingSymlink(store), let modified = modification(of: target) else {
            unlink(path)
            return
        }
        let key = Key(size: modified.size, modified: modified.time, digest: digest, zone: zone.identifier)
        let bytes = image(facts: facts, ledger: ledger, key: key, layout: layout, now: now)
        // Not flushed: a snapshot cut short by a crash fails its own fingerprint and is ignored. One
        // name for the temp file: only the writer holding the store's lock writes it.
        let temp = path + ".tmp"
        let fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            unlink(path)
            return
        }
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        close(fd)
        if written != bytes.count || rename(temp, path) != 0 {
            unlink(temp)
            unlink(path)
        }
    }

    /// Removes the snapshot (a write that could not make a new one: the old one no longer matches anyway).
    static func remove(in directory: String) { unlink(path(in: directory)) }

    /// The size and modification time of `path`, or `nil`.
    static func modification(of path: String) -> (size: UInt64, time: (seconds: Int64, nanoseconds: Int64))? {
        var st = stat()
        guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        return (UInt64(st.st_size), (Int64(st.st_mtim.tv_sec), Int64(st.st_mtim.tv_nsec)))
    }

    /// The file at `path` without its records (its first `layout.head` bytes and those from `layout.tail`
    /// on), when the whole file has the size and fingerprint of `key`; `nil` otherwise. The file is read
    /// once, in pieces (never whole in memory).
    /// With `keeping`, also the whole file's bytes.
    static func settings(of path: String, key: Key, layout: PortfolioCodec.StoreLayout, keeping: Bool) -> (settings: [UInt8], file: [UInt8]?)? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var hash = ContentHash()
        var settings: [UInt8] = []
        var file: [UInt8]?
        if keeping {
            file = []
            file?.reserveCapacity(Int(clamping: key.size))
        }
        var size = 0
        let chunk = 1 << 20
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: chunk, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let n = read(fd, buffer, chunk)
            if n < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if n == 0 { break }
            let piece = UnsafeRawBufferPointer(start: buffer, count: n)
            hash.update(piece)
            file?.append(contentsOf: piece)
            // The parts of this piece before `head` and from `tail` on.
            if size < layout.head { settings.append(contentsOf: piece[0..<min(n, layout.head - size)]) }
            if size + n > layout.tail { settings.append(contentsOf: piece[max(0, layout.tail - size)...]) }
            size += n
        }
        guard UInt64(size) == key.size, hash.digest == key.digest else { return nil }
        return (settings, file)
    }

    /// The snapshot beside `store`, when it stands for that very file as it is now, read in `zone` at
    /// `now`; `nil` otherwise (no snapshot, another file, a broken image: the caller reads the store).
    /// With `keepingFile`, the snapshot holds the store's bytes too (`file`).
    static func load(directory: String, store: String, zone: TimeZone, now: Date, keepingFile: Bool = false) -> Snapshot? {
        guard let bytes = try? FileSystem.read(path(in: directory), limit: PortfolioStore.readLimit),
              bytes.count > magic.count + 28, bytes.starts(with: magic),
              let target = try? FileSystem.resolvingSymlink(store), let modified = modification(of: target) else { return nil }
        do throws(ImageError) {
            var r = ImageReader(bytes, at: magic.count)
            guard try r.u32() == version else { return nil }
            let length = try r.u64()
            let expected = (try r.u64(), try r.u64())
            guard length == UInt64(bytes.count - r.at) else { return nil }
            var hash = ContentHash()
            bytes.withUnsafeBytes { hash.update(UnsafeRawBufferPointer(rebasing: $0[r.at...])) }
            guard hash.digest == expected else { return nil }
            let size = try r.u64()
            let modifiedAt = (try r.i64(), try r.i64())
            let fingerprint = (try r.u64(), try r.u64())
            let key = Key(size: size, modified: modifiedAt, digest: fingerprint, zone: try r.rawString())
            let madeAt = try r.date()
            let count = try r.int()
            let latest = try r.optional { r throws(ImageError) in try r.date() }
            let layout = PortfolioCodec.StoreLayout(head: try r.int(), tail: try r.int())
            // The cheap parts of the key first; the fingerprint reads the whole file.
            guard key.size == modified.size, key.modified == modified.time, key.zone == zone.identifier,
                  madeAt <= now, count >= 0, layout.head > 0, layout.head <= layout.tail, UInt64(layout.tail) <= key.size else { return nil }
            r.table = try r.array(each: 4) { r throws(ImageError) in try r.rawString() }
            let currencies = Set(try r.array(each: 4) { r throws(ImageError) in try r.string() })
            let ledger = try Ledger.read(from: &r)
            guard r.atEnd, let read = settings(of: target, key: key, layout: layout, keeping: keepingFile),
                  var book = try? PortfolioCodec.decode(read.settings, path: store), book.transactions.isEmpty else { return nil }
            book.omitted = OmittedTransactions(count: count, currencies: currencies)
            return Snapshot(book: book, ledger: ledger, facts: Facts(count: count, currencies: currencies, latest: latest), key: key, layout: layout,
                            file: read.file)
        } catch {
            return nil
        }
    }
}

/// What reports need of transactions a book read from a snapshot does not hold (`Book.omitted`).
public struct OmittedTransactions: Sendable, Equatable {
    /// How many there are.
    public var count: Int
    /// The currencies their money is in.
    public var currencies: Set<String>
}

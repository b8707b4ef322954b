import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What the replay of `portfolio.json` derived, kept beside it (`.portfolio.snapshot`) so that a
/// report need not read every record and replay them again.
///
/// It is a cache and nothing else: every write of the store (under its lock, after its check) writes
/// it anew, keyed to the exact file it was made from — its size, its modification time and a
/// fingerprint of its bytes (`ContentHash`) — to the zone its days were placed in and to the build
/// that made it. A reader uses it only when all of these match, the file broke no rule when it was
/// made, and the clock has not gone back since; otherwise (a hand edit, a `git checkout`, a copy, an
/// upgrade, a truncated or garbled snapshot) it reads `portfolio.json` as it always has, and a report
/// that did so leaves a snapshot for the reports (`PortfolioStore.refreshSnapshot`). `check` never
/// looks at it.
///
/// The image: a magic line, a version, the payload's length and fingerprint, then the payload — the
/// key, facts of the records, where they are in the file (the file without them is the book's
/// settings, read by the store's own codec), the ledger (`Ledger.write`) and the records' replay
/// order (`Listing`). It holds no record; one that would not be smaller than the file is not kept.
public struct Snapshot: Sendable {
    public static let fileName = ".portfolio.snapshot"
    static let magic = Array("bitpal-snapshot\n".utf8)
    /// Raised whenever the image changes: an image of another version is ignored.
    static let version: UInt32 = 2
    /// Which bitpal made it: the executable's size and modification time. A snapshot another build made
    /// is not used (an upgrade may replay differently), and the next write makes one anew.
    static let maker: String = {
        var st = stat()
        guard stat("/proc/self/exe", &st) == 0 else { return "bitpal" }
        return "\(st.st_size) \(st.st_mtim.tv_sec).\(st.st_mtim.tv_nsec)"
    }()

    /// The file a snapshot stands for.
    struct Key: Equatable {
        var size: UInt64
        var modified: (seconds: Int64, nanoseconds: Int64)
        var digest: (UInt64, UInt64)
        /// The zone the records dated by day were placed in.
        var zone: String
        /// The build that made it (`Snapshot.maker`).
        var maker = Snapshot.maker

        static func == (a: Key, b: Key) -> Bool {
            a.size == b.size && a.modified == b.modified && a.digest == b.digest && a.zone == b.zone && a.maker == b.maker
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
    /// Made by a write, so the file is exactly as bitpal writes it (one record a line, in its form): what
    /// `list --limit` and `append` need. A snapshot a read made stands for the file's figures only.
    var canonical: Bool
    /// The bytes of the store it stands for, when asked for (`PortfolioStore.append` copies them).
    var file: [UInt8]?
    /// The records in replay order, when asked for (`list`, `PortfolioStore.append`).
    var listing: Listing?

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
    static func image(facts: Facts, ledger: Ledger, listing: Listing, key: Key, layout: PortfolioCodec.StoreLayout, canonical: Bool,
                      now: Date) -> [UInt8] {
        var body = ImageWriter(capacity: 1 << 16)
        let sorted = facts.currencies.sorted()
        body.count(sorted.count)
        for c in sorted { body.string(c) }
        ledger.write(to: &body)
        // Last, so that a report stops before it.
        listing.write(to: &body)

        var payload = ImageWriter(capacity: body.bytes.count + 4096)
        payload.u64(key.size)
        payload.i64(key.modified.seconds)
        payload.i64(key.modified.nanoseconds)
        payload.u64(key.digest.0)
        payload.u64(key.digest.1)
        payload.rawString(key.zone)
        payload.rawString(key.maker)
        payload.date(now)
        payload.int(facts.count)
        payload.optional(facts.latest) { $0.date($1) }
        payload.int(layout.head)
        payload.int(layout.tail)
        payload.bool(canonical)
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
    static func write(_ facts: Facts, ledger: Ledger, listing: Listing, store: String, digest: (UInt64, UInt64), layout: PortfolioCodec.StoreLayout,
                      canonical: Bool = true, directory: String, zone: TimeZone, now: Date) {
        let path = path(in: directory)
        guard !ledger.damaged, let target = try? FileSystem.resolvingSymlink(store), let modified = modification(of: target) else {
            unlink(path)
            return
        }
        let key = Key(size: modified.size, modified: modified.time, digest: digest, zone: zone.identifier)
        write(image(facts: facts, ledger: ledger, listing: listing, key: key, layout: layout, canonical: canonical, now: now), to: path, within: key.size)
    }

    /// Writes `bytes` to `path` (renamed into place), unless they are not smaller than `limit`.
    private static func write(_ bytes: [UInt8], to path: String, within limit: UInt64) {
        // Never bigger than the file it stands for (lots and income of a book of tiny records could be).
        guard UInt64(bytes.count) < limit else {
            unlink(path)
            return
        }
        // Not flushed: a snapshot cut short by a crash fails its own fingerprint and is ignored. One
        // name for the temp file (only the writer holding the store's lock writes it), made anew.
        let temp = path + ".tmp"
        unlink(temp)
        let fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
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

    /// What the first part of an image says, its payload's fingerprint checked: the key, when it was
    /// made, the records' count, latest date and place in the file, whether a write made it, and a
    /// reader standing after all that; `nil` for anything else.
    static func header(_ bytes: [UInt8]) -> (reader: ImageReader, key: Key, madeAt: Date, count: Int, latest: Date?,
                                             layout: PortfolioCodec.StoreLayout, canonical: Bool)? {
        guard bytes.count > magic.count + 28, bytes.starts(with: magic) else { return nil }
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
            let key = Key(size: size, modified: modifiedAt, digest: fingerprint, zone: try r.rawString(), maker: try r.rawString())
            let madeAt = try r.date()
            let count = try r.int()
            let latest = try r.optional { r throws(ImageError) in try r.date() }
            let layout = PortfolioCodec.StoreLayout(head: try r.int(), tail: try r.int())
            let canonical = try r.bool()
            guard count >= 0, layout.head > 0, layout.head <= layout.tail, UInt64(layout.tail) <= key.size else { return nil }
            return (r, key, madeAt, count, latest, layout, canonical)
        } catch {
            return nil
        }
    }

    /// Whether the snapshot beside the store is one a write made, by this build, for the file whose
    /// fingerprint is `digest` (made in another zone, say): a report made elsewhere leaves it as it is.
    static func keepsWrite(in directory: String, digest: (UInt64, UInt64)) -> Bool {
        guard let bytes = try? FileSystem.read(path(in: directory), limit: PortfolioStore.readLimit), let h = header(bytes) else { return false }
        return h.canonical && h.key.maker == maker && h.key.digest == digest
    }

    /// The snapshot beside `store`, when it stands for that very file as it is now, read in `zone` at
    /// `now`; `nil` otherwise (no snapshot, another file, a broken image: the caller reads the store).
    /// With `keepingFile`, the snapshot holds the store's bytes too (`file`); with `listing`, the records' order (`listing`).
    static func load(directory: String, store: String, zone: TimeZone, now: Date, keepingFile: Bool = false, listing: Bool = false) -> Snapshot? {
        guard let bytes = try? FileSystem.read(path(in: directory), limit: PortfolioStore.readLimit), let h = header(bytes),
              let target = try? FileSystem.resolvingSymlink(store), let modified = modification(of: target) else { return nil }
        let (key, count, layout, canonical) = (h.key, h.count, h.layout, h.canonical)
        // The cheap parts of the key first; the fingerprint reads the whole file.
        guard key.size == modified.size, key.modified == modified.time, key.zone == zone.identifier, key.maker == maker,
              h.madeAt <= now, !listing || canonical else { return nil }
        // The image is read here while the store is fingerprinted on a second thread (the longer part).
        let (image, read) = Parallel.run({ () -> (currencies: Set<String>, ledger: Ledger, listing: Listing?)? in
            do throws(ImageError) {
                var r = h.reader
                r.table = try r.array(each: 4) { r throws(ImageError) in try r.rawString() }
                let currencies = Set(try r.array(each: 4) { r throws(ImageError) in try r.string() })
                let ledger = try Ledger.read(from: &r)
                let order = listing && canonical ? try Listing.read(from: &r, records: count) : nil
                return order == nil || r.atEnd ? (currencies, ledger, order) : nil
            } catch {
                return nil
            }
        }, alongside: { settings(of: target, key: key, layout: layout, keeping: keepingFile) })
        guard let image, let read, var book = try? PortfolioCodec.decode(read.settings, path: store), book.transactions.isEmpty,
              // Kept as this book keeps them (which portfolios track cash, each one's method).
              image.ledger.options.trackingCash == book.ledgerOptions.trackingCash, image.ledger.options.methods == book.ledgerOptions.methods
        else { return nil }
        book.omitted = OmittedTransactions(count: count, currencies: image.currencies)
        return Snapshot(book: book, ledger: image.ledger, facts: Facts(count: count, currencies: image.currencies, latest: h.latest), key: key,
                        layout: layout, canonical: canonical, file: read.file, listing: image.listing)
    }
}

/// What a snapshot of a book just read needs of the file it was read from (`PortfolioStore.loadKeyed`).
public struct SnapshotSource: Sendable {
    var key: Snapshot.Key
    var layout: PortfolioCodec.StoreLayout
}

/// What reports need of transactions a book read from a snapshot does not hold (`Book.omitted`).
public struct OmittedTransactions: Sendable, Equatable {
    /// How many there are.
    public var count: Int
    /// The currencies their money is in.
    public var currencies: Set<String>
}

/// The records in replay order as `list` walks them (newest first), kept in the snapshot apart from the
/// ledger and read only by `list`: where each record is in the file, which records make one line, and
/// how many lines each set of portfolios has (the "20 of 5000" a limited listing counts).
struct Listing: Sendable, Equatable {
    /// Per replay position: the record's place in the file.
    var order: [UInt32] = []
    /// Per replay position: the replay position of the other leg of its line (a swap, a move, a cash
    /// transfer or exchange: not a saving plan's deposit and buy, which are two lines), or -1.
    var partner: [Int32] = []
    /// Lines by the portfolios of their legs (sorted, each once).
    var lines: [[String]: Int] = [:]

    init() {}

    init(_ transactions: [Transaction]) {
        append(transactions)
    }

    /// Goes on with `legs`, records after those of the listing, each later in the replay than every one
    /// of them. `false` (the listing unchanged) when a leg is linked to a record outside `legs`.
    @discardableResult
    mutating func append(_ legs: [Transaction]) -> Bool {
        let base = order.count
        var groups: [UUID: [Int]] = [:]
        for (i, t) in legs.enumerated() { if let link = t.linkedId { groups[link, default: []].append(i) } }
        let order = Ledger.chronologicalIndices(legs)
        var position = [Int](repeating: 0, count: legs.count)
        for (p, i) in order.enumerated() { position[i] = p }
        var partner = [Int32](repeating: -1, count: legs.count)
        for (p, i) in order.enumerated() {
            guard let link = legs[i].linkedId, let group = groups[link] else { continue }
            // A link to a record already stored: only a whole listing can place it.
            if base > 0 && group.count < 2 { return false }
            if group.count == 2, LinkKind.of(legs[group[0]], legs[group[1]])?.name != LinkKind.savingPlan {
                partner[p] = Int32(base + position[group[0] == i ? group[1] : group[0]])
            }
        }
        // Counted by the portfolios of a line's legs: few, so found by comparing (no hashing per record).
        var singles: [(name: String, count: Int)] = []
        var pairs: [(names: [String], count: Int)] = []
        for (p, i) in order.enumerated() where partner[p] < 0 || Int(partner[p]) - base < p {
            let a = legs[i].portfolio
            let b = partner[p] >= 0 ? legs[order[Int(partner[p]) - base]].portfolio : a
            if a == b {
                if let k = singles.firstIndex(where: { $0.name == a }) { singles[k].count += 1 } else { singles.append((a, 1)) }
            } else {
                let names = a < b ? [a, b] : [b, a]
                if let k = pairs.firstIndex(where: { $0.names == names }) { pairs[k].count += 1 } else { pairs.append((names, 1)) }
            }
        }
        var lines = self.lines
        for (name, n) in singles { lines[[name], default: 0] += n }
        for (names, n) in pairs { lines[names, default: 0] += n }
        self.order += order.map { UInt32(base + $0) }
        self.partner += partner
        self.lines = lines
        return true
    }

    /// How many lines have a leg in one of `portfolios`.
    func count(in portfolios: Set<String>) -> Int {
        lines.reduce(0) { sum, entry in entry.key.contains(where: portfolios.contains) ? sum + entry.value : sum }
    }

    func write(to w: inout ImageWriter) {
        w.count(order.count)
        for (i, p) in zip(order, partner) {
            w.u32(i)
            w.u32(UInt32(bitPattern: p))
        }
        let sorted = lines.sorted { $0.key.lexicographicallyPrecedes($1.key) }
        w.count(sorted.count)
        for (names, n) in sorted {
            w.count(names.count)
            for name in names { w.string(name) }
            w.int(n)
        }
    }

    static func read(from r: inout ImageReader, records: Int) throws(ImageError) -> Listing {
        var listing = Listing()
        let n = try r.count(each: 8)
        guard n == records else { throw ImageError() }
        listing.order.reserveCapacity(n)
        listing.partner.reserveCapacity(n)
        for _ in 0..<n {
            let i = try r.u32(), p = Int32(bitPattern: try r.u32())
            guard Int(i) < n, p >= -1, Int(p) < n else { throw ImageError() }
            listing.order.append(i)
            listing.partner.append(p)
        }
        let sets = try r.count(each: 12)
        for _ in 0..<sets {
            let names = try r.array(each: 4) { r throws(ImageError) in try r.string() }
            listing.lines[names] = try r.int()
        }
        return listing
    }
}

extension Snapshot {
    /// The newest `limit` lines of `list` with a leg in `portfolios`, newest first (a line's legs in file
    /// order, as `list` groups them), and how many lines have a leg there; `nil` when this snapshot was
    /// not read with its listing and the file's bytes, or a record cannot be read (the caller reads the file).
    /// Only the records shown (and those of other portfolios passed on the way) are read.
    public func latestLines(_ limit: Int, in portfolios: Set<String>, zone: TimeZone) -> (lines: [[Transaction]], total: Int)? {
        guard let listing, let file, layout.tail <= file.count else { return nil }
        // Where each record's line starts: one record a line, after "\n    ".
        var starts: [Int] = []
        starts.reserveCapacity(listing.order.count + 1)
        let found: Bool = file.withUnsafeBytes { all in
            guard let base = all.baseAddress else { return false }
            var at = layout.head
            while at < layout.tail, let hit = memchr(base + at, 0x0A, layout.tail - at) {
                let offset = UnsafeRawPointer(hit) - base
                starts.append(offset + 1)
                at = offset + 1
            }
            return true
        }
        // The records end where the array's closing line begins (`layout.tail`).
        guard found, starts.count == listing.order.count else { return nil }
        func record(_ index: Int) -> Transaction? {
            var end = index + 1 < starts.count ? starts[index + 1] - 1 : layout.tail
            if end > starts[index], file[end - 1] == UInt8(ascii: ",") { end -= 1 }
            var r = JSONReader(bytes: Array(file[starts[index]..<end]))
            return try? PortfolioCodec.readTransaction(&r, version: Book.formatVersion)
        }
        var lines: [[Transaction]] = []
        var position = listing.order.count - 1
        // No further than the lines there are (a portfolio's few lines among the oldest of many).
        let wanted = min(limit, listing.count(in: portfolios))
        while lines.count < wanted && position >= 0 {
            defer { position -= 1 }
            let other = Int(listing.partner[position])
            if other > position { continue }  // shown with its later leg
            var indices = [Int(listing.order[position])]
            if other >= 0 { indices.append(Int(listing.order[other])) }
            indices.sort()
            var legs: [Transaction] = []
            for i in indices {
                guard let t = record(i) else { return nil }
                legs.append(t)
            }
            guard legs.contains(where: { portfolios.contains($0.portfolio) }) else { continue }
            legs.placeDays(in: zone)
            lines.append(legs)
        }
        return (lines, listing.count(in: portfolios))
    }
}

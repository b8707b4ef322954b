import Foundation

/// Reads and writes `portfolio.json`.
///
/// Version 2 is pretty-printed JSON with a fixed key order: `{"format", "version",
/// "defaultPortfolio", "portfolios", "assets", "fxRates", "plans", "savingPlans", "alerts", "transactions",
/// "watchlist", "manualPrices"}` (`fxRates`, `plans`, `savingPlans` and `alerts` only when there are some),
/// then every top-level key a newer bitpal wrote, kept unchanged. One record per line, so a
/// change is a one-line diff. Every decimal is a JSON **string** holding its exact digits, and
/// every date is ISO 8601 UTC. Transaction records follow `TransactionField` (null keys left
/// out); every other record follows its table (`Portfolio.fields`, `Asset.fields`…, see `RecordFields`).
/// Version 1 files (`coinId`, `pricePerCoin`, one portfolio, USD) are read as they are. One pass over the bytes.
public enum PortfolioCodec {
    public static let formatName = "bitpal-portfolio"

    public static func encode(_ p: Book) -> [UInt8] {
        var w = JSONWriter(capacity: 4096 + p.transactions.count * 250)
        writeHead(p, to: &w)
        for t in p.transactions { writeTransactionLine(t, to: &w) }
        writeTail(p, to: &w)
        return w.bytes
    }

    /// The same bytes as `encode(p)`, handed to `emit` in pieces; with `reusing` (the records of the file
    /// `p` was read from), the lines of unchanged records are handed on straight from that file's bytes
    /// instead of being encoded again (see `StoredRecords`).
    ///
    /// Returns where the records are: the file without the bytes between `head` and `tail` is the same
    /// document with no transactions (what a snapshot reads the settings from).
    @discardableResult
    public static func encode<E: Error>(_ p: Book, reusing stored: StoredRecords?,
                                        emit: (UnsafeBufferPointer<UInt8>) throws(E) -> Void) throws(E) -> StoreLayout {
        var emitted = 0
        func send(_ piece: UnsafeBufferPointer<UInt8>) throws(E) {
            emitted += piece.count
            try emit(piece)
        }
        var w = JSONWriter(capacity: 4096 + (stored == nil ? p.transactions.count * 250 : 1 << 20))
        writeHead(p, to: &w)
        let head = w.bytes.count
        if let stored, p.readVersion == Book.formatVersion {
            try stored.write(p.transactions, to: &w, emit: send)
        } else {
            for t in p.transactions {
                writeTransactionLine(t, to: &w)
                if w.bytes.count >= 1 << 20 { try w.drain(send) }
            }
        }
        let tail = emitted + w.bytes.count
        writeTail(p, to: &w)
        try w.drain(send)
        return StoreLayout(head: head, tail: tail)
    }

    /// Where a written store's records are: its first `head` bytes end with the `[` of the transactions,
    /// and from `tail` on comes the `]` that closes them and the rest of the document.
    public struct StoreLayout: Sendable, Equatable {
        public var head: Int
        public var tail: Int
    }

    /// Everything before the first transaction record.
    static func writeHead(_ p: Book, to w: inout JSONWriter) {
        w.beginObject()
        w.key("format"); w.string(formatName)
        w.key("version"); w.number(String(Book.formatVersion))
        w.key("defaultPortfolio"); w.string(p.defaultPortfolio)
        Portfolio.fields.write(p.portfolios, key: "portfolios", to: &w)
        Asset.fields.write(p.assets, key: "assets", to: &w)
        // Before the transactions, so that reading the settings (to resolve a command's arguments) has them.
        if !p.fxRates.isEmpty { FXRate.fields.write(p.fxRates, key: "fxRates", to: &w) }
        if !p.plans.isEmpty { InvestmentPlan.fields.write(p.plans, key: "plans", to: &w) }
        if !p.savingPlans.isEmpty { SavingPlan.fields.write(p.savingPlans, key: "savingPlans", to: &w) }
        if !p.alerts.isEmpty { PriceAlert.fields.write(p.alerts, key: "alerts", to: &w) }
        w.key("transactions")
        w.beginArray()
    }

    /// Everything after the last transaction record.
    static func writeTail(_ p: Book, to w: inout JSONWriter) {
        w.endArray()
        WatchEntry.fields.write(p.watchlist, key: "watchlist", to: &w)
        Quote.manualPriceFields.write(p.manualPrices, key: "manualPrices", to: &w)
        for (key, json) in p.unknownKeys {
            w.key(key)
            w.rawJSON(json)
        }
        w.endObject()
        w.finish()
    }

    // The tables' readers and writers under the names the export and its import (`TransactionImport`) call.

    public static func writePortfolio(_ f: Portfolio, to w: inout JSONWriter) { Portfolio.fields.write(f, to: &w) }
    public static func writeAsset(_ a: Asset, to w: inout JSONWriter) { Asset.fields.write(a, to: &w) }
    public static func writeManualPrice(_ q: Quote, to w: inout JSONWriter) { Quote.manualPriceFields.write(q, to: &w) }
    static func writeRate(_ r: FXRate, to w: inout JSONWriter) { FXRate.fields.write(r, to: &w) }
    static func writePlan(_ p: InvestmentPlan, to w: inout JSONWriter) { InvestmentPlan.fields.write(p, to: &w) }
    static func writeWatchEntry(_ e: WatchEntry, to w: inout JSONWriter) { WatchEntry.fields.write(e, to: &w) }
    static func readPortfolio(_ r: inout JSONReader) throws(JSONReadError) -> Portfolio { try Portfolio.fields.read(&r) }
    static func readAsset(_ r: inout JSONReader) throws(JSONReadError) -> Asset { try Asset.fields.read(&r) }
    static func readManualPrice(_ r: inout JSONReader) throws(JSONReadError) -> Quote { try Quote.manualPriceFields.read(&r) }
    static func readRate(_ r: inout JSONReader) throws(JSONReadError) -> FXRate { try FXRate.fields.read(&r) }
    static func readPlan(_ r: inout JSONReader) throws(JSONReadError) -> InvestmentPlan { try InvestmentPlan.fields.read(&r) }
    static func readWatchEntry(_ r: inout JSONReader) throws(JSONReadError) -> WatchEntry { try WatchEntry.fields.read(&r) }

    /// Writes one transaction on one line, as the store keeps it: the fields of `TransactionField`
    /// in order, null ones left out.
    static func writeTransactionLine(_ t: Transaction, to w: inout JSONWriter) {
        w.prepareValue()
        var first = true
        for (i, f) in TransactionField.allCases.enumerated() where !f.isNull(in: t) {
            let chunk = TransactionField.keyChunks[i]
            w.withBytes { $0.append(contentsOf: first ? chunk.first : chunk.next) }
            first = false
            f.appendJSON(t, to: &w)
        }
        w.withBytes { $0.append(UInt8(ascii: "}")) }
        w.markValueWritten()
    }

    /// Writes one transaction object with every field, nulls included (`list --json`, exports).
    public static func writeTransaction(_ t: Transaction, to w: inout JSONWriter, inline: Bool = false) {
        if inline { w.beginInlineObject() } else { w.beginObject() }
        for f in TransactionField.order {
            w.key(f.name)
            f.write(t, to: &w)
        }
        w.endObject()
    }

    /// Parses a whole document.
    ///
    /// - Throws: `StoreError` with `.malformed` (naming the line) or `.unsupportedVersion`.
    public static func decode(_ bytes: [UInt8], path: String) throws(StoreError) -> Book {
        try decode(ByteBuffer(copying: bytes), path: path)
    }

    /// Parses a whole document in place; with `settingsOnly`, stops at the transactions (the
    /// portfolios and assets come first in every file bitpal writes), for commands that need only those.
    ///
    /// With `releasingConsumed`, the memory of a large buffer is handed back to the system as the
    /// records are read (its bytes read as zeros afterwards): for a buffer read for this call alone.
    ///
    /// Records dated a calendar day count from that day's first instant in `timeZone`.
    ///
    /// `records` is told where the transactions are (`StoreLayout`), when the document has them.
    public static func decode(_ buffer: ByteBuffer, path: String, settingsOnly: Bool = false, releasingConsumed: Bool = false,
                              timeZone: TimeZone = .current, records: (StoreLayout) -> Void = { _ in }) throws(StoreError) -> Book {
        var none: [(start: UInt32, count: UInt32)]?
        return try decodeDocument(buffer, path: path, settingsOnly: settingsOnly, spans: &none, timeZone: timeZone,
                                  releasing: releasingConsumed ? (minimumBytes: 64 << 20, everyRecords: 32_768) : nil, records: records).book
    }

    /// Parses a whole document and keeps, for a later `encode(_:reusing:)`, the lines of its records
    /// that are in the writer's form (none for a version-1 file, which a write migrates whole).
    public static func decodeKeepingRecords(_ buffer: ByteBuffer, path: String,
                                            timeZone: TimeZone = .current) throws(StoreError) -> (book: Book, records: StoredRecords?) {
        var spans: [(start: UInt32, count: UInt32)]? = []
        let book = try decodeDocument(buffer, path: path, settingsOnly: false, spans: &spans, timeZone: timeZone).book
        guard book.readVersion == Book.formatVersion, let spans, spans.count == book.transactions.count else { return (book, nil) }
        return (book, StoredRecords(buffer: buffer, transactions: book.transactions, spans: spans))
    }

    /// The settings of a document of which `prefix` holds the start: the book when the reader met the
    /// transactions within it (so the rest of the file cannot change the result), else `nil`.
    static func decodeSettings(prefix: ByteBuffer, path: String) -> Book? {
        guard let (book, stopped) = try? decodeDocument(prefix, path: path, settingsOnly: true), stopped else { return nil }
        return book
    }

    /// `decode`, and whether it stopped at the transactions (`settingsOnly`).
    static func decodeDocument(_ buffer: ByteBuffer, path: String, settingsOnly: Bool) throws(StoreError) -> (book: Book, stopped: Bool) {
        var none: [(start: UInt32, count: UInt32)]?
        return try decodeDocument(buffer, path: path, settingsOnly: settingsOnly, spans: &none)
    }

    /// With `spans`, also notes where each record's line is when it is in the writer's form (see `StoredRecords`).
    ///
    /// With `parallel` (the default), a large transaction array is read on two threads; the result and
    /// any error are the same as reading it on one. `splitNear` chooses where the second thread starts (tests).
    static func decodeDocument(_ buffer: ByteBuffer, path: String, settingsOnly: Bool,
                               spans: inout [(start: UInt32, count: UInt32)]?, timeZone: TimeZone = .current,
                               releasing: (minimumBytes: Int, everyRecords: Int)? = nil,
                               parallel: Bool = true, splitNear: Int? = nil,
                               records: (StoreLayout) -> Void = { _ in }) throws(StoreError) -> (book: Book, stopped: Bool) {
        var r = JSONReader(buffer: buffer)
        do {
            var p = Book(portfolios: [])
            var version: Int?
            var defaultPortfolio: String?
            var sawPortfolios = false
            try r.beginObject()
            var stopped = false
            reading: while let key = try r.nextKey() {
                switch key {
                case "transactions" where settingsOnly && version != nil:
                    stopped = true
                    break reading
                case "version":
                    let v = try r.readInt()
                    if v > Book.formatVersion {
                        throw StoreError(path: path, reason: .unsupportedVersion(v, highestSupported: Book.formatVersion))
                    }
                    if v < 1 { throw r.error("unknown version \(v)") }
                    version = v
                case "format":
                    let f = try r.readString()
                    if f != formatName { throw r.error("this is not a bitpal portfolio (format '\(TextEscaping.escaped(f))')") }
                case "baseCurrency" where version == 1:
                    let c = try r.readString()
                    if c != "USD" { throw r.error("base currency '\(TextEscaping.escaped(c))' is not supported in a version 1 file") }
                case "defaultPortfolio":
                    defaultPortfolio = try r.readString()
                case "portfolios":
                    sawPortfolios = true
                    p.portfolios += try Portfolio.fields.readArray(&r)
                case "assets":
                    p.assets += try Asset.fields.readArray(&r)
                case "transactions":
                    p.transactions.reserveCapacity(buffer.count / 170)
                    try r.beginArray()
                    let head = r.mark
                    defer {
                        // Where the array's `]` is: just before where the reader stands after it.
                        if r.mark > head, buffer.base[r.mark - 1] == UInt8(ascii: "]") { records(StoreLayout(head: head, tail: r.mark - 1)) }
                    }
                    // The version comes first in every file bitpal writes; a hand-made file without it reads as version 2.
                    let v = version ?? Book.formatVersion
                    var strings = InternedStrings()
                    let keeping = spans != nil && v == Book.formatVersion && buffer.count <= Int(UInt32.max)
                    // A large array's second half is read on a second thread (see `SecondHalf`).
                    var second = parallel ? SecondHalf.start(buffer, after: r.mark, near: splitNear, version: v, keepingSpans: keeping) : nil
                    defer { second?.pending.wait() }
                    if keeping {
                        var kept: [(start: UInt32, count: UInt32)] = []
                        kept.reserveCapacity(buffer.count / 170)
                        while try r.nextElement() {
                            r.skipSpace()
                            if let half = second, r.mark >= half.start {
                                second = nil
                                if let read = half.taken(at: r.mark) {
                                    p.transactions.append(contentsOf: read.records)
                                    kept.append(contentsOf: read.spans)
                                    r.rewind(to: read.end)
                                    continue
                                }
                            }
                            let start = r.mark
                            var canonical = false
                            if let t = readTransactionLine(&r, version: v, checking: true, canonical: &canonical, strings: &strings) {
                                p.transactions.append(t)
                                kept.append(canonical ? (UInt32(start), UInt32(r.mark - start)) : (0, 0))
                            } else {
                                p.transactions.append(try readTransaction(&r, version: v, strings: &strings))
                                kept.append((0, 0))
                            }
                        }
                        spans = kept
                    } else {
                        spans = nil
                        // A large file read for this alone gives its memory back as it goes (the peak is then
                        // about the file or the records, not both).
                        let every = releasing.map { buffer.count >= $0.minimumBytes ? max(1, $0.everyRecords) : 0 } ?? 0
                        while try r.nextElement() {
                            if let half = second {
                                r.skipSpace()
                                if r.mark >= half.start {
                                    second = nil
                                    if let read = half.taken(at: r.mark) {
                                        r.rewind(to: read.end)
                                        // The bytes read on the other thread are no longer needed either.
                                        if every > 0 { r.releaseConsumed(before: read.end) }
                                        p.transactions.append(contentsOf: read.records)
                                        continue
                                    }
                                }
                            }
                            p.transactions.append(try readTransaction(&r, version: v, strings: &strings))
                            if every > 0 && p.transactions.count % every == 0 { r.releaseConsumed(before: r.mark) }
                        }
                    }
                case "watchlist": p.watchlist += try WatchEntry.fields.readArray(&r)
                case "manualPrices": p.manualPrices += try Quote.manualPriceFields.readArray(&r)
                case "fxRates": p.fxRates += try FXRate.fields.readArray(&r)
                case "plans": p.plans += try InvestmentPlan.fields.readArray(&r)
                case "savingPlans": p.savingPlans += try SavingPlan.fields.readArray(&r)
                case "alerts": p.alerts += try PriceAlert.fields.readArray(&r)
                default:
                    r.skipSpace()
                    let start = r.mark
                    try r.skipValue()
                    p.unknownKeys.append((key, Array(UnsafeBufferPointer(start: buffer.base + start, count: r.mark - start))))
                }
            }
            if !stopped { try r.finish() }
            // Plans are found by name (any case) and alerts by id: two of one name or id would be ambiguous.
            for (what, keys) in [("plans are named", p.plans.map { $0.name.lowercased() }), ("saving plans are named", p.savingPlans.map { $0.name.lowercased() }),
                                 ("alerts have the id", p.alerts.map { String($0.id) })] {
                var seen = Set<String>()
                for k in keys where !seen.insert(k).inserted {
                    throw JSONReadError(message: "two \(what) '\(TextEscaping.escaped(k))'", line: 1, column: 1)
                }
            }
            guard let version else { throw JSONReadError(message: "no \"version\" field", line: 1, column: 1) }
            p.readVersion = version
            if version == 1 {
                // Version 1 kept one portfolio; a key it did not know (added by hand) is kept like any other.
                p.portfolios = [Portfolio(name: Portfolio.mainName)]
                p.defaultPortfolio = Portfolio.mainName
            } else {
                guard sawPortfolios, !p.portfolios.isEmpty else { throw JSONReadError(message: "no portfolios: a file of version 2 or later names at least one", line: 1, column: 1) }
                let name = defaultPortfolio ?? p.portfolios[0].name
                guard let found = p.portfolio(named: name) else {
                    throw JSONReadError(message: "the default portfolio '\(TextEscaping.escaped(name))' is not among the portfolios", line: 1, column: 1)
                }
                p.defaultPortfolio = found.name
            }
            p.transactions.placeDays(in: timeZone)
            return (p, stopped)
        } catch {
            throw StoreError.reading(path, error)
        }
    }

    /// Reads one transaction object with its keys in any order and any layout.
    ///
    /// A record on one line as the store writes it (`{"id": …, "portfolio": …}`: known keys, `": "`
    /// and `", "` between them) is read in one pass without the general reader's bookkeeping; anything
    /// else — another layout, an unknown key, an error — is read again by the general reader, which
    /// reports errors precisely. Both read the fields through `TransactionField`.
    public static func readTransaction(_ r: inout JSONReader, version: Int = Book.formatVersion) throws(JSONReadError) -> Transaction {
        var strings = InternedStrings()
        return try readTransaction(&r, version: version, strings: &strings)
    }

    /// `readTransaction`, with `strings` kept from one record to the next.
    static func readTransaction(_ r: inout JSONReader, version: Int, strings: inout InternedStrings) throws(JSONReadError) -> Transaction {
        var canonical = false
        if let t = readTransactionLine(&r, version: version, checking: false, canonical: &canonical, strings: &strings) { return t }
        var d = TransactionDraft()
        try r.beginObject()
        while let k = try r.nextKeyBytes() {
            if let field = TransactionField.key(k) { try field.read(&r, into: &d) } else { try r.skipValue() }
        }
        switch d.build(version: version) {
        case let .success(t): return t
        case let .failure(missing): throw r.error("a transaction needs " + missing.names.joined(separator: ", "))
        }
    }

    /// The one-line fast path of `readTransaction`; `nil` (at the same position) when the record is laid out otherwise.
    static func readTransactionLine(_ r: inout JSONReader, version: Int) -> Transaction? {
        var canonical = false
        return readTransactionLine(&r, version: version, checking: false, canonical: &canonical)
    }

    /// With `checking`, also sets `canonical`: whether the line is exactly what `writeTransactionLine`
    /// writes for the record read (its fields in order under their own names, none null, each value
    /// spelled as the writer spells it).
    @inline(__always)
    static func readTransactionLine(_ r: inout JSONReader, version: Int, checking: Bool, canonical: inout Bool) -> Transaction? {
        var strings = InternedStrings()
        return readTransactionLine(&r, version: version, checking: checking, canonical: &canonical, strings: &strings)
    }

    /// The one-line reader, with `strings` kept from one record to the next.
    @inline(__always)
    static func readTransactionLine(_ r: inout JSONReader, version: Int, checking: Bool, canonical: inout Bool,
                                    strings: inout InternedStrings) -> Transaction? {
        r.skipSpace()
        let start = r.mark
        guard r.consume("{") else { return nil }
        var d = TransactionDraft()
        var inOrder = checking
        var lastBit: UInt16 = 0
        // Keys come in the field order: try the next fields' `"name": ` first, one comparison each.
        var nextKey = 0
        let keys = TransactionField.quotedKeys
        let fields = TransactionField.allCases
        while true {
            let keyStart = r.mark
            var found: TransactionField?
            while nextKey < keys.count {
                let k = nextKey
                nextKey += 1
                if keys[k].withUnsafeBufferPointer({ r.consume(bytes: $0) }) {
                    found = fields[k]
                    break
                }
            }
            if found == nil {
                nextKey = keys.count
                guard let k = try? r.readRawStringBytes(), r.consume(": "), let field = TransactionField.key(k) else {
                    r.rewind(to: start)
                    return nil
                }
                found = field
            }
            guard let field = found else {
                r.rewind(to: start)
                return nil
            }
            let valueStart = r.mark
            guard (try? field.readPlain(&r, into: &d, strings: &strings)) != nil else {
                r.rewind(to: start)
                return nil
            }
            if inOrder {
                inOrder = field.bit > lastBit && valueStart - keyStart == field.name.utf8.count + 4
                    && CanonicalText.isCanonical(field, value: r.bytes(from: valueStart, to: r.mark))
                lastBit = field.bit
            }
            if r.consume(", ") { continue }
            if r.consume("}") { break }
            r.rewind(to: start)
            return nil
        }
        guard case let .success(t) = d.build(version: version) else {
            r.rewind(to: start)
            return nil
        }
        canonical = inOrder && d.seen & TransactionField.portfolio.bit != 0
        return t
    }

    static func readFixed(_ r: inout JSONReader) throws(JSONReadError) -> Fixed18 {
        let raw = try r.readRawStringBytes()
        guard let value = Fixed18.parse(utf8: raw) else {
            throw r.error("'\(String(decoding: raw, as: UTF8.self))' is not a plain decimal string")
        }
        return value
    }

    static func readDecimal(_ r: inout JSONReader) throws(JSONReadError) -> Decimal {
        let raw = try r.readRawStringBytes()
        guard let lit = DecimalLiteral.parse(utf8: raw) else {
            throw r.error("'\(String(decoding: raw, as: UTF8.self))' is not a plain decimal string")
        }
        return lit.value
    }

    /// A record's date: `YYYY-MM-DD` is a calendar day (returned with its UTC midnight, to be placed in
    /// the reader's zone by `Book.placeDays`), anything else an instant as `readDate` reads it.
    static func readRecordDate(_ r: inout JSONReader) throws(JSONReadError) -> (Date, Int64?) {
        let mark = r.mark
        let raw = try r.readRawStringBytes()
        guard raw.count == 10 else {
            r.rewind(to: mark)
            return (try readDate(&r), nil)
        }
        guard let (y, m, d) = ISODate.parseDay(utf8: raw) else {
            throw r.error("'\(TextEscaping.escaped(String(decoding: raw, as: UTF8.self)))' is not a day (YYYY-MM-DD) or an ISO 8601 time")
        }
        let n = ISODate.days(fromCivil: y, m, d)
        guard (ISODate.minMillis / 86_400_000...ISODate.maxMillis / 86_400_000).contains(n) else {
            throw r.error("'\(ISODate.dayText(n))' is outside the dates bitpal keeps (\(ISODate.rangeText))")
        }
        return (ISODate.date(millis: n * 86_400_000), n)
    }

    static func readDate(_ r: inout JSONReader) throws(JSONReadError) -> Date {
        let raw = try r.readRawStringBytes()
        if let d = ISODate.parseTimestamp(utf8: raw) { return d }
        let text = TextEscaping.escaped(String(decoding: raw, as: UTF8.self))
        if ISODate.parseTimestampMillis(utf8: raw) != nil {
            throw r.error("'\(text)' is outside the dates bitpal keeps (\(ISODate.rangeText))")
        }
        throw r.error("'\(text)' is not an ISO 8601 time")
    }
}

/// The second half of a large transaction array, read on a second thread while the first half is read
/// on the calling one.
///
/// The second thread starts at a line break near the middle of what follows the array's start, at a line
/// that opens an object, and reads records laid out as the store writes them (one per line, by the
/// one-line reader) up to the array's closing bracket; anything else (an escape, another layout, a
/// record the one-line reader refuses, the end of the array elsewhere) and it gives up. Its records are
/// taken only when the calling thread's reader, record by record, arrives exactly at that line: then
/// the line starts an element of this very array, and reading on from it one record after another is
/// what the second thread did. Otherwise the calling thread just reads on, so every error is found, and
/// worded, by the one-thread reader, with its line.
struct SecondHalf: Sendable {
    struct Read: Sendable {
        var records: [Transaction]
        /// As `decodeDocument` keeps them (empty unless asked for).
        var spans: [(start: UInt32, count: UInt32)]
        /// Where the closing bracket of the array is.
        var end: Int
    }

    /// Where the second thread started: an element's first byte.
    let start: Int
    let pending: Parallel.Pending<Read?>

    /// Gives the buffer to the other thread, which only reads it; neither thread writes it while both run.
    private struct Shared: @unchecked Sendable { let buffer: ByteBuffer }

    /// Starts reading after the middle of what follows `from` (or after `near`), when enough follows to be worth a thread.
    static func start(_ buffer: ByteBuffer, after from: Int, near: Int? = nil, version: Int, keepingSpans: Bool) -> SecondHalf? {
        let remaining = buffer.count - from
        guard remaining >= Parallel.minimumRecords * 200 else { return nil }
        let base = buffer.base
        var i = max(from, min(near ?? (from + remaining / 2), buffer.count))
        let limit = min(buffer.count, i + (1 << 16))
        while i < limit && base[i] != 0x0A { i += 1 }
        while i < limit && (base[i] == 0x0A || base[i] == 0x20 || base[i] == 0x09 || base[i] == 0x0D) { i += 1 }
        guard i < limit, base[i] == UInt8(ascii: "{") else { return nil }
        let shared = Shared(buffer: buffer), at = i
        return SecondHalf(start: at, pending: Parallel.Pending { read(shared.buffer, from: at, version: version, keepingSpans: keepingSpans) })
    }

    /// The records from `from` to the array's end, each read by the one-line reader; `nil` at anything else.
    private static func read(_ buffer: ByteBuffer, from: Int, version: Int, keepingSpans: Bool) -> Read? {
        var r = JSONReader(sharing: buffer, at: from)
        var strings = InternedStrings()
        var records: [Transaction] = []
        records.reserveCapacity((buffer.count - from) / 170)
        var spans: [(start: UInt32, count: UInt32)] = []
        if keepingSpans { spans.reserveCapacity((buffer.count - from) / 170) }
        while true {
            r.skipSpace()
            let start = r.mark
            var canonical = false
            guard let t = PortfolioCodec.readTransactionLine(&r, version: version, checking: keepingSpans, canonical: &canonical,
                                                             strings: &strings) else { return nil }
            records.append(t)
            if keepingSpans { spans.append(canonical ? (UInt32(start), UInt32(r.mark - start)) : (0, 0)) }
            r.skipSpace()
            if r.consume(",") { continue }
            return r.peek() == UInt8(ascii: "]") ? Read(records: records, spans: spans, end: r.mark) : nil
        }
    }

    /// What the second thread read, when the calling thread's reader is at `mark`, an element's start,
    /// and that is where the second thread started; waits for it. `nil` when it is not, or it gave up.
    func taken(at mark: Int) -> Read? {
        guard mark == start else {
            pending.wait()
            return nil
        }
        return pending.value()
    }
}

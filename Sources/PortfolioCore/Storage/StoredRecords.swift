import Foundation

/// The transaction records of a version-2 file as it was read, with the bytes of each line that
/// is exactly what the writer would write for it: a write copies those lines of unchanged records
/// instead of encoding them again, and so writes the very bytes a full encoding writes.
///
/// A line qualifies when the one-line reader read it and it is in the writer's form: the fields in
/// `TransactionField` order under their own names, none null, the portfolio given, ids in lower
/// case, strings without escapes, numbers and dates as the writer spells them. Any other line (a
/// hand edit, another layout, a version-1 file) is encoded again, as is every record that differs
/// from the one read in any stored byte.
public struct StoredRecords: @unchecked Sendable {
    /// The file as read (immutable once read; kept alive for the spans).
    let buffer: ByteBuffer
    /// The records as read, in file order.
    let transactions: [Transaction]
    /// Per record, where its line starts in `buffer` and how long it is; length 0 when it must be encoded again.
    let spans: [(start: UInt32, count: UInt32)]

    init(buffer: ByteBuffer, transactions: [Transaction], spans: [(start: UInt32, count: UInt32)]) {
        self.buffer = buffer
        self.transactions = transactions
        self.spans = spans
    }

    /// How many records can be copied as they are (for tests).
    public var reusableCount: Int { spans.count { $0.count > 0 } }

    /// Writes `records` as the array elements of the open `transactions` array, handing every byte to
    /// `emit` in order: the stored line of each record that is the same as the one read (consecutive
    /// lines in one piece, straight from the file's bytes, when the file separates them as the writer
    /// does), the encoding of every other.
    ///
    /// Records are matched to those read by position, following deletions and insertions by id;
    /// whichever is matched, a line is copied only when every stored field is byte for byte the same.
    func write<E: Error>(_ records: [Transaction], to w: inout JSONWriter, emit: (UnsafeBufferPointer<UInt8>) throws(E) -> Void) throws(E) {
        try records.withUnsafeBufferPointer { new throws(E) in
            try transactions.withUnsafeBufferPointer { old throws(E) in try write(new, old: old, to: &w, emit: emit) }
        }
    }

    /// What the writer puts between two records of the array: a comma, a line break, four spaces.
    private static let separator: [UInt8] = Array(",\n    ".utf8)

    private func write<E: Error>(_ records: UnsafeBufferPointer<Transaction>, old transactions: UnsafeBufferPointer<Transaction>,
                                 to w: inout JSONWriter, emit: (UnsafeBufferPointer<UInt8>) throws(E) -> Void) throws(E) {
        let base = buffer.base
        // The bytes of consecutive reused lines not yet handed on, and the record that ends them.
        var run: (start: Int, end: Int, last: Int)?
        func flush() throws(E) {
            if let r = run { try emit(UnsafeBufferPointer(start: base + r.start, count: r.end - r.start)) }
            run = nil
        }
        var next = 0
        var firstIndex: [UUID: Int]?
        for i in records.indices {
            var match = -1
            if next < transactions.count {
                if transactions[next].id == records[i].id {
                    match = next
                } else {
                    if firstIndex == nil {
                        var index: [UUID: Int] = [:]
                        index.reserveCapacity(transactions.count)
                        for (j, old) in transactions.enumerated() where index[old.id] == nil { index[old.id] = j }
                        firstIndex = index
                    }
                    match = firstIndex?[records[i].id] ?? -1
                }
            }
            if match >= 0 {
                next = match + 1
                let span = spans[match]
                let start = Int(span.start), end = Int(span.start) + Int(span.count)
                if span.count > 0, end <= buffer.count,
                   Self.identical(records.baseAddress, i, transactions.baseAddress, match) || Self.sameStoredFields(records[i], transactions[match]) {
                    if let r = run, r.last + 1 == match, start - r.end == Self.separator.count,
                       memcmp(base + r.end, Self.separator, Self.separator.count) == 0 {
                        run = (r.start, end, match)
                        continue
                    }
                    try flush()
                    w.prepareValue()
                    try w.drain(emit)
                    w.markValueWritten()
                    run = (start, end, match)
                    continue
                }
            }
            try flush()
            PortfolioCodec.writeTransactionLine(records[i], to: &w)
            if w.bytes.count >= 1 << 20 { try w.drain(emit) }
        }
        try flush()
    }

    /// Whether two records are the same bits (a record carried over unchanged): then every field is the
    /// same, strings included (the same small-string bytes or the same storage). Unequal bits prove nothing.
    @inline(__always)
    static func identical(_ a: UnsafePointer<Transaction>?, _ i: Int, _ b: UnsafePointer<Transaction>?, _ j: Int) -> Bool {
        guard let a, let b else { return false }
        return memcmp(a + i, b + j, MemoryLayout<Transaction>.size) == 0
    }

    /// Whether every field the store line holds is the same, strings compared byte for byte
    /// (Swift's `==` equates canonically equivalent text, which is written differently).
    static func sameStoredFields(_ a: Transaction, _ b: Transaction) -> Bool {
        a.id == b.id && a.type == b.type && a.negative == b.negative && a.amountValue == b.amountValue
            && a.priceValue == b.priceValue && a.totalValue == b.totalValue && a.feeValue == b.feeValue && a.fxRateValue == b.fxRateValue
            && a.linkedId == b.linkedId && a.date == b.date && a.day == b.day
            && sameBytes(a.portfolio, b.portfolio) && sameBytes(a.assetId, b.assetId)
            && sameBytes(a.currency, b.currency) && sameBytes(a.notes, b.notes)
    }

    static func sameBytes(_ a: String?, _ b: String?) -> Bool {
        guard var a, var b else { return a == nil && b == nil }
        return a.withUTF8 { x in b.withUTF8 { y in x.elementsEqual(y) } }
    }
}

/// Whether the bytes of a value on a store line are the writer's spelling of it (see `StoredRecords`).
enum CanonicalText {
    /// The value of `field` as the writer writes it: always a JSON string here (a null is left out).
    static func isCanonical(_ field: TransactionField, value raw: UnsafeBufferPointer<UInt8>) -> Bool {
        guard raw.count >= 2, raw[0] == 34, raw[raw.count - 1] == 34 else { return false }
        let inner = UnsafeBufferPointer(rebasing: raw[1..<(raw.count - 1)])
        switch field {
        case .id, .linkedId:
            // Hex digits in lower case; a 36-byte text can hold no escape.
            return inner.count == 36 && !inner.contains { $0 >= 65 && $0 <= 70 }
        case .portfolio, .type, .assetId, .currency, .notes:
            // No escape, and no DEL (which the writer escapes); control characters are refused when read.
            return !inner.contains { $0 == 92 || $0 == 0x7F }
        case .amount:
            if inner.first == 45 { return isFixed(UnsafeBufferPointer(rebasing: inner.dropFirst())) }
            return isFixed(inner)
        case .price, .total, .fee, .fxRate:
            return isFixed(inner)
        case .date:
            return isDate(inner) || isDay(inner)
        }
    }

    /// `Fixed18.write`'s spelling of a literal `Fixed18.parse` accepted: no leading zero but the
    /// one before a point, no trailing zero after a point, no bare point.
    static func isFixed(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let first = b.first, let last = b.last, first >= 48, first <= 57 else { return false }
        if first == 48 && b.count > 1 && b[1] != 46 { return false }
        var points = 0
        for c in b {
            if c == 46 { points += 1 } else if c < 48 || c > 57 { return false }
        }
        if points == 0 { return true }
        return points == 1 && last != 48 && last != 46
    }

    /// `YYYY-MM-DD` as `ISODate.writeDay` spells a day `ISODate.parseDay` accepted.
    static func isDay(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard b.count == 10, b[4] == 45, b[7] == 45 else { return false }
        return [0, 1, 2, 3, 5, 6, 8, 9].allSatisfy { b[$0] >= 48 && b[$0] <= 57 }
    }

    /// `ISODate.write`'s spelling of a time `ISODate.parseTimestamp` accepted:
    /// `YYYY-MM-DDTHH:MM:SSZ`, or `…SS.mmmZ` with milliseconds other than 000.
    static func isDate(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard b.count == 20 || b.count == 24 else { return false }
        for i in [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18] where !(b[i] >= 48 && b[i] <= 57) { return false }
        guard b[4] == 45, b[7] == 45, b[10] == 84, b[13] == 58, b[16] == 58 else { return false }
        if b.count == 20 { return b[19] == 90 }
        guard b[19] == 46, b[23] == 90 else { return false }
        for i in 20...22 where !(b[i] >= 48 && b[i] <= 57) { return false }
        return !(b[20] == 48 && b[21] == 48 && b[22] == 48)
    }
}

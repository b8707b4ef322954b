import Foundation

/// The fields of a transaction record: the one description behind the store line, the JSON
/// objects of `list --json` and `export`, the CSV export and the import columns. A new field
/// is one case here.
public enum TransactionField: String, CaseIterable, Sendable {
    case id, portfolio, type, assetId, amount, price, total, fee, currency, fxRate, date, notes, linkedId

    /// The field's name in every codec (the store, JSON, CSV header).
    public var name: String { rawValue }

    /// Other names a file may use: version 1's keys and the import columns' friendlier names.
    public var aliases: [String] {
        switch self {
        case .assetId: ["asset", "coin", "coinId"]
        case .price: ["pricePerCoin"]
        case .linkedId: ["linked"]
        case .notes: ["note"]
        default: []
        }
    }

    /// The field a name or alias means (case-insensitive), or `nil`.
    public static func named(_ text: String) -> TransactionField? {
        let lower = text.lowercased()
        return allCases.first { $0.name.lowercased() == lower || $0.aliases.contains { $0.lowercased() == lower } }
    }

    /// What an import's messages call the column: `asset` for `assetId` (the CSV's own name), else `name`.
    public var columnName: String { self == .assetId ? "asset" : name }

    /// Whether every record has it (the others may be null, as the kind says).
    public var required: Bool { [.id, .type, .assetId, .amount, .date].contains(self) }

    /// The value as text, exactly as stored (`nil` for null): what the CSV export writes.
    public func text(of t: Transaction) -> String? {
        switch self {
        case .id: UUIDText.lowercased(t.id)
        case .portfolio: t.portfolio
        case .type: t.type.rawValue
        case .assetId: t.assetId.isEmpty ? nil : t.assetId
        case .amount: (t.negative ? "-" : "") + t.amountValue.text
        case .price: t.priceValue?.text
        case .total: t.totalValue?.text
        case .fee: t.feeValue?.text
        case .currency: t.currency
        case .fxRate: t.fxRateValue?.text
        case .date: t.recordDate.text
        case .notes: t.notes
        case .linkedId: t.linkedId.map(UUIDText.lowercased)
        }
    }

    /// Writes the value (`null` when absent).
    public func write(_ t: Transaction, to w: inout JSONWriter) {
        switch self {
        case .id: w.uuid(t.id)
        case .portfolio: w.string(t.portfolio)
        case .type: w.string(t.type.rawValue)
        case .assetId: if t.assetId.isEmpty { w.null() } else { w.string(t.assetId) }
        case .amount: if t.negative { w.rawString { $0.append(UInt8(ascii: "-")); t.amountValue.write(to: &$0) } } else { w.fixed(t.amountValue) }
        case .price: if let v = t.priceValue { w.fixed(v) } else { w.null() }
        case .total: if let v = t.totalValue { w.fixed(v) } else { w.null() }
        case .fee: if let v = t.feeValue { w.fixed(v) } else { w.null() }
        case .currency: w.string(t.currency)
        case .fxRate: if let v = t.fxRateValue { w.fixed(v) } else { w.null() }
        case .date: w.recordDate(t)
        case .notes: w.string(t.notes)
        case .linkedId: if let v = t.linkedId { w.uuid(v) } else { w.null() }
        }
    }

    /// Appends the value's JSON text straight to `out` (the store line's hot path; `write` is the general one).
    func appendJSON(_ t: Transaction, to w: inout JSONWriter) {
        switch self {
        case .id: w.withBytes { $0.append(34); UUIDText.write(t.id, to: &$0); $0.append(34) }
        case .portfolio: w.rawQuoted(t.portfolio)
        case .type: w.rawQuoted(t.type.rawValue)
        case .assetId: w.rawQuoted(t.assetId)
        case .amount: w.withBytes { $0.append(34); if t.negative { $0.append(45) }; t.amountValue.write(to: &$0); $0.append(34) }
        case .price: w.withBytes { $0.append(34); t.priceValue?.write(to: &$0); $0.append(34) }
        case .total: w.withBytes { $0.append(34); t.totalValue?.write(to: &$0); $0.append(34) }
        case .fee: w.withBytes { $0.append(34); t.feeValue?.write(to: &$0); $0.append(34) }
        case .currency: w.rawQuoted(t.currency ?? "")
        case .fxRate: w.withBytes { $0.append(34); t.fxRateValue?.write(to: &$0); $0.append(34) }
        case .date: w.withBytes { $0.append(34); ISODate.write(t, to: &$0); $0.append(34) }
        case .notes: w.rawQuoted(t.notes ?? "")
        case .linkedId: w.withBytes { $0.append(34); if let l = t.linkedId { UUIDText.write(l, to: &$0) }; $0.append(34) }
        }
    }

    /// `"name": ` as bytes, and `, "name": ` (the separator included), for the store line.
    static let keyChunks: [(first: [UInt8], next: [UInt8])] = allCases.map {
        (Array("{\"\($0.name)\": ".utf8), Array(", \"\($0.name)\": ".utf8))
    }

    /// Whether the value is absent (left out of a store line).
    public func isNull(in t: Transaction) -> Bool {
        switch self {
        case .price: t.priceValue == nil
        case .total: t.totalValue == nil
        case .fee: t.feeValue == nil
        case .currency: t.currency == nil
        case .fxRate: t.fxRateValue == nil
        case .notes: t.notes == nil
        case .linkedId: t.linkedId == nil
        case .assetId: t.assetId.isEmpty
        default: false
        }
    }

    /// This field's bit in a set of fields (`TransactionDraft.seen`), rising in the field order (the
    /// one-line reader checks the order by it).
    var bit: UInt16 {
        switch self {
        case .id: 1 << 0
        case .portfolio: 1 << 1
        case .type: 1 << 2
        case .assetId: 1 << 3
        case .amount: 1 << 4
        case .price: 1 << 5
        case .total: 1 << 6
        case .fee: 1 << 7
        case .currency: 1 << 8
        case .fxRate: 1 << 9
        case .date: 1 << 10
        case .notes: 1 << 11
        case .linkedId: 1 << 12
        }
    }

    /// Reads the value from JSON into `draft`.
    func read(_ r: inout JSONReader, into d: inout TransactionDraft) throws(JSONReadError) {
        if d.seen & bit != 0 { throw r.error("a transaction gives \(name) twice") }
        d.seen |= bit
        switch self {
        case .id:
            let raw = try r.readRawStringBytes()
            guard let u = UUIDText.parse(raw) else { throw r.error("'\(TextEscaping.escaped(String(decoding: raw, as: UTF8.self)))' is not a UUID") }
            d.id = u
        case .portfolio: d.portfolio = try r.readString()
        case .type:
            let text = try r.readString()
            guard let type = TransactionType(rawValue: text) else { throw r.error("unknown transaction type '\(TextEscaping.escaped(text))'") }
            d.type = type
        case .assetId: d.assetId = try r.readStringOrNull() ?? ""
        case .amount:
            let raw = try r.readRawStringBytes()
            if raw.first == UInt8(ascii: "-"), let v = Fixed18.parse(utf8: raw.dropFirst()) {
                d.amount = v
                d.negative = true
            } else {
                guard let v = Fixed18.parse(utf8: raw) else { throw r.error("'\(TextEscaping.escaped(String(decoding: raw, as: UTF8.self)))' is not a plain decimal string") }
                d.amount = v
            }
        case .price: d.price = r.consumeNull() ? nil : try PortfolioCodec.readFixed(&r)
        case .total: d.total = r.consumeNull() ? nil : try PortfolioCodec.readFixed(&r)
        case .fee: d.fee = r.consumeNull() ? nil : try PortfolioCodec.readFixed(&r)
        case .currency: d.currency = try r.readStringOrNull()
        case .fxRate: d.fxRate = r.consumeNull() ? nil : try PortfolioCodec.readFixed(&r)
        case .date: (d.date, d.day) = try PortfolioCodec.readRecordDate(&r)
        case .notes: d.notes = try r.readStringOrNull()
        case .linkedId:
            if r.consumeNull() { d.linkedId = nil; return }
            let raw = try r.readRawStringBytes()
            guard let u = UUIDText.parse(raw) else { throw r.error("'\(TextEscaping.escaped(String(decoding: raw, as: UTF8.self)))' is not a UUID") }
            d.linkedId = u
        }
    }

    /// `"name": ` as the store line writes it, for the one-line reader to recognise a key by one comparison.
    static let quotedKeys: [[UInt8]] = allCases.map { Array("\"\($0.name)\": ".utf8) }

    /// The kinds by the bytes of their names.
    static let typesByName: [(bytes: [UInt8], type: TransactionType)] = TransactionType.allCases.map { (Array($0.rawValue.utf8), $0) }

    /// The kind a plain name's bytes name, or `nil`.
    static func type(_ raw: UnsafeBufferPointer<UInt8>) -> TransactionType? {
        guard let base = raw.baseAddress else { return nil }
        for entry in typesByName where entry.bytes.count == raw.count {
            if entry.bytes.withUnsafeBufferPointer({ $0.baseAddress.map { memcmp($0, base, raw.count) } }) == 0 { return entry.type }
        }
        return nil
    }

    /// Reads the value as `read` does, with plain ASCII text (the usual case) taken without making a new
    /// string for every record: `strings` gives back the one made for the same bytes before.
    func readPlain(_ r: inout JSONReader, into d: inout TransactionDraft, strings: inout InternedStrings) throws(JSONReadError) {
        switch self {
        case .portfolio, .type, .assetId, .currency:
            let mark = r.mark
            guard d.seen & bit == 0, let raw = r.readPlainASCIIString() else { break }
            switch self {
            case .type:
                guard let type = TransactionField.type(raw) else { r.rewind(to: mark); break }
                d.type = type
            case .portfolio: d.portfolio = strings.string(raw)
            case .assetId: d.assetId = strings.string(raw)
            default: d.currency = strings.string(raw)
            }
            d.seen |= bit
            return
        default: break
        }
        try read(&r, into: &d)
    }

    /// The store's key order; also the CSV export's columns and `list --json`'s keys.
    public static let order: [TransactionField] = allCases

    /// Recognises a key from its bytes without making a string (the reader's hot path).
    static func key(_ k: UnsafeBufferPointer<UInt8>) -> TransactionField? {
        for f in keyTable where f.bytes.count == k.count && f.bytes.first == k.first {
            if f.bytes.elementsEqual(k) { return f.field }
        }
        return nil
    }

    private static let keyTable: [(bytes: [UInt8], field: TransactionField)] =
        allCases.flatMap { f in ([f.name] + f.aliases).map { (Array($0.utf8), f) } }
}

/// Strings made from plain ASCII bytes, kept to be handed out again for the same bytes (the few
/// portfolios, assets and currencies of a store, read once each instead of once per record).
struct InternedStrings {
    private var keys = [[UInt8]](repeating: [], count: 64)
    private var values = [String](repeating: "", count: 64)

    /// `String(decoding: raw, as: UTF8.self)`, made once per distinct bytes while they stay in their slot.
    mutating func string(_ raw: UnsafeBufferPointer<UInt8>) -> String {
        guard let base = raw.baseAddress, raw.count <= 64 else { return String(decoding: raw, as: UTF8.self) }
        var h: UInt32 = 2_166_136_261
        for b in raw { h = (h ^ UInt32(b)) &* 16_777_619 }
        let i = Int(h & 63)
        if keys[i].count == raw.count, keys[i].withUnsafeBufferPointer({ $0.baseAddress.map { memcmp($0, base, raw.count) } }) == 0 {
            return values[i]
        }
        let s = String(decoding: raw, as: UTF8.self)
        keys[i] = Array(raw)
        values[i] = s
        return s
    }
}

/// A transaction being read: every field optional until `build` checks what its kind needs.
struct TransactionDraft {
    /// The fields read so far, one bit each (`TransactionField.bit`).
    var seen: UInt16 = 0
    var id: UUID?
    var portfolio: String?
    var type: TransactionType?
    var assetId: String?
    var amount: Fixed18?
    var negative = false
    var price: Fixed18?
    var total: Fixed18?
    var fee: Fixed18?
    var currency: String?
    var fxRate: Fixed18?
    var date: Date?
    /// Set for a date stored as a calendar day (`date` is then that day's UTC midnight until `Book.placeDays`).
    var day: Int64?
    var notes: String?
    var linkedId: UUID?

    /// The transaction, or the names of the required fields it lacks.
    func build(version: Int) -> Result<Transaction, MissingFields> {
        // Cash alone has no asset: its `assetId` is null, and may be left out (a kind that needs one
        // is then named by `bitpal check`, not refused as unreadable).
        let assetId = self.assetId ?? ""
        guard let id, let type, let amount, let date else {
            let missing = TransactionField.allCases.filter { $0.required && $0 != .assetId && seen & $0.bit == 0 }.map(\.name)
            return .failure(MissingFields(names: missing))
        }
        // Version 1 knew buys and sells of coins in USD in one portfolio.
        let v1 = version < 2
        return .success(Transaction(
            id: id, portfolio: portfolio ?? Portfolio.mainName, type: type, assetId: assetId, amount: amount, negative: negative,
            price: price, total: total, fee: v1 ? (fee ?? .zero) : fee, currency: v1 ? "USD" : currency, fxRate: v1 ? nil : fxRate,
            date: date, day: day, notes: notes,
            linkedId: linkedId))
    }
}

/// The required fields a record lacks.
struct MissingFields: Error {
    var names: [String]
}

import Foundation

/// One description of a small record (a portfolio, an asset, a saving plan…): each field's name, its
/// value as JSON and how it is read back. The store's line, the reports' JSON object and the reader
/// are all made from it, so a new field is one entry and they cannot drift apart.
public struct RecordFields<Record: Sendable>: Sendable {
    public struct Field: Sendable {
        public let name: String
        /// Older names read as this one (version 1's `coinId` for `assetId`).
        public let aliases: [String]
        /// A record without it is refused when read.
        public let required: Bool
        /// What a `null` does to the record (leave the default, or clear the field); `nil`: a `null`
        /// is refused, never taken for a default.
        let null: (@Sendable (inout Record) -> Void)?
        /// Whether the store's line leaves the field out of this record (a default, written only when set).
        let leftOut: (@Sendable (Record) -> Bool)?
        let value: @Sendable (Record) -> JSONValue
        let read: @Sendable (inout JSONReader, inout Record) throws(JSONReadError) -> Void

        /// It may be `null` (a value not known yet).
        public var nullable: Bool { null != nil }

        init(_ name: String, aliases: [String] = [], required: Bool = false, nullable: Bool = false,
             null: (@Sendable (inout Record) -> Void)? = nil, leftOut: (@Sendable (Record) -> Bool)? = nil,
             value: @escaping @Sendable (Record) -> JSONValue,
             read: @escaping @Sendable (inout JSONReader, inout Record) throws(JSONReadError) -> Void) {
            self.name = name
            self.aliases = aliases
            self.required = required
            let keep: @Sendable (inout Record) -> Void = { _ in }
            self.null = null ?? (nullable ? keep : nil)
            self.leftOut = leftOut
            self.value = value
            self.read = read
        }
    }

    /// How the reader words a refusal.
    public enum Wording: Sendable {
        /// Each error names its field (`a saving plan's fee: …`), a `null` where none may be is refused
        /// by name, and the missing required fields are listed.
        case naming
        /// An error as the value's reader words it, and `missing` when any required field is absent:
        /// the words of the hand-written readers the tables replaced (`an asset needs id, name and type`).
        case plain(missing: String = "")
    }

    /// What messages call one record (`a saving plan`) when `.naming`.
    let what: String
    public let fields: [Field]
    /// The record the reader starts from (every optional field at its default).
    let blank: Record
    let wording: Wording
    /// After every field is read: defaults that depend on other fields, and the record's own rules.
    let finish: @Sendable (inout Record, _ seen: Set<String>, inout JSONReader) throws(JSONReadError) -> Void

    init(what: String, wording: Wording = .naming, fields: [Field], blank: Record,
         finish: @escaping @Sendable (inout Record, _ seen: Set<String>, inout JSONReader) throws(JSONReadError) -> Void = { _, _, _ throws(JSONReadError) in }) {
        self.what = what
        self.wording = wording
        self.fields = fields
        self.blank = blank
        self.finish = finish
    }

    /// The record as a JSON object: every field in table order, those the store leaves out too.
    public func object(_ record: Record) -> JSONValue { .object(pairs(record)) }

    /// The record's (name, value) pairs as a command prints them beside other facts: every field in
    /// table order but those in `leaving`, `replacing`'s values in place of the table's, and `adding`
    /// after the field `after` (at the end when `nil`).
    public func pairs(_ record: Record, leaving: Set<String> = [], replacing: [String: JSONValue] = [:],
                      adding: [(String, JSONValue)] = [], after: String? = nil) -> [(String, JSONValue)] {
        var out: [(String, JSONValue)] = []
        for f in fields where !leaving.contains(f.name) {
            out.append((f.name, replacing[f.name] ?? f.value(record)))
            if f.name == after { out += adding }
        }
        if after == nil { out += adding }
        return out
    }

    /// The record as one line of the store.
    func write(_ record: Record, to w: inout JSONWriter) {
        w.beginInlineObject()
        for f in fields where !(f.leftOut?(record) ?? false) {
            w.key(f.name)
            f.value(record).write(to: &w)
        }
        w.endObject()
    }

    /// `"key": [records]`, one record a line.
    func write(_ records: [Record], key: String, to w: inout JSONWriter) {
        w.key(key)
        w.beginArray()
        for record in records { write(record, to: &w) }
        w.endArray()
    }

    /// A record from its object, keys in any order; unknown keys are skipped (a newer bitpal's).
    func read(_ r: inout JSONReader) throws(JSONReadError) -> Record {
        var record = blank
        var seen = Set<String>()
        try r.beginObject()
        while let k = try r.nextKey() {
            guard let f = fields.first(where: { $0.name == k || $0.aliases.contains(k) }) else {
                try r.skipValue()
                continue
            }
            if let null = f.null, r.consumeNull() {
                null(&record)
            } else if case .plain = wording {
                try f.read(&r, &record)
            } else if r.consumeNull() {
                throw r.error("\(what)'s \(k) cannot be null")
            } else {
                do {
                    try f.read(&r, &record)
                } catch {
                    // Name the field whatever went wrong in it ("expected a string").
                    var named = error
                    if !named.message.contains(k) { named.message = "\(what)'s \(k): " + named.message }
                    throw named
                }
            }
            seen.insert(f.name)
        }
        let missing = fields.filter { $0.required && !seen.contains($0.name) }.map(\.name)
        if !missing.isEmpty {
            switch wording {
            case .naming: throw r.error("\(what) needs \(missing.joined(separator: ", "))")
            case let .plain(message): throw r.error(message)
            }
        }
        try finish(&record, seen, &r)
        return record
    }

    /// An array of records.
    func readArray(_ r: inout JSONReader) throws(JSONReadError) -> [Record] {
        try r.readArray { r throws(JSONReadError) in try read(&r) }
    }

    /// One of a choice's raw values, or a clear error.
    static func choice<T: RawRepresentable>(_ r: inout JSONReader, _ what: String) throws(JSONReadError) -> T where T.RawValue == String {
        let text = try r.readString()
        guard let v = T(rawValue: text) else { throw r.error("unknown \(what) '\(TextEscaping.escaped(text))'") }
        return v
    }

    /// A calendar day written `YYYY-MM-DD`.
    static func day(_ r: inout JSONReader, _ key: String) throws(JSONReadError) -> Int64 {
        let text = try r.readString()
        guard let n = ISODate.dayNumber(ofDay: text) else { throw r.error("\(key) must be a day (YYYY-MM-DD), not '\(TextEscaping.escaped(text))'") }
        return n
    }
}

extension RecordFields.Field {
    /// Text.
    static func string(_ name: String, _ key: WritableKeyPath<Record, String> & Sendable, aliases: [String] = [],
                       required: Bool = false) -> Self {
        .init(name, aliases: aliases, required: required, value: { .string($0[keyPath: key]) },
              read: { r, x throws(JSONReadError) in x[keyPath: key] = try r.readString() })
    }

    /// Text, or `null` for `nil`.
    static func string(_ name: String, _ key: WritableKeyPath<Record, String?> & Sendable) -> Self {
        .init(name, null: { $0[keyPath: key] = nil }, value: { .optional($0[keyPath: key]) },
              read: { r, x throws(JSONReadError) in x[keyPath: key] = try r.readString() })
    }

    /// An exact decimal, as a string (`"0.5"`).
    static func fixed(_ name: String, _ key: WritableKeyPath<Record, Fixed18> & Sendable, required: Bool = false) -> Self {
        .init(name, required: required, value: { .string($0[keyPath: key].text) },
              read: { r, x throws(JSONReadError) in x[keyPath: key] = try PortfolioCodec.readFixed(&r) })
    }

    /// An exact decimal, or `null` for `nil`.
    static func fixed(_ name: String, _ key: WritableKeyPath<Record, Fixed18?> & Sendable) -> Self {
        .init(name, null: { $0[keyPath: key] = nil }, value: { .optional($0[keyPath: key]?.text) },
              read: { r, x throws(JSONReadError) in x[keyPath: key] = try PortfolioCodec.readFixed(&r) })
    }

    /// An instant, ISO 8601 UTC.
    static func date(_ name: String, _ key: WritableKeyPath<Record, Date> & Sendable, required: Bool = false) -> Self {
        .init(name, required: required, value: { .string(ISODate.format($0[keyPath: key])) },
              read: { r, x throws(JSONReadError) in x[keyPath: key] = try PortfolioCodec.readDate(&r) })
    }

    /// `true` or `false`; with `leftOutWhenFalse`, the store writes it only when true.
    static func bool(_ name: String, _ key: WritableKeyPath<Record, Bool> & Sendable, leftOutWhenFalse: Bool = false) -> Self {
        let isFalse: @Sendable (Record) -> Bool = { !$0[keyPath: key] }
        return .init(name, leftOut: leftOutWhenFalse ? isFalse : nil, value: { .bool($0[keyPath: key]) },
                     read: { r, x throws(JSONReadError) in x[keyPath: key] = try r.readBool() })
    }

    /// One of a choice's raw values; `unknown <what> '…'` for any other.
    static func choice<T: RawRepresentable & Sendable>(_ name: String, _ key: WritableKeyPath<Record, T> & Sendable, _ what: String,
                                                       required: Bool = false) -> Self where T.RawValue == String {
        .init(name, required: required, value: { .string($0[keyPath: key].rawValue) },
              read: { r, x throws(JSONReadError) in x[keyPath: key] = try RecordFields.choice(&r, what) })
    }
}

extension SavingPlan {
    /// The fields of a saving plan (allocation-plans.md, "JSON saving plan"), in every codec.
    public static let fields = RecordFields<SavingPlan>(
        what: "a saving plan",
        fields: [
            .init("name", required: true, value: { .string($0.name) }, read: { r, p throws(JSONReadError) in p.name = try r.readString() }),
            .init("portfolio", required: true, value: { .string($0.portfolio) }, read: { r, p throws(JSONReadError) in p.portfolio = try r.readString() }),
            .init("assetId", required: true, value: { .string($0.assetId) }, read: { r, p throws(JSONReadError) in p.assetId = try r.readString() }),
            .init("amount", required: true, value: { .string($0.amount.text) }, read: { r, p throws(JSONReadError) in p.amount = try PortfolioCodec.readFixed(&r) }),
            .init("fee", value: { .string($0.fee.text) }, read: { r, p throws(JSONReadError) in p.fee = try PortfolioCodec.readFixed(&r) }),
            .init("frequency", required: true, value: { .string($0.frequency.rawValue) },
                  read: { r, p throws(JSONReadError) in p.frequency = try RecordFields<SavingPlan>.choice(&r, "saving frequency") }),
            .init("startDate", required: true, value: { .string(ISODate.dayText($0.startDay)) },
                  read: { r, p throws(JSONReadError) in p.startDay = try RecordFields<SavingPlan>.day(&r, "startDate") }),
            .init("nextDueDate", value: { .string(ISODate.dayText($0.nextDueDay)) },
                  read: { r, p throws(JSONReadError) in p.nextDueDay = try RecordFields<SavingPlan>.day(&r, "nextDueDate") }),
            .init("lastExecuted", nullable: true, value: { .optional($0.lastExecutedDay.map(ISODate.dayText)) },
                  read: { r, p throws(JSONReadError) in p.lastExecutedDay = try RecordFields<SavingPlan>.day(&r, "lastExecuted") }),
            .init("from", value: { .string($0.from.rawValue) },
                  read: { r, p throws(JSONReadError) in p.from = try RecordFields<SavingPlan>.choice(&r, "saving funding") }),
            .init("method", value: { .string($0.method.rawValue) },
                  read: { r, p throws(JSONReadError) in p.method = try RecordFields<SavingPlan>.choice(&r, "saving method") }),
            .init("active", value: { .bool($0.active) }, read: { r, p throws(JSONReadError) in p.active = try r.readBool() }),
            .init("notes", nullable: true, value: { .optional($0.notes) }, read: { r, p throws(JSONReadError) in p.notes = try r.readString() }),
        ],
        blank: SavingPlan(name: "", portfolio: "", assetId: "", amount: .zero, frequency: .day, startDay: 0),
        finish: { p, seen, r throws(JSONReadError) in
            if !seen.contains("nextDueDate") { p.nextDueDay = p.startDay }
            guard p.amount.units > p.fee.units else { throw r.error("a saving plan's fee must be below its amount") }
        })
}

extension PriceAlert {
    /// The fields of an alert (history-performance.md, "Alerts"), in every codec.
    public static let fields = RecordFields<PriceAlert>(
        what: "an alert",
        fields: [
            .init("id", required: true, value: { .number(String($0.id)) }, read: { r, a throws(JSONReadError) in
                let text = try r.readNumberText()
                guard let n = Int(text), n > 0 else { throw r.error("an alert id is a whole number above 0, not \(text)") }
                a.id = n
            }),
            .init("assetId", required: true, value: { .string($0.assetId) }, read: { r, a throws(JSONReadError) in a.assetId = try r.readString() }),
            .init("condition", required: true, value: { .string($0.condition.rawValue) },
                  read: { r, a throws(JSONReadError) in a.condition = try RecordFields<PriceAlert>.choice(&r, "alert condition") }),
            .init("threshold", required: true, value: { .string($0.threshold.text) },
                  read: { r, a throws(JSONReadError) in a.threshold = try PortfolioCodec.readFixed(&r) }),
            .init("currency", value: { .string($0.currency) }, read: { r, a throws(JSONReadError) in a.currency = try r.readString() }),
            .init("repeat", value: { .bool($0.repeats) }, read: { r, a throws(JSONReadError) in a.repeats = try r.readBool() }),
            .init("state", value: { .string($0.state.rawValue) },
                  read: { r, a throws(JSONReadError) in a.state = try RecordFields<PriceAlert>.choice(&r, "alert state") }),
            .init("lastChecked", nullable: true, value: { .optional($0.lastChecked.map(ISODate.format)) },
                  read: { r, a throws(JSONReadError) in a.lastChecked = try PortfolioCodec.readDate(&r) }),
        ],
        blank: PriceAlert(id: 0, assetId: "", condition: .above, threshold: .zero, currency: "USD"))
}

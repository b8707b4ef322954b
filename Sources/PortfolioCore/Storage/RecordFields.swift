import Foundation

/// One description of a small record (a saving plan, an alert): each field's name, its value as
/// JSON and how it is read back. The store's line and the reports' JSON object are both made from
/// it, so a new field is one entry and the two cannot drift apart.
public struct RecordFields<Record: Sendable>: Sendable {
    public struct Field: Sendable {
        public let name: String
        /// A record without it is refused when read.
        public let required: Bool
        /// It may be `null` (a value not known yet); any other field's `null` is refused, never
        /// taken for a default.
        public let nullable: Bool
        let value: @Sendable (Record) -> JSONValue
        let read: @Sendable (inout JSONReader, inout Record) throws(JSONReadError) -> Void

        init(_ name: String, required: Bool = false, nullable: Bool = false, value: @escaping @Sendable (Record) -> JSONValue,
             read: @escaping @Sendable (inout JSONReader, inout Record) throws(JSONReadError) -> Void) {
            self.name = name
            self.required = required
            self.nullable = nullable
            self.value = value
            self.read = read
        }
    }

    /// What messages call one record (`a saving plan`).
    let what: String
    public let fields: [Field]
    /// The record the reader starts from (every optional field at its default).
    let blank: Record
    /// After every field is read: defaults that depend on other fields, and the record's own rules.
    let finish: @Sendable (inout Record, _ seen: Set<String>, inout JSONReader) throws(JSONReadError) -> Void

    /// The record as a JSON object, fields in table order.
    public func object(_ record: Record) -> JSONValue { .object(fields.map { ($0.name, $0.value(record)) }) }

    /// The record as one line of the store.
    func write(_ record: Record, to w: inout JSONWriter) {
        w.beginInlineObject()
        for f in fields {
            w.key(f.name)
            f.value(record).write(to: &w)
        }
        w.endObject()
    }

    /// A record from its object, keys in any order; unknown keys are skipped (a newer bitpal's).
    func read(_ r: inout JSONReader) throws(JSONReadError) -> Record {
        var record = blank
        var seen = Set<String>()
        try r.beginObject()
        while let k = try r.nextKey() {
            guard let f = fields.first(where: { $0.name == k }) else {
                try r.skipValue()
                continue
            }
            if r.consumeNull() {
                guard f.nullable else { throw r.error("\(what)'s \(k) cannot be null") }
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
            seen.insert(k)
        }
        let missing = fields.filter { $0.required && !seen.contains($0.name) }.map(\.name)
        guard missing.isEmpty else { throw r.error("\(what) needs \(missing.joined(separator: ", "))") }
        try finish(&record, seen, &r)
        return record
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
        blank: PriceAlert(id: 0, assetId: "", condition: .above, threshold: .zero, currency: "USD"),
        finish: { _, _, _ throws(JSONReadError) in })
}

import Foundation

/// Writes JSON text with a fixed key order, straight into bytes.
///
/// Pretty output uses two-space indentation and `"key": value`, so files diff
/// well and are stable from one write to the next. Numbers are written from
/// their text, so a `Decimal` never passes through `Double`.
public struct JSONWriter {
    public private(set) var bytes: [UInt8] = []
    private let pretty: Bool
    private var depth = 0
    private var first = true
    private var afterKey = false
    /// Open containers, true for those written on one line.
    private var inlineStack: [Bool] = []
    private var inlineDepth = 0

    public init(pretty: Bool = true, capacity: Int = 256) {
        self.pretty = pretty
        bytes.reserveCapacity(capacity)
    }

    /// The text written so far.
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    public mutating func beginObject() { open(UInt8(ascii: "{")) }
    /// An object written on one line (`{"a": 1, "b": 2}`), e.g. one transaction per line.
    public mutating func beginInlineObject() { open(UInt8(ascii: "{"), inline: true) }
    public mutating func endObject() { close(UInt8(ascii: "}")) }
    public mutating func beginArray() { open(UInt8(ascii: "[")) }
    public mutating func endArray() { close(UInt8(ascii: "]")) }

    public mutating func key(_ name: String) {
        separate()
        appendQuoted(name)
        bytes.append(UInt8(ascii: ":"))
        if pretty { bytes.append(UInt8(ascii: " ")) }
        afterKey = true
    }

    /// A string value whose bytes `body` appends; for text that never needs escaping.
    public mutating func rawString(_ body: (inout [UInt8]) -> Void) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        body(&bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    /// An ISO 8601 UTC time as a string.
    public mutating func date(_ value: Date) { rawString { ISODate.write(value, to: &$0) } }

    /// A transaction's date: its day (`"2024-01-15"`) or its instant.
    public mutating func recordDate(_ t: Transaction) { rawString { ISODate.write(t, to: &$0) } }

    /// A UUID as lower-case text.
    public mutating func uuid(_ value: UUID) { rawString { UUIDText.write(value, to: &$0) } }

    /// An exact decimal as a JSON string (`"0.5"`), straight from its integer.
    public mutating func fixed(_ value: Fixed18) { rawString { value.write(to: &$0) } }

    public mutating func string(_ value: String) {
        separate()
        appendQuoted(value)
    }

    public mutating func string(_ value: String?) {
        if let value { string(value) } else { null() }
    }

    /// Writes already-valid JSON number text (e.g. an integer).
    public mutating func number(_ text: String) {
        separate()
        bytes.append(contentsOf: text.utf8)
    }

    /// Writes a value that is already JSON text (a key kept from a newer version's file).
    public mutating func rawJSON(_ text: [UInt8]) {
        separate()
        bytes.append(contentsOf: text)
    }

    public mutating func bool(_ value: Bool) {
        separate()
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    public mutating func null() {
        separate()
        bytes.append(contentsOf: "null".utf8)
    }

    /// Ends the document with a newline.
    public mutating func finish() {
        bytes.append(UInt8(ascii: "\n"))
    }

    private mutating func open(_ bracket: UInt8, inline: Bool = false) {
        separate()
        bytes.append(bracket)
        depth += 1
        first = true
        inlineStack.append(inline || inlineDepth > 0)
        if inline || inlineDepth > 0 { inlineDepth += 1 }
    }

    private mutating func close(_ bracket: UInt8) {
        depth -= 1
        let wasInline = inlineStack.removeLast()
        if wasInline {
            inlineDepth -= 1
        } else if !first {
            newline()
        }
        bytes.append(bracket)
        first = false
    }

    private mutating func separate() {
        if afterKey {
            afterKey = false
            return
        }
        if inlineDepth > 0 {
            if !first {
                bytes.append(UInt8(ascii: ","))
                if pretty { bytes.append(UInt8(ascii: " ")) }
            }
        } else {
            if !first { bytes.append(UInt8(ascii: ",")) }
            if depth > 0 { newline() }
        }
        first = false
    }

    private mutating func newline() {
        guard pretty else { return }
        bytes.append(UInt8(ascii: "\n"))
        let spaces = depth * 2
        if spaces <= JSONWriter.indentation.count {
            bytes.append(contentsOf: JSONWriter.indentation[0..<spaces])
        } else {
            bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: spaces))
        }
    }

    private static let indentation = [UInt8](repeating: UInt8(ascii: " "), count: 32)

    /// Appends raw bytes (already valid JSON) exactly where the caller wants them.
    public mutating func raw(_ chunk: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: chunk.utf8Start, count: chunk.utf8CodeUnitCount))
    }

    /// Direct access for specialised writers that know the layout they produce.
    public mutating func withBytes<T>(_ body: (inout [UInt8]) -> T) -> T { body(&bytes) }

    /// Appends a quoted, escaped string at the current position (no separators).
    public mutating func rawQuoted(_ s: String) { appendQuoted(s) }

    /// Continues after bytes written directly, as if one value had been written here.
    public mutating func markValueWritten() {
        first = false
        afterKey = false
    }

    /// Hands the bytes written so far to `body` and forgets them (keeping the memory): for a writer
    /// that streams a large document out in pieces.
    public mutating func drain<E: Error>(_ body: (UnsafeBufferPointer<UInt8>) throws(E) -> Void) throws(E) {
        guard !bytes.isEmpty else { return }
        try bytes.withUnsafeBufferPointer { buffer throws(E) in try body(buffer) }
        bytes.removeAll(keepingCapacity: true)
    }

    /// Writes the separator and indentation a value at this position needs.
    public mutating func prepareValue() { separate() }

    private mutating func appendQuoted(_ s: String) {
        bytes.append(UInt8(ascii: "\""))
        var plain = true
        for b in s.utf8 where b < 0x20 || b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") || b == 0x7F {
            plain = false
            break
        }
        if plain {
            bytes.append(contentsOf: s.utf8)
            bytes.append(UInt8(ascii: "\""))
            return
        }
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "\""): bytes.append(92); bytes.append(b)
            case UInt8(ascii: "\\"): bytes.append(92); bytes.append(b)
            case 0x0A: bytes.append(92); bytes.append(UInt8(ascii: "n"))
            case 0x0D: bytes.append(92); bytes.append(UInt8(ascii: "r"))
            case 0x09: bytes.append(92); bytes.append(UInt8(ascii: "t"))
            case 0..<0x20, 0x7F:
                bytes.append(contentsOf: "\\u00".utf8)
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(hex[Int(b >> 4)])
                bytes.append(hex[Int(b & 15)])
            default: bytes.append(b)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

/// A JSON value with ordered object keys, for reports (small documents).
public indirect enum JSONValue: Sendable {
    case null
    case bool(Bool)
    case string(String)
    /// Number text written as is, e.g. `"3"`.
    case number(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    /// A string or null.
    public static func optional(_ s: String?) -> JSONValue { s.map { .string($0) } ?? .null }

    public func write(to writer: inout JSONWriter) {
        switch self {
        case .null: writer.null()
        case let .bool(b): writer.bool(b)
        case let .string(s): writer.string(s)
        case let .number(n): writer.number(n)
        case let .array(items):
            writer.beginArray()
            for item in items { item.write(to: &writer) }
            writer.endArray()
        case let .object(fields):
            writer.beginObject()
            for (k, v) in fields {
                writer.key(k)
                v.write(to: &writer)
            }
            writer.endObject()
        }
    }

    /// Pretty JSON text ending in a newline.
    public func rendered() -> String {
        var w = JSONWriter()
        write(to: &w)
        w.finish()
        return w.text
    }
}

import Foundation
import PortfolioCore
import Testing


/// The seeded generator the property and differential tests share.
typealias SeededRandom = SplitMix64

/// A JSON value as bitpal's pull reader sees it.
indirect enum Tree: Equatable {
    case null, bool(Bool), number(String), string(String), array([Tree]), object([String], [Tree])

    /// Reads any value with the pull API.
    static func read(_ r: inout JSONReader) throws(JSONReadError) -> Tree {
        switch r.peek() {
        case UInt8(ascii: "{"):
            try r.beginObject()
            var keys: [String] = [], values: [Tree] = []
            while let k = try r.nextKey() {
                keys.append(k)
                values.append(try read(&r))
            }
            return .object(keys, values)
        case UInt8(ascii: "["):
            try r.beginArray()
            var items: [Tree] = []
            while try r.nextElement() { items.append(try read(&r)) }
            return .array(items)
        case UInt8(ascii: "\""): return .string(try r.readString())
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return .bool(try r.readBool())
        case UInt8(ascii: "n"):
            guard r.consumeNull() else { throw r.error("unexpected character") }
            return .null
        default: return .number(try r.readNumberText())
        }
    }

    static func parse(_ bytes: [UInt8]) -> Result<Tree, JSONReadError> {
        var r = JSONReader(bytes: bytes)
        do {
            let t = try read(&r)
            try r.finish()
            return .success(t)
        } catch {
            return .failure(error)
        }
    }

    /// Whether `other` (from JSONSerialization) holds the same values.
    func agrees(with other: Any) -> Bool {
        switch self {
        case .null: return other is NSNull
        case let .bool(b):
            guard let n = other as? NSNumber, String(describing: type(of: n)).contains("Boolean") else { return false }
            return n.boolValue == b
        case let .number(text):
            guard let n = other as? NSNumber, let d = Double(text) else { return false }
            let theirs = n.doubleValue
            return d == theirs || abs(d - theirs) <= abs(d) * 1e-12
        case let .string(s): return (other as? String).map(Tree.unicodeScalars) == Tree.unicodeScalars(Tree.droppingLeadingBOM(s))
        case let .array(items):
            guard let a = other as? [Any], a.count == items.count else { return false }
            return zip(items, a).allSatisfy { $0.agrees(with: $1) }
        case let .object(keys, values):
            guard let o = other as? [String: Any], o.count == keys.count else { return false }
            var theirs: [[UInt32]: Any] = [:]
            for (k, v) in o { theirs[Tree.unicodeScalars(k)] = v }
            return zip(keys, values).allSatisfy { k, v in
                theirs[Tree.unicodeScalars(Tree.droppingLeadingBOM(k))].map { v.agrees(with: $0) } ?? false
            }
        }
    }

    /// JSONSerialization drops a U+FEFF at the start of a string and right after an escape (it
    /// decodes each run between escapes as if it were a document with a byte order mark);
    /// bitpal keeps every U+FEFF, as the user wrote it. Compared without them.
    static func droppingLeadingBOM(_ s: String) -> String { s }

    /// Exact comparison (Swift's `==` on strings treats canonically equivalent text as equal),
    /// leaving out U+FEFF (see above).
    static func unicodeScalars(_ s: String) -> [UInt32] { s.unicodeScalars.map(\.value).filter { $0 != 0xFEFF } }

    var hasNumberBeyondDouble: Bool {
        switch self {
        case let .number(t): return !(Double(t)?.isFinite ?? false)
        case let .array(items): return items.contains { $0.hasNumberBeyondDouble }
        case let .object(_, values): return values.contains { $0.hasNumberBeyondDouble }
        default: return false
        }
    }
}

@Suite struct JSONReaderGrammarTests {
    func refuses(_ text: String, _ message: String, line: Int = 1, sourceLocation: SourceLocation = #_sourceLocation) {
        switch Tree.parse(Array(text.utf8)) {
        case .success(let t): Issue.record("accepted \(text.debugDescription) as \(t)", sourceLocation: sourceLocation)
        case .failure(let e):
            #expect(e.message.contains(message), "\(text.debugDescription): \(e)", sourceLocation: sourceLocation)
            #expect(e.line == line, "\(text.debugDescription): \(e)", sourceLocation: sourceLocation)
        }
    }

    @Test func numbersFollowTheGrammar() {
        for bad in ["1-2.3.4e+-", "01", "-", "1.", ".5", "+1", "1e", "1e+", "1.2.3", "1e5e5", "--1", "-01", "1E+-2", "1-2"] {
            refuses("[\(bad)]", "is not a JSON number")
        }
        for good in ["0", "-0", "1.5", "-1.5e-3", "1E+2", "12345678901234567890123", "0.000000000000000001", "1e400"] {
            #expect(Tree.parse(Array("[\(good)]".utf8)) == .success(.array([.number(good)])), "\(good)")
        }
        refuses("[0x10]", "expected ',' or ']'")
        refuses("[\n1,\n 1-2.3.4e+-]", "'1-2.3.4e+-' is not a JSON number", line: 3)
    }

    @Test func duplicateKeysAreRefusedWithTheirLine() {
        refuses("{\"a\": 1,\n \"a\": 2}", "duplicate key \"a\"", line: 2)
        refuses("{\"a\": 1, \"\\u0061\": 2}", "duplicate key \"a\"")
        refuses("[{\"x\": {\"a\": 1}, \"y\": 2,\n\n \"x\": 3}]", "duplicate key \"x\"", line: 3)
        // The same key in sibling and nested objects is fine.
        #expect((try? Tree.parse(Array("[{\"a\": {\"a\": 1}}, {\"a\": 2}, {\"b\": [{\"a\": 1}], \"a\": 0}]".utf8)).get()) != nil)
    }

    @Test func largeObjectsStayLinearAndStillCatchDuplicates() throws {
        let n = 50_000
        let members = (0..<n).map { "\"k\($0)\": {\"x\": 1, \"k\($0)\": [\($0)]}" }
        let start = ContinuousClock.now
        let tree = try Tree.parse(Array(("{" + members.joined(separator: ",\n") + "}").utf8)).get()
        #expect(ContinuousClock.now - start < .seconds(10))
        if case let .object(keys, _) = tree { #expect(keys.count == n) } else { Issue.record("not an object") }
        refuses("{" + members.joined(separator: ",\n") + ",\n\"k777\": 0}", "duplicate key \"k777\"", line: n + 1)
        refuses("{" + members.prefix(40).joined(separator: ",\n") + ",\n\"k3\": 0}", "duplicate key \"k3\"", line: 41)
    }

    @Test func invalidUTF8IsRefusedNotReplaced() {
        for bytes: [UInt8] in [[0xC3, 0x28], [0xFF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82], [0xC0, 0xAF]] {
            let doc: [UInt8] = Array("{\"k\":\n \"ok ".utf8) + bytes + Array("\"}".utf8)
            switch Tree.parse(doc) {
            case .success(let t): Issue.record("accepted \(bytes) as \(t)")
            case .failure(let e):
                #expect(e.message.contains("not valid UTF-8") && e.line == 2, "\(bytes): \(e)")
            }
            // In a key, and in a string with escapes.
            #expect(throws: JSONReadError.self) { try Tree.parse([0x7B, 0x22] + bytes + Array("\": 1}".utf8)).get() }
            #expect(throws: JSONReadError.self) { try Tree.parse(Array("\"\\n".utf8) + bytes + [0x22]).get() }
        }
        #expect(Tree.parse(Array("\"é😀\u{2028}\"".utf8)) == .success(.string("é😀\u{2028}")))
    }

    @Test func storeWithInvalidUTF8InANoteIsRefusedNotRewritten() throws {
        var doc = Array("""
        {"format": "bitpal-portfolio", "version": 1, "baseCurrency": "USD", "transactions": [
        {"id": "0a4f8e2c-1b3d-4e5f-8a9b-0c1d2e3f4a5b", "coinId": "bitcoin", "type": "buy", "amount": "1", "pricePerCoin": "1", "fee": "0", "date": "2024-01-01T00:00:00Z", "notes": "caf
        """.utf8)
        doc += [0xE9] + Array("\"}], \"watchlist\": [], \"manualPrices\": []}".utf8)
        #expect(throws: StoreError.self) { try PortfolioCodec.decode(doc, path: "x") }
    }
}

/// bitpal's reader against Foundation's `JSONSerialization` on generated documents, valid and
/// mutated: both accept or both refuse, and on accepting they agree on every value.
///
/// Intentional differences (JSONSerialization is lenient where bitpal is strict, or the reverse):
/// - duplicate keys: JSONSerialization keeps the last; bitpal refuses them;
/// - a trailing comma (`[1,]`, `{"a":1,}`): JSONSerialization accepts it; bitpal refuses it;
/// - a U+FEFF at the start of a string or right after an escape: JSONSerialization drops it;
///   bitpal keeps it (strings are compared without U+FEFF);
/// - a number beyond `Double` (`1e400`): JSONSerialization refuses it; bitpal's grammar accepts
///   the text (the fields that read numbers then refuse values they cannot hold).
@Suite struct JSONDifferentialTests {
    static func quoted(_ s: String) -> String {
        var text = JSONValue.string(s).rendered()
        while text.hasSuffix("\n") { text.removeLast() }
        return text
    }

    static func generateString(_ g: inout SeededRandom) -> String {
        let pieces = ["a", "Z", "0", " ", "\"", "\\", "/", "\n", "\t", "\u{0}", "\u{1F}", "\u{7F}", "é", "😀", "\u{2028}", "\u{2029}",
                      "\u{FEFF}", "\\u12", "\\\"", "\u{10FFFF}", "中"]
        return (0..<g.below(8)).map { _ in g.pick(pieces) }.joined()
    }

    static func generateNumber(_ g: inout SeededRandom) -> String {
        var s = g.below(3) == 0 ? "-" : ""
        s += g.below(4) == 0 ? "0" : String(g.below(9) + 1) + (0..<g.below(20)).map { _ in String(g.below(10)) }.joined()
        if g.below(2) == 0 { s += "." + (0..<(g.below(18) + 1)).map { _ in String(g.below(10)) }.joined() }
        if g.below(4) == 0 { s += g.pick(["e", "E"]) + g.pick(["", "+", "-"]) + String(g.below(300)) }
        return s
    }

    static func generate(_ g: inout SeededRandom, depth: Int) -> String {
        let ws = ["", " ", "\n", "\t", "\r\n  "]
        switch g.below(depth > 3 ? 4 : 6) {
        case 0: return "null"
        case 1: return g.pick(["true", "false"])
        case 2: return generateNumber(&g)
        case 3: return quoted(generateString(&g))
        case 4:
            return "[" + (0..<g.below(4)).map { _ in g.pick(ws) + generate(&g, depth: depth + 1) + g.pick(ws) }.joined(separator: ",") + "]"
        default:
            var keys = Set<String>()
            let members: [String] = (0..<g.below(4)).compactMap { _ in
                let k = generateString(&g)
                guard keys.insert(k).inserted else { return nil }
                return g.pick(ws) + quoted(k) + g.pick(ws) + ":" + g.pick(ws) + generate(&g, depth: depth + 1)
            }
            return "{" + members.joined(separator: ",") + g.pick(ws) + "}"
        }
    }

    static func mutate(_ doc: [UInt8], _ g: inout SeededRandom) -> [UInt8] {
        var b = doc
        let alphabet: [[UInt8]] = [",", "]", "}", "[", "{", "\"", "\\", "0", "1", "-", "+", "e", ".", ":", " ", "\n", "u", "\\ud800", "\\udc00",
                                   "tru", "nul", "01", "1e", "\"a\":1,\"a\":2"].map { Array($0.utf8) } + [[0xC3], [0xFF], [0xE2, 0x80], [0xED, 0xA0, 0x80]]
        for _ in 0..<(g.below(3) + 1) {
            let at = b.isEmpty ? 0 : g.below(b.count + 1)
            switch g.below(3) {
            case 0: b.insert(contentsOf: g.pick(alphabet), at: at)
            case 1: if at < b.count { b.remove(at: at) }
            default: if at < b.count { b.replaceSubrange(at..<(at + 1), with: g.pick(alphabet)) }
            }
        }
        return b
    }

    /// Whether a refusal by bitpal of what JSONSerialization accepted is one of the documented differences.
    static func isDocumentedStrictness(_ doc: [UInt8], _ error: JSONReadError) -> Bool {
        if error.message.hasPrefix("duplicate key") { return true }
        // A trailing comma: the error is at a closing bracket whose previous non-space byte is ','.
        let lines = doc.split(separator: 0x0A, omittingEmptySubsequences: false)
        guard error.line >= 1, error.line <= lines.count else { return false }
        let line = Array(lines[error.line - 1])
        let i = error.column - 1
        guard i < line.count, line[i] == UInt8(ascii: "]") || line[i] == UInt8(ascii: "}") else { return false }
        // Look back across whitespace (possibly on earlier lines).
        var before = Array(lines[0..<(error.line - 1)].joined(separator: [0x0A])) + (error.line > 1 ? [0x0A] : []) + line[0..<i]
        while let last = before.last, [0x20, 0x0A, 0x0D, 0x09].contains(last) { before.removeLast() }
        return before.last == UInt8(ascii: ",")
    }

    @Test func agreesWithJSONSerialization() throws {
        var g = SeededRandom(seed: 2026_11_23)
        var compared = 0, accepted = 0, refused = 0
        for round in 0..<4000 {
            let valid = Array(Self.generate(&g, depth: 0).utf8)
            let doc = round % 3 == 0 ? valid : Self.mutate(valid, &g)
            let ours = Tree.parse(doc)
            let theirs = try? JSONSerialization.jsonObject(with: Data(doc), options: [.fragmentsAllowed])
            switch (ours, theirs) {
            case let (.success(tree), theirs?):
                #expect(tree.agrees(with: theirs), "round \(round): \(String(decoding: doc, as: UTF8.self).debugDescription)")
                accepted += 1
            case let (.success(tree), nil):
                #expect(tree.hasNumberBeyondDouble, "round \(round): only bitpal accepts \(String(decoding: doc, as: UTF8.self).debugDescription)")
            case let (.failure(error), _?):
                #expect(Self.isDocumentedStrictness(doc, error),
                        "round \(round): only JSONSerialization accepts \(String(decoding: doc, as: UTF8.self).debugDescription): \(error)")
            case (.failure, nil):
                refused += 1
            }
            compared += 1
            if round % 3 == 0 { #expect((try? ours.get()) != nil, "round \(round): generated valid JSON refused") }
        }
        #expect(accepted > 1000 && refused > 1000, "accepted \(accepted), refused \(refused) of \(compared)")
    }
}

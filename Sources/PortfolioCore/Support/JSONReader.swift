import Foundation

/// A malformed JSON document: what was expected and where (1-based line and column).
public struct JSONReadError: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String
    public var line: Int
    public var column: Int
    public var description: String { "line \(line), column \(column): \(message)" }
}

/// Bytes in memory this process owns: scanned without bounds checks or reference counting.
///
/// `UnsafeBufferPointer`s handed out by a `JSONReader` point into it and live as long as it does.
public final class ByteBuffer {
    public let base: UnsafeMutablePointer<UInt8>
    public private(set) var count: Int
    let capacity: Int
    /// Decoded text of the last escaped string returned as bytes.
    private var scratch: UnsafeMutablePointer<UInt8>
    private var scratchCapacity = 256

    /// Empty memory for `capacity` bytes, to be filled with `append`.
    public init(capacity: Int) {
        self.capacity = max(capacity, 1)
        base = UnsafeMutablePointer<UInt8>.allocate(capacity: self.capacity)
        count = 0
        scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: 256)
    }

    public convenience init(copying source: [UInt8]) {
        self.init(capacity: source.count)
        source.withUnsafeBufferPointer { buffer in
            if let from = buffer.baseAddress { base.initialize(from: from, count: buffer.count) }
        }
        count = source.count
    }

    /// Marks `n` more bytes, written by the caller after `count`, as filled.
    func grow(by n: Int) { count += n }

    var freeSpace: Int { capacity - count }

    func keep(_ decoded: [UInt8]) -> UnsafeBufferPointer<UInt8> {
        if decoded.count > scratchCapacity {
            scratch.deallocate()
            scratchCapacity = decoded.count
            scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: scratchCapacity)
        }
        decoded.withUnsafeBufferPointer { buffer in
            if let from = buffer.baseAddress { scratch.update(from: from, count: decoded.count) }
        }
        return UnsafeBufferPointer(start: scratch, count: decoded.count)
    }

    deinit {
        base.deallocate()
        scratch.deallocate()
    }
}

/// A strict pull parser over UTF-8 bytes.
///
/// Callers walk the document they expect (`beginObject`, `nextKey`, `readString` …),
/// so a large store is read in one pass without building a tree, and every
/// error carries its line and column.
public struct JSONReader {
    private let storage: ByteBuffer
    private let bytes: UnsafeMutablePointer<UInt8>
    private let count: Int
    public private(set) var position = 0
    private var firstInContainer: [Bool] = []
    /// The keys of every open object, back to back, so a repeated key is refused: where each
    /// key's bytes start in `keyBytes` and how long it is; `keyFrames` holds, per open
    /// container, how many keys were listed before it opened.
    private var keyBytes: [UInt8] = []
    private var keyRanges: [(start: Int, count: Int)] = []
    private var keyFrames: [Int] = []
    /// For objects with many keys, their keys as a set, by nesting depth.
    private var largeObjectKeys: [Int: Set<[UInt8]>] = [:]
    /// The bytes before this offset were handed back to the system (`releaseConsumed`): they read as
    /// zeros now, and `releasedLines` line breaks were among them.
    private var releasedUpTo = 0
    private var releasedLines = 0
    /// Another reader of the same buffer runs at the same time (`init(sharing:at:)`): this one may not
    /// use the buffer's scratch memory, so an escaped string read as bytes is an error here.
    private var sharing = false

    /// Reads a copy of `source`.
    public init(bytes source: [UInt8]) {
        self.init(buffer: ByteBuffer(copying: source))
    }

    /// Reads `buffer` from `position` on, on one thread while another reader reads it on another: for a
    /// reader that reads values, not containers, and is thrown away at its first error (whose line and
    /// column it does not know). It leaves the buffer as it is (no scratch memory, no release).
    init(sharing buffer: ByteBuffer, at position: Int) {
        self.init(buffer: buffer)
        self.position = min(max(position, 0), count)
        releasedUpTo = self.position
        sharing = true
    }

    /// Reads `buffer` in place (e.g. a whole file read by `FileSystem.readBuffer`).
    public init(buffer: ByteBuffer) {
        storage = buffer
        bytes = buffer.base
        count = buffer.count
        // Skip a UTF-8 byte order mark.
        if count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { position = 3 }
    }

    // MARK: Containers

    public mutating func beginObject() throws(JSONReadError) {
        try expect(UInt8(ascii: "{"), "expected '{'")
        try enter()
    }

    /// Containers deeper than this are refused (a hostile file cannot exhaust the stack).
    public static let maxDepth = 256

    private mutating func enter() throws(JSONReadError) {
        if firstInContainer.count >= JSONReader.maxDepth { throw error("nesting deeper than \(JSONReader.maxDepth) levels") }
        firstInContainer.append(true)
        keyFrames.append(keyRanges.count)
    }

    /// Closes the innermost container and forgets its keys.
    private mutating func leave() {
        firstInContainer.removeLast()
        if !largeObjectKeys.isEmpty { largeObjectKeys[keyFrames.count - 1] = nil }
        if let frame = keyFrames.popLast(), frame < keyRanges.count {
            keyBytes.removeSubrange(keyRanges[frame].start...)
            keyRanges.removeSubrange(frame...)
        }
    }

    /// Refuses `key` if the innermost object already had it (RFC 8259 leaves duplicates to the
    /// reader; bitpal refuses them rather than let one silently win). Objects are small, so a
    /// linear scan of the keys seen so far is cheapest; an object past 32 keys (not one bitpal
    /// writes) switches to a hash set, so a hostile file cannot make this quadratic.
    private mutating func remember(_ key: UnsafeBufferPointer<UInt8>, at keyStart: Int) throws(JSONReadError) {
        let depth = keyFrames.count - 1
        let frame = keyFrames[depth]
        if keyRanges.count - frame >= JSONReader.linearKeyLimit {
            if largeObjectKeys[depth] == nil {
                var set = Set<[UInt8]>()
                for r in keyRanges[frame...] { set.insert(Array(keyBytes[r.start..<(r.start + r.count)])) }
                largeObjectKeys[depth] = set
            }
            if largeObjectKeys[depth]?.insert(Array(key)).inserted == false { throw duplicate(key, at: keyStart) }
            return
        }
        var i = frame
        while i < keyRanges.count {
            let seen = keyRanges[i]
            if seen.count == key.count {
                let same = keyBytes.withUnsafeBufferPointer { stored -> Bool in
                    guard let a = stored.baseAddress, let b = key.baseAddress else { return key.isEmpty }
                    return memcmp(a + seen.start, b, key.count) == 0
                }
                if same { throw duplicate(key, at: keyStart) }
            }
            i += 1
        }
        keyRanges.append((keyBytes.count, key.count))
        keyBytes.append(contentsOf: key)
    }

    private static let linearKeyLimit = 32

    private mutating func duplicate(_ key: UnsafeBufferPointer<UInt8>, at keyStart: Int) -> JSONReadError {
        position = keyStart
        return error("duplicate key \"\(TextEscaping.escaped(String(decoding: key, as: UTF8.self)))\"")
    }

    /// The next key of the current object, or `nil` after its closing `}`.
    public mutating func nextKey() throws(JSONReadError) -> String? {
        try nextKeyBytes().map { String(decoding: $0, as: UTF8.self) }
    }

    /// Like `nextKey`, but the key's raw bytes (keys with escapes are decoded first).
    public mutating func nextKeyBytes() throws(JSONReadError) -> UnsafeBufferPointer<UInt8>? {
        guard try nextMember(closedBy: UInt8(ascii: "}")) else { return nil }
        skipWhitespace()
        guard position < count, bytes[position] == UInt8(ascii: "\"") else {
            throw error("expected a key in double quotes")
        }
        let keyStart = position
        let key = try readRawStringBytes()
        try remember(key, at: keyStart)
        try expect(UInt8(ascii: ":"), "expected ':' after a key")
        return key
    }

    /// A whole array, each element read by `element`.
    public mutating func readArray<T>(_ element: (inout JSONReader) throws(JSONReadError) -> T) throws(JSONReadError) -> [T] {
        var out: [T] = []
        try beginArray()
        while try nextElement() { out.append(try element(&self)) }
        return out
    }

    public mutating func beginArray() throws(JSONReadError) {
        try expect(UInt8(ascii: "["), "expected '['")
        try enter()
    }

    /// True when another element follows in the current array; false after its closing `]`.
    public mutating func nextElement() throws(JSONReadError) -> Bool {
        try nextMember(closedBy: UInt8(ascii: "]"))
    }

    /// Steps past the `,` before the next member of the open container; false (and the container
    /// closed) at its closing bracket.
    private mutating func nextMember(closedBy closer: UInt8) throws(JSONReadError) -> Bool {
        let what = closer == UInt8(ascii: "]") ? "']'" : "'}'"
        skipWhitespace()
        guard position < count else { throw error("unexpected end of file; expected \(what)") }
        if bytes[position] == closer {
            position += 1
            leave()
            return false
        }
        if firstInContainer[firstInContainer.count - 1] {
            firstInContainer[firstInContainer.count - 1] = false
        } else {
            try expect(UInt8(ascii: ","), "expected ',' or \(what)")
        }
        return true
    }

    // MARK: Layout-aware fast paths

    /// Consumes `literal` if the bytes at the current position are exactly it.
    public mutating func consume(_ literal: StaticString) -> Bool {
        let n = literal.utf8CodeUnitCount
        guard position + n <= count, memcmp(bytes + position, literal.utf8Start, n) == 0 else { return false }
        position += n
        return true
    }

    /// Where the reader is, to come back to if a fast path does not fit.
    public var mark: Int { position }

    /// Consumes `expected` if the bytes at the current position are exactly it.
    mutating func consume(bytes expected: UnsafeBufferPointer<UInt8>) -> Bool {
        let n = expected.count
        guard let e = expected.baseAddress, position + n <= count, memcmp(bytes + position, e, n) == 0 else { return false }
        position += n
        return true
    }

    /// A string's bytes when it is plain printable ASCII (no escape, no control or high byte), consumed;
    /// else `nil` with nothing consumed. For the one-line fast path: such bytes are the string's text.
    mutating func readPlainASCIIString() -> UnsafeBufferPointer<UInt8>? {
        guard position < count, bytes[position] == UInt8(ascii: "\"") else { return nil }
        var i = position + 1
        while i < count {
            let b = bytes[i]
            if b == UInt8(ascii: "\"") {
                let text = UnsafeBufferPointer(start: bytes + position + 1, count: i - position - 1)
                position = i + 1
                return text
            }
            if b < 0x20 || b >= 0x7F || b == UInt8(ascii: "\\") { return nil }
            i += 1
        }
        return nil
    }

    /// The bytes between two marks, as they are in the document (escapes and all).
    func bytes(from start: Int, to end: Int) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: bytes + start, count: max(0, min(end, count) - start))
    }

    /// Returns to a `mark` taken in the same container.
    public mutating func rewind(to mark: Int) { position = mark }

    /// Skips spaces and line breaks.
    public mutating func skipSpace() { skipWhitespace() }

    // MARK: Scalars

    /// True (and consumed) if the next value is `null`.
    public mutating func consumeNull() -> Bool {
        skipWhitespace()
        if position + 4 <= count, bytes[position] == UInt8(ascii: "n"), bytes[position + 1] == UInt8(ascii: "u"),
           bytes[position + 2] == UInt8(ascii: "l"), bytes[position + 3] == UInt8(ascii: "l") {
            position += 4
            return true
        }
        return false
    }

    public mutating func readString() throws(JSONReadError) -> String {
        skipWhitespace()
        guard position < count, bytes[position] == UInt8(ascii: "\"") else { throw error("expected a string") }
        position += 1
        let start = position
        var high: UInt8 = 0
        while position < count {
            let b = bytes[position]
            if b == UInt8(ascii: "\"") {
                let text = UnsafeBufferPointer(start: bytes + start, count: position - start)
                if high >= 0x80 {
                    // Only text with non-ASCII bytes needs checking; invalid UTF-8 is refused,
                    // never turned into U+FFFD (which the next save would write back).
                    guard let s = String(validating: text, as: UTF8.self) else { throw invalidUTF8(from: start) }
                    position += 1
                    return s
                }
                position += 1
                return String(decoding: text, as: UTF8.self)
            }
            if b == UInt8(ascii: "\\") { return try readEscapedString(from: start) }
            if b < 0x20 { throw error("control character inside a string") }
            high |= b
            position += 1
        }
        throw error("unterminated string")
    }

    /// The error for a string starting at `start` that is not valid UTF-8, at its first bad byte.
    private mutating func invalidUTF8(from start: Int) -> JSONReadError {
        var i = start
        var valid = 0
        // Find the first byte where decoding fails, for the column.
        var it = UnsafeBufferPointer(start: bytes + start, count: position - start).makeIterator()
        var decoder = UTF8()
        loop: while true {
            switch decoder.decode(&it) {
            case let .scalarValue(scalar): valid += UTF8.width(scalar)
            case .emptyInput, .error: break loop
            }
        }
        i += valid
        position = i
        return error("text that is not valid UTF-8 inside a string")
    }

    /// A string's bytes without making a `String` (numbers stored as strings, ids, dates, keys).
    ///
    /// The buffer is valid while this reader lives and until the next read.
    public mutating func readRawStringBytes() throws(JSONReadError) -> UnsafeBufferPointer<UInt8> {
        skipWhitespace()
        guard position < count, bytes[position] == UInt8(ascii: "\"") else { throw error("expected a string") }
        position += 1
        let start = position
        var high: UInt8 = 0
        while position < count {
            let b = bytes[position]
            if b == UInt8(ascii: "\"") {
                let text = UnsafeBufferPointer(start: bytes + start, count: position - start)
                if high >= 0x80 && String(validating: text, as: UTF8.self) == nil { throw invalidUTF8(from: start) }
                position += 1
                return text
            }
            high |= b
            if b == UInt8(ascii: "\\") || b < 0x20 {
                if sharing { throw error("an escaped string, not read here") }
                position = start - 1
                let s = try readString()
                return storage.keep(Array(s.utf8))
            }
            position += 1
        }
        throw error("unterminated string")
    }

    public mutating func readStringOrNull() throws(JSONReadError) -> String? {
        if consumeNull() { return nil }
        return try readString()
    }

    /// The text of a JSON number, exactly as written.
    public mutating func readNumberText() throws(JSONReadError) -> String {
        skipWhitespace()
        let start = position
        guard scanNumber() else {
            let bad = position
            while position < count, isNumberByte(bytes[position]) { position += 1 }
            let text = String(decoding: UnsafeBufferPointer(start: bytes + start, count: position - start), as: UTF8.self)
            position = bad
            throw error(text.isEmpty ? "expected a value" : "'\(TextEscaping.escaped(text))' is not a JSON number")
        }
        return String(decoding: UnsafeBufferPointer(start: bytes + start, count: position - start), as: UTF8.self)
    }

    /// Steps over `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?` (RFC 8259), not followed by
    /// another number character; false (at the offending byte) if the text is not that.
    private mutating func scanNumber() -> Bool {
        func isDigit(_ i: Int) -> Bool { i < count && bytes[i] >= 48 && bytes[i] <= 57 }
        if position < count, bytes[position] == UInt8(ascii: "-") { position += 1 }
        guard isDigit(position) else { return false }
        if bytes[position] == 48 {
            position += 1
        } else {
            while isDigit(position) { position += 1 }
        }
        if position < count, bytes[position] == UInt8(ascii: ".") {
            position += 1
            guard isDigit(position) else { return false }
            while isDigit(position) { position += 1 }
        }
        if position < count, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
            position += 1
            if position < count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") { position += 1 }
            guard isDigit(position) else { return false }
            while isDigit(position) { position += 1 }
        }
        // `01`, `1.2.3`, `1e5e5`, `1-2`: the number must end here.
        return !(position < count && isNumberByte(bytes[position]))
    }

    /// The first byte of the next value (after whitespace), without consuming it; `nil` at the end.
    public mutating func peek() -> UInt8? {
        skipWhitespace()
        return position < count ? bytes[position] : nil
    }

    public mutating func readInt() throws(JSONReadError) -> Int {
        let text = try readNumberText()
        guard let v = Int(text) else { throw error("expected a whole number, found \(text)") }
        return v
    }

    public mutating func readBool() throws(JSONReadError) -> Bool {
        skipWhitespace()
        if matchLiteral("true") { return true }
        if matchLiteral("false") { return false }
        throw error("expected true or false")
    }

    /// Skips any value.
    public mutating func skipValue() throws(JSONReadError) {
        skipWhitespace()
        guard position < count else { throw error("unexpected end of file; expected a value") }
        switch bytes[position] {
        case UInt8(ascii: "{"):
            try beginObject()
            while try nextKey() != nil { try skipValue() }
        case UInt8(ascii: "["):
            try beginArray()
            while try nextElement() { try skipValue() }
        case UInt8(ascii: "\""): _ = try readString()
        case UInt8(ascii: "t"), UInt8(ascii: "f"): _ = try readBool()
        case UInt8(ascii: "n"):
            guard consumeNull() else { throw error("unexpected character") }
        case UInt8(ascii: "-"), 48...57: _ = try readNumberText()
        default: throw error("expected a value")
        }
    }

    /// Requires that nothing but whitespace follows.
    public mutating func finish() throws(JSONReadError) {
        skipWhitespace()
        if position < count { throw error("unexpected text after the end of the document") }
    }

    /// Hands the memory of whole pages before the line that `mark` is on back to the system, for a
    /// caller that will never come back to them (a large file read once, front to back): they then
    /// read as zeros. Errors still name the right line and column. Only for a buffer this reader
    /// alone uses, and only pages inside it.
    mutating func releaseConsumed(before mark: Int) {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        guard page > 0, mark <= count else { return }
        // The start of the line `mark` is on: the reader may come back to it (a record read again).
        var lineStart = mark
        while lineStart > releasedUpTo && bytes[lineStart - 1] != 0x0A {
            // Not a file of short lines: keep it all.
            if mark - lineStart > 1 << 16 { return }
            lineStart -= 1
        }
        let address = Int(bitPattern: bytes)
        let first = (address + releasedUpTo + page - 1) / page * page
        let last = (address + lineStart) / page * page
        guard last - first >= 16 * page else { return }
        let upTo = last - address
        let lines = JSONReader.lineBreaks(in: bytes(from: releasedUpTo, to: upTo))
        guard let start = UnsafeMutableRawPointer(bitPattern: first), madvise(start, last - first, MADV_DONTNEED) == 0 else { return }
        releasedLines += lines
        releasedUpTo = upTo
    }

    /// How many line breaks `text` holds: eight bytes at a time.
    static func lineBreaks(in text: UnsafeBufferPointer<UInt8>) -> Int {
        guard let base = text.baseAddress else { return 0 }
        let n = text.count
        var count = 0
        var i = 0
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080, lows: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
        while i + 8 <= n {
            // A byte of `x` is zero exactly where the text has a line break; its high bit of `t` is then clear.
            let x = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self) ^ (ones &* 0x0A)
            let t = ((x & lows) &+ lows) | x
            count += (~t & highs).nonzeroBitCount
            i += 8
        }
        while i < n {
            if base[i] == 0x0A { count += 1 }
            i += 1
        }
        return count
    }

    /// An error at the current position.
    public func error(_ message: String) -> JSONReadError {
        var line = 1 + releasedLines
        var lineStart = releasedUpTo
        let end = min(position, count)
        var i = releasedUpTo
        while i < end {
            if bytes[i] == 0x0A { line += 1; lineStart = i + 1 }
            i += 1
        }
        return JSONReadError(message: message, line: line, column: end - lineStart + 1)
    }

    // MARK: Internals

    private mutating func skipWhitespace() {
        while position < count {
            switch bytes[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }

    private mutating func expect(_ byte: UInt8, _ message: @autoclosure () -> String) throws(JSONReadError) {
        skipWhitespace()
        guard position < count else { throw error("unexpected end of file; \(message())") }
        guard bytes[position] == byte else { throw error(message()) }
        position += 1
    }

    private mutating func matchLiteral(_ word: StaticString) -> Bool {
        let n = word.utf8CodeUnitCount
        guard position + n <= count else { return false }
        let p = word.utf8Start
        for i in 0..<n where bytes[position + i] != p[i] { return false }
        position += n
        return true
    }

    private func isNumberByte(_ b: UInt8) -> Bool {
        (b >= 48 && b <= 57) || b == UInt8(ascii: ".") || b == UInt8(ascii: "e") || b == UInt8(ascii: "E")
            || b == UInt8(ascii: "+") || b == UInt8(ascii: "-")
    }

    private mutating func readEscapedString(from start: Int) throws(JSONReadError) -> String {
        var out = Array(UnsafeBufferPointer(start: bytes + start, count: position - start))
        while position < count {
            let b = bytes[position]
            if b == UInt8(ascii: "\"") {
                guard let s = String(validating: out, as: UTF8.self) else { throw invalidUTF8(from: start) }
                position += 1
                return s
            }
            if b < 0x20 { throw error("control character inside a string") }
            if b != UInt8(ascii: "\\") {
                out.append(b)
                position += 1
                continue
            }
            position += 1
            guard position < count else { break }
            let e = bytes[position]
            position += 1
            switch e {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var code = try hex4()
                if code >= 0xD800 && code < 0xDC00 {
                    guard position + 1 < count, bytes[position] == UInt8(ascii: "\\"),
                          bytes[position + 1] == UInt8(ascii: "u") else { throw error("unpaired surrogate") }
                    position += 2
                    let low = try hex4()
                    guard low >= 0xDC00 && low < 0xE000 else { throw error("unpaired surrogate") }
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let scalar = Unicode.Scalar(code) else { throw error("invalid \\u escape") }
                out.append(contentsOf: Array(String(Character(scalar)).utf8))
            default: throw error("invalid escape in a string")
            }
        }
        throw error("unterminated string")
    }

    private mutating func hex4() throws(JSONReadError) -> UInt32 {
        guard position + 4 <= count else { throw error("invalid \\u escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let c = bytes[position]
            let d: UInt32
            switch c {
            case 48...57: d = UInt32(c - 48)
            case 97...102: d = UInt32(c - 87)
            case 65...70: d = UInt32(c - 55)
            default: throw error("invalid \\u escape")
            }
            v = v * 16 + d
            position += 1
        }
        return v
    }
}

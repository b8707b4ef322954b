import Foundation

/// Why a binary image could not be read: it is cut short or holds what no writer writes. A snapshot
/// that fails this way is ignored (it is only a cache).
struct ImageError: Error {}

/// Writes the compact binary form of a snapshot (`Snapshot`): fixed-width little-endian numbers, and
/// strings written once in a table and named by their place in it.
struct ImageWriter {
    private(set) var bytes: [UInt8] = []
    private var ids: [String: UInt32] = [:]
    /// The strings, in the order first written.
    private(set) var table: [String] = []

    init(capacity: Int = 1 << 12) { bytes.reserveCapacity(capacity) }

    mutating func u8(_ v: UInt8) { bytes.append(v) }
    mutating func bool(_ v: Bool) { bytes.append(v ? 1 : 0) }
    mutating func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func u64(_ v: UInt64) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func i64(_ v: Int64) { u64(UInt64(bitPattern: v)) }
    mutating func int(_ v: Int) { i64(Int64(v)) }
    mutating func u128(_ v: UInt128) {
        u64(UInt64(truncatingIfNeeded: v))
        u64(UInt64(truncatingIfNeeded: v >> 64))
    }
    mutating func count(_ n: Int) { u32(UInt32(n)) }
    /// A number in as few bytes as it needs: their count, then the bytes, lowest first.
    mutating func varU128(_ v: UInt128) {
        let n = (128 - v.leadingZeroBitCount + 7) / 8
        u8(UInt8(n))
        withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0.prefix(n)) }
    }
    /// A whole number, zigzag-coded in as few bytes as it needs.
    mutating func varInt(_ v: Int) { varU128(UInt128(UInt64(bitPattern: Int64((v << 1) ^ (v >> 63))))) }
    mutating func fixed(_ v: Fixed18) { varU128(v.units) }
    mutating func exact(_ v: Exact36) {
        bool(v.negative)
        varU128(v.high)
        varU128(v.low)
    }
    /// A date as the bits of its seconds since 2001: read back exactly.
    mutating func date(_ v: Date) { u64(v.timeIntervalSinceReferenceDate.bitPattern) }
    mutating func uuid(_ v: UUID) { withUnsafeBytes(of: v.uuid) { bytes.append(contentsOf: $0) } }
    /// The text itself (length, then UTF-8), not its place in the table.
    mutating func rawString(_ s: String) {
        var s = s
        s.withUTF8 { text in
            count(text.count)
            bytes.append(contentsOf: text)
        }
    }
    /// A string by its place in the table (added the first time).
    mutating func string(_ s: String) {
        if let id = ids[s] { return u32(id) }
        let id = UInt32(table.count)
        ids[s] = id
        table.append(s)
        u32(id)
    }
    mutating func optional<T>(_ v: T?, _ write: (inout ImageWriter, T) -> Void) {
        guard let v else { return bool(false) }
        bool(true)
        write(&self, v)
    }
}

/// Reads what `ImageWriter` wrote; every read is bounds-checked, and anything out of place throws.
struct ImageReader {
    private let bytes: [UInt8]
    private(set) var at: Int
    /// The table the strings are named by (read before them).
    var table: [String] = []

    init(_ bytes: [UInt8], at: Int = 0) {
        self.bytes = bytes
        self.at = at
    }

    var atEnd: Bool { at == bytes.count }

    private mutating func take(_ n: Int) throws(ImageError) -> Int {
        guard n >= 0, n <= bytes.count - at else { throw ImageError() }
        defer { at += n }
        return at
    }

    mutating func u8() throws(ImageError) -> UInt8 { bytes[try take(1)] }
    mutating func bool() throws(ImageError) -> Bool {
        switch try u8() {
        case 0: false
        case 1: true
        default: throw ImageError()
        }
    }
    mutating func u32() throws(ImageError) -> UInt32 {
        let i = try take(4)
        return bytes.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: i, as: UInt32.self)) }
    }
    mutating func u64() throws(ImageError) -> UInt64 {
        let i = try take(8)
        return bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: i, as: UInt64.self)) }
    }
    mutating func i64() throws(ImageError) -> Int64 { Int64(bitPattern: try u64()) }
    mutating func int() throws(ImageError) -> Int { Int(try i64()) }
    mutating func u128() throws(ImageError) -> UInt128 {
        let low = try u64()
        return UInt128(try u64()) << 64 | UInt128(low)
    }
    /// A count of things of at least `size` bytes each: never more than the bytes left could hold.
    mutating func count(each size: Int) throws(ImageError) -> Int {
        let n = Int(try u32())
        guard n <= (bytes.count - at) / max(size, 1) else { throw ImageError() }
        return n
    }
    mutating func varU128() throws(ImageError) -> UInt128 {
        let n = Int(try u8())
        guard n <= 16 else { throw ImageError() }
        let i = try take(n)
        guard n > 0 else { return 0 }
        // As written: no byte more than the number needs.
        guard bytes[i + n - 1] != 0 else { throw ImageError() }
        if i + 16 <= bytes.count {
            // One load of 16 bytes, the ones past the number masked off.
            let v = bytes.withUnsafeBytes { UInt128(littleEndian: $0.loadUnaligned(fromByteOffset: i, as: UInt128.self)) }
            return n == 16 ? v : v & ((1 << (8 * n)) - 1)
        }
        var v: UInt128 = 0
        for k in 0..<n { v |= UInt128(bytes[i + k]) << (8 * k) }
        return v
    }
    /// A whole number within ±2⁴⁰ (counters and places: anything larger is not from a writer).
    mutating func varInt() throws(ImageError) -> Int {
        let zigzag = try varU128()
        guard zigzag < 1 << 41 else { throw ImageError() }
        let z = Int(zigzag)
        return (z >> 1) ^ -(z & 1)
    }
    mutating func fixed() throws(ImageError) -> Fixed18 { Fixed18(units: try varU128()) }
    mutating func exact() throws(ImageError) -> Exact36 {
        let negative = try bool()
        let high = try varU128()
        return Exact36(negative: negative, high: high, low: try varU128())
    }
    /// A date between the years 1 and 9999 (as every stored one is).
    mutating func date() throws(ImageError) -> Date {
        let seconds = Double(bitPattern: try u64())
        guard seconds.isFinite, seconds > -63_200_000_000, seconds < 252_500_000_000 else { throw ImageError() }
        return Date(timeIntervalSinceReferenceDate: seconds)
    }
    /// A calendar day (days since 1970) between the years 1 and 9999.
    mutating func day() throws(ImageError) -> Int64 {
        let d = try i64()
        guard d > -720_000, d < 2_933_000 else { throw ImageError() }
        return d
    }
    mutating func uuid() throws(ImageError) -> UUID {
        let i = try take(16)
        return UUID(uuid: bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: i, as: uuid_t.self) })
    }
    mutating func rawString() throws(ImageError) -> String {
        let n = try count(each: 1)
        let i = try take(n)
        guard let s = String(validating: bytes[i..<i + n], as: UTF8.self) else { throw ImageError() }
        return s
    }
    mutating func string() throws(ImageError) -> String {
        let id = Int(try u32())
        guard id < table.count else { throw ImageError() }
        return table[id]
    }
    mutating func optional<T>(_ read: (inout ImageReader) throws(ImageError) -> T) throws(ImageError) -> T? {
        try bool() ? try read(&self) : nil
    }
    mutating func array<T>(each size: Int, _ read: (inout ImageReader) throws(ImageError) -> T) throws(ImageError) -> [T] {
        let n = try count(each: size)
        var out: [T] = []
        out.reserveCapacity(n)
        for _ in 0..<n { out.append(try read(&self)) }
        return out
    }
    /// A raw value of a string enum, by its table name.
    mutating func named<T: RawRepresentable>(_: T.Type) throws(ImageError) -> T where T.RawValue == String {
        guard let v = T(rawValue: try string()) else { throw ImageError() }
        return v
    }
}

import Foundation

/// UUID text without Foundation's parser (which goes through `sscanf`, ~1.6 µs a call).
public enum UUIDText {
    /// Parses `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` in either case.
    public static func parse<C: Collection>(_ text: C) -> UUID? where C.Element == UInt8 {
        if let fast = text.withContiguousStorageIfAvailable({ parse(buffer: $0) }) { return fast }
        return Array(text).withUnsafeBufferPointer { parse(buffer: $0) }
    }

    /// Positions of the 32 hex digits in the 36 characters.
    private static let digitPositions: [Int] = (0..<36).filter { ![8, 13, 18, 23].contains($0) }

    /// Hex digit values by byte; 0xFF for anything else.
    /// A random (version 4) UUID. Foundation's `UUID()` opens `/dev/urandom` every time, which an
    /// import of 100,000 rows feels; this draws from a generator seeded once from the system's.
    public static func random() -> UUID {
        let raw = IDGenerator.shared.next128()
        var u = withUnsafeBytes(of: raw) { b in
            (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])
        }
        u.6 = (u.6 & 0x0F) | 0x40  // version 4
        u.8 = (u.8 & 0x3F) | 0x80  // RFC 4122 variant
        return UUID(uuid: u)
    }

    private static let hexValue: [UInt8] = (0..<256).map { b in
        switch b {
        case 48...57: UInt8(b - 48)
        case 97...102: UInt8(b - 87)
        case 65...70: UInt8(b - 55)
        default: 0xFF
        }
    }

    static func parse(buffer t: UnsafeBufferPointer<UInt8>) -> UUID? {
        guard t.count == 36, t[8] == 45, t[13] == 45, t[18] == 45, t[23] == 45 else { return nil }
        var hi: UInt64 = 0, lo: UInt64 = 0
        var bad: UInt8 = 0
        hexValue.withUnsafeBufferPointer { table in
            digitPositions.withUnsafeBufferPointer { positions in
                for i in 0..<16 {
                    let v = table[Int(t[positions[i]])]
                    bad |= v
                    hi = hi << 4 | UInt64(v & 0x0F)
                }
                for i in 16..<32 {
                    let v = table[Int(t[positions[i]])]
                    bad |= v
                    lo = lo << 4 | UInt64(v & 0x0F)
                }
            }
        }
        guard bad & 0xF0 == 0 else { return nil }
        func b(_ x: UInt64, _ i: Int) -> UInt8 { UInt8(truncatingIfNeeded: x >> (56 - 8 * i)) }
        return UUID(uuid: (b(hi, 0), b(hi, 1), b(hi, 2), b(hi, 3), b(hi, 4), b(hi, 5), b(hi, 6), b(hi, 7),
                           b(lo, 0), b(lo, 1), b(lo, 2), b(lo, 3), b(lo, 4), b(lo, 5), b(lo, 6), b(lo, 7)))
    }

    private static let hex = Array("0123456789abcdef".utf8)

    /// Lower-case text, as bitpal prints and stores ids.
    public static func lowercased(_ id: UUID) -> String {
        var out = [UInt8]()
        out.reserveCapacity(36)
        write(id, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the lower-case text of `id`.
    public static func write(_ id: UUID, to out: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 36) { text in
            withUnsafeBytes(of: id.uuid) { raw in
                hex.withUnsafeBufferPointer { digits in
                    var j = 0
                    for i in 0..<16 {
                        if i == 4 || i == 6 || i == 8 || i == 10 { text[j] = 45; j += 1 }
                        let b = raw[i]
                        text[j] = digits[Int(b >> 4)]
                        text[j + 1] = digits[Int(b & 15)]
                        j += 2
                    }
                }
            }
            out.append(contentsOf: UnsafeBufferPointer(text))
        }
    }
}

/// xoshiro256** seeded from the system generator: 122 random bits per id, no system call per id.
final class IDGenerator: @unchecked Sendable {
    static let shared = IDGenerator()
    private let lock = NSLock()
    private var s: (UInt64, UInt64, UInt64, UInt64)

    private init() {
        var system = SystemRandomNumberGenerator()
        s = (system.next(), system.next(), system.next(), system.next())
        if s == (0, 0, 0, 0) { s.0 = 0x9E37_79B9_7F4A_7C15 }
    }

    func next128() -> (UInt64, UInt64) {
        lock.lock()
        defer { lock.unlock() }
        return (step(), step())
    }

    private func step() -> UInt64 {
        let result = rotl(s.1 &* 5, 7) &* 9
        let t = s.1 << 17
        s.2 ^= s.0
        s.3 ^= s.1
        s.1 ^= s.2
        s.0 ^= s.3
        s.2 ^= t
        s.3 = rotl(s.3, 45)
        return result
    }

    private func rotl(_ x: UInt64, _ k: UInt64) -> UInt64 { (x << k) | (x >> (64 - k)) }
}

import Foundation

/// UUID text without Foundation's parser (which goes through `sscanf`, ~1.6 µs a call).
public enum UUIDText {
    /// Parses `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` in either case.
    public static func parse<C: Collection>(_ text: C) -> UUID? where C.Element == UInt8 {
        guard text.count == 36 else { return nil }
        var hi: UInt64 = 0, lo: UInt64 = 0
        var nibbles = 0
        var index = 0
        for c in text {
            defer { index += 1 }
            if index == 8 || index == 13 || index == 18 || index == 23 {
                guard c == UInt8(ascii: "-") else { return nil }
                continue
            }
            let v: UInt64
            switch c {
            case 48...57: v = UInt64(c - 48)
            case 97...102: v = UInt64(c - 87)
            case 65...70: v = UInt64(c - 55)
            default: return nil
            }
            if nibbles < 16 { hi = hi << 4 | v } else { lo = lo << 4 | v }
            nibbles += 1
        }
        func b(_ x: UInt64, _ i: Int) -> UInt8 { UInt8(truncatingIfNeeded: x >> (56 - 8 * i)) }
        return UUID(uuid: (b(hi, 0), b(hi, 1), b(hi, 2), b(hi, 3), b(hi, 4), b(hi, 5), b(hi, 6), b(hi, 7),
                           b(lo, 0), b(lo, 1), b(lo, 2), b(lo, 3), b(lo, 4), b(lo, 5), b(lo, 6), b(lo, 7)))
    }

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
        withUnsafeBytes(of: id.uuid) { raw in
            for i in 0..<16 {
                if i == 4 || i == 6 || i == 8 || i == 10 { out.append(UInt8(ascii: "-")) }
                let b = raw[i]
                out.append(hex[Int(b >> 4)])
                out.append(hex[Int(b & 15)])
            }
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

/// A fast 128-bit fingerprint of a byte stream, fed in pieces of any size (the same bytes give the
/// same fingerprint however they are cut). Not cryptographic: it tells a file that changed (a hand
/// edit, a `git checkout`, a copy) from the one a snapshot was made of.
///
/// Four lanes take 8 bytes each per 32-byte block, so the multiplies run side by side (a few GB/s).
public struct ContentHash: Sendable {
    private var lanes: (UInt64, UInt64, UInt64, UInt64) = (0x243F_6A88_85A3_08D3, 0x1319_8A2E_0370_7344, 0xA409_3822_299F_31D0, 0x082E_FA98_EC4E_6C89)
    /// Bytes of an unfinished block (fewer than 32), waiting for the next piece.
    private var pending: [UInt8] = []
    private var count: UInt64 = 0

    public init() { pending.reserveCapacity(32) }

    @inline(__always)
    private static func mix(_ lane: UInt64, _ word: UInt64) -> UInt64 {
        let x = lane ^ (word &* 0x9E37_79B9_7F4A_7C15)
        return ((x << 29) | (x >> 35)) &* 0xBF58_476D_1CE4_E5B9
    }

    @inline(__always)
    private mutating func block(_ p: UnsafeRawPointer) {
        lanes.0 = Self.mix(lanes.0, UInt64(littleEndian: p.loadUnaligned(as: UInt64.self)))
        lanes.1 = Self.mix(lanes.1, UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
        lanes.2 = Self.mix(lanes.2, UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 16, as: UInt64.self)))
        lanes.3 = Self.mix(lanes.3, UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 24, as: UInt64.self)))
    }

    public mutating func update(_ piece: UnsafeRawBufferPointer) {
        guard let base = piece.baseAddress, piece.count > 0 else { return }
        count &+= UInt64(piece.count)
        var i = 0
        if !pending.isEmpty {
            let take = min(32 - pending.count, piece.count)
            pending.append(contentsOf: UnsafeRawBufferPointer(start: base, count: take))
            i = take
            guard pending.count == 32 else { return }
            pending.withUnsafeBytes { block($0.baseAddress!) }
            pending.removeAll(keepingCapacity: true)
        }
        while i + 32 <= piece.count {
            block(base + i)
            i += 32
        }
        if i < piece.count { pending.append(contentsOf: UnsafeRawBufferPointer(start: base + i, count: piece.count - i)) }
    }

    public mutating func update(_ bytes: [UInt8]) { bytes.withUnsafeBytes { update($0) } }

    /// The fingerprint of everything fed so far (the hash itself is not changed).
    public var digest: (UInt64, UInt64) {
        var copy = self
        var rest = copy.pending
        rest.append(contentsOf: [UInt8](repeating: 0, count: 32 - rest.count))
        if !copy.pending.isEmpty { rest.withUnsafeBytes { copy.block($0.baseAddress!) } }
        func avalanche(_ v: UInt64) -> UInt64 {
            var z = v
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        let (a, b, c, d) = copy.lanes
        let first = avalanche(a ^ avalanche(b &+ count) ^ (c << 1))
        let second = avalanche(c ^ avalanche(d ^ count) ^ (a >> 1) ^ b)
        return (first, second)
    }
}

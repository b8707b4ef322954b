import Foundation
@testable import PortfolioCore
import Testing

/// Reading a large transaction array on two threads gives what reading it on one gives: the same
/// records, the same kept lines, and for a broken file the same error (its line and column), wherever
/// in the file the damage is.
@Suite struct ParallelParseTests {
    typealias Spans = [(start: UInt32, count: UInt32)]

    /// A store file large enough to be read on two threads, with notes on some records.
    static func file(_ count: Int = 4_000, seed: UInt64 = 1) -> [UInt8] {
        var book = ParallelPathTests.history(count, seed: seed)
        for i in stride(from: 0, to: book.transactions.count, by: 97) { book.transactions[i].notes = "note \(i) é" }
        return PortfolioCodec.encode(book)
    }

    enum Way { case keeping, releasing, plain }

    static func decode(_ bytes: [UInt8], parallel: Bool, _ way: Way, splitNear: Int? = nil) -> Result<(Book, Spans?), StoreError> {
        var spans: Spans? = way == .keeping ? [] : nil
        do {
            let book = try PortfolioCodec.decodeDocument(ByteBuffer(copying: bytes), path: "p", settingsOnly: false, spans: &spans,
                                                         releasing: way == .releasing ? (minimumBytes: 0, everyRecords: 64) : nil,
                                                         parallel: parallel, splitNear: splitNear).book
            return .success((book, spans))
        } catch {
            return .failure(error)
        }
    }

    /// Whether the two threads' reading and the one thread's agree; `what` names the case.
    @discardableResult
    static func expectSame(_ bytes: [UInt8], _ what: String, ways: [Way] = [.keeping, .releasing], splitNear: Int? = nil,
                           sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        var same = true
        for way in ways {
            switch (decode(bytes, parallel: false, way), decode(bytes, parallel: true, way, splitNear: splitNear)) {
            case let (.success(a), .success(b)):
                let spansAgree = a.1.map { x in b.1.map { y in x.elementsEqual(y) { $0 == $1 } } ?? false } ?? (b.1 == nil)
                if !(a.0 == b.0 && a.0.readVersion == b.0.readVersion && spansAgree) {
                    Issue.record("\(what) (\(way)): the records differ", sourceLocation: sourceLocation)
                    same = false
                }
            case let (.failure(a), .failure(b)):
                if a != b {
                    Issue.record("\(what) (\(way)): \(a) against \(b)", sourceLocation: sourceLocation)
                    same = false
                }
            case let (a, b):
                Issue.record("\(what) (\(way)): \(a) against \(b)", sourceLocation: sourceLocation)
                same = false
            }
        }
        return same
    }

    /// Where the second thread starts reading `bytes`.
    static func splitPoint(_ bytes: [UInt8]) -> Int? {
        let buffer = ByteBuffer(copying: bytes)
        guard let from = firstRecord(bytes), let half = SecondHalf.start(buffer, after: from - 1, version: 2, keepingSpans: false) else { return nil }
        half.pending.wait()
        return half.start
    }

    static func firstRecord(_ bytes: [UInt8]) -> Int? {
        let key = Array("\"transactions\": [".utf8)
        guard let i = (0...(bytes.count - key.count)).first(where: { bytes[$0..<($0 + key.count)].elementsEqual(key) }) else { return nil }
        return i + key.count
    }

    /// The file's lines (without their line breaks) and the index of the line the second thread starts on.
    static func lines(_ bytes: [UInt8]) -> (lines: [[UInt8]], split: Int) {
        let lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).map(Array.init)
        var offset = 0, split = 0
        let at = splitPoint(bytes) ?? 0
        for (i, l) in lines.enumerated() {
            if offset <= at && at <= offset + l.count { split = i; break }
            offset += l.count + 1
        }
        return (lines, split)
    }

    static func joined(_ lines: [[UInt8]]) -> [UInt8] { Array(lines.joined(separator: [0x0A])) }

    static func replacing(_ line: [UInt8], _ old: String, _ new: String) -> [UInt8] {
        Array(String(decoding: line, as: UTF8.self).replacingOccurrences(of: old, with: new).utf8)
    }

    @Test func aLargeFileReadsTheSameOnTwoThreads() throws {
        for seed in UInt64(1)...3 {
            let bytes = Self.file(4_000 + Int(seed) * 700, seed: seed)
            #expect(Self.splitPoint(bytes) != nil, "the file is large enough to be split")
            Self.expectSame(bytes, "seed \(seed)", ways: [.keeping, .releasing, .plain])
        }
        // And through the store's own reads.
        let bytes = Self.file()
        let store = StoreFastPathTests.store(with: bytes)
        defer { StoreFastPathTests.remove(store) }
        let sequential = try PortfolioCodec.decode(bytes, path: store.path)
        #expect(try store.load() == sequential)
        let kept = try PortfolioCodec.decodeKeepingRecords(ByteBuffer(copying: bytes), path: store.path)
        #expect(kept.book == sequential)
        #expect(kept.records?.reusableCount == sequential.transactions.count)
    }

    @Test func aSmallFileIsNotSplit() {
        #expect(Self.splitPoint(Self.file(300)) == nil)
    }

    @Test func damageBeforeAtAndAfterTheSplitGivesTheSameErrorOrRecords() {
        let (lines, split) = Self.lines(Self.file())
        #expect(split > 10 && split < lines.count - 10)
        // Lines around the split, the first records and the last.
        let targets = [split - 1, split, split + 1, split + 300, lines.count - 6, 12]
        let damages: [(String, ([UInt8]) -> [UInt8]?)] = [
            ("a letter in an amount", { Self.replacing($0, "\"amount\": \"", "\"amount\": \"x") }),
            ("an unknown kind", { Self.replacing($0, "\"type\": \"", "\"type\": \"z") }),
            ("an escaped point in an amount", { l in
                guard let r = String(decoding: l, as: UTF8.self).range(of: #""amount": "\d+\."#, options: .regularExpression) else { return nil }
                var s = String(decoding: l, as: UTF8.self)
                s.replaceSubrange(s.index(before: r.upperBound)..<r.upperBound, with: "\\u002e")
                return Array(s.utf8)
            }),
            ("an escape in a note", { Self.replacing($0, "\"date\": ", "\"notes\": \"a\\\"b\\n\", \"date\": ") }),
            ("a key out of order", { Self.replacing($0, "\"portfolio\": \"main\", ", "").map { $0 } + [] }),
            ("another layout", { Self.replacing($0, ", \"", ",\n        \"") }),
            ("a missing comma", { Self.replacing($0, "},", "}") }),
            ("a record cut short", { Array($0.prefix($0.count / 2)) }),
            ("a duplicated key", { Self.replacing($0, "\"date\": ", "\"type\": \"buy\", \"date\": ") }),
            ("an unknown key", { Self.replacing($0, "\"date\": ", "\"extra\": 1, \"date\": ") }),
            ("no id", { Self.replacing($0, "{\"id\": ", "{\"xid\": ") }),
            ("a line removed", { _ in [] }),
        ]
        for t in targets where t > 0 && t < lines.count {
            for (what, damage) in damages {
                guard let damaged = damage(lines[t]) else { continue }
                var copy = lines
                copy[t] = damaged
                Self.expectSame(Self.joined(copy), "\(what) on line \(t + 1) (split on \(split + 1))")
            }
        }
    }

    @Test func theEndOfTheArrayAndWhatFollowsIt() {
        let bytes = Self.file()
        let (lines, split) = Self.lines(bytes)
        let end = lines.lastIndex { $0.elementsEqual("  ],".utf8) } ?? 0
        guard end > split else { Issue.record("no end of the array after the split"); return }
        var cases: [(String, [UInt8])] = []
        var copy = lines
        copy[end] = Array("  ]".utf8)
        cases.append(("no comma after the array", Self.joined(copy)))
        cases.append(("cut after the last record", Self.joined(Array(lines[...(end - 1)]))))
        cases.append(("cut inside the second half", Self.joined(Array(lines[...(split + 40)]))))
        cases.append(("cut at the split", Self.joined(Array(lines[..<split]))))
        copy = lines
        copy[end - 1] += Array(",".utf8)
        cases.append(("a comma before the bracket", Self.joined(copy)))
        copy = lines
        copy.insert(Array("    {}".utf8), at: split)
        copy[split - 1] += Array(",".utf8)
        cases.append(("an empty object at the split", Self.joined(copy)))
        copy = lines
        copy[end + 1] = Self.replacing(copy[end + 1], "\"watchlist\"", "\"watchlist\" ")
        cases.append(("a space after a later key", Self.joined(copy)))
        copy = lines
        copy[end + 1] = Self.replacing(copy[end + 1], "[", "[{\"coinId\": 5}")
        cases.append(("a bad watchlist", Self.joined(copy)))
        for (what, b) in cases { Self.expectSame(b, what) }
    }

    @Test func randomDamageAnywhereInTheSecondHalf() {
        let bytes = Self.file(4_000, seed: 7)
        guard let split = Self.splitPoint(bytes) else { Issue.record("not split"); return }
        var g = SplitMix64(seed: 42)
        let alphabet = Array("{}[],:\" \n\\0123456789.-aez".utf8)
        for round in 0..<30 {
            var copy = bytes
            let at = round < 20 ? split - 300 + g.below(bytes.count - split + 300) : g.below(bytes.count)
            switch g.below(3) {
            case 0: copy[at] = alphabet[g.below(alphabet.count)]
            case 1: copy.remove(at: at)
            default: copy.insert(alphabet[g.below(alphabet.count)], at: at)
            }
            if !Self.expectSame(copy, "round \(round): damage at \(at) (split at \(split))") { break }
        }
    }

    @Test func aSplitInsideARecordOfAnotherLayoutIsNotTaken() {
        let (lines, split) = Self.lines(Self.file())
        // Records spread over lines, one holding (under a key the reader skips) an array of records that
        // start lines as the array's own do.
        var copy = lines
        func record(_ i: Int) -> String { String(decoding: lines[i], as: UTF8.self).trimmingCharacters(in: CharacterSet(charactersIn: " ,")) }
        copy[split] = Self.replacing(lines[split], "{\"id\": ", "{\"extra\": [\n    \(record(split + 3)),\n    \(record(split + 4))\n  ], \"id\": ")
        copy[split + 1] = Self.replacing(lines[split + 1], ", \"", ",\n    \"")
        let bytes = Self.joined(copy)
        // Every line break from a few lines before to a few after, as the place the second thread starts.
        let start = Self.joined(Array(copy[..<(split - 2)])).count
        var starts: [Int] = []
        var i = start
        while starts.count < 14 && i < bytes.count {
            if bytes[i] == 0x0A { starts.append(i) }
            i += 1
        }
        for near in starts {
            Self.expectSame(bytes, "split near \(near)", ways: [.keeping, .plain], splitNear: near)
        }
    }

    @Test func aDuplicatedIdAcrossTheSplitIsFoundByTheCheck() throws {
        let bytes = Self.file()
        let (lines, split) = Self.lines(bytes)
        // The id of a record of the first half given to one of the second half.
        func id(_ line: [UInt8]) -> String? {
            let s = String(decoding: line, as: UTF8.self)
            guard let r = s.range(of: "{\"id\": \"") else { return nil }
            return String(s[r.upperBound...].prefix(36))
        }
        guard let first = id(lines[split - 5]), let second = id(lines[split + 5]) else { Issue.record("no ids"); return }
        var copy = lines
        copy[split + 5] = Self.replacing(copy[split + 5], second, first)
        let damaged = Self.joined(copy)
        #expect(Self.expectSame(damaged, "a duplicated id"))
        let book = try PortfolioCodec.decode(damaged, path: "p")
        let problems = book.checked(now: day("2030-01-01")).problems
        #expect(problems.contains { $0.rule == .duplicateID && $0.firstIndex != nil && $0.index > $0.firstIndex ?? 0 })
        #expect(problems == book.checked(now: day("2030-01-01"), replaying: true, cashMovements: true, parallel: false).problems)
    }
}

@Suite struct LineBreakCountTests {
    @Test func countingEightBytesAtATimeCountsEveryLineBreak() {
        var g = SplitMix64(seed: 3)
        let alphabet: [UInt8] = [0x0A, 0x0B, 0x09, 0x0D, 0x8A, 0x00, 0xFF, 0x20, 0x7F, 0x80, 0x41]
        for round in 0..<300 {
            let bytes = (0..<g.below(70)).map { _ in round % 2 == 0 ? alphabet[g.below(alphabet.count)] : UInt8(g.below(256)) }
            for start in 0..<min(9, bytes.count + 1) {
                let expected = bytes[start...].count { $0 == 0x0A }
                let counted = bytes.withUnsafeBufferPointer { JSONReader.lineBreaks(in: UnsafeBufferPointer(rebasing: $0[start...])) }
                #expect(counted == expected, "round \(round) from \(start)")
            }
        }
    }
}

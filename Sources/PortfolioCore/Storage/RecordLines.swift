import Foundation

extension PortfolioCodec {
    /// The line each transaction record starts on, in file order (for messages and `@LINE`).
    ///
    /// Only called when a line must be named, so the store's normal read stays one pass.
    public static func transactionLines(_ buffer: ByteBuffer) throws(JSONReadError) -> [Int] {
        var r = JSONReader(buffer: buffer)
        var lines: [Int] = []
        var line = 1
        var counted = 0
        try r.beginObject()
        while let key = try r.nextKey() {
            guard key == "transactions" else { try r.skipValue(); continue }
            try r.beginArray()
            while try r.nextElement() {
                r.skipSpace()
                let here = r.mark
                for i in counted..<here where buffer.base[i] == 0x0A { line += 1 }
                counted = here
                lines.append(line)
                try r.skipValue()
            }
        }
        return lines
    }
}

extension PortfolioStore {
    /// The line each transaction record of the stored file starts on; empty when there is no file.
    public func transactionLines() throws(StoreError) -> [Int] {
        guard let buffer = try FileSystem.readBuffer(path) else { return [] }
        do { return try PortfolioCodec.transactionLines(buffer) } catch { throw StoreError.reading(path, error) }
    }

    /// `problem` as one line naming where it is: `line 12: …` (or the record's number when lines are unknown).
    public static func describe(_ problem: StoreProblem, lines: [Int], names: MessageNames = .plain) -> String {
        func place(_ i: Int) -> String {
            guard i < lines.count else { return "record #\(i + 1)" }
            return lines[i] > 0 ? "line \(lines[i])" : "the new record"
        }
        let first = problem.firstIndex.map { " (\(place($0)))" } ?? ""
        return "\(place(problem.index)): \(problem.describe(names: names))\(first)"
    }

    /// The file lines of `changed`'s records, found through `original`'s: records are matched by
    /// id in order, so deletions and additions do not shift them; a new record has line 0.
    static func lines(of changed: Book, from original: Book, originalLines: [Int]) -> [Int] {
        var queue: [UUID: [Int]] = [:]
        for (i, t) in original.transactions.enumerated() where i < originalLines.count {
            queue[t.id, default: []].append(originalLines[i])
        }
        return changed.transactions.map { t in
            guard var q = queue[t.id], !q.isEmpty else { return 0 }
            let line = q.removeFirst()
            queue[t.id] = q
            return line
        }
    }
}

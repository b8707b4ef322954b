/// A malformed CSV file: what is wrong and the line where it is.
public struct CSVError: Error, Equatable, Sendable, CustomStringConvertible {
    public var line: Int
    public var message: String
    public var description: String { "line \(line): \(message)" }

    public init(line: Int, message: String) {
        self.line = line
        self.message = message
    }
}

/// One CSV record and the line it starts on (the header is line 1 when it is first).
public struct CSVRecord: Equatable, Sendable {
    public var fields: [String]
    public var line: Int
}

/// An RFC 4180 reader: commas, double quotes (`""` inside), newlines inside quotes, LF or CRLF,
/// with or without a UTF-8 BOM. Blank lines are skipped.
public enum CSV {
    public static func parse(_ input: [UInt8]) throws(CSVError) -> [CSVRecord] {
        var records: [CSVRecord] = []
        try forEachRecord(input) { fields, line in
            records.append(CSVRecord(fields: fields, line: line))
            return true
        }
        return records
    }

    /// Calls `body` with each record's fields and starting line, without keeping them; `body` returns false to stop.
    /// `delimiter` separates fields (a comma, else `;` or a tab).
    public static func forEachRecord(_ input: [UInt8], delimiter: UInt8 = UInt8(ascii: ","), _ body: ([String], Int) -> Bool) throws(CSVError) {
        let bytes = TextDecoding.utf8Bytes(input)
        var stopped = false
        var fields: [String] = []
        var field: [UInt8] = []
        var i = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        var line = 1
        var recordLine = 1
        var inQuotes = false
        var quoteLine = 1
        var wasQuoted = false
        var atFieldStart = true

        func endField() {
            fields.append(String(decoding: field, as: UTF8.self))
            field.removeAll(keepingCapacity: true)
            wasQuoted = false
            atFieldStart = true
        }
        func endRecord() {
            endField()
            if !(fields.count == 1 && fields[0].isEmpty) && !stopped {
                if !body(fields, recordLine) { stopped = true }
            }
            fields.removeAll(keepingCapacity: true)
        }

        while i < bytes.count && !stopped {
            let b = bytes[i]
            if inQuotes {
                if b == UInt8(ascii: "\"") {
                    if i + 1 < bytes.count && bytes[i + 1] == UInt8(ascii: "\"") {
                        field.append(b)
                        i += 2
                        continue
                    }
                    inQuotes = false
                    i += 1
                    // After a closing quote only a comma, a line end or the end may follow.
                    if i < bytes.count {
                        let n = bytes[i]
                        if n != delimiter && n != 0x0A && n != 0x0D {
                            throw CSVError(line: line, message: "unexpected text after a closing quote (a quote inside a quoted field is written \"\")")
                        }
                    }
                    continue
                }
                if b == 0x0A { line += 1 }
                // Copy the run up to the next quote or line break in one step.
                var j = i + 1
                while j < bytes.count && bytes[j] != UInt8(ascii: "\"") && bytes[j] != 0x0A { j += 1 }
                field.append(contentsOf: bytes[i..<j])
                i = j
                continue
            }
            switch b {
            case delimiter:
                endField()
                i += 1
            case 0x0D, 0x0A:
                endRecord()
                if b == 0x0D && i + 1 < bytes.count && bytes[i + 1] == 0x0A { i += 1 }
                i += 1
                line += 1
                recordLine = line
            case UInt8(ascii: "\""):
                if atFieldStart && field.isEmpty && !wasQuoted {
                    inQuotes = true
                    wasQuoted = true
                    quoteLine = line
                    atFieldStart = false
                    i += 1
                } else {
                    throw CSVError(line: line, message: "a quote inside an unquoted field (quote the whole field and write \"\" for a quote)")
                }
            default:
                // Copy the run up to the next delimiter, line break or quote in one step.
                var j = i + 1
                while j < bytes.count {
                    let c = bytes[j]
                    if c == delimiter || c == 0x0A || c == 0x0D || c == UInt8(ascii: "\"") { break }
                    j += 1
                }
                field.append(contentsOf: bytes[i..<j])
                atFieldStart = false
                i = j
            }
        }
        if stopped { return }
        if inQuotes { throw CSVError(line: quoteLine, message: "a quoted field that starts here is never closed") }
        if !field.isEmpty || !fields.isEmpty || wasQuoted { endRecord() }
    }

    /// One field, quoted when it holds a comma, a quote or a line break.
    ///
    /// Works on bytes, not `Character`s: `"\r\n"` is one Character (neither `"\r"` nor `"\n"`),
    /// and so is a quote followed by a combining mark, and both must still be quoted.
    public static func escape(_ field: String) -> String {
        guard field.utf8.contains(where: { $0 == 44 || $0 == 34 || $0 == 10 || $0 == 13 }) else { return field }
        var out: [UInt8] = [34]
        out.reserveCapacity(field.utf8.count + 8)
        for b in field.utf8 {
            if b == 34 { out.append(34) }
            out.append(b)
        }
        out.append(34)
        return String(decoding: out, as: UTF8.self)
    }
}

/// Text decoding for imported files.
public enum TextDecoding {
    /// UTF-8 as is; anything that is not valid UTF-8 is read as Windows-1252 (seen in re-saved exchange files).
    public static func utf8Bytes(_ bytes: [UInt8]) -> [UInt8] {
        if isValidUTF8(bytes) { return bytes }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 16)
        for b in bytes {
            if b < 0x80 {
                out.append(b)
            } else {
                let scalar = Unicode.Scalar(windows1252[Int(b - 0x80)]) ?? "?"
                out.append(contentsOf: Array(String(Character(scalar)).utf8))
            }
        }
        return out
    }

    private static func isValidUTF8(_ bytes: [UInt8]) -> Bool {
        if !bytes.contains(where: { $0 >= 0x80 }) { return true }  // plain ASCII, the common case
        var it = bytes.makeIterator()
        var decoder = UTF8()
        while true {
            switch decoder.decode(&it) {
            case .scalarValue: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }

    /// Code points of bytes 0x80–0xFF in Windows-1252.
    static let windows1252: [UInt32] = [
        0x20AC, 0x81, 0x201A, 0x192, 0x201E, 0x2026, 0x2020, 0x2021, 0x2C6, 0x2030, 0x160, 0x2039, 0x152, 0x8D, 0x17D, 0x8F,
        0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x2DC, 0x2122, 0x161, 0x203A, 0x153, 0x9D, 0x17E, 0x178,
    ] + (0xA0...0xFF).map { UInt32($0) }
}

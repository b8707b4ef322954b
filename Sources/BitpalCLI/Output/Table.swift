import PortfolioCore

/// Column layout for terminal tables: padded to the widest cell, numbers right-aligned.
struct Table {
    enum Alignment { case left, right }

    struct Column {
        var title: String
        var alignment: Alignment
    }

    /// A cell's plain text and an optional way to colour it after padding.
    struct Cell {
        var text: String
        var paint: ((String) -> String)?
        /// How many characters it shows (measured once: a long table asks for it twice a cell).
        let width: Int

        /// Text is escaped for the terminal here, whatever its source (a coin name from a server,
        /// a note from a file): escaping is idempotent, so text escaped before stays as it is.
        init(_ text: String, paint: ((String) -> String)? = nil) {
            self.text = TextEscaping.escaped(text)
            self.paint = paint
            width = Table.width(of: self.text)
        }
    }

    /// The characters `text` shows: its bytes when they are ASCII (the usual case), else its characters.
    static func width(of text: String) -> Int {
        var ascii = true
        for b in text.utf8 where b >= 0x80 {
            ascii = false
            break
        }
        return ascii ? text.utf8.count : text.count
    }

    var columns: [Column]
    var rows: [[Cell]] = []
    /// Rows set apart by a rule (totals).
    var footer: [[Cell]] = []
    var showsHeader = true
    /// Put before every line.
    var indent = ""

    init(_ columns: [(String, Alignment)]) {
        self.columns = columns.map { Column(title: $0.0, alignment: $0.1) }
    }

    mutating func add(_ cells: [Cell]) { rows.append(cells) }
    mutating func add(_ texts: [String]) { rows.append(texts.map { Cell($0) }) }
    mutating func addFooter(_ cells: [Cell]) { footer.append(cells) }

    func render(style: Style) -> String {
        var widths = columns.map { Table.width(of: $0.title) }
        for list in [rows, footer] {
            for row in list {
                for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], cell.width) }
            }
        }
        let indentBytes = Array(indent.utf8)
        let lineCapacity = indentBytes.count + widths.reduce(0, +) + 2 * widths.count + 1
        // Lines are made as bytes, a row's plain cells straight into them (a long table is most of a listing's time).
        var out: [UInt8] = []
        out.reserveCapacity((rows.count + footer.count + 2) * lineCapacity)
        func spaces(_ n: Int) { if n > 0 { out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: n)) } }
        func line(_ cells: [Cell], header: Bool = false) {
            let start = out.count
            out += indentBytes
            for (i, column) in columns.enumerated() {
                if i > 0 { spaces(2) }
                let cell = i < cells.count ? cells[i] : Cell("")
                let pad = max(0, widths[i] - cell.width)
                let last = i == columns.count - 1
                if header || cell.paint != nil {
                    let padding = String(repeating: " ", count: pad)
                    let shown = cell.paint.map { $0(cell.text) } ?? cell.text
                    let padded = column.alignment == .right ? padding + shown : shown + (last ? "" : padding)
                    out += (header ? style.bold(padded) : padded).utf8
                } else if column.alignment == .right {
                    spaces(pad)
                    out += cell.text.utf8
                } else {
                    out += cell.text.utf8
                    if !last { spaces(pad) }
                }
            }
            while out.count > start + indentBytes.count, out.last == UInt8(ascii: " ") { out.removeLast() }
            out.append(UInt8(ascii: "\n"))
        }
        if showsHeader { line(columns.map { Cell($0.title) }, header: true) }
        for row in rows { line(row) }
        if !footer.isEmpty {
            let total = widths.reduce(0, +) + 2 * (widths.count - 1)
            out += (indent + style.dim(String(repeating: "─", count: total)) + "\n").utf8
            for row in footer { line(row) }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

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
        let spaces = String(repeating: " ", count: (widths.max() ?? 0) + 2)
        let lineCapacity = indent.utf8.count + widths.reduce(0, +) + 2 * widths.count + 1
        func line(_ cells: [Cell], header: Bool = false) -> String {
            var text = ""
            text.reserveCapacity(lineCapacity)
            text += indent
            for (i, column) in columns.enumerated() {
                if i > 0 { text += "  " }
                let cell = i < cells.count ? cells[i] : Cell("")
                let pad = spaces.prefix(max(0, widths[i] - cell.width))
                let last = i == columns.count - 1
                var padded: String
                if let paint = cell.paint {
                    padded = column.alignment == .right ? pad + paint(cell.text) : paint(cell.text) + (last ? "" : pad)
                } else if column.alignment == .right {
                    padded = pad + cell.text
                } else {
                    padded = last ? cell.text : cell.text + pad
                }
                text += header ? style.bold(padded) : padded
            }
            let kept = indent.utf8.count
            while text.utf8.count > kept, text.utf8.last == 32 { text.removeLast() }
            return text + "\n"
        }
        var out = showsHeader ? line(columns.map { Cell($0.title) }, header: true) : ""
        for row in rows { out += line(row) }
        if !footer.isEmpty {
            let total = widths.reduce(0, +) + 2 * (widths.count - 1)
            out += indent + style.dim(String(repeating: "─", count: total)) + "\n"
            for row in footer { out += line(row) }
        }
        return out
    }
}

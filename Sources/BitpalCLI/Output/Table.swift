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

        /// Text is escaped for the terminal here, whatever its source (a coin name from a server,
        /// a note from a file): escaping is idempotent, so text escaped before stays as it is.
        init(_ text: String, paint: ((String) -> String)? = nil) {
            self.text = TextEscaping.escaped(text)
            self.paint = paint
        }
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
        var widths = columns.map { $0.title.count }
        for row in rows + footer {
            for (i, cell) in row.enumerated() where i < widths.count {
                widths[i] = max(widths[i], cell.text.count)
            }
        }
        func line(_ cells: [Cell], header: Bool = false) -> String {
            var parts: [String] = []
            for (i, column) in columns.enumerated() {
                let cell = i < cells.count ? cells[i] : Cell("")
                let pad = String(repeating: " ", count: max(0, widths[i] - cell.text.count))
                var padded = column.alignment == .right ? pad + cell.text : cell.text + pad
                if i == columns.count - 1 && column.alignment == .left {
                    padded = cell.text
                }
                if let paint = cell.paint { padded = column.alignment == .right ? pad + paint(cell.text) : paint(cell.text) + (i == columns.count - 1 ? "" : pad) }
                parts.append(header ? style.bold(padded) : padded)
            }
            var text = parts.joined(separator: "  ")
            while text.hasSuffix(" ") { text.removeLast() }
            return indent + text + "\n"
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

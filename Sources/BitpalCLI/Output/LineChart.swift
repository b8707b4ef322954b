import Foundation
import PortfolioCore

/// A terminal line chart of a few series over the same dates, fitted to a width: money on the y
/// axis, dates on the x axis, a legend. The first series is drawn in braille dots (2 × 4 to a
/// character) and wins where lines cross; the others as a line of `─`. With `ascii`, `*`, `-`, `|`.
///
/// Positions on the screen are approximate by nature: values are plotted as `Double`s here, in the
/// front end; the figures themselves stay exact in the library.
struct LineChart {
    struct Series {
        var label: String
        var values: [Double]
    }

    var series: [Series]
    var dates: [LocalDay]
    /// The currency of the values (the y axis's labels).
    var currency: CurrencyCode
    /// Characters a line may take, labels included.
    var width: Int
    /// Rows of the plot itself.
    var height = 12
    var ascii = false

    /// The smallest width drawn; a narrower terminal gets this width.
    static let minimumWidth = 30

    /// `120000` dollars as `$120k`, `1250000` as `$1.25M`, `950` as `$950`.
    static func compactMoney(_ v: Double, in currency: CurrencyCode) -> String {
        let symbol = Human.symbol(of: currency)
        let sign = v < 0 ? "-" : ""
        let a = abs(v)
        let (scaled, suffix): (Double, String) = a >= 1e12 ? (a / 1e12, "T") : a >= 1e9 ? (a / 1e9, "B") : a >= 1e6 ? (a / 1e6, "M")
            : a >= 1e3 ? (a / 1e3, "k") : (a, "")
        guard scaled < 1e15 else { return sign + symbol + String(format: "%.2e", a) }
        // Up to two decimals, trailing zeros trimmed.
        var text = String(Int64((scaled * 100).rounded()))
        while text.count < 3 { text = "0" + text }
        var integer = String(text.dropLast(2)), fraction = String(text.suffix(2))
        while fraction.hasSuffix("0") { fraction.removeLast() }
        if integer.isEmpty { integer = "0" }
        return sign + symbol + integer + (fraction.isEmpty ? "" : "." + fraction) + suffix
    }

    /// A step of 1, 2, 2.5 or 5 × 10^k near `raw`.
    static func niceStep(_ raw: Double) -> Double {
        guard raw > 0, raw.isFinite else { return 1 }
        let power = pow(10, floor(log10(raw)))
        let f = raw / power
        let nice: Double = f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10
        return nice * power
    }

    /// The chart's lines, each at most `width` characters (`minimumWidth` at least); colours by `style`.
    func render(style: Style) -> String {
        // A single day is drawn as a level line across the chart.
        let series = self.series.map { s in s.values.count == 1 ? Series(label: s.label, values: s.values + s.values) : s }
        let all = series.flatMap(\.values).filter(\.isFinite)
        guard !all.isEmpty, !dates.isEmpty else { return "" }
        // The plot spans the data (from zero when the lowest value is near it, as a value chart
        // should); labels sit at round values within it.
        var lo = all.min() ?? 0, hi = all.max() ?? 0
        if lo > 0 && lo < hi / 3 { lo = 0 }
        // A flat line (or one that moves by less than floating point tells) is drawn as a level.
        if hi - lo <= max(abs(hi), abs(lo)) * 1e-9 { hi = lo + max(abs(lo) / 10, 1) }
        let step = Self.niceStep((hi - lo) / 4)
        // Ticks by index (never by adding a step that rounds back to the same value), a few at most.
        let first = ceil(lo / step - 1e-9)
        var ticks: [Double] = []
        for k in 0..<12 {
            let t = (first + Double(k)) * step
            guard t <= hi + step * 1e-9 else { break }
            ticks.append(t)
        }
        let labels = ticks.map { Self.compactMoney($0, in: currency) }
        let labelWidth = labels.map(\.count).max() ?? 1
        let total = max(width, Self.minimumWidth)
        let plotWidth = max(total - labelWidth - 2, 8)
        let rows = max(height, 4)

        // Cells: a braille pattern (or ASCII mark) of the first series, a line of the others.
        var dots = [[UInt8]](repeating: [UInt8](repeating: 0, count: plotWidth), count: rows)
        var marks = [[Character?]](repeating: [Character?](repeating: nil, count: plotWidth), count: rows)
        let sub = ascii ? (x: 1, y: 1) : (x: 2, y: 4)
        let pixelsX = plotWidth * sub.x, pixelsY = rows * sub.y
        func px(_ i: Int, of n: Int) -> Int { n <= 1 ? 0 : Int((Double(i) * Double(pixelsX - 1) / Double(n - 1)).rounded()) }
        func py(_ v: Double) -> Int {
            let y = ((hi - v) / (hi - lo) * Double(pixelsY - 1)).rounded()
            return min(max(Int(y), 0), pixelsY - 1)
        }
        // The other series first, cell by cell, so the first one is drawn over them.
        for s in series.dropFirst() {
            var previousRow: Int?
            for column in 0..<plotWidth {
                // The value at this column: the last point at or before it.
                let n = s.values.count
                let i = n <= 1 ? 0 : min(n - 1, Int((Double(column) * Double(n - 1) / Double(max(plotWidth - 1, 1))).rounded()))
                guard i < n, s.values[i].isFinite else { continue }
                let row = min(max(Int(((hi - s.values[i]) / (hi - lo) * Double(rows - 1)).rounded()), 0), rows - 1)
                marks[row][column] = ascii ? "-" : "─"
                if let p = previousRow, p != row, ascii {
                    for r in min(p, row)...max(p, row) where marks[r][column] == nil { marks[r][column] = "|" }
                }
                previousRow = row
            }
        }
        if let first = series.first {
            let n = first.values.count
            var last: (x: Int, y: Int)?
            func plot(_ x: Int, _ y: Int) {
                let cx = x / sub.x, cy = y / sub.y
                guard cx >= 0, cx < plotWidth, cy >= 0, cy < rows else { return }
                if ascii {
                    marks[cy][cx] = "*"
                } else {
                    let bits: [[UInt8]] = [[0x01, 0x08], [0x02, 0x10], [0x04, 0x20], [0x40, 0x80]]
                    dots[cy][cx] |= bits[y % 4][x % 2]
                }
            }
            for i in 0..<n where first.values[i].isFinite {
                let p = (x: px(i, of: n), y: py(first.values[i]))
                if let l = last {
                    // Bresenham from the last point, so the line has no gaps.
                    var (x0, y0) = l
                    let dx = abs(p.x - x0), dy = -abs(p.y - y0)
                    let sx = x0 < p.x ? 1 : -1, sy = y0 < p.y ? 1 : -1
                    var err = dx + dy
                    while true {
                        plot(x0, y0)
                        if x0 == p.x && y0 == p.y { break }
                        let e2 = 2 * err
                        if e2 >= dy { err += dy; x0 += sx }
                        if e2 <= dx { err += dx; y0 += sy }
                    }
                } else {
                    plot(p.x, p.y)
                }
                last = p
            }
        }

        // Which plot row each tick label sits on.
        var tickAt: [Int: String] = [:]
        for (tick, label) in zip(ticks, labels) {
            let row = Int(((hi - tick) / (hi - lo) * Double(rows - 1)).rounded())
            if tickAt[row] == nil { tickAt[row] = label }
        }
        var out = ""
        for r in 0..<rows {
            let label = tickAt[r] ?? ""
            out += String(repeating: " ", count: labelWidth - label.count) + label
            out += tickAt[r] != nil ? (ascii ? " +" : " ┤") : (ascii ? " |" : " │")
            var line = ""
            for c in 0..<plotWidth {
                if dots[r][c] != 0, let scalar = Unicode.Scalar(0x2800 + UInt32(dots[r][c])) {
                    line += style.cyan(String(Character(scalar)))
                } else if let m = marks[r][c] {
                    line += m == "*" ? style.cyan(String(m)) : style.yellow(String(m))
                } else {
                    line += " "
                }
            }
            while line.hasSuffix(" ") { line.removeLast() }
            out += line + "\n"
        }
        out += String(repeating: " ", count: labelWidth) + (ascii ? " +" : " └") + String(repeating: ascii ? "-" : "─", count: plotWidth) + "\n"
        out += axisLabels(plotWidth: plotWidth, indent: labelWidth + 2) + "\n"
        let legend = series.enumerated().map { i, s in
            (i == 0 ? (ascii ? style.cyan("*") : style.cyan("⣀⠤")) : style.yellow(ascii ? "-" : "─")) + " " + s.label
        }
        out += String(repeating: " ", count: labelWidth + 2) + legend.joined(separator: "   ") + "\n"
        return out
    }

    /// Dates under the axis: the first at the left, the last at the right, evenly between as they fit.
    private func axisLabels(plotWidth: Int, indent: Int) -> String {
        var line = [Character](repeating: " ", count: plotWidth)
        let n = dates.count
        let texts = dates.map(\.description)
        let w = texts.first?.count ?? 10
        guard plotWidth >= w else { return "" }
        let slots = max(2, min(n, (plotWidth + 3) / (w + 4)))
        var placed: [(start: Int, end: Int)] = []
        for k in 0..<slots {
            let i = n <= 1 ? 0 : Int((Double(k) * Double(n - 1) / Double(slots - 1)).rounded())
            let column = n <= 1 ? 0 : Int((Double(i) * Double(plotWidth - 1) / Double(n - 1)).rounded())
            var start = k == 0 ? 0 : k == slots - 1 ? plotWidth - w : column - w / 2
            start = min(max(start, 0), plotWidth - w)
            let end = start + w
            if placed.contains(where: { start < $0.end + 2 && end + 2 > $0.start }) { continue }
            placed.append((start, end))
            for (j, ch) in texts[i].enumerated() { line[start + j] = ch }
            if n <= 1 { break }
        }
        var text = String(line)
        while text.hasSuffix(" ") { text.removeLast() }
        return String(repeating: " ", count: indent) + text
    }
}

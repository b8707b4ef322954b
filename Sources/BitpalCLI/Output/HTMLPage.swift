import Foundation
import PortfolioCore

/// The pieces of a self-contained HTML page: escaping, tables, a line chart as inline SVG, and the
/// style sheet. No scripts, fonts, images or links to anything outside the file.
enum HTMLPage {
    /// Text as HTML: `& < > " '` escaped, so nothing a user typed becomes markup.
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for c in text.unicodeScalars {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default:
                // Control characters (a hand-edited note) are left out.
                if c.value < 0x20 && c != "\n" && c != "\t" { continue }
                out.unicodeScalars.append(c)
            }
        }
        return out
    }

    /// One cell: its text, whether it is a number (right-aligned, tabular figures), and a sign class.
    struct Cell {
        var text: String
        var numeric = false
        /// `pos`, `neg` or nil.
        var tone: String?

        init(_ text: String, numeric: Bool = false, tone: String? = nil) {
            self.text = text
            self.numeric = numeric
            self.tone = tone
        }

        /// A signed figure, toned by its sign.
        static func signed(_ text: String) -> Cell {
            Cell(text, numeric: true, tone: text.hasPrefix("-") ? "neg" : text.hasPrefix("+") ? "pos" : nil)
        }
    }

    /// A table in a scrolling wrapper (wide tables scroll sideways on a phone instead of overflowing);
    /// the columns in `narrowHides` are left out on a narrow screen.
    static func table(_ headers: [(String, Bool)], _ rows: [[Cell]], footer: [[Cell]] = [], caption: String? = nil,
                      narrowHides: Set<Int> = []) -> String {
        func attributes(_ classes: [String]) -> String { classes.isEmpty ? "" : " class=\"\(classes.joined(separator: " "))\"" }
        func cell(_ c: Cell, at i: Int, tag: String) -> String {
            var classes: [String] = []
            if c.numeric { classes.append("num") }
            if let tone = c.tone { classes.append(tone) }
            if narrowHides.contains(i) { classes.append("wide") }
            return "<\(tag)\(attributes(classes))>\(escape(c.text))</\(tag)>"
        }
        func row(_ cells: [Cell]) -> String { "<tr>" + cells.enumerated().map { cell($1, at: $0, tag: "td") }.joined() + "</tr>" }
        var s = "<div class=\"scroll\"><table>"
        if let caption { s += "<caption>\(escape(caption))</caption>" }
        s += "<thead><tr>" + headers.enumerated().map { i, h in
            "<th\(attributes((h.1 ? ["num"] : []) + (narrowHides.contains(i) ? ["wide"] : []))) scope=\"col\">\(escape(h.0))</th>"
        }.joined() + "</tr></thead><tbody>"
        for r in rows { s += row(r) }
        s += "</tbody>"
        if !footer.isEmpty { s += "<tfoot>" + footer.map(row).joined() + "</tfoot>" }
        return s + "</table></div>\n"
    }

    /// One point of a value chart: the day and two series (plotted as binary floating point; the
    /// figures the page prints are the exact ones).
    struct ChartPoint {
        var day: Int64
        var total: Double
        var invested: Double
    }

    /// Round steps for an axis: 1, 2 or 5 × 10ⁿ, about `count` of them over `0…maxValue` (or `minValue…maxValue`).
    static func ticks(min lo: Double, max hi: Double, count: Int = 5) -> [Double] {
        let low = Swift.min(0, lo), high = Swift.max(hi, low + 1)
        let raw = (high - low) / Double(Swift.max(1, count))
        let magnitude = pow(10, floor(log10(raw)))
        let step = [1.0, 2, 5, 10].map { $0 * magnitude }.first { $0 >= raw } ?? raw
        var t = (low / step).rounded(.down) * step
        var out: [Double] = []
        while t <= high + step * 0.999 && out.count < 20 {
            out.append(t)
            t += step
        }
        return out
    }

    /// A line chart of total value (solid) and net invested (dashed) as inline SVG, with a money axis
    /// and dated ticks; it scales to the width of its box.
    static func lineChart(_ points: [ChartPoint], axisLabel: (Double) -> String, title: String) -> String {
        guard points.count >= 2, let first = points.first?.day, let last = points.last?.day, last > first else {
            return "<p class=\"muted\">Not enough history for a chart yet.</p>\n"
        }
        let width = 720.0, height = 280.0, left = 84.0, right = 16.0, top = 16.0, bottom = 36.0
        let values = points.flatMap { [$0.total, $0.invested] }
        let ticks = Self.ticks(min: values.min() ?? 0, max: values.max() ?? 1)
        let lo = ticks.first ?? 0, hi = ticks.last ?? 1
        func x(_ day: Int64) -> Double { left + (width - left - right) * Double(day - first) / Double(last - first) }
        func y(_ v: Double) -> Double { top + (height - top - bottom) * (1 - (v - lo) / Swift.max(hi - lo, 1e-9)) }
        func f(_ v: Double) -> String { String(format: "%.1f", v) }
        func path(_ value: (ChartPoint) -> Double) -> String {
            points.enumerated().map { (i, p) in (i == 0 ? "M" : "L") + f(x(p.day)) + " " + f(y(value(p))) }.joined(separator: " ")
        }
        var s = "<figure class=\"chart\"><svg viewBox=\"0 0 \(Int(width)) \(Int(height))\" role=\"img\" aria-label=\"\(escape(title))\" "
            + "xmlns=\"http://www.w3.org/2000/svg\"><title>\(escape(title))</title>"
        for t in ticks {
            s += "<line class=\"grid\" x1=\"\(f(left))\" x2=\"\(f(width - right))\" y1=\"\(f(y(t)))\" y2=\"\(f(y(t)))\"/>"
            s += "<text class=\"ylabel\" x=\"\(f(left - 8))\" y=\"\(f(y(t) + 4))\">\(escape(axisLabel(t)))</text>"
        }
        // About six dated ticks, on days of the data.
        let n = Swift.min(6, points.count)
        var seen = Set<Int64>()
        for i in 0..<n {
            let p = points[Int((Double(i) / Double(Swift.max(1, n - 1)) * Double(points.count - 1)).rounded())]
            guard seen.insert(p.day).inserted else { continue }
            let anchor = i == 0 ? "start" : i == n - 1 ? "end" : "middle"
            s += "<line class=\"axis\" x1=\"\(f(x(p.day)))\" x2=\"\(f(x(p.day)))\" y1=\"\(f(height - bottom))\" y2=\"\(f(height - bottom + 5))\"/>"
            // On a phone, where the chart is small and the labels grow, only the first, middle and last dates stay.
            let every = i == 0 || i == n - 1 || i == n / 2 ? "" : " alt"
            s += "<text class=\"xlabel\(every)\" text-anchor=\"\(anchor)\" x=\"\(f(x(p.day)))\" y=\"\(f(height - bottom + 20))\">\(ISODate.dayText(p.day))</text>"
        }
        s += "<line class=\"axis\" x1=\"\(f(left))\" x2=\"\(f(width - right))\" y1=\"\(f(height - bottom))\" y2=\"\(f(height - bottom))\"/>"
        s += "<path class=\"invested\" d=\"\(path(\.invested))\"/>"
        s += "<path class=\"total\" d=\"\(path(\.total))\"/>"
        s += "</svg><figcaption><span class=\"key total\"></span>Total value <span class=\"key invested\"></span>Net invested</figcaption></figure>\n"
        return s
    }

    /// Horizontal bars of weights (0…100) with an optional target mark, as CSS widths.
    static func bars(_ rows: [(label: String, weight: Decimal?, target: Decimal?)]) -> String {
        func pct(_ d: Decimal) -> String { DecimalFormatting.fixed(min(max(d, 0), 100), scale: 2) }
        var s = "<div class=\"bars\">"
        for r in rows {
            s += "<div class=\"bar\"><span class=\"label\">\(escape(r.label))</span><span class=\"track\">"
            if let w = r.weight { s += "<span class=\"fill\" style=\"width:\(pct(w))%\"></span>" }
            if let t = r.target { s += "<span class=\"mark\" style=\"left:\(pct(t))%\"></span>" }
            s += "</span><span class=\"value\">\(r.weight.map { DecimalFormatting.percent($0) + "%" } ?? "—")</span></div>"
        }
        return s + "</div>\n"
    }

    static let style = """
    :root{--fg:#1b1f24;--muted:#5b6470;--line:#d8dde3;--bg:#fff;--card:#f5f7f9;--pos:#17703a;--neg:#b42318;--accent:#1f5fbf;--accent2:#8a6d00}
    @media (prefers-color-scheme:dark){:root{--fg:#e6e9ed;--muted:#9aa4ae;--line:#3a424b;--bg:#15191d;--card:#1e2429;--pos:#5fcf8a;--neg:#ff8a80;--accent:#7fb0ff;--accent2:#e0c050}}
    *{box-sizing:border-box}
    body{margin:0 auto;max-width:68rem;padding:1rem;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
    h1{font-size:1.5rem;margin:.2rem 0}h2{font-size:1.15rem;margin:1.8rem 0 .6rem;border-bottom:1px solid var(--line);padding-bottom:.25rem}
    .muted,caption,figcaption{color:var(--muted);font-size:.85rem}
    .warn{color:var(--accent2);font-size:.85rem}
    .cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(10.5rem,1fr));gap:.6rem;margin:1rem 0}
    .card{background:var(--card);border-radius:.5rem;padding:.6rem .8rem}.card b{display:block;font-size:1.2rem;font-variant-numeric:tabular-nums}
    .card span{color:var(--muted);font-size:.8rem}
    .scroll{overflow-x:auto;-webkit-overflow-scrolling:touch}
    table{border-collapse:collapse;width:100%;font-size:.9rem}caption{text-align:left;padding:.3rem 0}
    th,td{padding:.35rem .5rem;border-bottom:1px solid var(--line);text-align:left;white-space:nowrap}
    th{font-size:.75rem;text-transform:uppercase;letter-spacing:.03em;color:var(--muted)}
    tfoot td{font-weight:600;border-top:2px solid var(--line)}
    .num{text-align:right;font-variant-numeric:tabular-nums}.pos{color:var(--pos)}.neg{color:var(--neg)}
    .chart{margin:0}.chart svg{width:100%;height:auto;display:block}
    .grid{stroke:var(--line);stroke-width:1}.axis{stroke:var(--muted);stroke-width:1}
    .ylabel{fill:var(--muted);font-size:12px;text-anchor:end}.xlabel{fill:var(--muted);font-size:12px}
    path.total{fill:none;stroke:var(--accent);stroke-width:2.5}path.invested{fill:none;stroke:var(--accent2);stroke-width:2;stroke-dasharray:6 4}
    .key{display:inline-block;width:1.6rem;height:0;margin:0 .35rem .2rem .8rem;vertical-align:middle;border-top:3px solid var(--accent)}
    .key.invested{border-top:3px dashed var(--accent2)}
    .bars{display:grid;gap:.35rem;margin-bottom:1rem}.bar{display:grid;grid-template-columns:7rem 1fr 4.5rem;gap:.5rem;align-items:center;font-size:.9rem}
    .bar .track{position:relative;height:.9rem;background:var(--card);border-radius:.2rem}
    .bar .fill{position:absolute;left:0;top:0;bottom:0;background:var(--accent);border-radius:.2rem}
    .bar .mark{position:absolute;top:-.2rem;bottom:-.2rem;width:2px;background:var(--fg)}
    .bar .value{text-align:right;font-variant-numeric:tabular-nums}
    footer{margin-top:2rem;color:var(--muted);font-size:.8rem}
    @media (max-width:40rem){body{padding:.6rem;font-size:14px}.wide{display:none}td{white-space:normal}.ylabel{font-size:20px}.xlabel{font-size:18px}.xlabel.alt{display:none}.bar{grid-template-columns:5rem 1fr 3.8rem}th,td{padding:.3rem .25rem}table{font-size:.8rem}}
    @media print{:root{--fg:#000;--muted:#444;--line:#bbb;--bg:#fff;--card:#f2f2f2}body{max-width:none;padding:0;font-size:11pt}
    .scroll{overflow:visible}section{break-inside:avoid}h2{break-after:avoid}table{font-size:9pt}th,td{white-space:normal}}
    """
}

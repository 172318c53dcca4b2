import Foundation

/// The report as one self-contained HTML page (`--format html`): per program its totals, a
/// timeline, a bar chart of destinations by hits, and a table.
///
/// The page fetches nothing: styles, charts (SVG) and its one small script are inline, and
/// its Content-Security-Policy forbids every fetch, so a page opened later, anywhere, tells
/// no one it was opened. The policy allows only the inline style and scripts that carry the
/// page's nonce, drawn at random per page: text from the records (program paths, names) is
/// escaped, and even if some escaped badly it could not run. The last script marks the page
/// `<body data-rendered="ok">` once every chart has been laid out, for tests to check.
public struct HTMLFormat {
    public let timeZone: TimeZone
    public let nonce: String

    public init(timeZone: TimeZone = .current, nonce: String? = nil) {
        self.timeZone = timeZone
        var random = SystemRandomNumberGenerator()
        self.nonce = nonce ?? (0..<2).map { _ in String(random.next() as UInt64, radix: 36) }.joined()
    }

    public func page(_ report: Report) -> String {
        let formatter = timeFormatter(for: report)
        var html = """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'nonce-\(nonce)'; \
            script-src 'nonce-\(nonce)'; base-uri 'none'; form-action 'none'">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>lnp report</title>
            <style nonce="\(nonce)">\(Self.style)</style>
            </head>
            <body>
            <script nonce="\(nonce)">\(Self.errorScript)</script>
            <h1>Local network activity</h1>

            """
        html += "<p class=\"meta\">\(HTMLText.escape(overview(report))) Times are \(HTMLText.escape(zoneName)).</p>\n"
        html += Self.legend
        for (index, program) in report.programs.enumerated() {
            html += section(program, index: index, formatter: formatter)
        }
        if report.programs.isEmpty { html += "<p>No operations to report.</p>\n" }
        return html + "<script nonce=\"\(nonce)\">\(Self.doneScript)</script>\n</body>\n</html>\n"
    }

    private func section(_ program: ProgramReport, index: Int, formatter: DateFormatter) -> String {
        let charts = SVGCharts(program: program, index: index, formatter: formatter)
        var html = "<section class=\"program\">\n<h2>\(HTMLText.escape(program.program))</h2>\n"
        html += "<p>\(HTMLText.escape(TableFormat.totals(program))).</p>\n"
        html += "<figure><figcaption>Operations over time</figcaption>\(charts.timeline())</figure>\n"
        html += "<figure><figcaption>Destinations by hits</figcaption>\(charts.bars())</figure>\n"
        html += table(program)
        return html + "</section>\n"
    }

    private func table(_ program: ProgramReport) -> String {
        let rows = TableFormat(timeZone: timeZone)
        var html = "<table>\n<thead><tr>"
        for name in rows.columnNames { html += "<th>\(HTMLText.escape(name))</th>" }
        html += "</tr></thead>\n<tbody>\n"
        for destination in program.destinations {
            html += destination.tally.denied > 0 ? "<tr class=\"denied\">" : "<tr>"
            for (column, cell) in rows.cells(destination).enumerated() {
                html += TableFormat.countColumns.contains(column) ? "<td class=\"count\">" : "<td>"
                html += HTMLText.escape(cell) + "</td>"
            }
            html += "</tr>\n"
        }
        return html + "</tbody>\n</table>\n"
    }

    /// `2 programs, 2026-11-21 10:00:00 to 2026-11-21 10:05:12.`
    private func overview(_ report: Report) -> String {
        let count = report.programs.count
        guard let first = report.programs.map(\.first).min(), let last = report.programs.map(\.last).max() else {
            return "No programs."
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = timeZone
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        return "\(count) program\(count == 1 ? "" : "s"), \(formatter.string(from: first.date)) to "
            + "\(formatter.string(from: last.date))."
    }

    /// Times on the charts: to the second within a day, with the date over longer spans.
    private func timeFormatter(for report: Report) -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = timeZone
        let spans = report.programs.map { $0.last.date.timeIntervalSince($0.first.date) }
        formatter.dateFormat = (spans.max() ?? 0) < 86400 ? "HH:mm:ss" : "yyyy-MM-dd HH:mm"
        return formatter
    }

    private var zoneName: String {
        timeZone.reportName == "UTC" ? "UTC" : "local (\(timeZone.reportName))"
    }

    private static let legend = """
        <p class="legend"><svg class="key" width="330" height="16" role="img" aria-label="Legend">\
        <g class="mark allowed local">\(SVGCharts.dot(8, 8))</g><text x="18" y="12">allowed</text>\
        <g class="mark denied local">\(SVGCharts.cross(86, 8))</g><text x="96" y="12">denied</text>\
        <g class="mark allowed nonlocal">\(SVGCharts.dot(160, 8))</g><text x="170" y="12">not local (hollow)</text>\
        </svg> Denied operations are crosses on the timelines, hatched and labelled on the bars.</p>

        """

    private static let style = """
        body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#1a202c;background:#fff}\
        h2{font-size:1.1em;font-family:ui-monospace,monospace;word-break:break-all;margin-top:2em}\
        figure{margin:1em 0}figcaption{font-weight:600;margin-bottom:.3em}\
        svg.chart{max-width:100%;height:auto;display:block}svg text{font-size:12px;fill:#2d3748}\
        .label{font-family:ui-monospace,monospace}.tick{fill:#4a5568}.lane{stroke:#edf2f7}.axis{stroke:#4a5568}\
        .mark.allowed.local{fill:#2b6cb0;stroke:#2b6cb0}.mark.denied.local{fill:none;stroke:#c53030;stroke-width:2.2}\
        .mark.allowed.nonlocal{fill:#fff;stroke:#718096;stroke-width:1.5}\
        .mark.denied.nonlocal{fill:none;stroke:#718096;stroke-width:2.2}\
        .bar.allowed.local{fill:#2b6cb0}.bar.allowed.nonlocal{fill:#a0aec0}.bar.denied{stroke:#c53030}\
        .hatch-ground{fill:#fed7d7}.hatch-line{fill:#c53030}text.value.denied{fill:#9b2c2c;font-weight:600}\
        table{border-collapse:collapse;margin:1em 0}th,td{padding:.2em .7em;border-bottom:1px solid #e2e8f0;text-align:left;white-space:nowrap}\
        td.count{text-align:right;font-variant-numeric:tabular-nums}tr.denied td:nth-child(5){color:#9b2c2c;font-weight:600}\
        .meta,.legend{color:#4a5568}svg.key{vertical-align:middle}
        """

    /// First in the body: any later script error is written into the page, where tests look.
    private static let errorScript = """
        window.addEventListener("error",function(e){var b=document.body;\
        b.dataset.errors=(b.dataset.errors||"")+String(e.message)+"\\n";});
        """

    /// Last: the page is whole and every chart has a size.
    private static let doneScript = """
        (function(){var charts=document.querySelectorAll("svg.chart"),drawn=0;\
        charts.forEach(function(c){if(c.getBoundingClientRect().width>0){drawn+=1;}});\
        document.body.dataset.charts=String(drawn);\
        document.body.dataset.rendered=drawn===charts.length?"ok":"incomplete";})();
        """
}

/// Text for HTML, in elements and in quoted attributes alike. Control and formatting
/// characters are first shown escaped, as on a terminal.
enum HTMLText {
    static func escape(_ text: String) -> String {
        var html = ""
        for character in Terminal.visible(text) {
            switch character {
            case "&": html += "&amp;"
            case "<": html += "&lt;"
            case ">": html += "&gt;"
            case "\"": html += "&quot;"
            case "'": html += "&#39;"
            default: html.append(character)
            }
        }
        return html
    }
}

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

    /// The page of records already read: the report and its timelines in one go.
    public func page(entries: [AuditEntry], filter: ReportFilter = ReportFilter()) -> String {
        let report = Report(entries: entries, filter: filter)
        var timelines = Timelines(report: report, for: self, filter: filter)
        entries.forEach { timelines.add($0) }
        return page(report, timelines: timelines)
    }

    /// The programs that may have a section of their own, whose timelines the page needs: the
    /// busiest, as many as `PageLimits.sections`.
    public func timelinePrograms(_ report: Report) -> Set<String> {
        Set(Self.busiestFirst(report.programs).prefix(PageLimits.sections).map(\.program))
    }

    /// The page: the busiest programs each in a section of their own, as many as fit within
    /// `PageLimits.bytes`, in path order; the others, if any, in a table at the end.
    public func page(_ report: Report, timelines: Timelines) -> String {
        let formatter = timeFormatter(for: report)
        let head = """
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
        let foot = "<script nonce=\"\(nonce)\">\(Self.doneScript)</script>\n</body>\n</html>\n"

        // Sections, busiest program first, while they fit.
        var room = PageLimits.bytes - head.utf8.count - Self.legend.utf8.count - foot.utf8.count
            - PageLimits.overviewBytes - PageLimits.othersBytes
        var sections: [String: String] = [:]
        let candidates = timelinePrograms(report)
        for (index, program) in Self.busiestFirst(report.programs).enumerated() where candidates.contains(program.program) {
            let html = section(program, index: index, timeline: timelines[program.program], formatter: formatter)
            guard html.utf8.count <= room else { continue }
            sections[program.program] = html
            room -= html.utf8.count
        }
        let others = Self.busiestFirst(report.programs.filter { sections[$0.program] == nil })

        var html = head
        var meta = overview(report)
        if !others.isEmpty {
            meta += " The busiest \(sections.count) are shown in full; the other \(others.count) are listed at the end."
        }
        for unread in timelines.unread { meta += " No timeline for the programs read from \(unread)." }
        html += "<p class=\"meta\">\(HTMLText.escape(meta, limit: PageLimits.overviewBytes / 8)) "
            + "Times are \(HTMLText.escape(zoneName)).</p>\n"
        html += Self.legend
        for program in report.programs {
            if let section = sections[program.program] { html += section }
        }
        if !others.isEmpty { html += otherPrograms(others) }
        if report.programs.isEmpty { html += "<p>No operations to report.</p>\n" }
        return html + foot
    }

    static func busiestFirst(_ programs: [ProgramReport]) -> [ProgramReport] {
        programs.sorted { $0.operations != $1.operations ? $0.operations > $1.operations : $0.program < $1.program }
    }

    private func section(_ program: ProgramReport, index: Int, timeline: Timeline?, formatter: DateFormatter) -> String {
        let charts = SVGCharts(program: program, timeline: timeline, index: index, formatter: formatter)
        var html = "<section class=\"program\">\n<h2>\(HTMLText.escape(program.program, limit: PageLimits.programName))</h2>\n"
        html += "<p>\(HTMLText.escape(TableFormat.totals(program))).</p>\n"
        let (timelineSVG, step) = charts.timelineChart()
        if !timelineSVG.isEmpty {
            let caption = "Operations over time" + (step.map { ", a mark for each \(Self.duration($0))" } ?? "")
            html += "<figure><figcaption>\(caption)</figcaption>\(timelineSVG)</figure>\n"
        }
        let listed = Self.listed(program)
        html += "<figure><figcaption>Destinations by hits</figcaption>\(charts.bars(listed: listed))</figure>\n"
        html += table(program, listed: listed)
        return html + "</section>\n"
    }

    /// How many destinations a program's table names one by one; the rest share a row.
    static func listed(_ program: ProgramReport) -> Int {
        PageLimits.ownRows(of: program.destinations.count, rows: PageLimits.tableRows)
    }

    private func table(_ program: ProgramReport, listed: Int) -> String {
        let rows = TableFormat(timeZone: timeZone)
        var html = "<table>\n<thead><tr>"
        for name in rows.columnNames { html += "<th>\(HTMLText.escape(name))</th>" }
        html += "</tr></thead>\n<tbody>\n"
        func row(_ cells: [String], denied: Bool) {
            html += denied ? "<tr class=\"denied\">" : "<tr>"
            for (column, cell) in cells.enumerated() {
                html += TableFormat.countColumns.contains(column) ? "<td class=\"count\">" : "<td>"
                html += HTMLText.escape(cell, limit: PageLimits.recordText) + "</td>"
            }
            html += "</tr>\n"
        }
        for destination in program.destinations.prefix(listed) {
            row(rows.cells(destination), denied: destination.tally.denied > 0)
        }
        let rest = program.destinations.dropFirst(listed)
        if let first = rest.first {
            var together = DestinationReport(
                destination: Destination(domain: "\(rest.count) other destinations"), first: first.first, last: first.last)
            for destination in rest {
                together.tally.allowed += destination.tally.allowed
                together.tally.denied += destination.tally.denied
                together.app += destination.app
                together.user += destination.user
                together.first = min(together.first, destination.first)
                together.last = max(together.last, destination.last)
            }
            var cells = rows.cells(together)
            let local = rest.contains { $0.destination.isLocal }, nonLocal = rest.contains { !$0.destination.isLocal }
            cells[2] = local && nonLocal ? "local and not local" : local ? "local" : "not local"
            row(cells, denied: together.tally.denied > 0)
        }
        return html + "</tbody>\n</table>\n"
    }

    /// The programs without a section: a row each, the busiest first, as many as fit in
    /// `PageLimits.othersBytes` (at most `PageLimits.otherPrograms`); the rest counted in words.
    private func otherPrograms(_ programs: [ProgramReport]) -> String {
        let times = TableFormat(timeZone: timeZone)
        let zone = timeZone.reportName
        var html = "<section class=\"others\">\n<h2 class=\"others\">Other programs</h2>\n<table>\n<thead><tr>"
        let columns = ["PROGRAM", "LOCAL", "ALLOWED", "DENIED", "NOT LOCAL", "DESTINATIONS", "FIRST (\(zone))", "LAST (\(zone))"]
        for name in columns { html += "<th>\(HTMLText.escape(name))</th>" }
        html += "</tr></thead>\n<tbody>\n"
        // What follows the rows (their end, the sentence counting the rest) is under 300 bytes.
        let room = PageLimits.othersBytes - 300
        var listed = 0
        for program in programs.prefix(PageLimits.otherPrograms) {
            let cells = [
                HTMLText.escape(program.program, limit: PageLimits.recordText), String(program.local.total),
                String(program.local.allowed), String(program.local.denied), String(program.nonLocal.total),
                String(program.destinations.count), times.time(program.first), times.time(program.last),
            ]
            var row = program.local.denied > 0 ? "<tr class=\"denied\">" : "<tr>"
            for (column, cell) in cells.enumerated() {
                row += ((1...5).contains(column) ? "<td class=\"count\">" : "<td>") + cell + "</td>"
            }
            row += "</tr>\n"
            guard html.utf8.count + row.utf8.count <= room else { break }
            html += row
            listed += 1
        }
        html += "</tbody>\n</table>\n"
        let unlisted = programs.count - listed
        if unlisted > 0 {
            let operations = programs.dropFirst(listed).reduce(0) { $0 + $1.operations }
            html += "<p>And \(unlisted) more program\(unlisted == 1 ? "" : "s"), with \(operations) operation"
                + "\(operations == 1 ? "" : "s") in all: lnp report lists every one.</p>\n"
        }
        return html + "</section>\n"
    }

    /// `12 s`, `4 min`, `2.5 h`: how long a column of marks lasts.
    static func duration(_ seconds: TimeInterval) -> String {
        func number(_ value: Double) -> String {
            value < 10 && value.rounded() != value ? String(format: "%.1f", value) : String(Int(value.rounded()))
        }
        if seconds < 1 { return "\(number(seconds * 1000)) ms" }
        if seconds < 60 { return "\(number(seconds)) s" }
        if seconds < 3600 { return "\(number(seconds / 60)) min" }
        if seconds < 86400 { return "\(number(seconds / 3600)) h" }
        return "\(number(seconds / 86400)) days"
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
        \(SVGCharts.markers)\
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
        .meta,.legend{color:#4a5568}svg.key{vertical-align:middle}h2.others{font-family:inherit}\
        .dense{fill:none;stroke:none}\
        .dense.allowed-local{marker-start:url(#mark-allowed-local);marker-mid:url(#mark-allowed-local);marker-end:url(#mark-allowed-local)}\
        .dense.denied-local{marker-start:url(#mark-denied-local);marker-mid:url(#mark-denied-local);marker-end:url(#mark-denied-local)}\
        .dense.allowed-nonlocal{marker-start:url(#mark-allowed-nonlocal);marker-mid:url(#mark-allowed-nonlocal);marker-end:url(#mark-allowed-nonlocal)}\
        .dense.denied-nonlocal{marker-start:url(#mark-denied-nonlocal);marker-mid:url(#mark-denied-nonlocal);marker-end:url(#mark-denied-nonlocal)}
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

import Foundation

/// The report as one self-contained HTML page (`--format html`): a title naming the host and
/// the records' span, an overview of all programs (`HTMLOverview`), then per program its
/// totals, why it was denied, a timeline, a bar chart of destinations by hits, and a table.
///
/// The page fetches nothing: styles, charts (SVG) and its one small script are inline, and
/// its Content-Security-Policy forbids every fetch, so a page opened later, anywhere, tells
/// no one it was opened. The policy allows only the inline style and scripts that carry the
/// page's nonce, drawn at random per page: text from the records (program paths, names) is
/// escaped, and even if some escaped badly it could not run. The last script marks the page
/// `<body data-rendered="ok">` once every chart has been laid out, with the page's laid-out
/// size (`data-width`, `data-height`), for tests to check.
public struct HTMLFormat {
    public let timeZone: TimeZone
    public let nonce: String
    /// The machine the page says it was made on (`PageTitle`).
    public let host: String

    public init(timeZone: TimeZone = .current, nonce: String? = nil, host: String? = nil) {
        self.timeZone = timeZone
        var random = SystemRandomNumberGenerator()
        self.nonce = nonce ?? (0..<2).map { _ in String(random.next() as UInt64, radix: 36) }.joined()
        self.host = host ?? PageTitle.hostName()
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

    /// The page: its overview, then the busiest programs each in a section of their own, as
    /// many as fit within `PageLimits.bytes`, in path order; the others, if any, in a table
    /// at the end.
    public func page(_ report: Report, timelines: Timelines) -> String {
        let head = self.head(report)
        let foot = "<script nonce=\"\(nonce)\">\(Self.doneScript)</script>\n</body>\n</html>\n"
        let busiest = Self.busiestFirst(report.programs)
        let candidates = timelinePrograms(report)
        let ranks = Dictionary(uniqueKeysWithValues: busiest.enumerated().map { ($1.program, $0) })
        let oneDay = oneDay(report)
        // The overview as it is when every candidate has a section: the largest it can be.
        let linked = ranks.filter { candidates.contains($0.key) }
        var overview = HTMLOverview(programs: busiest, sections: linked).html
        let overviewBound = overview.utf8.count

        // Sections, busiest program first, while they fit.
        var room = PageLimits.bytes - head.utf8.count - overviewBound - Self.legend.utf8.count - foot.utf8.count
            - PageLimits.summaryBytes - PageLimits.othersBytes
        var sections: [String: String] = [:]
        for (index, program) in busiest.enumerated() where candidates.contains(program.program) {
            let html = section(program, index: index, timeline: timelines[program.program], oneDay: oneDay)
            guard html.utf8.count <= room else { continue }
            sections[program.program] = html
            room -= html.utf8.count
        }
        let others = busiest.filter { sections[$0.program] == nil }

        var html = head
        html += summary(report, shown: sections.count, others: others.count, unread: timelines.unread)
        if !report.programs.isEmpty {
            // Linking only to the sections there are.
            if sections.count < linked.count {
                overview = HTMLOverview(programs: busiest, sections: ranks.filter { sections[$0.key] != nil }).html
            }
            html += overview + Self.legend
        }
        for program in report.programs {
            if let section = sections[program.program] { html += section }
        }
        if !others.isEmpty { html += otherPrograms(others, oneDay: oneDay) }
        return html + foot
    }

    /// Up to the overview: the title, naming the host and the records' span, and the heading.
    private func head(_ report: Report) -> String {
        var title = "lnp report — \(host)"
        if let first = report.programs.map(\.first).min(), let last = report.programs.map(\.last).max() {
            title += ", " + PageTitle.span(from: first, to: last, zone: timeZone)
        }
        return """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'nonce-\(nonce)'; \
            script-src 'nonce-\(nonce)'; base-uri 'none'; form-action 'none'">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(HTMLText.escape(title, limit: PageLimits.recordText))</title>
            <style nonce="\(nonce)">\(Self.style)</style>
            </head>
            <body>
            <script nonce="\(nonce)">\(Self.errorScript)</script>
            <h1>Local network activity</h1>

            """
    }

    /// What the records cover, where the report was made, and what the page leaves out.
    private func summary(_ report: Report, shown: Int, others: Int, unread: [String]) -> String {
        guard let first = report.programs.map(\.first).min(), let last = report.programs.map(\.last).max() else {
            return "<p class=\"meta\">Made on \(HTMLText.escape(host, limit: 64)).</p>\n<p>No operations to report.</p>\n"
        }
        var local = Tally(), nonLocal = 0
        for program in report.programs {
            local.allowed += program.local.allowed
            local.denied += program.local.denied
            nonLocal += program.nonLocal.total
        }
        let count = report.programs.count
        var meta = "Records of \(PageTitle.span(from: first, to: last, zone: timeZone)), "
        meta += "reported on \(host) (the machine lnp report ran on: records do not name the one they were made on). "
        meta += "\(count) program\(count == 1 ? "" : "s"), \(local.total) local-network operation"
        meta += "\(local.total == 1 ? "" : "s"): \(local.allowed) allowed, \(local.denied) denied"
        meta += nonLocal > 0 ? "; \(nonLocal) not local." : "."
        if others > 0 {
            meta += " The busiest \(shown) are shown in full; the other \(others) are listed at the end."
        }
        for input in unread { meta += " No timeline for the programs read from \(input)." }
        return "<p class=\"meta\">\(HTMLText.escape(meta, limit: PageLimits.summaryBytes / 8)) "
            + "Times are \(HTMLText.escape(zoneName)).</p>\n"
    }

    static func busiestFirst(_ programs: [ProgramReport]) -> [ProgramReport] {
        programs.sorted { $0.operations != $1.operations ? $0.operations > $1.operations : $0.program < $1.program }
    }

    /// Whether the records are all of one day, which the summary names: the tables give times alone.
    private func oneDay(_ report: Report) -> Bool {
        guard let first = report.programs.map(\.first).min(), let last = report.programs.map(\.last).max() else {
            return true
        }
        return LocalTime(first, in: timeZone).isSameDay(as: LocalTime(last, in: timeZone))
    }

    private func section(_ program: ProgramReport, index: Int, timeline: Timeline?, oneDay: Bool) -> String {
        let charts = SVGCharts(program: program, timeline: timeline, index: index, zone: timeZone)
        var html = "<section class=\"program\" id=\"\(HTMLOverview.anchor(index))\">\n"
        html += "<h2>\(HTMLText.escape(program.program, limit: PageLimits.programName))</h2>\n"
        html += "<p>\(HTMLText.escape(TableFormat.totals(program))).</p>\n"
        if program.denials.total > 0 {
            let causes = HTMLOverview.causes(program.denials, most: .max)
            html += "<p class=\"why\">Why denied: \(causes) (the overview says what each means).</p>\n"
        }
        let (timelineSVG, step) = charts.timelineChart()
        if !timelineSVG.isEmpty {
            let caption = "Operations over time" + (step.map { ", a mark for each \(Self.duration($0))" } ?? "")
            html += "<figure><figcaption>\(caption)</figcaption>\(timelineSVG)</figure>\n"
        }
        let listed = Self.listed(program)
        html += "<figure><figcaption>Destinations by hits</figcaption>\(charts.bars(listed: listed))</figure>\n"
        html += table(program, listed: listed, oneDay: oneDay)
        return html + "</section>\n"
    }

    /// How many destinations a program's table names one by one; the rest share a row.
    static func listed(_ program: ProgramReport) -> Int {
        PageLimits.ownRows(of: program.destinations.count, rows: PageLimits.tableRows)
    }

    /// The table's columns: the text table's, with why each destination's operations were
    /// denied, and why it is local (or not) in the network column.
    private func table(_ program: ProgramReport, listed: Int, oneDay: Bool) -> String {
        let rows = TableFormat(timeZone: timeZone)
        var names = rows.columnNames
        names.insert("DENIED BECAUSE", at: Self.becauseColumn)
        var html = "<table class=\"destinations\">\n<thead><tr>"
        for name in names { html += "<th>\(HTMLText.escape(name))</th>" }
        html += "</tr></thead>\n<tbody>\n"
        func row(_ cells: [String], causes: DenialCauseSet, denied: Bool) {
            var cells = cells
            if oneDay { cells[7...8] = cells[7...8].map { String($0.split(separator: " ").last ?? "") }[...] }
            let name = HTMLText.escapeBreakable(cells[0], limit: PageLimits.recordText)
            cells = cells.map { HTMLText.escape($0, limit: PageLimits.recordText) }
            cells[0] = name
            cells.insert(HTMLOverview.causes(causes), at: Self.becauseColumn)
            html += denied ? "<tr class=\"denied\">" : "<tr>"
            for (column, cell) in cells.enumerated() {
                html += Self.countColumns.contains(column) ? "<td class=\"count\">"
                    : column == 0 ? "<td class=\"destination\">" : column >= 8 ? "<td class=\"when\">"
                    : Self.wrappedColumns.contains(column) ? "<td class=\"wrap\">" : "<td>"
                html += cell + "</td>"
            }
            html += "</tr>\n"
        }
        for destination in program.destinations.prefix(listed) {
            var cells = rows.cells(destination)
            // Why it is local, in lnp check's words, which say so (`on-link …`, `multicast`);
            // why not, for one that is not.
            if let reason = destination.reason {
                let words = String(reason.unicodeScalars.prefix(60)) + (destination.otherReasons ? ", and others" : "")
                cells[2] = destination.destination.isLocal ? words : "not local: " + words
            }
            row(cells, causes: destination.deniedBecause, denied: destination.tally.denied > 0)
        }
        let rest = program.destinations.dropFirst(listed)
        if let first = rest.first {
            var together = DestinationReport(
                destination: Destination(domain: "\(rest.count) other destinations"), first: first.first, last: first.last)
            for destination in rest {
                together.tally.allowed += destination.tally.allowed
                together.tally.denied += destination.tally.denied
                together.deniedBecause.formUnion(destination.deniedBecause)
                together.app += destination.app
                together.user += destination.user
                together.first = min(together.first, destination.first)
                together.last = max(together.last, destination.last)
            }
            var cells = rows.cells(together)
            let local = rest.contains { $0.destination.isLocal }, nonLocal = rest.contains { !$0.destination.isLocal }
            cells[2] = local && nonLocal ? "local and not local" : local ? "local" : "not local"
            row(cells, causes: together.deniedBecause, denied: together.tally.denied > 0)
        }
        return html + "</tbody>\n</table>\n"
    }

    /// Where the causes go among the text table's columns (after DENIED), and which columns
    /// then hold counts.
    static let becauseColumn = 5
    static let countColumns: Set<Int> = [3, 4, 6, 7]
    /// Columns of words that may be long (a reason, causes): they wrap, so that the
    /// table stays about as wide as the window; so do the destination and the times (a
    /// date over its time).
    static let wrappedColumns: Set<Int> = [2, 5]

    /// The programs without a section: a row each, the busiest first, as many as fit in
    /// `PageLimits.othersBytes` (at most `PageLimits.otherPrograms`); the rest counted in words.
    private func otherPrograms(_ programs: [ProgramReport], oneDay: Bool) -> String {
        let times = TableFormat(timeZone: timeZone)
        let zone = timeZone.reportName
        var html = "<section class=\"others\">\n<h2 class=\"others\">Other programs</h2>\n<table class=\"programs\">\n<thead><tr>"
        let columns = ["PROGRAM", "LOCAL", "ALLOWED", "DENIED", "NOT LOCAL", "DESTINATIONS", "FIRST (\(zone))", "LAST (\(zone))"]
        for name in columns { html += "<th>\(HTMLText.escape(name))</th>" }
        html += "</tr></thead>\n<tbody>\n"
        // What follows the rows (their end, the sentence counting the rest) is under 300 bytes.
        let room = PageLimits.othersBytes - 300
        var listed = 0
        for program in programs.prefix(PageLimits.otherPrograms) {
            let cells = [
                "<span class=\"name\" title=\"\(HTMLText.escape(program.program, limit: PageLimits.recordText))\">"
                    + HTMLText.escape(ChartLabel.fitted(program.program)) + "</span>", String(program.local.total),
                String(program.local.allowed), String(program.local.denied), String(program.nonLocal.total),
                String(program.destinations.count),
            ] + [program.first, program.last].map { oneDay ? LocalTime($0, in: timeZone).seconds : times.time($0) }
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

    private var zoneName: String {
        timeZone.reportName == "UTC" ? "UTC" : "local (\(timeZone.reportName))"
    }

    private static let legend = """
        <p class="legend"><svg class="key" width="390" height="16" role="img" aria-label="Legend">\
        \(SVGCharts.markers)\(SVGCharts.hatch(id: "denied-legend"))\
        <g class="mark allowed local">\(SVGCharts.dot(8, 8))</g><text x="18" y="12">allowed</text>\
        <g class="mark denied local">\(SVGCharts.cross(76, 8))</g><text x="86" y="12">denied</text>\
        <g class="mark allowed nonlocal">\(SVGCharts.dot(140, 8))</g><text x="150" y="12">not local</text>\
        <rect class="bar allowed local" x="220" y="3" width="14" height="10"/><text x="238" y="12">allowed</text>\
        <rect class="bar denied" x="290" y="3" width="14" height="10" fill="url(#denied-legend)"/>\
        <text x="308" y="12">denied</text></svg> \
        Marks on the timelines (hollow: not local), bars on the charts of destinations.</p>

        """

    private static let style = """
        body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#1a202c;background:#fff}\
        h2{font-size:1.1em;font-family:ui-monospace,monospace;word-break:break-all;margin-top:2em}\
        h2.plain,h2.others{font-family:inherit;word-break:normal}h3{font-size:1em;margin:1.4em 0 .3em}\
        figure{margin:1em 0}figcaption{font-weight:600;margin-bottom:.3em}\
        svg.chart{max-width:100%;height:auto;display:block}svg text{font-size:12px;fill:#2d3748}\
        svg.defs{position:absolute}svg.spark{display:block}\
        .label,.name,.word{font-family:ui-monospace,monospace}.name a{color:inherit}\
        .tick{fill:#4a5568}.lane{stroke:#edf2f7}.axis{stroke:#4a5568}\
        .mark.allowed.local{fill:#2b6cb0;stroke:#2b6cb0}.mark.denied.local{fill:none;stroke:#c53030;stroke-width:2.2}\
        .mark.allowed.nonlocal{fill:#fff;stroke:#718096;stroke-width:1.5}\
        .mark.denied.nonlocal{fill:none;stroke:#718096;stroke-width:2.2}\
        .bar.allowed.local{fill:#2b6cb0}.bar.allowed.nonlocal{fill:#a0aec0}.bar.denied{stroke:#c53030}\
        .hatch-ground{fill:#fed7d7}.hatch-line{fill:#c53030}text.value.denied{fill:#9b2c2c;font-weight:600}\
        table{border-collapse:collapse;margin:.5em 0 1em;font-size:13px}\
        th,td{padding:.2em .5em;border-bottom:1px solid #e2e8f0;text-align:left;white-space:nowrap}\
        td.count{text-align:right;font-variant-numeric:tabular-nums}\
        td.wrap,td.meaning{white-space:normal;overflow-wrap:break-word;min-width:8em}\
        td.destination{white-space:normal;overflow-wrap:break-word;min-width:14em}td.when{white-space:normal}\
        table.destinations tr.denied td:nth-child(5),table.overview tr.denied td:nth-child(4),\
        table.programs tr.denied td:nth-child(4){color:#9b2c2c;font-weight:600}\
        .meta,.legend{color:#4a5568}svg.key{vertical-align:middle}\
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
        var page=document.documentElement;document.body.dataset.charts=String(drawn);\
        document.body.dataset.width=String(page.scrollWidth);document.body.dataset.height=String(page.scrollHeight);\
        document.body.dataset.rendered=drawn===charts.length?"ok":"incomplete";})();
        """
}

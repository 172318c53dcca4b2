import Foundation

/// The two charts of a program on the HTML page, as inline SVG. Every mark says what it is
/// in shape as well as colour (a dot allowed, a cross denied; filled local, hollow not
/// local), and every piece of text is escaped.
struct SVGCharts {
    /// The timeline's plot, right of the row labels, and the room after it.
    static let plotWidth = 560.0
    static let margin = 20.0
    static let rowHeight = 22.0

    let program: ProgramReport
    /// Nil when the records were not read a second time for it.
    let timeline: Timeline?
    /// A number unique on the page, for the ids of the pattern definitions.
    let index: Int
    let zone: TimeZone
    /// The width of the row labels' column: the same on both charts, for the longest label
    /// either shows (`ChartLabel`).
    let labelWidth: Double

    init(program: ProgramReport, timeline: Timeline?, index: Int, zone: TimeZone) {
        self.program = program
        self.timeline = timeline
        self.index = index
        self.zone = zone
        let labels = program.destinations.prefix(PageLimits.chartRows).map { Self.label($0.destination) }
        labelWidth = ChartLabel.columnWidth(labels + (timeline?.lanes.labels ?? []))
    }

    /// Both charts' width: labels, then the plot (or the bars and their words).
    var width: Double { labelWidth + Self.plotWidth + Self.margin }

    // MARK: The timeline

    /// x: time, from the program's first record to its last; y: one row per destination.
    /// A mark per pixel, row and kind, with its count and times as its tooltip, when that
    /// fits in the timeline's `markBytes`; else a dense timeline: columns of 1, 2, 4… pixels,
    /// as wide as the room needs, their marks drawn by markers on one path per row and kind,
    /// which take about a fifteenth of the room (the path's tooltip has the row's count).
    /// `step`: how long a column lasts, when wider than a pixel.
    func timelineChart() -> (svg: String, step: TimeInterval?) {
        guard let timeline else { return ("", nil) }
        let labels = timeline.lanes.labels
        let height = Double(labels.count) * Self.rowHeight + 40
        let label = "Timeline of \(program.operations) operation\(program.operations == 1 ? "" : "s")"
        var svg = open(class: "timeline", height: height, label: label)
        for (row, label) in labels.enumerated() { svg += rowLabel(label, y: Self.y(row)) }
        // The plot, its x from the program's first operation (0) to its last (plotWidth).
        svg += "<g transform=\"translate(\(labelWidth) 0)\">"
        for row in labels.indices {
            let y = Self.y(row)
            svg += "<line class=\"lane\" x1=\"0\" x2=\"\(Self.plotWidth)\" y1=\"\(y)\" y2=\"\(y)\"/>"
        }
        var width = 1
        if let marks = timeline.titledMarks {
            svg += titledMarks(marks)
        } else {
            let (dense, columnWidth) = denseMarks(timeline)
            svg += dense
            width = columnWidth
        }
        let span = timeline.span
        svg += axis(top: Double(labels.count) * Self.rowHeight + 6, span: span)
        let step = width > 1 && span > 0 ? span * Double(width) / Self.plotWidth : nil
        return (svg + "</g></svg>", step)
    }

    private static func y(_ lane: Int) -> Double { Double(lane) * rowHeight + rowHeight / 2 + 4 }

    private static func kind(_ spot: Timeline.Spot) -> String {
        (spot.allowed ? "allowed" : "denied") + (spot.local ? " local" : " nonlocal")
    }

    private func title(count: Int, allowed: Bool, local: Bool, first: AuditTime, last: AuditTime) -> String {
        let (from, to) = (time(first), time(last))
        return "\(count) \(allowed ? "allowed" : "denied")\(local ? "" : ", not local"), \(from == to ? from : "\(from) to \(to)")"
    }

    private func titledMarks(_ marks: [(spot: Timeline.Spot, cell: Timeline.Cell)]) -> String {
        var svg = ""
        for (spot, cell) in marks {
            let y = Self.y(spot.lane)
            let title = title(count: cell.count, allowed: spot.allowed, local: spot.local, first: cell.first, last: cell.last)
            svg += "<g class=\"mark \(Self.kind(spot))\"><title>\(HTMLText.escape(title))</title>"
            svg += spot.allowed ? Self.dot(Double(spot.x), y) : Self.cross(Double(spot.x), y)
            svg += "</g>"
        }
        return svg
    }

    /// One path per row and kind, its tooltip the row's count and times.
    private func denseMarks(_ timeline: Timeline) -> (svg: String, columnWidth: Int) {
        let (marks, width) = timeline.denseMarks()
        var paths: [Timeline.Row: String] = [:]
        for spot in marks {
            paths[Timeline.Row(lane: spot.lane, allowed: spot.allowed, local: spot.local), default: ""]
                += "M\(spot.x) \(Int(Self.y(spot.lane)))"
        }
        var svg = ""
        for (row, cell) in timeline.rows.sorted(by: { $0.key < $1.key }) {
            let kind = (row.allowed ? "allowed" : "denied") + (row.local ? "-local" : "-nonlocal")
            let title = title(count: cell.count, allowed: row.allowed, local: row.local, first: cell.first, last: cell.last)
            svg += "<path class=\"dense \(kind)\" d=\"\(paths[row] ?? "")\"><title>\(HTMLText.escape(title))</title></path>"
        }
        return (svg, width)
    }

    /// The markers dense timelines draw their marks with: the shapes of the marks, once per page.
    static let markers: String = {
        var defs = "<defs>"
        for (allowed, local) in [(true, true), (false, true), (true, false), (false, false)] {
            let decision = allowed ? "allowed" : "denied", network = local ? "local" : "nonlocal"
            let attribute = " class=\"mark \(decision) \(network)\""
            defs += "<marker id=\"mark-\(decision)-\(network)\" markerUnits=\"userSpaceOnUse\" overflow=\"visible\">"
                + (allowed ? dot(0, 0, attribute) : cross(0, 0, attribute)) + "</marker>"
        }
        return defs + "</defs>"
    }()

    /// Round times (`TimeAxis`), each label centred on its tick where there is room: one
    /// near an end may reach under the row labels or into the margin, and is moved in from
    /// the chart's edge; one that would then touch the label before it is left out.
    private func axis(top: Double, span: TimeInterval) -> String {
        var svg = "<line class=\"axis\" x1=\"0\" x2=\"\(Self.plotWidth)\" y1=\"\(top)\" y2=\"\(top)\"/>"
        let leftmost = 8 - labelWidth, rightmost = Self.plotWidth + Self.margin
        var previousEnd = -Double.infinity
        for tick in TimeAxis.ticks(start: program.first, span: span, width: Self.plotWidth, zone: zone) {
            svg += "<line class=\"axis\" x1=\"\(tick.x)\" x2=\"\(tick.x)\" y1=\"\(top)\" y2=\"\(top + 5)\"/>"
            let length = Double(tick.label.count) * TimeAxis.characterWidth
            let start = min(max(tick.x - length / 2, leftmost), rightmost - length)
            guard start >= previousEnd + 6 else { continue }
            previousEnd = start + length
            svg += "<text class=\"tick\" x=\"\(start + length / 2)\" y=\"\(top + 18)\" text-anchor=\"middle\">"
                + HTMLText.escape(tick.label) + "</text>"
        }
        return svg
    }

    /// `attributes`: more of them, each with a space before it.
    static func dot(_ x: Double, _ y: Double, _ attributes: String = "") -> String {
        "<circle\(attributes) cx=\"\(x)\" cy=\"\(y)\" r=\"4.5\"/>"
    }

    static func cross(_ x: Double, _ y: Double, _ attributes: String = "") -> String {
        "<path\(attributes) d=\"M\(x - 4.5) \(y - 4.5)L\(x + 4.5) \(y + 4.5)M\(x - 4.5) \(y + 4.5)L\(x + 4.5) \(y - 4.5)\"/>"
    }

    // MARK: The bars

    /// One bar per destination, by hits: the allowed part solid, the denied part hatched and
    /// named in words beside the bar. `listed`: how many destinations the table below names
    /// one by one (it counts the rest together).
    ///
    /// The busiest `PageLimits.chartRows` have a bar; unlike the timeline's lanes and the
    /// table's rows, the rest share no bar (theirs together would set the scale, and dwarf
    /// the others) but a line of words below.
    func bars(listed: Int) -> String {
        let shown = program.destinations.prefix(PageLimits.chartRows)
        let more = program.destinations.count - shown.count
        let height = Double(shown.count + (more > 0 ? 1 : 0)) * Self.rowHeight + 8
        var svg = open(class: "bars", height: height, label: "Destinations by hits")
        svg += Self.hatch(id: "denied-\(index)")
        let rows = shown.map { (label: Self.label($0.destination), tally: $0.tally, local: $0.destination.isLocal) }
        svg += Self.barRows(rows, left: labelWidth, width: Self.plotWidth + Self.margin, pattern: "denied-\(index)") {
            rowLabel($0, y: $1)
        }
        if more > 0 {
            let next = max(0, listed - shown.count)
            let words = next >= more
                ? "\(more) more destination\(more == 1 ? "" : "s") in the table below"
                : "\(more) more destinations: the next \(next) in the table below, "
                    + "the other \(more - next) counted together there"
            svg += "<text class=\"tick\" x=\"\(labelWidth)\" y=\"\(height - 6)\">\(words)</text>"
        }
        return svg + "</svg>"
    }

    /// The hatching of denied bars, as a pattern `id` of the chart that defines it.
    static func hatch(id: String) -> String {
        "<defs><pattern id=\"\(id)\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
            + "patternTransform=\"rotate(45)\"><rect class=\"hatch-ground\" width=\"6\" height=\"6\"/>"
            + "<rect class=\"hatch-line\" width=\"2.5\" height=\"6\"/></pattern></defs>"
    }

    /// Rows of bars from `left` across `width` pixels, the busiest as long as the words after it
    /// leave room for: the allowed part solid (grey when not local), the denied part hatched
    /// with `pattern`, and the counts in words. `label` draws a row's name, centred on a y.
    static func barRows(
        _ rows: [(label: String, tally: Tally, local: Bool)], left: Double, width: Double, pattern: String,
        label: (String, Double) -> String
    ) -> String {
        func words(_ tally: Tally) -> String {
            var words: [String] = []
            if tally.allowed > 0 { words.append("\(tally.allowed) allowed") }
            if tally.denied > 0 { words.append("\(tally.denied) denied") }
            return words.joined(separator: ", ")
        }
        let most = Double(rows.map(\.tally.total).max() ?? 1)
        let longest = Double(rows.map { words($0.tally).count }.max() ?? 0)
        let barWidth = max(width - longest * TimeAxis.characterWidth - 10, 120)
        var svg = ""
        for (row, bar) in rows.enumerated() {
            let y = Double(row) * rowHeight + 4
            svg += label(bar.label, y + rowHeight / 2)
            let allowedWidth = Double(bar.tally.allowed) / most * barWidth
            let deniedWidth = Double(bar.tally.denied) / most * barWidth
            if allowedWidth > 0 {
                svg += "<rect class=\"bar allowed \(bar.local ? "local" : "nonlocal")\" x=\"\(left)\" y=\"\(y + 3)\" "
                    + "width=\"\(allowedWidth)\" height=\"\(rowHeight - 8)\"/>"
            }
            if deniedWidth > 0 {
                svg += "<rect class=\"bar denied\" x=\"\(left + allowedWidth)\" y=\"\(y + 3)\" "
                    + "width=\"\(deniedWidth)\" height=\"\(rowHeight - 8)\" fill=\"url(#\(pattern))\"/>"
            }
            svg += "<text class=\"value\(bar.tally.denied > 0 ? " denied" : "")\" "
                + "x=\"\(left + allowedWidth + deniedWidth + 6)\" y=\"\(y + rowHeight / 2 + 4)\">"
                + HTMLText.escape(words(bar.tally)) + "</text>"
        }
        return svg
    }

    // MARK: Shared

    /// `printer.local:8080 tcp`, `203.0.113.5:443 tcp (not local)`: distinct for distinct rows.
    static func label(_ destination: Destination) -> String {
        destination.label + (destination.transport.map { " " + $0 } ?? "") + (destination.isLocal ? "" : " (not local)")
    }

    private func open(class name: String, height: Double, label: String) -> String {
        "<svg class=\"chart \(name)\" viewBox=\"0 0 \(width) \(height + 4)\" width=\"\(width)\" "
            + "height=\"\(height + 4)\" role=\"img\" aria-label=\"\(HTMLText.escape(label))\">"
    }

    /// A destination's name at the left, cut in its middle to fit; the whole name (up to a
    /// limit) is its tooltip.
    private func rowLabel(_ label: String, y: Double) -> String {
        Self.rowLabel(label, x: labelWidth - 8, y: y)
    }

    static func rowLabel(_ label: String, x: Double, y: Double) -> String {
        "<text class=\"label\" x=\"\(x)\" y=\"\(y + 4)\" text-anchor=\"end\">"
            + "<title>\(HTMLText.escape(label, limit: PageLimits.recordText))</title>"
            + "\(HTMLText.escape(ChartLabel.fitted(label)))</text>"
    }

    /// A mark's time: to the millisecond for a program whose records span less than a minute,
    /// with the date for one that spans days.
    private func time(_ time: AuditTime) -> String {
        let local = LocalTime(time, in: zone)
        let span = program.last.date.timeIntervalSince(program.first.date)
        if span < 60 { return local.seconds(decimals: 3) }
        if LocalTime(program.first, in: zone).isSameDay(as: LocalTime(program.last, in: zone)) { return local.seconds }
        return "\(local.date) \(local.seconds)"
    }
}

import Foundation

/// The two charts of a program on the HTML page, as inline SVG. Every mark says what it is
/// in shape as well as colour (a dot allowed, a cross denied; filled local, hollow not
/// local), and every piece of text is escaped.
struct SVGCharts {
    static let width = 860.0
    static let labelWidth = 280.0
    static let rowHeight = 22.0

    let program: ProgramReport
    /// Nil when the records were not read a second time for it.
    let timeline: Timeline?
    /// A number unique on the page, for the ids of the pattern definitions.
    let index: Int
    let formatter: DateFormatter

    // MARK: The timeline

    /// x: time, from the program's first record to its last; y: one row per destination.
    /// A mark per pixel, row and kind, with its count and times as its tooltip, when that
    /// fits in the timeline's `markBytes`; else a dense timeline: columns of 1, 2, 4… pixels,
    /// as wide as the room needs, their marks drawn by markers on one path per row and kind,
    /// which take about a fifteenth of the room (the path's tooltip has the row's count).
    /// `step`: how long a column lasts, when wider than a pixel.
    func timelineChart() -> (svg: String, step: TimeInterval?) {
        guard let timeline else { return ("", nil) }
        let plotLeft = Timeline.plotLeft, plotRight = Timeline.plotRight
        let labels = timeline.lanes.labels
        let height = Double(labels.count) * Self.rowHeight + 40
        let label = "Timeline of \(program.operations) operation\(program.operations == 1 ? "" : "s")"
        var svg = open(class: "timeline", height: height, label: label)
        for (row, label) in labels.enumerated() {
            let y = Self.y(row)
            svg += "<line class=\"lane\" x1=\"\(plotLeft)\" x2=\"\(plotRight)\" y1=\"\(y)\" y2=\"\(y)\"/>"
            svg += rowLabel(label, y: y)
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
        svg += axis(top: Double(labels.count) * Self.rowHeight + 6, left: plotLeft, right: plotRight, span: span)
        let step = width > 1 && span > 0 ? span * Double(width) / (plotRight - plotLeft) : nil
        return (svg + "</svg>", step)
    }

    private static func y(_ lane: Int) -> Double { Double(lane) * rowHeight + rowHeight / 2 + 4 }

    private static func kind(_ spot: Timeline.Spot) -> String {
        (spot.allowed ? "allowed" : "denied") + (spot.local ? " local" : " nonlocal")
    }

    private func title(count: Int, allowed: Bool, local: Bool, first: AuditTime, last: AuditTime) -> String {
        let when = first == last ? time(first) : "\(time(first)) to \(time(last))"
        return "\(count) \(allowed ? "allowed" : "denied")\(local ? "" : ", not local"), \(when)"
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

    private func axis(top: Double, left: Double, right: Double, span: TimeInterval) -> String {
        var svg = "<line class=\"axis\" x1=\"\(left)\" x2=\"\(right)\" y1=\"\(top)\" y2=\"\(top)\"/>"
        let ticks = span <= 0 ? [0.5] : [0, 0.25, 0.5, 0.75, 1]
        for fraction in ticks {
            let x = left + fraction * (right - left)
            let date = program.first.date.addingTimeInterval(fraction * max(span, 0))
            let anchor = fraction == 0 ? "start" : fraction == 1 ? "end" : "middle"
            svg += "<line class=\"axis\" x1=\"\(x)\" x2=\"\(x)\" y1=\"\(top)\" y2=\"\(top + 5)\"/>"
            svg += "<text class=\"tick\" x=\"\(x)\" y=\"\(top + 18)\" text-anchor=\"\(anchor)\">"
                + HTMLText.escape(formatter.string(from: date)) + "</text>"
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
        let most = Double(shown.map(\.hits).max() ?? 1)
        let barLeft = Self.labelWidth, barWidth = 400.0
        var svg = open(class: "bars", height: height, label: "Destinations by hits")
        svg += "<defs><pattern id=\"denied-\(index)\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
            + "patternTransform=\"rotate(45)\"><rect class=\"hatch-ground\" width=\"6\" height=\"6\"/>"
            + "<rect class=\"hatch-line\" width=\"2.5\" height=\"6\"/></pattern></defs>"
        for (row, destination) in shown.enumerated() {
            let y = Double(row) * Self.rowHeight + 4
            let local = destination.destination.isLocal
            svg += rowLabel(Self.label(destination.destination), y: y + Self.rowHeight / 2)
            let allowedWidth = Double(destination.tally.allowed) / most * barWidth
            let deniedWidth = Double(destination.tally.denied) / most * barWidth
            let barClass = local ? "bar allowed local" : "bar allowed nonlocal"
            if allowedWidth > 0 {
                svg += "<rect class=\"\(barClass)\" x=\"\(barLeft)\" y=\"\(y + 3)\" width=\"\(allowedWidth)\" "
                    + "height=\"\(Self.rowHeight - 8)\"/>"
            }
            if deniedWidth > 0 {
                svg += "<rect class=\"bar denied\" x=\"\(barLeft + allowedWidth)\" y=\"\(y + 3)\" "
                    + "width=\"\(deniedWidth)\" height=\"\(Self.rowHeight - 8)\" fill=\"url(#denied-\(index))\"/>"
            }
            var words: [String] = []
            if destination.tally.allowed > 0 { words.append("\(destination.tally.allowed) allowed") }
            if destination.tally.denied > 0 { words.append("\(destination.tally.denied) denied") }
            svg += "<text class=\"value\(destination.tally.denied > 0 ? " denied" : "")\" "
                + "x=\"\(barLeft + allowedWidth + deniedWidth + 6)\" y=\"\(y + Self.rowHeight / 2 + 4)\">"
                + HTMLText.escape(words.joined(separator: ", ")) + "</text>"
        }
        if more > 0 {
            let next = max(0, listed - shown.count)
            let words = next >= more
                ? "\(more) more destination\(more == 1 ? "" : "s") in the table below"
                : "\(more) more destinations: the next \(next) in the table below, "
                    + "the other \(more - next) counted together there"
            svg += "<text class=\"tick\" x=\"\(barLeft)\" y=\"\(height - 6)\">\(words)</text>"
        }
        return svg + "</svg>"
    }

    // MARK: Shared

    /// `printer.local:8080 tcp`, `203.0.113.5:443 tcp (not local)`: distinct for distinct rows.
    static func label(_ destination: Destination) -> String {
        destination.label + (destination.transport.map { " " + $0 } ?? "") + (destination.isLocal ? "" : " (not local)")
    }

    private func open(class name: String, height: Double, label: String) -> String {
        "<svg class=\"chart \(name)\" viewBox=\"0 0 \(Self.width) \(height + 4)\" width=\"\(Self.width)\" "
            + "height=\"\(height + 4)\" role=\"img\" aria-label=\"\(HTMLText.escape(label))\">"
    }

    /// A destination's name at the left, cut to fit; the whole name (up to a limit) is its tooltip.
    private func rowLabel(_ label: String, y: Double) -> String {
        "<text class=\"label\" x=\"\(Self.labelWidth - 8)\" y=\"\(y + 4)\" text-anchor=\"end\">"
            + "<title>\(HTMLText.escape(label, limit: PageLimits.recordText))</title>\(HTMLText.escape(label, limit: 36))</text>"
    }

    private func time(_ time: AuditTime) -> String { formatter.string(from: AuditTime(seconds: time.seconds).date) }
}

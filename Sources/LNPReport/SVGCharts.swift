import Foundation

/// The two charts of a program on the HTML page, as inline SVG. Every mark says what it is
/// in shape as well as colour (a dot allowed, a cross denied; filled local, hollow not
/// local), and every piece of text is escaped.
struct SVGCharts {
    static let width = 860.0
    static let labelWidth = 280.0
    static let rowHeight = 22.0
    /// More destinations than this share the last row.
    static let rows = 12

    let program: ProgramReport
    /// A number unique on the page, for the ids of the pattern definitions.
    let index: Int
    let formatter: DateFormatter

    // MARK: The timeline

    /// x: time, from the program's first record to its last; y: one row per destination.
    func timeline() -> String {
        let lanes = Lanes(program.destinations)
        let plotLeft = Self.labelWidth, plotRight = Self.width - 20
        let height = Double(lanes.labels.count) * Self.rowHeight + 40
        let start = program.first.date, end = program.last.date
        let span = end.timeIntervalSince(start)
        func x(_ time: AuditTime) -> Double {
            span <= 0 ? (plotLeft + plotRight) / 2 : plotLeft + time.date.timeIntervalSince(start) / span * (plotRight - plotLeft)
        }

        var svg = open(class: "timeline", height: height, label: "Timeline of \(program.entries.count) operations")
        for (row, label) in lanes.labels.enumerated() {
            let y = Double(row) * Self.rowHeight + Self.rowHeight / 2 + 4
            svg += "<line class=\"lane\" x1=\"\(plotLeft)\" x2=\"\(plotRight)\" y1=\"\(y)\" y2=\"\(y)\"/>"
            svg += rowLabel(label, y: y)
        }
        // One mark per pixel, row and kind: thousands of operations stay a readable, small page.
        struct Spot: Hashable { var lane: Int, x: Int, allowed: Bool, local: Bool }
        var spots: [Spot: (count: Int, first: AuditTime, last: AuditTime)] = [:]
        var order: [Spot] = []
        for entry in program.entries {
            let spot = Spot(
                lane: lanes.lane(of: Destination(entry)), x: Int(x(entry.time).rounded()),
                allowed: entry.decision == .allow, local: entry.isLocal)
            if let seen = spots[spot] {
                spots[spot] = (seen.count + 1, seen.first, entry.time)
            } else {
                spots[spot] = (1, entry.time, entry.time)
                order.append(spot)
            }
        }
        for spot in order {
            let (count, first, last) = spots[spot]!
            let y = Double(spot.lane) * Self.rowHeight + Self.rowHeight / 2 + 4
            let kind = (spot.allowed ? "allowed" : "denied") + (spot.local ? " local" : " nonlocal")
            let when = first == last ? time(first) : "\(time(first)) to \(time(last))"
            let title = "\(count) \(spot.allowed ? "allowed" : "denied")\(spot.local ? "" : ", not local"), \(when)"
            svg += "<g class=\"mark \(kind)\"><title>\(HTMLText.escape(title))</title>"
            svg += spot.allowed ? Self.dot(Double(spot.x), y) : Self.cross(Double(spot.x), y)
            svg += "</g>"
        }
        svg += axis(top: Double(lanes.labels.count) * Self.rowHeight + 6, left: plotLeft, right: plotRight, span: span)
        return svg + "</svg>"
    }

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

    static func dot(_ x: Double, _ y: Double) -> String {
        "<circle cx=\"\(x)\" cy=\"\(y)\" r=\"4.5\"/>"
    }

    static func cross(_ x: Double, _ y: Double) -> String {
        "<path d=\"M\(x - 4.5) \(y - 4.5)L\(x + 4.5) \(y + 4.5)M\(x - 4.5) \(y + 4.5)L\(x + 4.5) \(y - 4.5)\"/>"
    }

    // MARK: The bars

    /// One bar per destination, by hits: the allowed part solid, the denied part hatched and
    /// named in words beside the bar.
    func bars() -> String {
        let shown = program.destinations.prefix(Self.rows)
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
            svg += "<text class=\"tick\" x=\"\(barLeft)\" y=\"\(height - 6)\">"
                + "\(more) more destination\(more == 1 ? "" : "s") in the table below</text>"
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

    /// A destination's name at the left, cut to fit; the whole name is its tooltip.
    private func rowLabel(_ label: String, y: Double) -> String {
        let limit = 36
        let shown = label.count > limit ? String(label.prefix(limit - 1)) + "…" : label
        return "<text class=\"label\" x=\"\(Self.labelWidth - 8)\" y=\"\(y + 4)\" text-anchor=\"end\">"
            + "<title>\(HTMLText.escape(label))</title>\(HTMLText.escape(shown))</text>"
    }

    private func time(_ time: AuditTime) -> String { formatter.string(from: AuditTime(seconds: time.seconds).date) }

    /// The timeline's rows: the busiest destinations, then one for all the others.
    private struct Lanes {
        var labels: [String] = []
        private var index: [Destination: Int] = [:]

        init(_ destinations: [DestinationReport]) {
            let own = destinations.count > SVGCharts.rows ? SVGCharts.rows - 1 : destinations.count
            for (row, destination) in destinations.prefix(own).enumerated() {
                labels.append(SVGCharts.label(destination.destination))
                index[destination.destination] = row
            }
            if destinations.count > own { labels.append("\(destinations.count - own) other destinations") }
        }

        func lane(of destination: Destination) -> Int { index[destination] ?? labels.count - 1 }
    }
}

/// A program's operations over time, for its chart on the HTML page. Where an operation goes
/// depends on the program's whole span and on which destinations are busiest, known only once
/// every record was read; so the page's records are read a second time to fill these
/// (`Timelines`).
///
/// A timeline keeps what its chart can draw in `markBytes`, not each operation: while few
/// enough for a mark per pixel with its tooltip, each mark's count and times; past that
/// (a dense chart), only which pixel columns of each row have an operation, and each row's
/// count and times. So it takes the same memory for ten operations as for ten million, and a
/// page's timelines together at most a few hundred kB.
struct Timeline: Sendable {
    /// What a mark stands for: operations in one lane and pixel column, of one kind.
    struct Spot: Hashable, Sendable {
        var lane: Int
        var x: Int
        var allowed: Bool
        var local: Bool
    }

    /// A dense chart's row: a lane's operations of one kind.
    struct Row: Hashable, Comparable, Sendable {
        var lane: Int
        var allowed: Bool
        var local: Bool

        static func < (a: Row, b: Row) -> Bool {
            (a.lane, a.allowed ? 0 : 1, a.local ? 0 : 1) < (b.lane, b.allowed ? 0 : 1, b.local ? 0 : 1)
        }

        /// Its place among a timeline's rows: four kinds per lane.
        var index: Int { lane * 4 + (allowed ? 0 : 2) + (local ? 0 : 1) }
    }

    struct Cell: Sendable {
        var count: Int
        var first: AuditTime
        var last: AuditTime
        /// The first operation's place in what was read, for marks of the same instant.
        var order: Int

        mutating func add(_ time: AuditTime) {
            count += 1
            if time < first { first = time }
            if last < time { last = time }
        }
    }

    let lanes: Lanes
    let start: AuditTime
    /// Seconds from the program's first operation to its last.
    let span: Double
    /// What the chart's marks may take on the page, in bytes (`Timelines` shares
    /// `PageLimits.markBytes` among the programs).
    let markBytes: Int
    /// Each mark's count and times, while they can all be drawn with a tooltip; nil past that.
    private var titled: [Spot: Cell]? = [:]
    private var columns: TimelineColumns
    /// Each row's count and times, for a dense chart's tooltips.
    private(set) var rows: [Row: Cell] = [:]
    private var count = 0

    init(_ program: ProgramReport, markBytes: Int) {
        lanes = Lanes(program.destinations)
        start = program.first
        span = program.last.date.timeIntervalSince(program.first.date)
        self.markBytes = markBytes
        columns = TimelineColumns(rows: lanes.labels.count * 4, columns: Int(Self.plotRight - Self.plotLeft) + 1)
    }

    /// The plot's pixels, from its left edge (the chart puts it right of the row labels).
    static let plotLeft = 0.0
    static let plotRight = SVGCharts.plotWidth

    /// Where `time` is across the chart; within it even for a record the first reading did
    /// not see (a file rewritten in between).
    func x(_ time: AuditTime) -> Double {
        guard span > 0 else { return (Self.plotLeft + Self.plotRight) / 2 }
        let x = Self.plotLeft + time.date.timeIntervalSince(start.date) / span * (Self.plotRight - Self.plotLeft)
        return min(max(x, Self.plotLeft), Self.plotRight)
    }

    mutating func add(_ entry: AuditEntry) {
        count += 1
        let row = Row(lane: lanes.lane(of: Destination(entry)), allowed: entry.decision == .allow, local: entry.isLocal)
        let x = Int(x(entry.time).rounded())
        let time = entry.time
        if let at = rows.index(forKey: row) { rows.values[at].add(time) } else {
            rows[row] = Cell(count: 1, first: time, last: time, order: count)
        }
        columns.insert(row: row.index, column: x - Int(Self.plotLeft))
        guard titled != nil else { return }
        // Past what can be drawn with tooltips, the chart is dense: its marks need no counts.
        guard columns.marks <= markBytes / PageLimits.titledMarkBytes else {
            titled = nil
            return
        }
        let spot = Spot(lane: row.lane, x: x, allowed: row.allowed, local: row.local)
        if let at = titled!.index(forKey: spot) { titled!.values[at].add(time) } else {
            titled![spot] = Cell(count: 1, first: time, last: time, order: count)
        }
    }

    /// The marks with their counts and times, in the order of their first operation; nil when
    /// there are too many for `markBytes` (draw `denseMarks` then).
    var titledMarks: [(spot: Spot, cell: Cell)]? {
        titled.map { titled in
            titled.map { (spot: $0.key, cell: $0.value) }.sorted {
                ($0.cell.first, $0.cell.order) < ($1.cell.first, $1.cell.order)
            }
        }
    }

    /// The marks of a dense chart, each row's from left to right: one per pixel column while
    /// they fit in `markBytes`, else per column of 2, 4, 8… pixels, at its middle.
    /// `columnWidth` is the width, in pixels, of the columns used.
    func denseMarks() -> (marks: [Spot], columnWidth: Int) {
        let limit = max(markBytes / PageLimits.denseMarkBytes, 1)
        let rowCount = lanes.labels.count * 4
        var width = 1
        while width < 1024 && columns.marks(rows: rowCount, width: width) > limit { width *= 2 }
        var marks: [Spot] = []
        for row in rows.keys.sorted() {
            columns.groups(row: row.index, width: width) { group in
                let x = min(Int(Self.plotLeft) + group * width + width / 2, Int(Self.plotRight))
                marks.append(Spot(lane: row.lane, x: x, allowed: row.allowed, local: row.local))
            }
        }
        return (marks, width)
    }

    /// The timeline's rows: the busiest destinations, then one for all the others.
    struct Lanes: Sendable {
        private(set) var labels: [String] = []
        private var index: [Destination: Int] = [:]

        init(_ destinations: [DestinationReport]) {
            let own = PageLimits.ownRows(of: destinations.count, rows: PageLimits.chartRows)
            for (row, destination) in destinations.prefix(own).enumerated() {
                labels.append(SVGCharts.label(destination.destination))
                index[destination.destination] = row
            }
            if destinations.count > own { labels.append("\(destinations.count - own) other destinations") }
        }

        func lane(of destination: Destination) -> Int { index[destination] ?? labels.count - 1 }
    }
}

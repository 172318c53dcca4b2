/// A program's operations over time, for its chart on the HTML page: counts by lane (one of
/// its busiest destinations, or all the others), pixel column and kind, with the first and
/// last time of each. Where an operation goes depends on the program's whole span and on
/// which destinations are busiest, known only once every record was read; so the page's
/// records are read a second time to fill these (`Timelines`). A timeline takes the same
/// memory for ten operations as for ten million: at most lanes × columns × kinds cells.
struct Timeline: Sendable {
    /// What a mark stands for: operations in one lane and pixel column, of one kind.
    struct Spot: Hashable, Sendable {
        var lane: Int
        var x: Int
        var allowed: Bool
        var local: Bool
    }

    struct Cell: Sendable {
        var count: Int
        var first: AuditTime
        var last: AuditTime
        /// The first operation's place in what was read, for marks of the same instant.
        var order: Int
    }

    let lanes: Lanes
    let start: AuditTime
    /// Seconds from the program's first operation to its last.
    let span: Double
    private(set) var cells: [Spot: Cell] = [:]
    private var count = 0

    init(_ program: ProgramReport) {
        lanes = Lanes(program.destinations)
        start = program.first
        span = program.last.date.timeIntervalSince(program.first.date)
    }

    static let plotLeft = SVGCharts.labelWidth
    static let plotRight = SVGCharts.width - 20

    /// Where `time` is across the chart; within it even for a record the first reading did
    /// not see (a file rewritten in between).
    func x(_ time: AuditTime) -> Double {
        guard span > 0 else { return (Self.plotLeft + Self.plotRight) / 2 }
        let x = Self.plotLeft + time.date.timeIntervalSince(start.date) / span * (Self.plotRight - Self.plotLeft)
        return min(max(x, Self.plotLeft), Self.plotRight)
    }

    mutating func add(_ entry: AuditEntry) {
        count += 1
        let spot = Spot(
            lane: lanes.lane(of: Destination(entry)), x: Int(x(entry.time).rounded()),
            allowed: entry.decision == .allow, local: entry.isLocal)
        if let at = cells.index(forKey: spot) {
            cells.values[at].count += 1
            if entry.time < cells.values[at].first { cells.values[at].first = entry.time }
            if cells.values[at].last < entry.time { cells.values[at].last = entry.time }
        } else {
            cells[spot] = Cell(count: 1, first: entry.time, last: entry.time, order: count)
        }
    }

    /// The marks to draw, at most `limit`: one per pixel column while they fit, else per
    /// column of 2, 4, 8… pixels, in the order of their first operation. `columnWidth` is
    /// the width, in pixels, of the columns used.
    func marks(limit: Int) -> (marks: [(spot: Spot, cell: Cell)], columnWidth: Int) {
        var width = 1
        var merged = cells
        while merged.count > limit && width < 1024 {
            width *= 2
            merged = [:]
            let left = Int(Self.plotLeft)
            for (spot, cell) in cells {
                var column = spot
                // The middle of the column, within the chart.
                column.x = min(left + (spot.x - left) / width * width + width / 2, Int(Self.plotRight))
                if let at = merged.index(forKey: column) {
                    let had = merged.values[at]
                    merged.values[at] = Cell(
                        count: had.count + cell.count, first: min(had.first, cell.first), last: max(had.last, cell.last),
                        order: min(had.order, cell.order))
                } else {
                    merged[column] = cell
                }
            }
        }
        let marks = merged.map { (spot: $0.key, cell: $0.value) }.sorted {
            ($0.cell.first, $0.cell.order) < ($1.cell.first, $1.cell.order)
        }
        return (marks, width)
    }

    /// The timeline's rows: the busiest destinations, then one for all the others.
    struct Lanes: Sendable {
        private(set) var labels: [String] = []
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

/// The timelines of the programs a page shows, filled by a second reading of the records.
public struct Timelines: Sendable {
    public let filter: ReportFilter
    private(set) var byProgram: [String: Timeline]
    /// Inputs that could not be read again, and why: their operations are not on the timelines.
    public var unread: [String] = []

    /// Timelines for `programs` of `report`, to be filled with the records `filter` took.
    public init(report: Report, programs: Set<String>, filter: ReportFilter) {
        self.filter = filter
        byProgram = Dictionary(
            uniqueKeysWithValues: report.programs.filter { programs.contains($0.program) }.map { ($0.program, Timeline($0)) })
    }

    /// Timelines for the programs `format` shows of `report`.
    public init(report: Report, for format: HTMLFormat, filter: ReportFilter) {
        self.init(report: report, programs: format.timelinePrograms(report), filter: filter)
    }

    public mutating func add(_ entry: AuditEntry) {
        guard let at = byProgram.index(forKey: entry.program) else { return }
        if let since = filter.since, entry.time < since { return }
        byProgram.values[at].add(entry)
    }

    subscript(program: String) -> Timeline? { byProgram[program] }
}

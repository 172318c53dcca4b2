/// The timelines of the programs a page shows, filled by a second reading of the records.
public struct Timelines: Sendable {
    public let filter: ReportFilter
    private(set) var byProgram: [String: Timeline]
    /// Inputs that could not be read again, and why (`NAME: why`): their programs have no timeline.
    public private(set) var unread: [String] = []

    /// Timelines for `programs` of `report`, to be filled with the records `filter` took; they
    /// share `PageLimits.markBytes`.
    public init(report: Report, programs: Set<String>, filter: ReportFilter) {
        self.filter = filter
        let shown = report.programs.filter { programs.contains($0.program) }
        let markBytes = PageLimits.markBytes(sharedBy: shown.count)
        byProgram = Dictionary(uniqueKeysWithValues: shown.map { ($0.program, Timeline($0, markBytes: markBytes)) })
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

    /// Drops the timelines of `programs`, which `input` (`NAME: why`) could not be read
    /// again for: a chart of only some of a program's operations would mislead.
    public mutating func leaveOut(_ programs: Set<String>, unread input: String) {
        for program in programs { byProgram[program] = nil }
        unread.append(input)
    }

    subscript(program: String) -> Timeline? { byProgram[program] }
}

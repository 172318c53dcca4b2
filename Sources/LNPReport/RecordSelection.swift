/// The records a filter takes, one at a time as they are read: whether each program path
/// seen is one the filter names is worked out once, not for every record.
public struct RecordSelection {
    public let filter: ReportFilter
    private var named: [String: Bool] = [:]

    public init(_ filter: ReportFilter) { self.filter = filter }

    public mutating func takes(_ entry: AuditEntry) -> Bool {
        if let since = filter.since, entry.time < since { return false }
        guard !filter.programs.isEmpty else { return true }
        if let known = named[entry.program] { return known }
        let included = filter.includes(entry)
        named[entry.program] = included
        return included
    }
}

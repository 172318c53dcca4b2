/// A report built one record at a time, as the reader hands them on: what it keeps grows with
/// the programs and their destinations, never with the records, so `lnp report` takes about
/// the same memory for a day's audit file as for a year's.
public struct ReportBuilder {
    public var filter: ReportFilter { selection.filter }
    private var selection: RecordSelection
    private var programs: [String: ProgramTally] = [:]
    private var reasons = ReasonTexts()
    private var count = 0

    public init(filter: ReportFilter = ReportFilter()) { selection = RecordSelection(filter) }

    public mutating func add(_ entry: AuditEntry) {
        guard selection.takes(entry) else { return }
        count += 1
        programs[entry.program, default: ProgramTally(entry)].add(entry, order: count, reasons: &reasons)
    }

    /// The report of what was added: programs by path. The builder is left empty, so that
    /// what it kept is freed as the report is made.
    public mutating func finish() -> Report {
        var finished: [ProgramReport] = []
        for path in programs.keys.sorted() {
            finished.append(programs.removeValue(forKey: path)!.finished)
        }
        return Report(programs: finished)
    }
}

/// One program's operations as they are read.
private struct ProgramTally {
    var report: ProgramReport
    var destinations: [Destination: DestinationTally] = [:]

    init(_ entry: AuditEntry) {
        report = ProgramReport(program: entry.program, first: entry.time, last: entry.time)
    }

    mutating func add(_ entry: AuditEntry, order: Int, reasons: inout ReasonTexts) {
        if entry.isLocal { report.local.count(entry.decision) } else { report.nonLocal.count(entry.decision) }
        if entry.decision == .deny { report.denials.add(entry.because) }
        if entry.attribution == .app { report.app += 1 } else { report.user += 1 }
        if entry.time < report.first { report.first = entry.time }
        if report.last < entry.time { report.last = entry.time }
        let destination = Destination(entry)
        if let at = destinations.index(forKey: destination) {
            destinations.values[at].add(entry, order: order, domain: destination.domain, reasons: &reasons)
        } else {
            var tally = DestinationTally(entry, reasons: &reasons)
            tally.add(entry, order: order, domain: destination.domain, reasons: &reasons)
            destinations[destination] = tally
        }
    }

    var finished: ProgramReport {
        var finished = report
        finished.destinations = DestinationReport.busiestFirst(destinations.map { $0.value.report($0.key) })
        finished.activities = activities
        return finished
    }

    /// Apple's records: the allowed operations of the destinations, by domain (whatever the
    /// port or transport) and initiation; by domain, app-initiated first.
    private var activities: [PrivacyReportActivity] {
        typealias Contact = DestinationTally.Contact
        var byDomain: [String: (app: Contact, user: Contact)] = [:]
        for (destination, tally) in destinations where tally.allowedByApp.hits + tally.allowedByUser.hits > 0 {
            byDomain[destination.domain, default: (Contact(), Contact())].app.add(tally.allowedByApp)
            byDomain[destination.domain, default: (Contact(), Contact())].user.add(tally.allowedByUser)
        }
        var activities: [PrivacyReportActivity] = []
        for domain in byDomain.keys.sorted() {
            let (app, user) = byDomain[domain]!
            let both: [(Contact, PrivacyReportActivity.InitiatedType)] = [(app, .app), (user, .user)]
            for (contact, initiated) in both where contact.hits > 0 {
                activities.append(PrivacyReportActivity(
                    domain: domain, firstTimeStamp: AuditTime(microsecondsSinceEpoch: contact.first),
                    timeStamp: AuditTime(microsecondsSinceEpoch: contact.last), initiatedType: initiated,
                    hits: contact.hits, bundleID: report.program))
            }
        }
        return activities
    }
}

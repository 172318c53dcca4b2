/// Which records a report covers.
public struct ReportFilter: Sendable {
    /// Records at or after this instant.
    public var since: AuditTime?
    /// Program paths, or their last components (`curl` for `/usr/bin/curl`); empty: all.
    public var programs: [String]

    public init(since: AuditTime? = nil, programs: [String] = []) {
        self.since = since
        self.programs = programs
    }

    public func includes(_ entry: AuditEntry) -> Bool {
        if let since, entry.time < since { return false }
        if programs.isEmpty { return true }
        let name = entry.program.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init)
        return programs.contains { $0 == entry.program || $0 == name }
    }
}

/// Allowed and denied operations.
public struct Tally: Equatable, Sendable {
    public var allowed = 0
    public var denied = 0

    public init(allowed: Int = 0, denied: Int = 0) {
        self.allowed = allowed
        self.denied = denied
    }

    public var total: Int { allowed + denied }

    mutating func count(_ decision: AuditEntry.Decision) {
        if decision == .allow { allowed += 1 } else { denied += 1 }
    }
}

/// What reports group operations by: what was reached (the name when known, else the
/// address), on which port and transport, and whether that is the local network.
public struct Destination: Hashable, Comparable, Sendable {
    public var domain: String
    /// Nil for a name lookup; 0 (a bind to any port, a multicast join) is left out of labels.
    public var port: Int?
    public var transport: String?
    public var isLocal: Bool

    public init(domain: String, port: Int? = nil, transport: String? = nil, isLocal: Bool = true) {
        self.domain = domain
        self.port = port
        self.transport = transport
        self.isLocal = isLocal
    }

    public init(_ entry: AuditEntry) {
        self.init(domain: entry.domain, port: entry.port, transport: entry.transport, isLocal: entry.isLocal)
    }

    /// `printer.local:8080`, `[fd77::2]:8080`, `239.1.2.3`.
    public var label: String {
        guard let port, port != 0 else { return domain }
        return (domain.contains(":") ? "[\(domain)]" : domain) + ":\(port)"
    }

    public static func < (a: Destination, b: Destination) -> Bool {
        (a.domain, a.port ?? -1, a.transport ?? "", a.isLocal ? 0 : 1)
            < (b.domain, b.port ?? -1, b.transport ?? "", b.isLocal ? 0 : 1)
    }
}

/// One destination of one program.
public struct DestinationReport: Equatable, Sendable {
    public var destination: Destination
    /// The addresses behind a name, in the order first seen; empty when the domain is the address.
    public var addresses: [String] = []
    /// The operations, in the order first seen: `connect`, `sendto`, `resolve`, …
    public var operations: [String] = []
    public var tally = Tally()
    /// What denied its denied operations (their `because`).
    public var deniedBecause = DenialCauseSet()
    /// Why it is local, or not (`on-link 10.77.0.0/24 via c0`): its earliest record's `reason`;
    /// `otherReasons`: whether other records gave another.
    public var reason: String?
    public var otherReasons = false
    /// App-initiated and user-initiated operations.
    public var app = 0
    public var user = 0
    public var first: AuditTime
    public var last: AuditTime

    public var hits: Int { tally.total }

    init(destination: Destination, first: AuditTime, last: AuditTime) {
        self.destination = destination
        self.first = first
        self.last = last
    }

    /// Most hits first; equal ones by destination. Sorted by index: moving the reports
    /// themselves about took a tenth of the time of a large report.
    static func busiestFirst(_ reports: [DestinationReport]) -> [DestinationReport] {
        let order = reports.withUnsafeBufferPointer { reports in
            reports.indices.sorted {
                let a = reports[$0], b = reports[$1]
                return a.hits != b.hits ? a.hits > b.hits : a.destination < b.destination
            }
        }
        return order.map { reports[$0] }
    }
}

/// Everything one program did.
public struct ProgramReport: Equatable, Sendable {
    public var program: String
    /// Local-network operations: the ones lnp gates.
    public var local = Tally()
    /// Other network activity, recorded only when all activity is (and always allowed).
    public var nonLocal = Tally()
    /// Why its denied operations were denied.
    public var denials = DenialCounts()
    public var app = 0
    public var user = 0
    public var first: AuditTime
    public var last: AuditTime
    /// Most hits first; equal ones by destination.
    public var destinations: [DestinationReport] = []
    /// Apple's App Privacy Report records of the program (`PrivacyReportFormat`): its allowed
    /// operations by domain and initiation; by domain, app-initiated first.
    public var activities: [PrivacyReportActivity] = []

    /// All its operations, local or not.
    public var operations: Int { local.total + nonLocal.total }

    init(program: String, first: AuditTime, last: AuditTime) {
        self.program = program
        self.first = first
        self.last = last
    }
}

/// The records of audit files, by program.
public struct Report: Equatable, Sendable {
    /// By program path.
    public var programs: [ProgramReport]

    public init(programs: [ProgramReport]) { self.programs = programs }

    /// The report of records already read; `ReportBuilder` takes them one at a time.
    public init(entries: [AuditEntry], filter: ReportFilter = ReportFilter()) {
        var builder = ReportBuilder(filter: filter)
        entries.forEach { builder.add($0) }
        self = builder.finish()
    }
}

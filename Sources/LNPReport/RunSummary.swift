import LNPTools

/// What a run did on the local network, in a few lines for stderr (`lnp-run --summary`):
///
///     lnp: 12 local-network operations: 10 allowed, 2 denied
///     lnp: top destinations: 10.77.0.2:8080 (tcp, 8 allowed), printer.local (2 denied), and 1 more
///
/// or `lnp: no local-network operations`. Only local operations count: other activity,
/// when it was recorded, is not what lnp decides on.
///
/// lnp-run adds each record as it arrives: what it keeps grows with the destinations, not
/// with the length of the run.
public struct RunSummary: Sendable {
    /// How many destinations to name at most, most hits first.
    public let limit: Int
    private var tally = Tally()
    private var destinations: [Destination: DestinationTally] = [:]
    private var count = 0

    public init(destinations limit: Int = 3) { self.limit = limit }

    public init(entries: [AuditEntry], destinations limit: Int = 3) {
        self.init(destinations: limit)
        entries.forEach { add($0) }
    }

    public mutating func add(_ entry: AuditEntry) {
        guard entry.isLocal else { return }
        count += 1
        tally.count(entry.decision)
        let destination = Destination(entry)
        destinations[destination, default: DestinationTally(entry)].add(entry, order: count, domain: destination.domain)
    }

    public var lines: [String] {
        guard tally.total > 0 else { return ["lnp: no local-network operations"] }
        let noun = tally.total == 1 ? "operation" : "operations"
        var lines = ["lnp: \(tally.total) local-network \(noun): \(tally.allowed) allowed, \(tally.denied) denied"]
        let ranked = DestinationReport.busiestFirst(destinations.map { $0.value.report($0.key) })
        var named = ranked.prefix(max(limit, 1)).map(Self.describe)
        let unnamed = ranked.count - named.count
        if unnamed > 0 { named.append("and \(unnamed) more") }
        lines.append("lnp: \(unnamed > 0 ? "top destinations" : "destinations"): " + named.joined(separator: ", "))
        return lines
    }

    /// `10.77.0.2:8080 (tcp, 8 allowed, 1 denied)`, `printer.local (2 denied)`.
    static func describe(_ destination: DestinationReport) -> String {
        var details: [String] = []
        if let transport = destination.destination.transport { details.append(transport) }
        if destination.tally.allowed > 0 { details.append("\(destination.tally.allowed) allowed") }
        if destination.tally.denied > 0 { details.append("\(destination.tally.denied) denied") }
        return UntrustedText.visible(destination.destination.label + " (" + details.joined(separator: ", ") + ")")
    }
}

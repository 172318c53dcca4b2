/// What a run did on the local network, in a few lines for stderr (`lnp-run --summary`):
///
///     lnp: 12 local-network operations: 10 allowed, 2 denied
///     lnp: top destinations: 10.77.0.2:8080 (tcp, 8 allowed), printer.local (2 denied), and 1 more
///
/// or `lnp: no local-network operations`. Only local operations count: other activity,
/// when it was recorded, is not what lnp decides on.
public struct RunSummary: Sendable {
    public private(set) var lines: [String]

    /// - Parameter destinations: how many destinations to name at most, most hits first.
    public init(entries: [AuditEntry], destinations limit: Int = 3) {
        var tally = Tally()
        var byDestination: [Destination: DestinationReport] = [:]
        for entry in entries where entry.isLocal {
            tally.count(entry.decision)
            byDestination[Destination(entry), default: DestinationReport(entry)].add(entry)
        }
        guard tally.total > 0 else {
            lines = ["lnp: no local-network operations"]
            return
        }
        let noun = tally.total == 1 ? "operation" : "operations"
        lines = ["lnp: \(tally.total) local-network \(noun): \(tally.allowed) allowed, \(tally.denied) denied"]
        let ranked = byDestination.values.sorted {
            $0.hits != $1.hits ? $0.hits > $1.hits : $0.destination < $1.destination
        }
        var named = ranked.prefix(max(limit, 1)).map(Self.describe)
        let unnamed = ranked.count - named.count
        if unnamed > 0 { named.append("and \(unnamed) more") }
        lines.append("lnp: \(unnamed > 0 ? "top destinations" : "destinations"): " + named.joined(separator: ", "))
    }

    /// `10.77.0.2:8080 (tcp, 8 allowed, 1 denied)`, `printer.local (2 denied)`.
    static func describe(_ destination: DestinationReport) -> String {
        var details: [String] = []
        if let transport = destination.destination.transport { details.append(transport) }
        if destination.tally.allowed > 0 { details.append("\(destination.tally.allowed) allowed") }
        if destination.tally.denied > 0 { details.append("\(destination.tally.denied) denied") }
        return Terminal.visible(destination.destination.label + " (" + details.joined(separator: ", ") + ")")
    }
}

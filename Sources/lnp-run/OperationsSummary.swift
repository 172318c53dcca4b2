import LNPTools

/// What a run did on the local network, in a few lines for stderr (`lnp-run --summary`),
/// counted as the records arrive:
///
///     lnp: 12 local-network operations: 10 allowed, 2 denied
///     lnp: top destinations: 10.77.0.2:8080 (tcp, 8 allowed), printer.local (2 denied), and 1 more
///          (all in 'lnp report /tmp/audit.jsonl')
///
/// or `lnp: no local-network operations`. Only local operations count: other activity, when
/// it was recorded, is not what lnp decides on. lnp-run reads the records itself (it links no
/// Foundation); Tests/LNPCoreTests/OperationsSummaryTests.swift holds it to counting the
/// records `lnp report`'s reader reads.
struct OperationsSummary {
    /// What the summary groups by: the name when known, else the address (else the kind of
    /// socket), the port and the transport.
    struct Destination: Hashable, Comparable {
        var domain: String
        var port: Int?
        var transport: String?

        /// `printer.local:8080`, `[fd77::2]:8080`, `239.1.2.3` (port 0, a bind to any port or a
        /// multicast join, is left out).
        var label: String {
            guard let port, port != 0 else { return domain }
            return (domain.contains(":") ? "[\(domain)]" : domain) + ":\(port)"
        }

        static func < (a: Destination, b: Destination) -> Bool {
            (a.domain, a.port ?? -1, a.transport ?? "") < (b.domain, b.port ?? -1, b.transport ?? "")
        }
    }

    struct Tally {
        var allowed = 0
        var denied = 0
        var total: Int { allowed + denied }

        mutating func count(allowed isAllowed: Bool) {
            if isAllowed { allowed += 1 } else { denied += 1 }
        }
    }

    private(set) var tally = Tally()
    private(set) var destinations: [Destination: Tally] = [:]

    /// Counts the record, if it is a local operation written in full.
    mutating func add(_ line: [UInt8]) {
        guard let record = RecordLine(line[...]), let (destination, allowed) = Self.localOperation(record) else { return }
        tally.count(allowed: allowed)
        destinations[destination, default: Tally()].count(allowed: allowed)
    }

    /// - Parameters:
    ///   - limit: how many destinations to name at most, most operations first.
    ///   - whereAll: where the ones left out can be seen (`SummaryHint`), said after their count.
    func lines(destinations limit: Int = 3, whereAll: String = SummaryHint.noAudit) -> [String] {
        guard tally.total > 0 else { return ["lnp: no local-network operations"] }
        let noun = tally.total == 1 ? "operation" : "operations"
        var lines = ["lnp: \(tally.total) local-network \(noun): \(tally.allowed) allowed, \(tally.denied) denied"]
        let ranked = destinations.sorted { $0.value.total != $1.value.total ? $0.value.total > $1.value.total : $0.key < $1.key }
        var named = ranked.prefix(max(limit, 1)).map(Self.describe)
        let unnamed = ranked.count - named.count
        if unnamed > 0 { named.append("and \(unnamed) more (\(whereAll))") }
        lines.append("lnp: \(unnamed > 0 ? "top destinations" : "destinations"): " + named.joined(separator: ", "))
        return lines
    }

    /// `10.77.0.2:8080 (tcp, 8 allowed, 1 denied)`, `printer.local (2 denied)`.
    private static func describe(_ destination: (key: Destination, value: Tally)) -> String {
        var details: [String] = []
        if let transport = destination.key.transport { details.append(transport) }
        if destination.value.allowed > 0 { details.append("\(destination.value.allowed) allowed") }
        if destination.value.denied > 0 { details.append("\(destination.value.denied) denied") }
        return UntrustedText.visible(destination.key.label + " (" + details.joined(separator: ", ") + ")")
    }

    /// The record's destination and decision, when it is a local operation and a record as
    /// lnp reads one: the fields a report needs are there (`time`, `program`, `op`,
    /// `decision`, `attribution`, and a `host` or an `address` unless it opened a socket) and
    /// every field present is of its kind. (The time is not parsed: the preload and lnp-run
    /// write it.)
    static func localOperation(_ record: RecordLine) -> (Destination, allowed: Bool)? {
        guard record.string("time").required != nil, let program = record.string("program").required, !program.isEmpty,
            let op = record.string("op").required,
            let decision = record.string("decision").required, decision == "allow" || decision == "deny",
            let attribution = record.string("attribution").required, attribution == "app" || attribution == "user",
            let local = record.bool("local").optional, local ?? true,
            let host = record.string("host").optional, let address = record.string("address").optional,
            let transport = record.string("transport").optional, let port = record.wholeNumber("port").optional,
            record.wholeNumber("pid").optional != nil, record.wholeNumber("fd").optional != nil,
            record.string("exe").optional != nil, record.string("reason").optional != nil,
            record.string("because").optional != nil, record.strings("domains").optional != nil,
            host != nil || address != nil || op == "socket"
        else { return nil }
        let domain = host ?? address ?? "\(transport ?? "other") socket"
        return (Destination(domain: domain, port: port, transport: transport), decision == "allow")
    }
}

/// Where a summary's destinations left out can all be seen: in the run's audit, read by
/// `lnp report`; without one, how to keep them next time.
enum SummaryHint {
    static let noAudit = "--audit FILE keeps them all for 'lnp report'"

    static func of(_ destination: AuditDestination?) -> String {
        guard let destination else { return noAudit }
        switch destination.kind {
        case .file: return "all in 'lnp report \(TerminalText.shown(destination.name))'"
        case .stream: return "all in the audit sent to \(TerminalText.shown(destination.name))"
        case .syslog: return "all in the system log: 'journalctl -t lnp -o cat | lnp report'"
        }
    }
}

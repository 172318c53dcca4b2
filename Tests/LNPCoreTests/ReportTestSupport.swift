import Foundation
import LNPReport

// Records for the report tests, made directly (not parsed), so that the aggregation and the
// formats are tested apart from the reader.

/// 2026-11-21T10:00:00Z.
let reportEpoch: Int64 = 1_795_255_200

/// An audit entry `offset` seconds after `reportEpoch`. `because`: `remembered` (`not-local`
/// for one not local) unless given; `.some(nil)` for a record without one.
func auditEntry(
    _ offset: Int64, microseconds: Int32 = 0, program: String = "/usr/bin/curl", op: String = "connect",
    transport: String? = "tcp", address: String? = "10.77.0.2", port: Int? = 8080, host: String? = nil,
    decision: AuditEntry.Decision = .allow, because: String?? = nil, attribution: AuditEntry.Attribution = .app,
    local: Bool = true, reason: String? = "on-link 10.77.0.0/24 via c0"
) -> AuditEntry {
    AuditEntry(
        time: AuditTime(seconds: reportEpoch + offset, microseconds: microseconds), pid: 42, program: program,
        exe: program, op: op, fd: op == "resolve" ? nil : 3, transport: transport, address: address, port: port,
        host: host, domains: [], reason: reason, decision: decision,
        because: because ?? (local ? "remembered" : "not-local"), attribution: attribution, isLocal: local)
}

/// A name lookup, as the preload records one.
func resolveEntry(_ offset: Int64, _ name: String, decision: AuditEntry.Decision = .allow) -> AuditEntry {
    auditEntry(offset, op: "resolve", transport: nil, address: nil, port: nil, host: name, decision: decision)
}

/// A line of an audit file as the preload writes it, with some fields' JSON replaced and
/// some removed; `by` and `lost`, which lnp-run adds, only when given.
func auditLine(_ replacing: [String: String] = [:], removing: Set<String> = []) -> String {
    let fields: [(String, String)] = [
        ("time", #""2026-11-21T10:00:00.123456Z""#), ("pid", "123"), ("program", #""/usr/bin/curl""#),
        ("exe", #""/usr/bin/curl""#), ("op", #""connect""#), ("fd", "3"), ("transport", #""tcp""#),
        ("address", #""10.77.0.2""#), ("port", "8080"), ("host", #""printer.local""#), ("domains", "[]"),
        ("reason", #""on-link 10.77.0.0/24 via c0""#), ("decision", #""deny""#), ("because", #""remembered""#),
        ("attribution", #""app""#), ("local", "true"),
    ] + ["by", "lost"].compactMap { key in replacing[key].map { (key, $0) } }
    let kept = fields.filter { !removing.contains($0.0) }.map { "\"\($0.0)\":" + (replacing[$0.0] ?? $0.1) }
    return "{" + kept.joined(separator: ",") + "}"
}

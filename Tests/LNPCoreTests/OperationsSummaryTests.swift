import Testing
@testable import LNPReport
@testable import lnp_run

#if canImport(Glibc)
import Glibc
#endif

/// lnp-run's `--summary` counts the records itself (it links no Foundation, so not LNPReport's
/// reader): the records it counts must be those the report's reader reads, and its lines say
/// what they say.
@Suite("Operations summary")
struct OperationsSummaryTests {
    /// lnp-run's lines for these audit lines, and the first line the report's reader gives
    /// for them: the totals of the local records it accepts.
    private func both(_ lines: [String]) -> (lnpRun: [String], report: [String]) {
        (summary(lines), [totals(lines.compactMap { try? AuditEntry.parse(line: Array($0.utf8)) })])
    }

    private func summary(_ lines: [String], destinations: Int = 3) -> [String] {
        var summary = OperationsSummary()
        for line in lines { summary.add(Array(line.utf8)) }
        return summary.lines(destinations: destinations)
    }

    private func totals(_ entries: [AuditEntry]) -> String {
        let local = entries.filter(\.isLocal)
        guard !local.isEmpty else { return "lnp: no local-network operations" }
        let allowed = local.filter { $0.decision == .allow }.count
        return "lnp: \(local.count) local-network \(local.count == 1 ? "operation" : "operations"): "
            + "\(allowed) allowed, \(local.count - allowed) denied"
    }

    private func line(_ fields: [String: String] = [:], removing: Set<String> = []) -> String {
        auditLine(fields, removing: removing)
    }

    @Test func theRecordsTheReportReads() {
        var lines = (0..<8).map { _ in line(["decision": #""allow""#]) }
        lines += [line(["op": #""resolve""#, "transport": "null", "address": "null", "port": "null"], removing: ["fd"])]
        lines += [line(["host": "null", "address": #""239.1.2.3""#, "op": #""join""#, "transport": #""udp""#, "port": "0"])]
        lines += [line(["host": "null", "address": #""fd77::2""#, "port": "8080"])]
        lines += [line(["host": "null", "address": #""203.0.113.5""#, "port": "443", "local": "false"])]
        lines += [line(["op": #""socket""#, "host": "null", "address": "null", "transport": #""packet""#, "port": "null"])]
        lines += [line(["host": #""print\u001b[2Jer\u202e.local""#])]
        lines += [line(["host": #""caf\u00e9.local""#]), line(["host": #""\ud83d\ude00.local""#, "decision": #""allow""#])]
        lines += [line(removing: ["local", "domains", "exe", "reason", "because", "pid", "fd"])]
        let (lnpRun, report) = both(lines)
        #expect(lnpRun.first == report.first)
        #expect(lnpRun.first == "lnp: 16 local-network operations: 9 allowed, 7 denied")
        // Busiest first, then in order of the name; names shown escaped, as every table shows them.
        #expect(lnpRun.last == "lnp: top destinations: printer.local:8080 (tcp, 8 allowed, 1 denied), 239.1.2.3 (udp, 1 denied), "
            + "café.local:8080 (tcp, 1 denied), and 5 more (--audit FILE keeps them all for 'lnp report')")
        let all = summary(lines, destinations: 20).last ?? ""
        #expect(all.hasPrefix("lnp: destinations: ") && !all.contains("and 5 more"))
        #expect(!all.unicodeScalars.contains { $0.value == 0x1b || $0.value == 0x202e }, "\(all)")
    }

    @Test func theBusiestLocalDestinations() {
        var lines = (0..<8).map { _ in line(["host": "null", "decision": #""allow""#]) }
        lines += (0..<2).map { _ in line(["op": #""resolve""#, "transport": "null", "address": "null", "port": "null"], removing: ["fd"]) }
        for decision in ["allow", "deny"] {
            lines += [line(["host": "null", "address": #""239.1.2.3""#, "op": #""join""#, "transport": #""udp""#, "port": "0",
                            "decision": "\"\(decision)\""])]
        }
        lines += [line(["host": "null", "address": #""203.0.113.5""#, "port": "443", "local": "false"])]
        lines += [line(["host": "null", "address": #""10.77.0.9""#, "port": "22"])]
        #expect(summary(lines) == [
            "lnp: 13 local-network operations: 9 allowed, 4 denied",
            "lnp: top destinations: 10.77.0.2:8080 (tcp, 8 allowed), 239.1.2.3 (udp, 1 allowed, 1 denied), "
                + "printer.local (2 denied), and 1 more (--audit FILE keeps them all for 'lnp report')",
        ])
        #expect(summary(lines, destinations: 5)[1] == "lnp: destinations: 10.77.0.2:8080 (tcp, 8 allowed), "
            + "239.1.2.3 (udp, 1 allowed, 1 denied), printer.local (2 denied), 10.77.0.9:22 (tcp, 1 denied)")
    }

    @Test func noneAndOne() {
        #expect(both([]).lnpRun == ["lnp: no local-network operations"])
        #expect(both([line(["local": "false"])]) == (["lnp: no local-network operations"], ["lnp: no local-network operations"]))
        let one = both([line()])
        #expect(one.lnpRun.first == one.report.first)
        #expect(one.lnpRun == ["lnp: 1 local-network operation: 0 allowed, 1 denied", "lnp: destinations: printer.local:8080 (tcp, 1 denied)"])
    }

    /// Records the report's reader refuses are not counted by lnp-run either.
    @Test(arguments: [
        ["program": #""""#], ["decision": #""maybe""#], ["attribution": #""nobody""#], ["local": #""yes""#],
        ["port": "80.5"], ["port": #""80""#], ["pid": "1e20"], ["host": "1"], ["domains": #"["a",1]"#], ["domains": #""a""#],
        ["exe": "2"], ["reason": "[]"], ["because": "{}"], ["transport": "true"], ["time": "1"],
        ["host": "null", "address": "null"], ["host": #""\ud800.local""#], ["op": "null"],
    ])
    func refusedRecordsAreNotCounted(_ fields: [String: String]) {
        let (lnpRun, report) = both([line(fields)])
        #expect(report == ["lnp: no local-network operations"], "the report refuses \(fields)")
        #expect(lnpRun == report, "\(fields)")
    }

    @Test(arguments: ["program", "op", "decision", "attribution", "time"])
    func aRecordWithoutARequiredFieldIsNotCounted(_ field: String) {
        let (lnpRun, report) = both([line(removing: [field])])
        #expect(lnpRun == report)
        #expect(lnpRun == ["lnp: no local-network operations"])
    }

    @Test func valuesAreDecoded() throws {
        let text = #"{"time":"t","a":"x\"y\\z\/\b\f\n\r\t\u00e9\ud83d\ude00","b":["p","q\"r"],"c":null,"d":7,"e":true}"#
        let record = try #require(RecordLine(Array(text.utf8)[...]))
        #expect(record.string("a").required == "x\"y\\z/\u{8}\u{c}\n\r\té😀")
        #expect(record.strings("b").required == ["p", "q\"r"])
        #expect(record.string("c").optional == .some(nil))
        #expect(record.string("d").optional == nil, "a number is not a string")
        #expect(record.wholeNumber("d").required == 7)
        #expect(record.bool("e").required == true)
        #expect(record.string("absent").optional == .some(nil))
        #expect(record.string("absent").required == nil)
    }

    /// Those left out are where the run's audit is; without one, how to keep them next time.
    @Test func theDestinationsLeftOutAreNamedWhereTheyAllAre() throws {
        #expect(SummaryHint.of(nil) == "--audit FILE keeps them all for 'lnp report'")
        let path = "/tmp/lnp-summary-hint-\(getpid())\n\u{1b}[2J.jsonl"
        defer { unlink(path) }
        let audit = try AuditDestination.open(path)
        defer { close(audit.fd) }
        #expect(SummaryHint.of(audit) == "all in 'lnp report /tmp/lnp-summary-hint-\(getpid())\\x0a\\x1b[2J.jsonl'")
    }
}

import Foundation
import Testing
@testable import LNPCoreHost

@Suite("SyslogSink")
struct SyslogSinkTests {
    @Test(arguments: [
        (Int64(0), "Jan  1 00:00:00"),
        (1_709_210_096, "Feb 29 12:34:56"),
        (1_700_000_000, "Nov 14 22:13:20"),
        (1_798_761_599, "Dec 31 23:59:59"),
        (1_790_000_000, "Sep 21 14:13:20"),
    ])
    func rfc3164Time(seconds: Int64, expected: String) {
        #expect(writeText { Timestamp(seconds: seconds, microseconds: 999).writeSyslogStyle(to: &$0) } == expected)
    }

    @Test func theTargetIsExactlySyslog() {
        for (text, expected) in [("syslog", true), ("/var/log/syslog", false), ("syslog2", false), ("syslo", false), ("", false)] {
            let bytes = Array(text.utf8) + [0]
            #expect(bytes.withUnsafeBufferPointer { SyslogSink.isTarget($0.baseAddress!) } == expected, "\(text)")
        }
    }

    @Test func severityFollowsTheOutcome() {
        let cases: [(Verdict, Decision, String)] = [
            (.local(.multicast), .allow, "<13>"), (.local(.multicast), .deny, "<12>"), (.notLocal(.noRoute), .allow, "<14>"),
        ]
        for (verdict, decision, priority) in cases { expectHeader(verdict, decision, priority) }
    }

    private func expectHeader(_ verdict: Verdict, _ decision: Decision, _ priority: String) {
        let empty = UnsafeBufferPointer<UInt8>(start: nil, count: 0)
        let record = AuditRecord(
            time: Timestamp(seconds: 1_700_000_000, microseconds: 0), pid: 77, program: empty, executable: empty,
            operation: .connect, fd: 3, transport: .tcp, endpoint: nil, host: empty, domains: empty, verdict: verdict,
            scopeName: InterfaceName(), decision: decision, basis: .runOption, attribution: .app)
        let header = writeText { SyslogSink.writeHeader(for: record, to: &$0) }
        #expect(header == "\(priority)Nov 14 22:13:20 lnp[77]: @cee: ")
        #expect(header.utf8.count <= SyslogSink.headerCapacity)
    }
}

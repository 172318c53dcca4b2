import Foundation
import Testing

@testable import LNPReport

/// The record `line` holds as a line of the system log, or nil when it is not lnp's.
private func logged(_ line: String) -> String? {
    Array(line.utf8).withUnsafeBufferPointer { bytes in
        SystemLogLine.record(in: bytes).map { String(decoding: $0, as: UTF8.self) }
    }
}

private let record = auditLine(["by": #""preload""#])

@Suite("Records in the system log")
struct SystemLogLineTests {
    /// lnp's message, `@cee: {…}`, behind each logger's header.
    @Test(arguments: [
        "<12>Nov 21 05:09:22 lnp[6604]: @cee: ",  // the datagram lnp-run sends
        "<13>Nov  1 05:09:22 lnp[6604]: @cee: ",
        "Nov 21 05:09:22 host lnp[6604]: @cee: ",  // rsyslog's and syslog-ng's files
        "2026-11-21T05:09:22.158224+00:00 host lnp[6604]: @cee: ",  // rsyslog's high-precision files
        "2026-11-21T05:09:22+0000 host lnp[6604]: @cee: ",  // journalctl -o short-iso
        "Nov 21 05:09:22 host lnp: @cee: ",  // a tag without a pid
        "@cee: ",  // journalctl -t lnp -o cat
        "  @cee:",
    ])
    func lnpsLineHoldsItsRecord(header: String) {
        let found = logged(header + record)
        #expect(found?.trimmingCharacters(in: .whitespaces) == record)
    }

    @Test(arguments: [
        "Nov 21 05:09:22 host other[17]: @cee: ",  // another program's structured message
        "Nov 21 05:09:22 host mylnp[17]: @cee: ",
        "Nov 21 05:09:22 host lnp-run[17]: @cee: ",
        "Nov 21 05:09:22 host lnp[]: @cee: ",
        "Nov 21 05:09:22 host lnp[6604x]: @cee: ",
        "Nov 21 05:09:22 host lnp[6604]:@cee: ",
        "Nov 21 05:09:22 host lnp[6604]: message repeated 2 times: [ @cee: ",
        "Nov 21 05:09:22 host sshd[17]: user lnp: @cee: ",  // lnp's tag in another's message is not lnp's
        "Nov 21 05:09:22 host lnp[6604]: ",  // no cookie
        "",
    ])
    func anotherProgramsLineIsNotLnps(header: String) {
        #expect(logged(header + record) == nil)
    }

    @Test func theFirstCookieIsTheOneThatCounts() {
        #expect(logged("Nov 21 05:09:22 host other[1]: said @cee: lnp[1]: @cee: " + record) == nil)
        #expect(logged("@cee: {\"x\":\"@cee: \"}") == " {\"x\":\"@cee: \"}")
    }
}

@Suite("System logs read by lnp report")
struct SystemLogReadingTests {
    private func read(_ lines: [String]) -> AuditReading {
        AuditReader.parse(Array((lines.joined(separator: "\n") + "\n").utf8)[...], file: "syslog")
    }

    @Test func lnpsLinesAreItsRecordsAndOtherProgramsLinesAreSkipped() throws {
        let reading = read([
            "Nov 21 05:09:20 host systemd[1]: Starting Daily apt upgrade...",
            "Nov 21 05:09:22 host lnp[6604]: @cee: " + auditLine(["decision": #""allow""#]),
            "Nov 21 05:09:22 host kernel: [ 12.345] eth0: link up",
            "Nov 21 05:09:22 host other[2]: @cee: {\"msg\":\"not lnp's\"}",
            "",
            "<12>Nov 21 05:09:23 lnp[6604]: @cee: " + auditLine(),
        ])
        #expect(reading.problems == [])
        #expect(reading.entries.map(\.decision) == [.allow, .deny])
        #expect(reading.entries == [try AuditEntry.parse(line: Array(auditLine(["decision": #""allow""#]).utf8)),
                                    try AuditEntry.parse(line: Array(auditLine().utf8))])
    }

    @Test func lnpsLineWithoutARecordIsNamed() {
        let reading = read([
            "Nov 21 05:09:20 host systemd[1]: Started.",
            "Nov 21 05:09:22 host lnp[6604]: @cee: " + String(auditLine().prefix(80)),  // cut short by a logger
            "Nov 21 05:09:22 host lnp[6604]: @cee: " + auditLine(removing: ["program"]),
            "Nov 21 05:09:23 host lnp[6604]: @cee: " + auditLine(),
        ])
        #expect(reading.entries.count == 1)
        #expect(reading.problems.map(\.description) == ["syslog:2: not JSON", "syslog:3: missing field \"program\""])
        #expect(reading.hasMalformedLine)
    }

    @Test func journalctlsMessagesAloneAreRecords() {
        let reading = read(["-- No entries --", "@cee: " + auditLine(), "@cee: " + auditLine(["decision": #""allow""#])])
        #expect(reading.entries.map(\.decision) == [.deny, .allow])
        #expect(reading.problems == [])
    }

    /// The first line that is not blank says what the input is: in an audit file, every line
    /// should be a record.
    @Test func inAnAuditFileALineThatIsNotARecordIsStillNamed() {
        let reading = read(["", auditLine(), "Nov 21 05:09:20 host systemd[1]: Started.", "@cee: " + auditLine()])
        #expect(reading.entries.count == 2)
        #expect(reading.problems.map(\.description) == ["syslog:3: not JSON"])
    }

    /// An audit file's end (`tail -c`) starts with a piece of a line: it is named once the
    /// first record says the input is an audit file, and the records are read.
    @Test func linesBeforeAnAuditFilesFirstRecordAreNamed() {
        let reading = read([String(auditLine().suffix(30)), "", auditLine(), auditLine(["decision": #""allow""#])])
        #expect(reading.entries.map(\.decision) == [.deny, .allow])
        #expect(reading.problems.map(\.description) == ["syslog:1: not JSON"])

        let many = read((1...50).map { "garbage \($0)" } + ["", auditLine(), "x"])
        #expect(many.entries.count == 1)
        #expect(many.problems.map(\.description) == (1...20).map { "syslog:\($0): not JSON" } + [
            "syslog:21: not a record, nor are 29 more lines to line 50", "syslog:53: not JSON",
        ])
    }

    /// In a log, a line that starts with `{` is read as a record: `journalctl -o cat` shows
    /// lnp's messages among others.
    @Test func aLogsLinesThatAreRecordsAreRead() {
        let reading = read(["-- Boot 1 --", "@cee: " + auditLine(), auditLine(["decision": #""allow""#]), "{", "after"])
        #expect(reading.entries.map(\.decision) == [.deny, .allow])
        #expect(reading.problems.map(\.description) == ["syslog:4: not JSON"])
    }

    @Test func aLogWithNothingOfLnpsSaysSoWithoutFailing() {
        let reading = read(["Nov 21 05:09:20 host systemd[1]: Started.", "Nov 21 05:09:21 host other[2]: @cee: {}"]
            + (1...100).map { "line \($0)" })
        #expect(reading.entries.isEmpty)
        #expect(reading.problems.map(\.kind) == [.noRecords])
        #expect(reading.problems.first?.description.hasPrefix("syslog: no records: ") == true)
        #expect(!reading.hasMalformedLine && !reading.hasUnreadableFile)
        #expect(AuditReader.parse(Array("\n \n".utf8)[...], file: "blank").problems.isEmpty, "an empty file is an empty audit")
    }

    @Test func aLineTooLongForARecordIsAnotherProgramsInALog() throws {
        let directory = try makeTemporaryDirectory()
        let path = directory + "/syslog"
        let long = "Nov 21 05:09:20 host other[2]: " + String(repeating: "x", count: LineReader.longestLine + 10)
        try writeFile(path, Array((["Nov 21 05:09:20 host systemd[1]: Started.", long, "@cee: " + auditLine()]
            .joined(separator: "\n") + "\n").utf8))
        let reading = AuditReader.read(path: path)
        #expect(reading.entries.count == 1)
        #expect(reading.problems == [])
        try writeFile(path, Array(([auditLine(), long].joined(separator: "\n") + "\n").utf8))
        #expect(AuditReader.read(path: path).problems.map(\.description) == ["\(path):2: longer than 1 MiB, not a record"])
    }
}

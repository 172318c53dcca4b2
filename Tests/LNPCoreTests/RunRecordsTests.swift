import Foundation
import Testing
@testable import LNPCoreHost
@testable import lnp_run

#if canImport(Glibc)
import Glibc
#endif

@Suite("Records as lnp-run takes them")
struct RunRecordsTests {
    @Test(arguments: [
        (Int(0), UInt8(4), "<12>Jan  1 00:00:00 lnp[77]: @cee: "),
        (1_709_210_096, 5, "<13>Feb 29 12:34:56 lnp[77]: @cee: "),
        (1_798_761_599, 6, "<14>Dec 31 23:59:59 lnp[77]: @cee: "),
    ])
    func theSystemLogHeader(seconds: Int, severity: UInt8, expected: String) {
        let header = AuditDestination.syslogHeader(severity: severity, pid: 77, now: seconds)
        #expect(String(decoding: header, as: UTF8.self) == expected)
    }

    /// The system log's severity: warning for a denial, notice for an allowance, info for
    /// activity off the local network.
    @Test func severityFollowsTheOutcome() {
        let empty = UnsafeBufferPointer<UInt8>(start: nil, count: 0)
        let cases: [(Verdict, Decision, UInt8)] = [(.local(.multicast), .allow, 5), (.local(.multicast), .deny, 4),
                                                   (.notLocal(.noRoute), .allow, 6)]
        for (verdict, decision, severity) in cases {
            let record = AuditRecord(
                time: Timestamp(seconds: 0, microseconds: 0), pid: 1, program: empty, executable: empty, operation: .connect,
                fd: 3, transport: .tcp, endpoint: nil, host: empty, domains: empty, verdict: verdict, scopeName: InterfaceName(),
                decision: decision, basis: .runOption, attribution: .app)
            #expect(RecordDatagram.severity(of: record) == severity)
        }
    }

    @Test func aDatagramIsReadBack() throws {
        var bytes = [UInt8](repeating: 0, count: RecordDatagram.headerSize) + Array("{\"time\":\"x\",\"pid\":4242,\"op\":\"connect\"}".utf8)
        bytes.withUnsafeMutableBytes { RecordDatagram.writeHeader(lost: 70_000, severity: 4, into: $0) }
        let record = try #require(ReceivedRecord(bytes, sender: 4242))
        #expect(record.lost == 70_000)
        #expect(record.severity == 4)
        #expect(RecordLine(record.line)?.pid == 4242)
        #expect(ReceivedRecord(Array(bytes.dropFirst()), sender: 1) == nil, "no magic, no record")
        #expect(ReceivedRecord(Array(bytes.prefix(11)), sender: 1) == nil, "a header cut short")
    }

    @Test func aReportOfLostRecordsAloneHasNoLine() throws {
        var bytes = [UInt8](repeating: 0, count: RecordDatagram.headerSize)
        bytes.withUnsafeMutableBytes { RecordDatagram.writeHeader(lost: 3, severity: 0, into: $0) }
        let record = try #require(ReceivedRecord(bytes, sender: 9))
        #expect(record.line.isEmpty && record.lost == 3)
    }

    /// The next record written after a loss notes the gap, once.
    @Test func theGapIsNotedInTheNextRecord() {
        var lost = LostRecords()
        lost.add(7, .write(28))  // ENOSPC
        lost.add(2, .sizeLimit)
        let gap = lost.gap
        #expect(gap?.count == 9)
        #expect(gap?.because == "the file size limit (RLIMIT_FSIZE) was reached")
        lost.add(1, .write(28))  // the record that would have noted it is lost too: 10 now
        #expect(lost.gap?.count == 10)
        lost.gapNoted()
        #expect(lost.gap == nil)
        let line = RunRecords.noting(gap!, in: Array("{\"pid\":1,\"local\":true}".utf8))
        #expect(String(decoding: line, as: UTF8.self)
            == "{\"pid\":1,\"local\":true,\"lost\":{\"count\":9,\"because\":\"the file size limit (RLIMIT_FSIZE) was reached\"}}")
        #expect(lost.total == 10)
        #expect(lost.lines == [
            "8 record(s) of this run were lost: the audit file could not be written: No space left on device",
            "2 record(s) of this run were lost: the file size limit (RLIMIT_FSIZE) was reached",
        ])
    }

    /// Only what the preload writes is written: one strict JSON object on one line, each key
    /// once and plainly, so that the pid lnp-run checks is the pid every reader reads.
    @Test(arguments: [
        ("{\"time\":\"t\",\"pid\":7,\"host\":\"a\\u001b[2Kb\",\"domains\":[\"x\",\"y\"],\"local\":true}", 7),
        ("{\"time\":\"t\",\"pid\":7,\"host\":\"a \\\"quoted\\\" \\\\\",\"x\":{\"pid\":1},\"n\":-1.5e3,\"z\":null}", 7),
        ("{\"time\":\"t\",\"x\":{\"pid\":7},\"pid\":4242}", 4242),
        ("{\"time\":\"caf\u{e9} \u{1F600}\",\"pid\":7}", 7),
        ("{\"time\":\"t\",\"pid\":7}\n{\"time\":\"t\",\"pid\":1}", nil),
        ("{\"time\":\"t\",\"pid\":7,\"pid\":4242}", nil),
        ("{\"time\":\"t\",\"pid\":7,\"p\\u0069d\":31337}", nil),
        ("{\"time\":\"t\",\"pid\":7}}", nil),
        ("{\"time\":\"t\",\"pid\":7", nil),
        ("{\"time\":\"t\",\"host\":\"x\"}", nil),
        ("not json at all", nil),
        ("{\"time\":\"t\",\"pid\":7,\"host\":\"tab\there\"}", nil),
        ("{\"time\":\"t\",\"pid\":7,\"op\":@@@}", nil),
        ("{\"time\":\"t\",\"pid\":7,\"a\":{]}", nil),
        ("{\"time\":\"t\\q\",\"pid\":7}", nil),
        ("{\"time\":\"t\",\"pid\":07}", nil),
        ("{\"time\":\"t\", \"pid\":7}", nil),
        ("{\"time\":\"t\u{9B}2J\",\"pid\":7}", nil),
        ("{\"time\":\"t\",\"pid\":7,\"lost\":{\"count\":0}}", nil),
        ("{\"time\":\"t\",\"pid\":7,\"by\":\"supervisor\"}", nil),
        ("{\"pid\":7,\"time\":\"t\"}", nil),
    ] as [(String, Int32?)])
    func recordLinesAreChecked(line: String, pid: Int32?) {
        let parsed = RecordLine(Array(line.utf8)[...])
        #expect(parsed?.pid == pid)
        if pid != nil { #expect(parsed != nil) }
    }

    @Test func bytesThatAreNotUTF8AreRefused() {
        for bad: [UInt8] in [[0xff, 0xfe], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82]] {
            let line = Array("{\"time\":\"".utf8) + bad + Array("\",\"pid\":7}".utf8)
            #expect(RecordLine(line[...]) == nil, "\(bad)")
        }
    }

    @Test func theExecutableIsReplacedWhereItLies() throws {
        let parsed = try #require(RecordLine(Array("{\"time\":\"t\",\"pid\":7,\"exe\":\"/usr/bin/curl\",\"op\":\"connect\"}".utf8)[...]))
        let line = parsed.replacing("exe", with: RunRecords.json(Array("/usr/bin/python3 \"x\"".utf8)))
        #expect(String(decoding: line, as: UTF8.self)
            == "{\"time\":\"t\",\"pid\":7,\"exe\":\"/usr/bin/python3 \\\"x\\\"\",\"op\":\"connect\"}")
    }

    @Test func aRecordOfActivityOffTheLocalNetworkIsLeftOutOfALocalAudit() throws {
        let path = "/tmp/lnp-run-records-test-\(getpid()).jsonl"
        defer { unlink(path) }
        let records = RunRecords(destination: try AuditDestination.open(path), scope: .local, summarising: false, upstream: nil)
        let tree = ProcessTree(root: getppid())
        let me = getpid()
        for local in [true, false] {
            var bytes = [UInt8](repeating: 0, count: RecordDatagram.headerSize)
                + Array("{\"time\":\"2026-01-01T00:00:00.000000Z\",\"pid\":\(me),\"exe\":\"x\",\"local\":\(local)}".utf8)
            bytes.withUnsafeMutableBytes { RecordDatagram.writeHeader(lost: 0, severity: 5, into: $0) }
            records.receive(ReceivedRecord(bytes, sender: me)!, from: tree)
        }
        records.finish()
        #expect(records.refused == 0)
        let written = try String(contentsOfFile: path, encoding: .utf8)
        #expect(written.split(separator: "\n").map { $0.hasSuffix("\"local\":true,\"by\":\"preload\"}") } == [true])
    }
}

import Foundation
import LNPReport
import Testing

/// The problem `line` gives, or nil if it parses.
private func problem(_ line: String) -> String? {
    do {
        _ = try AuditEntry.parse(line: Array(line.utf8))
        return nil
    } catch {
        return error.message
    }
}

@Suite("Audit entries")
struct AuditEntryTests {
    @Test func everyFieldIsRead() throws {
        let entry = try AuditEntry.parse(line: Array(auditLine().utf8))
        #expect(entry.time == AuditTime(seconds: reportEpoch, microseconds: 123_456))
        #expect(entry.pid == 123)
        #expect((entry.program, entry.exe) == ("/usr/bin/curl", "/usr/bin/curl"))
        #expect((entry.op, entry.fd, entry.transport) == ("connect", 3, "tcp"))
        #expect((entry.address, entry.port, entry.host) == ("10.77.0.2", 8080, "printer.local"))
        #expect(entry.domains == [])
        #expect(entry.reason == "on-link 10.77.0.0/24 via c0")
        #expect((entry.decision, entry.because, entry.attribution) == (.deny, "remembered", .app))
        #expect(entry.isLocal)
        #expect(entry.domain == "printer.local")
    }

    @Test func lnpRunsNotesAreRead() throws {
        let entry = try AuditEntry.parse(line: Array(auditLine(["by": #""supervisor""#, "lost": #"{"count":2,"because":"the audit file could not be written: No space left on device"}"#]).utf8))
        #expect(entry.by == "supervisor")
        #expect(entry.lost == AuditEntry.Lost(count: 2, because: "the audit file could not be written: No space left on device"))
        let plain = try AuditEntry.parse(line: Array(auditLine().utf8))
        #expect(plain.by == nil && plain.lost == nil)
    }

    @Test func aRecordWithoutTheLocalFieldIsLocal() throws {
        #expect(try AuditEntry.parse(line: Array(auditLine(removing: ["local"]).utf8)).isLocal)
        #expect(try !AuditEntry.parse(line: Array(auditLine(["local": "false"]).utf8)).isLocal)
    }

    @Test func theDomainIsTheHostWhenKnownElseTheAddress() throws {
        #expect(try AuditEntry.parse(line: Array(auditLine(["host": "null"]).utf8)).domain == "10.77.0.2")
        let resolve = auditLine([
            "op": #""resolve""#, "fd": "null", "transport": "null", "address": "null", "port": "null",
            "host": #""printer.local""#,
        ])
        let entry = try AuditEntry.parse(line: Array(resolve.utf8))
        #expect((entry.domain, entry.port, entry.transport) == ("printer.local", nil, nil))
    }

    @Test func stringsAreUnescaped() throws {
        let line = auditLine(["program": #""/tmp/odd \"name\"\\ \t é\u0001""#, "domains": #"["a.example","b.example"]"#])
        let entry = try AuditEntry.parse(line: Array(line.utf8))
        #expect(entry.program == "/tmp/odd \"name\"\\ \t é\u{01}")
        #expect(entry.domains == ["a.example", "b.example"])
    }

    @Test(arguments: [
        ("not json", "not JSON"),
        ("{\"time\":", "not JSON"),
        ("[1,2]", "not a JSON object"),
        ("42", "not a JSON object"),
        (auditLine(removing: ["program"]), "missing field \"program\""),
        (auditLine(removing: ["time"]), "missing field \"time\""),
        (auditLine(removing: ["decision"]), "missing field \"decision\""),
        (auditLine(["pid": #""x""#]), "field \"pid\" is not a whole number"),
        (auditLine(["port": "80.5"]), "field \"port\" is not a whole number"),
        (auditLine(["program": "7"]), "field \"program\" is not a string"),
        (auditLine(["program": "null"]), "field \"program\" is null, expected a string"),
        (auditLine(["program": #""""#]), "field \"program\": empty"),
        (auditLine(["local": #""yes""#]), "field \"local\" is not true or false"),
        (auditLine(["domains": #"["a", 1]"#]), "field \"domains[1]\" is not a string"),
        (auditLine(["decision": #""maybe""#]), "field \"decision\": expected \"allow\" or \"deny\", found \"maybe\""),
        (auditLine(["attribution": #""bot""#]), "field \"attribution\": expected \"app\" or \"user\", found \"bot\""),
        (auditLine(["time": #""yesterday""#]), "field \"time\": not an RFC 3339 time: \"yesterday\""),
        (auditLine(["time": #""2026-11-21T10:00:00""#]), "field \"time\": not an RFC 3339 time: \"2026-11-21T10:00:00\""),
        (auditLine(["time": #""2026-02-30T10:00:00Z""#]), "field \"time\": not an RFC 3339 time: \"2026-02-30T10:00:00Z\""),
        (auditLine(["decision": #""\u001b[2J""#]), "field \"decision\": expected \"allow\" or \"deny\", found \"\\u001b[2J\""),
        (auditLine(["time": "\"" + String(repeating: "9", count: 50) + "\""]),
         "field \"time\": not an RFC 3339 time: \"" + String(repeating: "9", count: 40) + "\"…"),
        (auditLine(["host": "null", "address": "null"]), "field \"address\": null, and the record has no other destination"),
        (auditLine(["by": "1"]), "field \"by\" is not a string"),
        (auditLine(["lost": "3"]), "field \"lost\" is not an object"),
        (auditLine(["lost": "{}"]), "missing field \"lost.count\""),
        (auditLine(["lost": #"{"count":2}"#]), "missing field \"lost.because\""),
        (auditLine(["lost": #"{"count":2.5,"because":"x"}"#]), "field \"lost.count\" is not a whole number"),
        (auditLine(["lost": #"{"count":null,"because":"x"}"#]), "field \"lost.count\" is null, expected a whole number"),
    ])
    func malformedLinesSayWhatIsWrong(line: String, expected: String) {
        #expect(problem(line) == expected)
    }

    /// Which value would count? Neither: the line is not a record, whichever reader reads it.
    @Test(arguments: [
        (#","decision":"allow"}"#, "decision"),  // read by the scanner, but for this
        (#","pid":7}"#, "pid"),
        (#","by":"preload","by":"supervisor"}"#, "by"),
        (#","decisio\u006e":"allow"}"#, "decision"),  // the same key, escaped: the decoder reads it
    ])
    func aFieldGivenTwiceIsNotARecord(end: String, field: String) {
        let open = String(auditLine().dropLast())
        #expect(problem(open + end) == "field \"\(field)\" given twice")
        #expect(problem(open.replacingOccurrences(of: "8080", with: "80.0") + end) == "field \"\(field)\" given twice")
        #expect(problem(#"{"decision":"allow","# + auditLine().dropFirst()) == "field \"decision\" given twice")
    }

    @Test func unknownOperationsAndExtraFieldsAreAccepted() throws {
        let line = auditLine(["op": #""sendfile""#]).dropLast() + #","future":{"x":1}}"#
        #expect(try AuditEntry.parse(line: Array(line.utf8)).op == "sendfile")
    }
}

@Suite("Audit reader")
struct AuditReaderTests {
    @Test func malformedLinesAreNamedByFileAndLineAndTheRestIsRead() {
        let text = [auditLine(), "", "  ", "garbage", auditLine(["decision": #""allow""#]), auditLine(["pid": "true"])]
            .joined(separator: "\n") + "\n"
        let reading = AuditReader.parse(Array(text.utf8)[...], file: "a.jsonl")
        #expect(reading.entries.map(\.decision) == [.deny, .allow])
        #expect(reading.problems.map(\.description) == [
            "a.jsonl:4: not JSON", "a.jsonl:6: field \"pid\" is not a whole number",
        ])
        #expect(reading.hasMalformedLine)
        #expect(!reading.hasUnreadableFile)
    }

    @Test func aLastLineWithoutANewlineIsRead() {
        let reading = AuditReader.parse(Array((auditLine() + "\n" + auditLine()).utf8)[...], file: "f")
        #expect(reading.entries.count == 2)
        #expect(reading.problems.isEmpty)
    }

    @Test func aFieldGivenTwiceIsNamedAsAProblem() {
        let twice = String(auditLine().dropLast()) + #","decision":"allow"}"#
        let reading = AuditReader.parse(Array((auditLine() + "\n" + twice + "\n").utf8)[...], file: "a.jsonl")
        #expect(reading.entries.count == 1)
        #expect(reading.problems.map(\.description) == ["a.jsonl:2: field \"decision\" given twice"])
    }

    @Test func readingFromAnOffsetReadsOnlyWhatFollowsAndCountsLinesFromTheStart() throws {
        let directory = try makeTemporaryDirectory()
        let path = directory + "/audit.jsonl"
        let before = auditLine() + "\n" + auditLine() + "\n"
        let after = auditLine(["decision": #""allow""#]) + "\nbroken\n"
        try writeFile(path, Array((before + after).utf8))

        let appended = AuditReader.read(path: path, from: UInt64(before.utf8.count))
        #expect(appended.entries.map(\.decision) == [.allow])
        #expect(appended.problems.map(\.description) == ["\(path):4: not JSON"])

        let whole = AuditReader.read(path: path)
        #expect(whole.entries.count == 3)
        #expect(AuditReader.read(path: path, from: UInt64((before + after).utf8.count)).entries.isEmpty)
    }

    @Test func linesAreCountedAcrossReadsOfALongFile() throws {
        let directory = try makeTemporaryDirectory()
        let path = directory + "/audit.jsonl"
        let line = auditLine() + "\n"  // about 350 bytes: 1,000 lines take several reads
        let before = String(repeating: line, count: 700)
        try writeFile(path, Array((before + "broken\n" + String(repeating: line, count: 299) + "{").utf8))
        let reading = AuditReader.read(path: path, from: UInt64(before.utf8.count))
        #expect(reading.entries.count == 299)
        #expect(reading.problems.map(\.description) == ["\(path):701: not JSON", "\(path):1001: not JSON"])
        #expect(AuditReader.read(path: path).entries.count == 999)
    }

    @Test func aFileShorterThanTheOffsetWasReplacedAndIsReadWhole() throws {
        let directory = try makeTemporaryDirectory()
        let path = directory + "/audit.jsonl"
        try writeFile(path, Array((auditLine() + "\n").utf8))
        #expect(AuditReader.read(path: path, from: 1_000_000).entries.count == 1)
    }

    @Test func anUnreadableFileIsAProblemWithItsPath() throws {
        let directory = try makeTemporaryDirectory()
        let missing = AuditReader.read(path: directory + "/missing.jsonl")
        #expect(missing.entries.isEmpty)
        #expect(missing.problems.map(\.description) == ["\(directory)/missing.jsonl: cannot read: No such file or directory"])
        #expect(missing.hasUnreadableFile)
        #expect(!missing.hasMalformedLine)
        #expect(AuditReader.read(path: directory).problems.map(\.description) == ["\(directory): cannot read: Is a directory"])
    }

    @Test func readingsAddUp() {
        var reading = AuditReader.parse(Array((auditLine() + "\nx\n").utf8)[...], file: "one")
        reading.append(AuditReader.parse(Array((auditLine() + "\n").utf8)[...], file: "two"))
        #expect(reading.entries.count == 2)
        #expect(reading.problems.map(\.description) == ["one:2: not JSON"])
    }
}

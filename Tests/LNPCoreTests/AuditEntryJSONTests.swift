import Foundation
import Testing

@testable import LNPReport

private func entry(_ line: String) throws -> AuditEntry { try AuditEntry.parse(line: Array(line.utf8)) }

private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

/// A JSON object as Foundation's own parser reads it, for comparing values whatever their escapes.
private func object(_ bytes: [UInt8]) throws -> NSDictionary {
    try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? NSDictionary)
}

/// Strings a program can put in its path or its names: every kind JSON or a terminal treats
/// apart.
private let hostile = [
    "/usr/bin/curl", "", "new\nline", "tab\there", "a \"quoted\" name", "back\\slash", "nul\u{0}byte",
    "\u{1b}[2J\u{1b}]0;title\u{7}", "del\u{7f}", "c1\u{85}\u{9b}31m", "line\u{2028}separator", "bidi\u{202e}txt",
    "replacement \u{fffd}", "é, 名前, 😀", "/tmp/odd/\u{1}\u{1f}",
]

@Suite("Records as JSON (lnp report --format json)")
struct AuditEntryJSONTests {
    /// lnp-run's lines, as its writers escape them: each comes out byte for byte.
    @Test(arguments: [
        auditLine(["by": #""preload""#]),
        auditLine(["by": #""supervisor""#, "lost": #"{"count":3,"because":"the system logger did not take them"}"#]),
        auditLine(["op": #""resolve""#, "fd": "null", "transport": "null", "address": "null", "port": "null", "by": #""preload""#]),
        auditLine(["op": #""socket""#, "address": "null", "host": "null", "port": "null", "transport": #""packet""#, "by": "null"]),
        auditLine([
            "program": #""/tmp/odd \"name\"\\ \t é\u0001\u007f\u0085 😀""#, "domains": #"["a.example","b.example"]"#,
            "local": "false", "because": #""not-local""#, "decision": #""allow""#, "attribution": #""user""#, "by": #""preload""#,
        ]),
    ])
    func aLineLnpRunWroteComesOutAsItWas(line: String) throws {
        #expect(text(try entry(line).jsonLine) == line)
    }

    @Test func whatARecordLeftOutComesOutAsTheReaderTookIt() throws {
        let line = auditLine(removing: ["pid", "exe", "fd", "transport", "port", "domains", "reason", "because", "local"])
        #expect(text(try entry(line).jsonLine) == """
            {"time":"2026-11-21T10:00:00.123456Z","pid":null,"program":"/usr/bin/curl","exe":null,"op":"connect",\
            "fd":null,"transport":null,"address":"10.77.0.2","port":null,"host":"printer.local","domains":[],\
            "reason":null,"decision":"deny","because":null,"attribution":"app","local":true,"by":null}
            """)
    }

    @Test func timesComeOutInUTCToTheMicrosecond() throws {
        let line = auditLine(["time": #""2026-11-21T11:30:00.5+01:30""#, "by": #""preload""#])
        #expect(text(try entry(line).jsonLine).hasPrefix(#"{"time":"2026-11-21T10:00:00.500000Z","#))
    }

    /// Whatever a string holds, the line is JSON that says it exactly, on one line, with no
    /// control character left for a terminal to act on.
    @Test func untrustedStringsComeOutAsValidJSON() throws {
        for (index, name) in hostile.enumerated() {
            let record = AuditEntry(
                time: AuditTime(seconds: reportEpoch, microseconds: 7), pid: 9, program: name, exe: name, op: name,
                fd: 3, transport: name, address: name, port: 80, host: name, domains: [name, name], reason: name,
                decision: .deny, because: name, attribution: .user, isLocal: false, by: name,
                lost: AuditEntry.Lost(count: 1, because: name))
            let line = record.jsonLine
            #expect(!line.contains { $0 < 0x20 || $0 == 0x7f }, "\(index)")
            #expect(!zip(line, line.dropFirst()).contains { $0 == 0xc2 && (0x80...0x9f).contains($1) }, "C1 controls escaped: \(index)")
            let parsed = try object(line)
            for key in ["program", "exe", "op", "transport", "address", "host", "reason", "because", "by"] {
                #expect(parsed[key] as? String == name, "\(key) of \(index)")
            }
            #expect(parsed["domains"] as? [String] == [name, name])
            #expect((parsed["lost"] as? NSDictionary)?["because"] as? String == name)
            if !name.isEmpty { #expect(try AuditEntry.parse(line: line) == record, "\(index)") }
        }
    }

    /// Records drawn at random come back from their lines as they were.
    @Test func recordsComeBackFromTheirLines() throws {
        var random = SeededRandom(seed: 0x150_4e)
        for round in 0..<2000 {
            func some() -> String? { Bool.random(using: &random) ? hostile.randomElement(using: &random)! : nil }
            func number() -> Int? { Bool.random(using: &random) ? Int.random(in: -1...999_999_999, using: &random) : nil }
            let record = AuditEntry(
                time: AuditTime(seconds: reportEpoch + Int64.random(in: -400_000_000...4_000_000_000, using: &random),
                                microseconds: Int32.random(in: 0...999_999, using: &random)),
                pid: number(), program: "/p" + hostile.randomElement(using: &random)!, exe: some(),
                op: ["connect", "resolve", "browse", "n\u{0}w"].randomElement(using: &random)!, fd: number(),
                transport: some(), address: "10.0.0.\(round % 256)", port: number(), host: some(),
                domains: (0..<Int.random(in: 0...3, using: &random)).map { _ in hostile.randomElement(using: &random)! },
                reason: some(), decision: Bool.random(using: &random) ? .allow : .deny, because: some(),
                attribution: Bool.random(using: &random) ? .app : .user, isLocal: Bool.random(using: &random),
                by: some(), lost: Bool.random(using: &random) ? AuditEntry.Lost(count: round, because: some() ?? "x") : nil)
            #expect(try AuditEntry.parse(line: record.jsonLine) == record, "\(text(record.jsonLine))")
        }
    }

    /// The preload's records of every kind (`Tests/fixtures/audit-records.golden`: escapes,
    /// invalid UTF-8 written as U+FFFD, strings cut at their budgets): each comes out with the
    /// same values, and `by`, which lnp-run adds, null.
    @Test func thePreloadsRecordsComeOutWithTheirValues() throws {
        let corpus = try Data(contentsOf: AuditRecordCorpusTests.corpusURL)
        var read = 0
        for line in corpus.split(separator: 0x0a).map(Array.init) {
            guard let record = try? AuditEntry.parse(line: line) else { continue }
            read += 1
            let expected = try object(line).mutableCopy() as! NSMutableDictionary
            expected["by"] = NSNull()
            if expected["local"] == nil { expected["local"] = true }
            #expect(try object(record.jsonLine) == expected, "\(text(line))")
            #expect(try AuditEntry.parse(line: record.jsonLine) == record)
        }
        // The others hold what lnp-run refuses to write (raw bytes that are not UTF-8, in an
        // interface's name), or what the reader refuses (a year past 9999, an empty path).
        #expect(read > 200, "most of the corpus is records (\(read) of them)")
    }
}

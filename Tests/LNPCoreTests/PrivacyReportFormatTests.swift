import Foundation
import LNPReport
import Testing

/// Apple's `networkActivity` keys, in the order of Apple's App Privacy Report.
private let appleKeys = [
    "domain", "firstTimeStamp", "context", "timeStamp", "domainType", "initiatedType", "hits", "type", "domainOwner",
    "bundleID",
]

/// The keys of a JSON object line, in the order written (JSONSerialization forgets order).
private func keys(of line: String) throws -> [String] {
    let object = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    // Each key appears once, as `"key":` at the top level: find them by position.
    return try object.keys.map { key -> (String, String.Index) in
        (key, try #require(line.range(of: "\"\(key)\":")).lowerBound)
    }.sorted { $0.1 < $1.1 }.map(\.0)
}

private func object(_ line: String) throws -> [String: Any] {
    try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
}

@Suite("App Privacy Report format")
struct PrivacyReportFormatTests {
    @Test func oneRecordPerProgramDomainAndInitiation() throws {
        let entries = [
            auditEntry(1, microseconds: 900_000), auditEntry(0, microseconds: 100), auditEntry(30, attribution: .user),
            auditEntry(5, decision: .deny), auditEntry(59, microseconds: 999_999, host: "printer.local"),
            resolveEntry(2, "printer.local"),
            auditEntry(40, address: "203.0.113.5", port: 443, host: "public.example", local: false),
            auditEntry(3, program: "/usr/bin/wget"),
        ]
        let lines = PrivacyReportFormat.lines(Report(entries: entries))
        #expect(lines == [
            #"{"domain":"10.77.0.2","firstTimeStamp":"2026-11-21T10:00:00Z","context":"","timeStamp":"2026-11-21T10:00:01Z","domainType":2,"initiatedType":"AppInitiated","hits":2,"type":"networkActivity","domainOwner":"","bundleID":"/usr/bin/curl"}"#,
            #"{"domain":"10.77.0.2","firstTimeStamp":"2026-11-21T10:00:30Z","context":"","timeStamp":"2026-11-21T10:00:30Z","domainType":2,"initiatedType":"NonAppInitiated","hits":1,"type":"networkActivity","domainOwner":"","bundleID":"/usr/bin/curl"}"#,
            #"{"domain":"printer.local","firstTimeStamp":"2026-11-21T10:00:02Z","context":"","timeStamp":"2026-11-21T10:00:59Z","domainType":2,"initiatedType":"AppInitiated","hits":2,"type":"networkActivity","domainOwner":"","bundleID":"/usr/bin/curl"}"#,
            #"{"domain":"public.example","firstTimeStamp":"2026-11-21T10:00:40Z","context":"","timeStamp":"2026-11-21T10:00:40Z","domainType":2,"initiatedType":"AppInitiated","hits":1,"type":"networkActivity","domainOwner":"","bundleID":"/usr/bin/curl"}"#,
            #"{"domain":"10.77.0.2","firstTimeStamp":"2026-11-21T10:00:03Z","context":"","timeStamp":"2026-11-21T10:00:03Z","domainType":2,"initiatedType":"AppInitiated","hits":1,"type":"networkActivity","domainOwner":"","bundleID":"/usr/bin/wget"}"#,
        ])
    }

    @Test func keysTypesAndTimestampsAreApples() throws {
        let lines = PrivacyReportFormat.lines(Report(entries: [auditEntry(0, microseconds: 123_456), auditEntry(7)]))
        let line = try #require(lines.first)
        #expect(lines.count == 1)
        #expect(try keys(of: line) == appleKeys)
        let record = try object(line)
        for key in ["domain", "firstTimeStamp", "context", "timeStamp", "initiatedType", "type", "domainOwner", "bundleID"] {
            #expect(record[key] is String, "\(key) is a string")
        }
        #expect(record["domainType"] as? Int == 2)
        #expect(record["hits"] as? Int == 2)
        #expect(!line.contains("\"hits\":\"") && !line.contains("\"domainType\":\""), "numbers are not quoted")
        for key in ["firstTimeStamp", "timeStamp"] {
            let stamp = try #require(record[key] as? String)
            #expect(stamp.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/) != nil, "\(stamp)")
        }
        #expect((record["firstTimeStamp"] as? String, record["timeStamp"] as? String)
            == ("2026-11-21T10:00:00Z", "2026-11-21T10:00:07Z"))
    }

    @Test func deniedOperationsContactedNothingAndAreLeftOut() {
        let entries = [auditEntry(0, decision: .deny), resolveEntry(1, "printer.local", decision: .deny), auditEntry(2, port: 22)]
        let activities = PrivacyReportFormat.activities(Report(entries: entries))
        #expect(activities.map(\.domain) == ["10.77.0.2"])
        #expect(activities.map(\.hits) == [1])
        #expect(PrivacyReportFormat.lines(Report(entries: [auditEntry(0, decision: .deny)])) == [])
    }

    @Test func portsAndTransportsOfOneDomainAreOneRecord() {
        let entries = [auditEntry(0), auditEntry(1, port: 22), auditEntry(2, op: "sendto", transport: "udp", port: 9999)]
        #expect(PrivacyReportFormat.activities(Report(entries: entries)).map(\.hits) == [3])
    }

    @Test(arguments: [
        ("plain.example", #""plain.example""#),
        ("a\"quoted\"", #""a\"quoted\"""#),
        ("back\\slash", #""back\\slash""#),
        ("tab\tnewline\nreturn\r", #""tab\tnewline\nreturn\r""#),
        ("bell\u{07}nul\u{00}esc\u{1b}us\u{1f}", #""bell\u0007nul\u0000esc\u001bus\u001f""#),
        ("\u{08}\u{0c}", #""\b\f""#),
        ("/slash/is/not/escaped", #""/slash/is/not/escaped""#),
        ("é 日本 😀 \u{7f} \u{2028}", "\"é 日本 😀 \u{7f} \u{2028}\""),
    ])
    func stringsAreEscapedAsJSON(text: String, json: String) throws {
        let line = PrivacyReportFormat.lines(Report(entries: [auditEntry(0, program: text, host: text)]))[0]
        #expect(line.hasPrefix("{\"domain\":\(json),"))
        #expect(line.hasSuffix(",\"bundleID\":\(json)}"))
        let record = try object(line)  // and it reads back as the same text
        #expect(record["domain"] as? String == text)
        #expect(record["bundleID"] as? String == text)
    }
}

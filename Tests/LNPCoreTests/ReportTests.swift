import Foundation
import LNPReport
import Testing

private let utc = TimeZone(identifier: "UTC")!

@Suite("Report aggregation")
struct ReportModelTests {
    @Test func operationsAreGroupedByProgramAndDestination() throws {
        let entries = [
            auditEntry(5, decision: .deny),
            auditEntry(1),
            auditEntry(3, attribution: .user),
            auditEntry(2, host: "printer.local"),
            resolveEntry(0, "printer.local"),
            auditEntry(4, op: "sendto", transport: "udp", port: 9999, decision: .deny),
            auditEntry(9, address: "203.0.113.5", port: 443, host: "public.example", local: false),
            auditEntry(7, program: "/usr/bin/avahi-browse", op: "join", transport: "udp", address: "224.0.0.251", port: 0),
        ]
        let report = Report(entries: entries)
        #expect(report.programs.map(\.program) == ["/usr/bin/avahi-browse", "/usr/bin/curl"])

        let curl = report.programs[1]
        #expect(curl.local == Tally(allowed: 4, denied: 2))
        #expect(curl.nonLocal == Tally(allowed: 1, denied: 0))
        #expect((curl.app, curl.user) == (6, 1))
        #expect(curl.first == AuditTime(seconds: reportEpoch))
        #expect(curl.last == AuditTime(seconds: reportEpoch + 9))
        #expect(curl.operations == 7)

        // Most hits first; equal hits by destination.
        #expect(curl.destinations.map(\.destination.label) == [
            "10.77.0.2:8080", "10.77.0.2:9999", "printer.local", "printer.local:8080", "public.example:443",
        ])
        let busiest = curl.destinations[0]
        #expect(busiest.tally == Tally(allowed: 2, denied: 1))
        #expect((busiest.app, busiest.user) == (2, 1))
        #expect((busiest.first, busiest.last) == (AuditTime(seconds: reportEpoch + 1), AuditTime(seconds: reportEpoch + 5)))
        #expect(busiest.operations == ["connect"])
        #expect(busiest.addresses == [])
        #expect(curl.destinations[2].operations == ["resolve"])
        #expect(curl.destinations[2].destination.port == nil)
        #expect(curl.destinations[3].addresses == ["10.77.0.2"])
        #expect(!curl.destinations[4].destination.isLocal)
        #expect(report.programs[0].destinations[0].destination.label == "224.0.0.251")
    }

    @Test func theSameNameOverTwoTransportsIsTwoDestinations() {
        let report = Report(entries: [auditEntry(0), auditEntry(1, op: "sendto", transport: "udp")])
        #expect(report.programs[0].destinations.map(\.destination.transport) == ["tcp", "udp"])
    }

    @Test func labelsBracketIPv6() {
        #expect(Destination(domain: "fd77::2", port: 8080).label == "[fd77::2]:8080")
        #expect(Destination(domain: "fd77::2").label == "fd77::2")
        #expect(Destination(domain: "10.0.0.1", port: 0).label == "10.0.0.1")
    }

    @Test func filtersSelectByTimeAndProgram() {
        let entries = [
            auditEntry(0, program: "/usr/bin/curl"), auditEntry(10, program: "/usr/bin/curl"),
            auditEntry(10, program: "/opt/bin/curl"), auditEntry(20, program: "/usr/bin/wget"),
            auditEntry(30, program: "/usr/bin/curlish"),
        ]
        let since = Report(entries: entries, filter: ReportFilter(since: AuditTime(seconds: reportEpoch + 10)))
        #expect(since.programs.map(\.first).min() == AuditTime(seconds: reportEpoch + 10))
        #expect(since.programs.map(\.operations).reduce(0, +) == 4)

        let byName = Report(entries: entries, filter: ReportFilter(programs: ["curl"]))
        #expect(byName.programs.map(\.program) == ["/opt/bin/curl", "/usr/bin/curl"])
        let byPath = Report(entries: entries, filter: ReportFilter(programs: ["/usr/bin/curl", "wget"]))
        #expect(byPath.programs.map(\.program) == ["/usr/bin/curl", "/usr/bin/wget"])
        #expect(Report(entries: entries, filter: ReportFilter(programs: ["bin/curl"])).programs.isEmpty)
        let both = Report(entries: entries, filter: ReportFilter(since: AuditTime(seconds: reportEpoch + 5), programs: ["curl"]))
        #expect(both.programs.map(\.operations).reduce(0, +) == 2)
    }
}

@Suite("Report times")
struct ReportTimeTests {
    @Test(arguments: [
        ("2026-11-21T10:00:00Z", reportEpoch, Int32(0)),
        ("2026-11-21T10:00:00.123456Z", reportEpoch, 123_456),
        ("2026-11-21T10:00:00.5Z", reportEpoch, 500_000),
        ("2026-11-21T10:00:00.123456789Z", reportEpoch, 123_456),
        ("2026-11-21T11:30:00+01:30", reportEpoch, 0),
        ("2026-11-21T08:00:00-02:00", reportEpoch, 0),
        ("2024-02-29T00:00:00Z", 1_709_164_800, 0),
        ("1969-12-31T23:59:59Z", -1, 0),
    ])
    func rfc3339(text: String, seconds: Int64, microseconds: Int32) {
        #expect(AuditTime(rfc3339: text) == AuditTime(seconds: seconds, microseconds: microseconds))
    }

    @Test(arguments: [
        "", "2026-11-21", "2026-11-21T10:00:00", "2026-13-01T00:00:00Z", "2025-02-29T00:00:00Z",
        "2026-11-21T24:00:00Z", "2026-11-21T10:00:00.Z", "2026-11-21T10:00:00Zjunk", "2026-1-21T10:00:00Z",
    ])
    func notRFC3339(text: String) {
        #expect(AuditTime(rfc3339: text) == nil)
    }

    @Test func wholeSecondsAreCutNotRounded() {
        #expect(AuditTime(seconds: reportEpoch, microseconds: 999_999).wholeSecondsUTC == "2026-11-21T10:00:00Z")
        #expect(AuditTime(seconds: 1_709_251_199).wholeSecondsUTC == "2024-02-29T23:59:59Z")
        #expect(AuditTime(seconds: 0).wholeSecondsUTC == "1970-01-01T00:00:00Z")
    }

    @Test func sinceAcceptsTimesDatesAndDurations() throws {
        let now = Date(timeIntervalSince1970: Double(reportEpoch))
        let paris = TimeZone(identifier: "Europe/Paris")!
        #expect(try TimeFilter.since("2026-11-21T09:00:00Z", now: now) == AuditTime(seconds: reportEpoch - 3600))
        #expect(try TimeFilter.since("2026-11-21T10:00:00+01:00", now: now) == AuditTime(seconds: reportEpoch - 3600))
        // Without a zone: local time, as `date` reads it.
        #expect(try TimeFilter.since("2026-11-21T10:00", now: now, timeZone: paris) == AuditTime(seconds: reportEpoch - 3600))
        #expect(try TimeFilter.since("2026-11-21", now: now, timeZone: utc) == AuditTime(seconds: reportEpoch - 36000))
        #expect(try TimeFilter.since("2026-11-21", now: now, timeZone: paris) == AuditTime(seconds: reportEpoch - 39600))
        #expect(try TimeFilter.since("30s", now: now) == AuditTime(seconds: reportEpoch - 30))
        #expect(try TimeFilter.since("30m", now: now) == AuditTime(seconds: reportEpoch - 1800))
        #expect(try TimeFilter.since("2h", now: now) == AuditTime(seconds: reportEpoch - 7200))
        #expect(try TimeFilter.since("7d", now: now) == AuditTime(seconds: reportEpoch - 7 * 86400))
        #expect(try TimeFilter.since("1w", now: now) == AuditTime(seconds: reportEpoch - 7 * 86400))
        #expect(try TimeFilter.since("1h30m", now: now) == AuditTime(seconds: reportEpoch - 5400))
    }

    @Test(arguments: ["", "h", "2", "2x", "-2h", "2 h", "yesterday", "2026-11-31", "10:00", "1e3s"])
    func sinceRejectsTheRest(text: String) {
        #expect(throws: TimeFilter.ParseError(text: text)) { try TimeFilter.since(text) }
    }
}

@Suite("Report table")
struct TableFormatTests {
    @Test func aHeadingPerProgramThenARowPerDestination() {
        let entries = [
            auditEntry(0, microseconds: 999_999), auditEntry(61, decision: .deny, attribution: .user),
            auditEntry(2, host: "printer.local"),
            auditEntry(3, address: "203.0.113.5", port: 443, host: "public.example", local: false),
            resolveEntry(4, "printer.local", decision: .deny),
        ]
        let lines = TableFormat(timeZone: utc).lines(Report(entries: entries))
        #expect(lines == [
            "/usr/bin/curl: 4 local-network operations (2 allowed, 2 denied), 1 not local; 4 app-initiated, 1 user-initiated",
            "  DESTINATION                       HOW          NETWORK    ALLOWED  DENIED  APP  USER  FIRST (UTC)          LAST (UTC)",
            "  10.77.0.2:8080                    tcp connect  local            1       1    1     1  2026-11-21 10:00:00  2026-11-21 10:01:01",
            "  printer.local                     resolve      local            0       1    1     0  2026-11-21 10:00:04  2026-11-21 10:00:04",
            "  printer.local:8080 (10.77.0.2)    tcp connect  local            1       0    1     0  2026-11-21 10:00:02  2026-11-21 10:00:02",
            "  public.example:443 (203.0.113.5)  tcp connect  not local        1       0    1     0  2026-11-21 10:00:03  2026-11-21 10:00:03",
        ])
    }

    @Test func programsAreSeparatedByABlankLineInOrder() {
        let lines = TableFormat(timeZone: utc).lines(Report(entries: [auditEntry(0, program: "/b"), auditEntry(0, program: "/a")]))
        #expect(lines.filter { !$0.hasPrefix("  ") } == [
            "/a: 1 local-network operation (1 allowed, 0 denied); 1 app-initiated, 0 user-initiated", "",
            "/b: 1 local-network operation (1 allowed, 0 denied); 1 app-initiated, 0 user-initiated",
        ])
    }

    @Test func timesAreLocal() {
        let lines = TableFormat(timeZone: TimeZone(identifier: "Europe/Paris")!).lines(Report(entries: [auditEntry(0)]))
        #expect(lines[1].hasSuffix("FIRST (Europe/Paris)  LAST (Europe/Paris)"))
        #expect(lines[2].hasSuffix("2026-11-21 11:00:00   2026-11-21 11:00:00"))
        let london = TableFormat(timeZone: TimeZone(identifier: "Europe/London")!).lines(Report(entries: [auditEntry(0)]))
        #expect(london[1].hasSuffix("FIRST (Europe/London)  LAST (Europe/London)"), "UTC in winter only")
    }

    @Test func controlCharactersFromProgramsAreShownEscaped() {
        let entries = [auditEntry(0, program: "/tmp/\u{1b}[2Jevil\u{202e}txt", host: "a\u{7}b\nc")]
        let text = TableFormat(timeZone: utc).lines(Report(entries: entries)).joined(separator: "\n")
        #expect(text.hasPrefix("/tmp/\\u{1b}[2Jevil\\u{202e}txt: "))
        #expect(text.contains("a\\u{7}b\\u{a}c:8080"))
        #expect(!text.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" || $0.value == 0x202e })
    }

    @Test func nothingToReport() {
        #expect(TableFormat(timeZone: utc).lines(Report(entries: [])) == ["no operations to report"])
    }
}

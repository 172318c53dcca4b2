import Foundation
import Testing

@testable import LNPReport

private let utc = TimeZone(identifier: "UTC")!
private let twoMB = 2_000_000

private func page(_ entries: [AuditEntry], filter: ReportFilter = ReportFilter()) -> String {
    HTMLFormat(timeZone: utc, nonce: "n0nce", host: "testhost").page(entries: entries, filter: filter)
}

private func count(_ needle: String, in text: String) -> Int {
    text.components(separatedBy: needle).count - 1
}

/// Whether `text` holds `part`, byte for byte (String's `contains` compares characters).
private func hasBytes(_ text: String, _ part: String) -> Bool {
    Array(text.utf8).firstRange(of: Array(part.utf8)) != nil
}

/// The counts in the tooltips of a page's timeline marks, added up.
private func markedOperations(_ html: String) -> Int {
    html.matches(of: /<title>(\d+) (allowed|denied)/).reduce(0) { $0 + Int($1.output.1)! }
}

@Suite("HTML page limits")
struct HTMLPageLimitsTests {
    /// Five busy destinations, then 20,000 seen once each over six hours.
    @Test func manyDestinationsMakeASmallPageThatStillNamesTheBusiest() {
        var entries: [AuditEntry] = []
        for (rank, hits) in [500, 400, 300, 200, 100].enumerated() {
            entries += (0..<hits).map { (n: Int) -> AuditEntry in
                auditEntry(Int64(n * 40), address: "10.1.0.\(rank + 1)", decision: n % 10 == 0 ? .deny : .allow)
            }
        }
        entries += (0..<20_000).map { auditEntry(Int64($0), address: "10.2.\($0 / 250).\($0 % 250 + 1)", port: 9100) }
        let html = page(entries)
        #expect(html.utf8.count <= twoMB)
        #expect(html.hasSuffix("</html>\n"))
        for rank in 1...5 {
            #expect(html.contains(">10.1.0.\(rank):8080 tcp</text>"), "the busiest are named on the charts")
            #expect(html.contains("<td class=\"destination\">10.<wbr>1.<wbr>0.<wbr>\(rank):<wbr>8080</td>"), "and in the table")
        }
        #expect(html.contains(">450 allowed, 50 denied</text>"))
        // The rest share a timeline row, and a table row with their counts.
        #expect(html.contains(">19994 other destinations</text>"))
        #expect(html.contains("<tr><td class=\"destination\">19981 other destinations</td><td></td>"
            + "<td class=\"wrap\">local</td><td class=\"count\">19981</td>"))
        #expect(html.contains("19993 more destinations: the next 12 in the table below, the other 19981 counted together there"))
        let section = html[html.range(of: "<section class=\"program\"")!.lowerBound...]
        #expect(count("<tr", in: String(section)) == 1 + PageLimits.tableRows)
    }

    @Test func manyProgramsAreListedAtTheEndPastTheBusiest() {
        var entries: [AuditEntry] = []
        for program in 0..<300 {
            entries += (0..<(program < 10 ? 50 : 3)).map {
                auditEntry(Int64($0), program: "/opt/p\(program)", address: "10.3.\(program / 200).\($0 % 200 + 1)")
            }
        }
        let html = page(entries)
        #expect(html.utf8.count <= twoMB)
        #expect(count("<section class=\"program\"", in: html) == PageLimits.sections)
        #expect(html.contains("300 programs, "))
        #expect(html.contains("The busiest 40 are shown in full; the other 260 are listed at the end."))
        for busy in 0..<10 { #expect(html.contains("<h2>/opt/p\(busy)</h2>")) }
        #expect(html.contains("<h2 class=\"others\">Other programs</h2>"))
        #expect(html.contains("<p>And 160 more programs, with 480 operations in all: lnp report lists every one.</p>"))
    }

    /// Text made to be as long as can be once escaped, everywhere the page shows text.
    @Test func hostileRecordsStillMakeASmallPage() {
        var entries: [AuditEntry] = []
        let hostile = String(repeating: "\"\u{1b}<&'", count: 400)
        for program in 0..<60 {
            for destination in 0..<40 {
                entries += (0..<30).map {
                    auditEntry(
                        Int64($0 * 700 + destination), program: "/\(program)/" + hostile, op: hostile,
                        address: "10.4.\(destination).\($0)", host: "\(destination)" + hostile,
                        decision: $0 % 3 == 0 ? .deny : .allow, attribution: $0 % 2 == 0 ? .app : .user,
                        local: $0 % 5 != 0)
                }
            }
        }
        let html = page(entries)
        #expect(html.utf8.count <= twoMB)
        #expect(!html.contains("<&") && !html.contains("\u{1b}"))
        #expect(html.hasSuffix("</html>\n"))

        // One character can be any number of bytes: a letter and 150,000 combining accents is
        // one, of 300 kB. Cut by characters, 60 such names made an 18 MB page.
        let accents = String(repeating: "\u{301}", count: 150_000)
        let long = (0..<60).flatMap { program in
            (0..<2).map { auditEntry(Int64($0), program: "/x\(program)e" + accents, host: "h\(program)e" + accents) }
        }
        let longPage = page(long)
        #expect(longPage.utf8.count <= twoMB)
        #expect(longPage.hasSuffix("</html>\n"))
        #expect(longPage.contains("<h2 class=\"others\">Other programs</h2>"))

        // A mark joined to a character that must be escaped leaves it escaped.
        let joined = "/y/\"\u{301}<\u{301}script>&\u{301}'\u{301}"
        let joinedPage = page([auditEntry(0, program: joined, host: joined)])
        #expect(hasBytes(joinedPage, "<h2>/y/&quot;\u{301}&lt;\u{301}script&gt;&amp;\u{301}&#39;\u{301}</h2>"))
        #expect(!hasBytes(joinedPage, "<\u{301}") && !hasBytes(joinedPage, "\"\u{301}"))
    }

    @Test func aBusyTimelineGroupsTimeIntoWiderColumns() {
        // Twelve destinations, each busy every 10 seconds for six hours.
        let entries = (0..<26_000).map { (n: Int) -> AuditEntry in
            let decision: AuditEntry.Decision = n % 7 == 0 ? .deny : .allow
            return auditEntry(Int64(n / 12 * 10), address: "10.5.0.\(n % 12 + 1)", decision: decision)
        }
        let html = page(entries)
        #expect(html.utf8.count < 300_000)
        #expect(html.contains("<path class=\"dense allowed-local\" d=\"M"))
        #expect(html.contains("<path class=\"dense denied-local\" d=\"M"))
        #expect(count("<g class=\"mark ", in: html) == 3, "only the legend's")
        // Every operation is counted in its row's tooltip.
        #expect(markedOperations(html) == 26_000)
        #expect(html.contains("<marker id=\"mark-allowed-local\""))
    }

    @Test func marksAreGroupedIntoWiderColumnsToStayWithinALimit() throws {
        let entries = (0..<5000).map { (n: Int) -> AuditEntry in
            auditEntry(Int64(n * 3), address: "10.6.0.\(n % 20)", decision: n % 4 == 0 ? .deny : .allow)
        }
        let report = Report(entries: entries)
        let program = try #require(report.programs.first)
        // Room for 100 marks of a dense timeline: too little for a mark per pixel.
        var timeline = Timeline(program, markBytes: 100 * PageLimits.denseMarkBytes)
        entries.forEach { timeline.add($0) }
        #expect(timeline.titledMarks == nil)
        let (coarse, width) = timeline.denseMarks()
        #expect(coarse.count <= 100 && width > 1)
        #expect(coarse.allSatisfy { Double($0.x) >= Timeline.plotLeft && Double($0.x) <= Timeline.plotRight })
        // Each row's tooltip counts its operations, first to last.
        #expect(timeline.rows.values.map(\.count).reduce(0, +) == 5000)
        #expect(timeline.rows.values.map(\.first).min() == AuditTime(seconds: reportEpoch))
        #expect(timeline.rows.values.map(\.last).max() == AuditTime(seconds: reportEpoch + 14997))
        // With room, a mark per pixel, each with its count.
        var roomy = Timeline(program, markBytes: 1000 * PageLimits.timelineBytes)
        entries.forEach { roomy.add($0) }
        let fine = try #require(roomy.titledMarks)
        #expect(fine.map(\.cell.count).reduce(0, +) == 5000)
        #expect(roomy.denseMarks().columnWidth == 1)
        // And the page says how long its columns last.
        let html = HTMLFormat(timeZone: utc).page(report, timelines: {
            var timelines = Timelines(report: report, programs: ["/usr/bin/curl"], filter: ReportFilter())
            entries.forEach { timelines.add($0) }
            return timelines
        }())
        #expect(html.contains("<figcaption>Operations over time") && html.utf8.count < 200_000)
    }

    /// A dense timeline keeps only which pixel columns have an operation; what it draws is
    /// still every operation's column, grouped into the narrowest columns its room allows.
    @Test(arguments: [300, 3000, 15_000])
    func aDenseTimelineDrawsTheColumnOfEveryOperation(marks limit: Int) throws {
        var random = SeededRandom(seed: UInt64(limit))
        let entries = (0..<40_000).map { _ in
            auditEntry(
                Int64.random(in: 0..<86_400, using: &random), address: "10.7.0.\(Int.random(in: 1...15, using: &random))",
                decision: Bool.random(using: &random) ? .allow : .deny, local: Int.random(in: 0..<10, using: &random) > 0)
        }
        let program = try #require(Report(entries: entries).programs.first)
        var timeline = Timeline(program, markBytes: limit * PageLimits.denseMarkBytes)
        entries.forEach { timeline.add($0) }
        let (marks, width) = timeline.denseMarks()

        // Worked out here from the operations themselves.
        func spots(_ width: Int) -> Set<Timeline.Spot> {
            let left = Int(Timeline.plotLeft)
            return Set(entries.map { entry in
                let x = Int(timeline.x(entry.time).rounded())
                return Timeline.Spot(
                    lane: timeline.lanes.lane(of: Destination(entry)),
                    x: min(left + (x - left) / width * width + width / 2, Int(Timeline.plotRight)),
                    allowed: entry.decision == .allow, local: entry.isLocal)
            })
        }
        #expect(marks.count == Set(marks).count)
        #expect(Set(marks) == spots(width))
        #expect(marks.count <= limit)
        #expect(width == 1 || spots(width / 2).count > limit, "the narrowest columns that fit")
        #expect(timeline.rows.values.map(\.count).reduce(0, +) == 40_000)
    }

    @Test func aSmallTimelineKeepsAMarkPerPixelWithItsTooltip() {
        let entries = (0..<300).map { auditEntry(Int64($0), decision: $0 % 2 == 0 ? .allow : .deny) }
        let html = page(entries)
        #expect(!html.contains("class=\"dense"))
        #expect(html.contains("<figcaption>Operations over time</figcaption>"))
        #expect(markedOperations(html) == 300)
    }

    @Test func theTimelinesCountWhatTheFilterTook() {
        let entries = (0..<100).map { auditEntry(Int64($0)) } + (0..<50).map { auditEntry(Int64($0), program: "/usr/bin/wget") }
        let html = page(entries, filter: ReportFilter(since: AuditTime(seconds: reportEpoch + 60), programs: ["curl"]))
        #expect(html.contains("aria-label=\"Timeline of 40 operations\""))
        #expect(markedOperations(html) == 40)
        #expect(!html.contains("wget"))
    }

    /// An input not read again would leave its programs' timelines short: they have none,
    /// and the page says why.
    @Test func anInputNotReadAgainLeavesItsProgramsWithoutATimeline() {
        let report = Report(entries: [auditEntry(0), auditEntry(1, program: "/usr/bin/wget")])
        var timelines = Timelines(report: report, programs: ["/usr/bin/curl", "/usr/bin/wget"], filter: ReportFilter())
        timelines.add(auditEntry(1, program: "/usr/bin/wget"))
        timelines.leaveOut(["/usr/bin/curl"], unread: "<stdin>: it could not be kept for a second reading (/tmp: No space left on device)")
        let html = HTMLFormat(timeZone: utc).page(report, timelines: timelines)
        #expect(html.contains(
            "No timeline for the programs read from &lt;stdin&gt;: it could not be kept for a second reading "
                + "(/tmp: No space left on device)."))
        #expect(count("Operations over time", in: html) == 1)
        #expect(count("Destinations by hits</figcaption>", in: html) == 2)
        #expect(html.contains("aria-label=\"Timeline of 1 operation\""))
    }

    @Test(arguments: [
        (0.25, "250 ms"), (12.0, "12 s"), (7.5, "7.5 s"), (150.0, "2.5 min"), (7200.0, "2 h"), (259_200.0, "3 days"),
    ])
    func columnsSayHowLongTheyLast(seconds: Double, words: String) {
        #expect(HTMLFormat.duration(seconds) == words)
    }
}

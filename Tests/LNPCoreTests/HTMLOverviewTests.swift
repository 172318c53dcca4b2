import Foundation
import Testing

@testable import LNPReport

private let utc = TimeZone(identifier: "UTC")!

private func page(_ entries: [AuditEntry], zone: TimeZone = utc) -> String {
    HTMLFormat(timeZone: zone, nonce: "n0nce", host: "build-7").page(entries: entries)
}

private func count(_ needle: String, in text: String) -> Int {
    text.components(separatedBy: needle).count - 1
}

/// The part of `html` from `start` up to the next `end`.
private func part(_ html: String, from start: String, to end: String) -> String {
    guard let from = html.range(of: start) else { return "" }
    let rest = html[from.lowerBound...]
    return String(rest[..<(rest.range(of: end)?.upperBound ?? rest.endIndex)])
}

@Suite("HTML page: overview, causes and title")
struct HTMLOverviewTests {
    /// Three programs: curl denied by the run's option and by an unanswered question, wget
    /// undetermined with no terminal, and avahi-browse allowed, its activity partly not local.
    private var entries: [AuditEntry] {
        var entries: [AuditEntry] = []
        for n in 0..<6 {
            let because = n < 3 ? "run-option" : "unanswered"
            entries.append(auditEntry(Int64(n), decision: n < 4 ? .deny : .allow, because: .some(because)))
        }
        for n in 0..<3 {
            entries.append(auditEntry(Int64(10 + n), program: "/usr/bin/wget", decision: .deny, because: "no-terminal"))
        }
        entries.append(auditEntry(20, program: "/usr/bin/wget", address: "10.77.0.9", port: 631))
        for n in 0..<2 {
            entries.append(auditEntry(Int64(30 + n), program: "/usr/bin/avahi-browse", address: "224.0.0.251", port: 5353))
        }
        entries.append(auditEntry(
            40, program: "/usr/bin/avahi-browse", address: "203.0.113.5", port: 443, local: false,
            reason: "through a gateway (route 0.0.0.0/0)"))
        return entries
    }

    @Test func theOverviewCountsEveryProgramBusiestFirstAndLinksToItsSection() {
        let html = page(entries)
        let overview = part(html, from: "<section class=\"overview\">", to: "</section>")
        let programs = part(overview, from: "<h3>Programs, busiest first</h3>", to: "</table>")
        let rows = programs.components(separatedBy: "<tr").dropFirst(2).map { String($0) }
        #expect(rows.count == 3)
        // curl (6), wget (4), avahi-browse (3); allowed, denied, not local; the commonest causes.
        #expect(rows[0].contains("<a href=\"#program-0\" title=\"/usr/bin/curl\">/usr/bin/curl</a>"))
        #expect(rows[0].contains("<td class=\"count\">2</td><td class=\"count\">4</td><td class=\"count\">0</td>"))
        #expect(rows[0].contains("<td class=\"wrap\">lnp-run --deny: 3, not answered: 1</td>"))
        #expect(rows[1].contains(">/usr/bin/wget</a>") && rows[1].contains("no terminal: 3"))
        #expect(rows[2].contains(">/usr/bin/avahi-browse</a>"))
        #expect(rows[2].contains("<td class=\"count\">2</td><td class=\"count\">0</td><td class=\"count\">1</td>"))
        // Each link has its section; the section has its own causes, in words.
        for index in 0..<3 { #expect(html.contains("<section class=\"program\" id=\"program-\(index)\">")) }
        let curl = part(html, from: "id=\"program-0\"", to: "</section>")
        #expect(curl.contains("<p class=\"why\">Why denied: lnp-run --deny: 3, not answered: 1 "))
        // Bars: allowed solid, denied hatched, not local grey.
        #expect(rows[0].contains("<rect class=\"bar allowed local\"") && rows[0].contains("fill=\"url(#denied-overview)\""))
        #expect(rows[2].contains("<rect class=\"bar allowed nonlocal\""))
        #expect(overview.contains("<pattern id=\"denied-overview\""))
    }

    @Test func theBusiestDestinationsAreOfAllProgramsTogether() {
        let html = page(entries)
        let destinations = part(html, from: "<h3>Busiest destinations, all programs together</h3>", to: "</table>")
        let rows = destinations.components(separatedBy: "<tr").dropFirst(2).map { String($0) }
        // 10.77.0.2:8080 has curl's 6 and wget's 3; then multicast DNS, then the others.
        #expect(rows.first?.contains(">10.77.0.2:8080 tcp</td>") == true)
        #expect(rows.first?.contains("<td class=\"count\">2</td><td class=\"count\">7</td><td class=\"count\">2</td>") == true)
        #expect(rows.first?.contains("lnp-run --deny, not answered, no terminal") == true)
        #expect(rows.count == 4)
        #expect(destinations.contains(">203.0.113.5:443 tcp (not local)</td>"))
    }

    @Test func eachCauseIsSaidInWordsWithTheRecordsWord() {
        let html = page(entries + [auditEntry(50, program: "/opt/x", decision: .deny, because: .some(nil))])
        let causes = part(html, from: "<h3>Why operations were denied</h3>", to: "</table>")
        #expect(causes.contains("<tr><td>no terminal</td><td class=\"count\">3</td><td class=\"count\">1</td>"
            + "<td class=\"meaning\">the program was undetermined and there was no terminal to ask on"))
        #expect(causes.contains("<td class=\"word\">no-terminal</td>"))
        #expect(causes.contains("<td>not recorded</td><td class=\"count\">1</td>"))
        // Most denials first.
        let order = ["lnp-run --deny", "no terminal", "not answered", "not recorded"].map { causes.range(of: "<td>\($0)</td>")!.lowerBound }
        #expect(order == order.sorted())
        // With nothing denied, the page says so.
        #expect(page([auditEntry(0)]).contains("<p>No operation was denied.</p>"))
    }

    @Test func aDestinationsTableSaysWhatDeniedItAndWhyItIsLocal() {
        let html = page(entries)
        let curl = part(html, from: "id=\"program-0\"", to: "</section>")
        #expect(curl.contains("<th>DENIED BECAUSE</th>"))
        #expect(curl.contains("<td class=\"wrap\">on-link 10.77.0.0/24 via c0</td><td class=\"count\">2</td>"
            + "<td class=\"count\">4</td><td class=\"wrap\">lnp-run --deny, not answered</td>"))
        let avahi = part(html, from: "id=\"program-2\"", to: "</section>")
        #expect(avahi.contains("<td class=\"wrap\">not local: through a gateway (route 0.0.0.0/0)</td>"))
        // Records that disagree say so.
        let mixed = page([auditEntry(0, reason: "link-local via eth0"), auditEntry(1, reason: "on-link 10.77.0.0/24 via c0")])
        #expect(mixed.contains("<td class=\"wrap\">link-local via eth0, and others</td>"))
    }

    /// Causes come from the files: any number of words, unknown ones too, are counted in a
    /// bounded way and shown escaped.
    @Test func unknownCausesAreFewAndEscaped() {
        let words = (0..<50).map { auditEntry(Int64($0), decision: .deny, because: "<b>word-\($0)</b>") }
        let html = page(words)
        #expect(!html.contains("<b>"))
        #expect(html.contains("<td>“&lt;b&gt;word-0&lt;/b&gt;”</td>"))
        #expect(html.contains("<td>other words</td><td class=\"count\">\(50 - DenialCounts.words)</td>"))
        let report = Report(entries: words)
        #expect(report.programs[0].denials.counts.count == DenialCounts.words + 1)
        #expect(report.programs[0].destinations[0].deniedBecause.causes == [.otherWords])
    }

    @Test func theTitleNamesTheHostAndTheSpan() {
        // Seconds for a short run.
        #expect(page(entries).contains("<title>lnp report — build-7, 21 Nov 2026 10:00:00–10:00:40 UTC</title>"))
        #expect(page(entries).contains("reported on build-7 (the machine lnp report ran on"))
        // Minutes for a longer one, both dates across midnight, and the zone's own time.
        let day = [auditEntry(0), auditEntry(3 * 3600 + 125)]
        #expect(page(day).contains("<title>lnp report — build-7, 21 Nov 2026 10:00–13:02 UTC</title>"))
        let days = [auditEntry(0), auditEntry(26 * 3600)]
        #expect(page(days).contains("<title>lnp report — build-7, 21 Nov 2026 10:00 – 22 Nov 2026 12:00 UTC</title>"))
        let paris = TimeZone(identifier: "Europe/Paris")!
        #expect(page(day, zone: paris).contains("21 Nov 2026 11:00–14:02 Europe/Paris</title>"))
        #expect(page([auditEntry(0)]).contains("<title>lnp report — build-7, 21 Nov 2026 10:00:00 UTC</title>"))
        // A host's name is text like any other.
        let odd = HTMLFormat(timeZone: utc, nonce: "n0nce", host: "<b>&host").page(entries: [auditEntry(0)])
        #expect(odd.contains("<title>lnp report — &lt;b&gt;&amp;host, ") && !odd.contains("<b>"))
        // Without one given, the kernel's name for this machine (as `hostname` prints it).
        let kernel = try? String(contentsOfFile: "/proc/sys/kernel/hostname", encoding: .utf8)
        #expect(HTMLFormat().host == kernel?.trimmingCharacters(in: .newlines))
    }

    /// Records written to defeat the page: long and many names, words, causes. The overview
    /// stays within its bound, and the page within 2 MB.
    @Test func theOverviewStaysSmallWhateverTheRecordsHold() {
        let long = String(repeating: "\"<&'\u{1b}", count: 300) + String(repeating: "\u{301}", count: 5000)
        var entries: [AuditEntry] = []
        for program in 0..<300 {
            for destination in 0..<20 {
                entries.append(auditEntry(
                    Int64(program * 20 + destination), program: "/\(program)/" + long, host: "\(destination)" + long,
                    decision: destination % 2 == 0 ? .deny : .allow, because: "\(program % 40)" + long,
                    local: destination % 3 != 0, reason: long))
            }
        }
        let report = Report(entries: entries)
        let busiest = HTMLFormat.busiestFirst(report.programs)
        let sections = Dictionary(uniqueKeysWithValues: busiest.prefix(40).enumerated().map { ($1.program, $0) })
        let overview = HTMLOverview(programs: busiest, sections: sections).html
        #expect(overview.utf8.count <= PageLimits.overviewBytes)
        #expect(!overview.contains("<&") && !overview.contains("\u{1b}"))
        let html = page(entries)
        #expect(html.utf8.count <= 2_000_000)
        #expect(html.hasSuffix("</html>\n"))
    }
}

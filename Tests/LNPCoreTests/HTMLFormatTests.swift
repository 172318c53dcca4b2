import Foundation
import LNPReport
import Testing

private let utc = TimeZone(identifier: "UTC")!

private func page(_ entries: [AuditEntry], nonce: String = "n0nce") -> String {
    HTMLFormat(timeZone: utc, nonce: nonce, host: "testhost").page(entries: entries)
}

private func count(_ needle: String, in text: String) -> Int {
    text.components(separatedBy: needle).count - 1
}

@Suite("HTML report")
struct HTMLFormatTests {
    @Test func textFromTheRecordsIsEscaped() {
        let program = "/tmp/<script>alert('x')</script>&\"quote\""
        let host = "<img src=x onerror=alert(1)>.local"
        let html = page([auditEntry(0, program: program, host: host), auditEntry(1, program: program, decision: .deny)])
        #expect(!html.contains("<script>alert"))
        #expect(!html.contains("<img"))
        #expect(html.contains("/tmp/&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;quote&quot;"))
        #expect(html.contains("&lt;img src=x onerror=alert(1)&gt;.local"))
        // The only scripts are the page's own two, with its nonce.
        #expect(count("<script", in: html) == 2)
        #expect(count("<script nonce=\"n0nce\">", in: html) == 2)
    }

    @Test func controlCharactersAreShownNotEmbedded() {
        let html = page([auditEntry(0, program: "/tmp/a\u{0}b\u{1b}c\u{202e}d")])
        #expect(html.contains("/tmp/a\\u{0}b\\u{1b}c\\u{202e}d"))
        #expect(!html.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\n") || $0.value == 0x202e })
    }

    @Test func thePageFetchesNothing() {
        let html = page([auditEntry(0), auditEntry(1, decision: .deny), resolveEntry(2, "printer.local")])
        #expect(!html.contains("http://") && !html.contains("https://") && !html.contains("//"))
        #expect(!html.contains(" src=") && !html.contains("@import"))
        #expect(count(" href=", in: html) == count(" href=\"#program-", in: html), "links only within the page")
        #expect(count(" href=\"#program-", in: html) == 1)
        #expect(html.contains("url(") == html.contains("url(#"), "only references within the page")
        #expect(html.contains(
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'nonce-n0nce'; "
                + "script-src 'nonce-n0nce'; base-uri 'none'; form-action 'none'\">"))
        #expect(html.contains("<style nonce=\"n0nce\">"))
        #expect(!html.contains(" style="), "inline style attributes would need 'unsafe-inline'")
        #expect(html.contains("document.body.dataset.rendered"))
    }

    @Test func eachPageHasItsOwnNonce() {
        #expect(HTMLFormat().nonce != HTMLFormat().nonce)
        #expect(HTMLFormat().nonce.count >= 16)
    }

    @Test func aTimelineAndABarChartPerProgram() {
        let entries = [
            auditEntry(0), auditEntry(10, decision: .deny), auditEntry(20, program: "/usr/bin/wget"),
            auditEntry(5, address: "203.0.113.5", port: 443, local: false),
        ]
        let html = page(entries)
        #expect(count("<section class=\"program\"", in: html) == 2)
        #expect(count("<svg class=\"chart timeline\"", in: html) == 2)
        #expect(count("<svg class=\"chart bars\"", in: html) == 2)
        // Marks: a dot for allowed, a cross for denied, hollow for not local.
        #expect(count("<g class=\"mark allowed local\">", in: html) == 3)  // two on timelines, one in the legend
        #expect(count("<g class=\"mark denied local\">", in: html) == 2)
        #expect(count("<g class=\"mark allowed nonlocal\">", in: html) == 2)
        // To the millisecond: the program's records span less than a minute.
        #expect(html.contains("<title>1 denied, 10:00:10.000</title><path d="))
        #expect(html.contains("<title>1 allowed, not local, 10:00:05.000</title><circle"))
    }

    @Test func deniedBarsAreHatchedAndLabelled() {
        let html = page([auditEntry(0), auditEntry(1, decision: .deny), auditEntry(2, decision: .deny)])
        #expect(html.contains("<pattern id=\"denied-0\""))
        #expect(html.contains("class=\"bar denied\""))
        #expect(html.contains("fill=\"url(#denied-0)\""))
        #expect(html.contains(">1 allowed, 2 denied</text>"))
        // The destination may wrap between its parts.
        #expect(html.contains("<tr class=\"denied\"><td class=\"destination\">10.<wbr>77.<wbr>0.<wbr>2:<wbr>8080</td>"))
    }

    @Test func manyOperationsMakeFewMarks() {
        // Operations in the same pixel of the same row share a mark, with their count.
        let entries = (0..<5000).map { auditEntry(Int64($0 % 10)) }
        let html = page(entries)
        #expect(count("<g class=\"mark allowed local\">", in: html) <= 11)
        #expect(html.contains("<title>500 allowed, 10:00:00.000</title>"))
        #expect(html.utf8.count < 25_000)
    }

    @Test func manyDestinationsShareTheLastTimelineRow() {
        let entries = (0..<20).map { auditEntry(Int64($0), port: 1000 + $0) }
        let html = page(entries)
        #expect(html.contains(">9 other destinations</text>"))
        #expect(html.contains("8 more destinations in the table below"))
        #expect(count("<tr><td class=\"destination\">10.<wbr>77.<wbr>0.<wbr>2:<wbr>", in: html) == 20)
    }

    @Test func anEmptyReportIsStillAPage() {
        let html = page([])
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        #expect(html.contains("No operations to report."))
        #expect(html.hasSuffix("</html>\n"))
    }
}

import Foundation
import Testing

@testable import LNPReport

private let utc = TimeZone(identifier: "UTC")!

private func page(_ entries: [AuditEntry]) -> String {
    HTMLFormat(timeZone: utc, nonce: "n0nce", host: "testhost").page(entries: entries)
}

@Suite("Chart labels")
struct ChartLabelTests {
    @Test func aLabelThatFitsIsWhole() {
        let scoped = "[fe80::aaaa:bbbb:cccc:dddd%wlp0s20f3abcdef]:8009 tcp"
        #expect(ChartLabel.fitted(scoped) == scoped)
        #expect(ChartLabel.fitted("[fe80::1%eth0]:5353 udp") == "[fe80::1%eth0]:5353 udp")
    }

    @Test func aLongLabelIsCutInItsMiddle() {
        let label = "a-very-long-printer-name-in-the-office-on-the-third-floor-by-the-window.local:443 tcp (not local)"
        let fitted = ChartLabel.fitted(label)
        #expect(ChartLabel.width(fitted) == ChartLabel.maxCells)
        // As much of its start as of its end.
        #expect(fitted == label.prefix(27) + "…" + label.suffix(28))
        #expect(fitted.contains("…"))
        // Wide characters take two cells; marks none, but count against the bytes.
        let wide = String(repeating: "名", count: 40)
        #expect(ChartLabel.width(ChartLabel.fitted(wide)) <= ChartLabel.maxCells)
        let marked = "e" + String(repeating: "\u{301}", count: 10_000)
        #expect(ChartLabel.fitted(marked).unicodeScalars.count <= 2 * ChartLabel.maxCells + 1)
        // Control characters are shown, and counted as shown.
        #expect(ChartLabel.fitted("a\u{1b}b") == "a\\u{1b}b")
    }

    /// The label column is as wide as the longest label needs: a scoped or long IPv6
    /// address, with its port and transport, is drawn whole, on both charts.
    @Test func theLabelColumnWidensForLongAddresses() {
        let entries = [
            auditEntry(0, address: "fe80::aaaa:bbbb:cccc:dddd%wlp0s20f3abcdef", port: 8009),
            auditEntry(1, transport: "udplite", address: "2001:db8:1234:5678:9abc:def0:1234:5678", port: 65535),
        ]
        let html = page(entries)
        for label in ["[fe80::aaaa:bbbb:cccc:dddd%wlp0s20f3abcdef]:8009 tcp", "[2001:db8:1234:5678:9abc:def0:1234:5678]:65535 udplite"] {
            #expect(html.components(separatedBy: "</title>\(label)</text>").count - 1 == 2, "\(label) on both charts")
        }
        let charts = SVGCharts(program: Report(entries: entries).programs[0], timeline: nil, index: 0, zone: utc)
        #expect(charts.labelWidth >= 54 * ChartLabel.cellWidth)
        // A short one keeps a narrow column, and the plot its width.
        let short = SVGCharts(program: Report(entries: [auditEntry(0)]).programs[0], timeline: nil, index: 0, zone: utc)
        #expect(short.labelWidth < 160 && short.width == short.labelWidth + SVGCharts.plotWidth + SVGCharts.margin)
    }
}

import Foundation
import Testing

@testable import LNPReport

private let utc = TimeZone(identifier: "UTC")!
/// 2026-11-21T07:08:20.1Z: a short run's first record.
private let start = AuditTime(seconds: reportEpoch - 10_300, microseconds: 100_000)

private func labels(span: Double, from start: AuditTime = start, zone: TimeZone = utc) -> [String] {
    TimeAxis.ticks(start: start, span: span, width: SVGCharts.plotWidth, zone: zone).map(\.label)
}

@Suite("Timeline axis")
struct TimeAxisTests {
    @Test func aRunOfSecondsIsLabelledInParts() {
        // 07:08:20.1 to 07:08:22.3: never "07:08" five times.
        #expect(labels(span: 2.2) == ["07:08:20.5", "07:08:21.0", "07:08:21.5", "07:08:22.0"])
        #expect(labels(span: 0.3) == ["07:08:20.1", "07:08:20.2", "07:08:20.3", "07:08:20.4"])
        #expect(labels(span: 40) == ["07:08:30", "07:08:40", "07:08:50", "07:09:00"])
    }

    @Test func longerRunsAreLabelledAtRoundTimes() {
        let ten = AuditTime(seconds: reportEpoch)  // 10:00:00
        #expect(labels(span: 6 * 3600 - 1, from: ten) == ["10:00", "11:00", "12:00", "13:00", "14:00", "15:00"])
        // Across midnight, the date where the day changes.
        let evening = AuditTime(seconds: reportEpoch + 11 * 3600)  // 21:00
        #expect(labels(span: 8 * 3600, from: evening) == ["21 Nov 22:00", "22 Nov 00:00", "02:00", "04:00"])
        // Weeks: dates alone.
        #expect(labels(span: 20 * 86400, from: ten) == ["26 Nov", "3 Dec", "10 Dec"])
        // In the zone's own time: 10:00 UTC is 15:30 in Kolkata, a round half hour there.
        let kolkata = TimeZone(identifier: "Asia/Kolkata")!
        #expect(labels(span: 3 * 3600, from: ten, zone: kolkata) == ["15:30", "16:00", "16:30", "17:00", "17:30", "18:00", "18:30"])
        let nepal = TimeZone(identifier: "Asia/Kathmandu")!  // +05:45: 10:00 UTC is 15:45, not round
        #expect(labels(span: 3 * 3600, from: ten, zone: nepal) == ["16:00", "16:30", "17:00", "17:30", "18:00", "18:30"])
    }

    @Test func aSingleInstantHasOneTickInTheMiddle() {
        let ticks = TimeAxis.ticks(start: start, span: 0, width: 560, zone: utc)
        #expect(ticks == [TimeAxis.Tick(x: 280, label: "07:08:20")])
    }

    @Test func aSpanTooShortForRoundTicksIsLabelledAtItsEnds() {
        #expect(labels(span: 0.0004) == ["07:08:20.100000", "07:08:20.100400"])
    }

    /// Whatever the span: at least two ticks, each label different from the others, ticks in
    /// order within the axis, and room between them for their labels.
    @Test(arguments: [0.002, 0.7, 3, 59, 61, 599, 3601, 25_200, 86399, 86401, 259_200, 3_456_000, 34_560_000, 630_720_000] as [Double])
    func everySpanHasDistinctLabelsWithRoom(span: Double) {
        let ticks = TimeAxis.ticks(start: start, span: span, width: SVGCharts.plotWidth, zone: utc)
        #expect(ticks.count >= 2)
        #expect(Set(ticks.map(\.label)).count == ticks.count, "\(ticks.map(\.label))")
        #expect(ticks.map(\.x) == ticks.map(\.x).sorted())
        #expect(ticks.allSatisfy { $0.x >= 0 && $0.x <= SVGCharts.plotWidth })
        let widest = ticks.map { Double($0.label.count) * TimeAxis.characterWidth }.max()!
        for (a, b) in zip(ticks, ticks.dropFirst()) { #expect(b.x - a.x >= widest, "\(ticks)") }
    }
}

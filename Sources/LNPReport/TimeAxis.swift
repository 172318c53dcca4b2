import Foundation

/// The ticks of a timeline's time axis: round times (every 0.1 s, 15 s, 2 h, 7 days…), as
/// many as have room for their labels, each label as precise as the step: a run of two
/// seconds is labelled `07:08:20.5 07:08:21.0 …`, never `07:08 07:08 07:08`. Every label
/// differs from the others.
struct TimeAxis {
    struct Tick: Equatable {
        /// Pixels from the axis' start.
        var x: Double
        var label: String
    }

    /// Round steps, in microseconds.
    static let steps: [Int64] = {
        let second: Int64 = 1_000_000, minute = 60 * second, hour = 60 * minute, day = 24 * hour
        return [1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000, 500_000,
                second, 2 * second, 5 * second, 10 * second, 15 * second, 30 * second,
                minute, 2 * minute, 5 * minute, 10 * minute, 15 * minute, 30 * minute,
                hour, 2 * hour, 3 * hour, 6 * hour, 12 * hour,
                day, 2 * day, 7 * day, 14 * day, 28 * day, 91 * day, 182 * day, 364 * day, 728 * day, 1820 * day]
    }()

    /// Pixels a label takes per character (12 px digits), and between two labels at least.
    static let characterWidth = 7.0
    static let gap = 24.0

    /// The ticks for times from `start` over `span` seconds, drawn across `width` pixels, in
    /// `zone`'s time of day.
    static func ticks(start: AuditTime, span: Double, width: Double, zone: TimeZone) -> [Tick] {
        let first = start.microsecondsSinceEpoch
        let length = Int64((span * 1_000_000).rounded())
        guard length > 0 else { return [Tick(x: width / 2, label: LocalTime(start, in: zone).seconds)] }
        // The zone's offset at the start sets what is round (a whole hour in Kolkata is :30 UTC).
        let offset = Int64(zone.secondsFromGMT(for: start.date)) * 1_000_000
        for step in steps {
            // Labels at least as far apart as the widest is long; more than enough steps to skip.
            let spacing = Double(step) / Double(length) * width
            guard spacing >= 40 else { continue }
            var times: [Int64] = []
            var time = ((first + offset) / step + ((first + offset) % step > 0 ? 1 : 0)) * step - offset
            while time <= first + length {
                times.append(time)
                time += step
            }
            let labels = Self.labels(times, step: step, zone: zone)
            let widest = labels.map { Double($0.count) }.max() ?? 0
            guard spacing >= widest * characterWidth + gap else { continue }
            if times.count < 2 { break }
            return zip(times, labels).map { Tick(x: Double($0 - first) / Double(length) * width, label: $1) }
        }
        // Too short for round ticks a millisecond apart, or too long for any: its two ends.
        let ends = [first, first + length].map { LocalTime(microseconds: $0, in: zone) }
        let labels = ends.map { end in
            length >= 86_400_000_000 ? "\(end.date) \(end.minutes)" : end.seconds(decimals: length < 1_000 ? 6 : 3)
        }
        return [Tick(x: 0, label: labels[0]), Tick(x: width, label: labels[1])]
    }

    /// Each time to the step's precision; with its date where the day changes, and at the
    /// first, when the axis spans more than one day.
    private static func labels(_ times: [Int64], step: Int64, zone: TimeZone) -> [String] {
        let local = times.map { LocalTime(microseconds: $0, in: zone) }
        guard let first = local.first, let last = local.last else { return [] }
        let severalDays = !first.isSameDay(as: last)
        if step >= 86_400_000_000 {
            let severalYears = first.year != last.year
            return local.map { severalYears ? $0.date : $0.dayAndMonth }
        }
        return local.enumerated().map { index, time in
            let clock = step < 1_000_000 ? time.seconds(decimals: decimals(step))
                : step < 60_000_000 ? time.seconds : time.minutes
            let newDay = index == 0 || !time.isSameDay(as: local[index - 1])
            return severalDays && newDay ? "\(time.dayAndMonth) \(clock)" : clock
        }
    }

    /// Places after the second a step needs: 1 for 0.5 s, 2 for 0.05 s, 3 for 0.005 s.
    private static func decimals(_ step: Int64) -> Int {
        var decimals = 0, unit: Int64 = 1_000_000
        while step % unit != 0 {
            unit /= 10
            decimals += 1
        }
        return decimals
    }
}

import Foundation
import LNPCoreHost

/// An instant's date and time of day in a time zone, for the page's words (`21 Nov 2026`,
/// `07:08:20.5`): made from the record's own seconds and microseconds, so that a tenth of a
/// second is exact, never a Double rounded.
struct LocalTime: Equatable {
    var year: Int64, month: Int64, day: Int64
    var hour: Int64, minute: Int64, second: Int64
    var microseconds: Int64

    /// `time` as `zone`'s clocks showed it.
    init(_ time: AuditTime, in zone: TimeZone) {
        self.init(microseconds: time.microsecondsSinceEpoch, in: zone)
    }

    init(microseconds value: Int64, in zone: TimeZone) {
        let seconds = value >= 0 ? value / 1_000_000 : (value - 999_999) / 1_000_000
        microseconds = value - seconds * 1_000_000
        let local = seconds + Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(seconds))))
        let days = local >= 0 ? local / 86400 : (local - 86399) / 86400
        (year, month, day) = Timestamp.civil(fromDays: days)
        let rest = local - days * 86400
        hour = rest / 3600
        minute = rest / 60 % 60
        second = rest % 60
    }

    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// `21 Nov`
    var dayAndMonth: String { "\(day) \(Self.months[Int(month) - 1])" }
    /// `21 Nov 2026`
    var date: String { "\(dayAndMonth) \(year)" }
    /// `07:08`
    var minutes: String { "\(Self.two(hour)):\(Self.two(minute))" }
    /// `07:08:20`
    var seconds: String { "\(minutes):\(Self.two(second))" }

    /// `07:08:20.25`: to `decimals` places of a second (cut, not rounded).
    func seconds(decimals: Int) -> String {
        guard decimals > 0 else { return seconds }
        let digits = String(microseconds + 1_000_000).dropFirst()
        return seconds + "." + digits.prefix(min(decimals, 6))
    }

    func isSameDay(as other: LocalTime) -> Bool { (year, month, day) == (other.year, other.month, other.day) }

    private static func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
}

import Foundation
import LNPCoreHost

/// An instant of an audit record, kept as whole seconds and microseconds since 1970 UTC, so
/// that truncating to seconds (as Apple's report does) is exact, never a rounding of a Double.
public struct AuditTime: Comparable, Hashable, Sendable {
    public var seconds: Int64
    public var microseconds: Int32

    public init(seconds: Int64, microseconds: Int32 = 0) {
        self.seconds = seconds
        self.microseconds = microseconds
    }

    public init(_ date: Date) {
        let whole = date.timeIntervalSince1970.rounded(.down)
        seconds = Int64(whole)
        microseconds = Int32(min(999_999, ((date.timeIntervalSince1970 - whole) * 1_000_000).rounded()))
    }

    /// An RFC 3339 time with its zone (`Z` or `±hh:mm`), as the audit writes it:
    /// `2026-11-21T10:00:00.123456Z`. Nil for anything else.
    public init?(rfc3339 text: some StringProtocol) {
        guard let parts = CivilTime(text), let offset = parts.offsetSeconds else { return nil }
        self.init(seconds: parts.secondsSinceEpoch - offset, microseconds: parts.microseconds)
    }

    /// The same, from the bytes of a line (`AuditLineScanner`), without making a string.
    init?(rfc3339Bytes text: Slice<UnsafeBufferPointer<UInt8>>) {
        guard let parts = CivilTime(utf8: UnsafeBufferPointer(rebasing: text)), let offset = parts.offsetSeconds else {
            return nil
        }
        self.init(seconds: parts.secondsSinceEpoch - offset, microseconds: parts.microseconds)
    }

    public var date: Date { Date(timeIntervalSince1970: Double(seconds) + Double(microseconds) / 1_000_000) }

    /// `2021-06-06T16:15:48Z`: UTC, cut to whole seconds, as in Apple's App Privacy Report.
    public var wholeSecondsUTC: String {
        let days = seconds >= 0 ? seconds / 86400 : (seconds - 86399) / 86400
        let second = seconds - days * 86400
        let (year, month, day) = Timestamp.civil(fromDays: days)
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T"
            + "\(pad(second / 3600, 2)):\(pad(second / 60 % 60, 2)):\(pad(second % 60, 2))Z"
    }

    public static func < (a: AuditTime, b: AuditTime) -> Bool {
        (a.seconds, a.microseconds) < (b.seconds, b.microseconds)
    }

    private func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}

extension TimeZone {
    /// How reports name the zone of their times: `UTC`, or the zone's name (`Europe/Paris`),
    /// which, unlike an abbreviation or an offset, stays right across a change to summer time.
    var reportName: String {
        secondsFromGMT() == 0 && nextDaylightSavingTimeTransition == nil ? "UTC" : identifier
    }
}

/// The fields of `YYYY-MM-DD[Thh:mm[:ss[.fraction]]][Z|±hh:mm]`, checked for range. The zone
/// is optional here: `--since` reads a time without one as local time.
struct CivilTime {
    var year: Int64, month: Int64, day: Int64
    var hour: Int64 = 0, minute: Int64 = 0, second: Int64 = 0
    var microseconds: Int32 = 0
    /// East of UTC; nil when the text named no zone.
    var offsetSeconds: Int64?
    /// Whether the text had a time of day, or was a date alone.
    var hasTime = false

    init?(_ text: some StringProtocol) {
        var text = String(text)
        guard let parts = text.withUTF8({ CivilTime(utf8: $0) }) else { return nil }
        self = parts
    }

    init?(utf8 text: UnsafeBufferPointer<UInt8>) {
        var scanner = Scanner(text)
        guard let year = scanner.number(4), scanner.skip("-"), let month = scanner.number(2), scanner.skip("-"),
            let day = scanner.number(2)
        else { return nil }
        (self.year, self.month, self.day) = (year, month, day)
        guard (1...12).contains(month), (1...Self.daysIn(month: month, year: year)).contains(day) else { return nil }
        if scanner.skip("T") || scanner.skip("t") || scanner.skip(" ") {
            hasTime = true
            guard let hour = scanner.number(2), scanner.skip(":"), let minute = scanner.number(2) else { return nil }
            (self.hour, self.minute) = (hour, minute)
            if scanner.skip(":") {
                guard let second = scanner.number(2) else { return nil }
                self.second = second
                if scanner.skip(".") {
                    let digits = scanner.digits()
                    guard !digits.isEmpty else { return nil }
                    // Microseconds: the first six digits, padded; finer ones are dropped.
                    var value: Int32 = 0
                    for place in 0..<6 {
                        let digit = place < digits.count ? digits[digits.startIndex + place] - UInt8(ascii: "0") : 0
                        value = value * 10 + Int32(digit)
                    }
                    microseconds = value
                }
            }
            guard hour < 24, minute < 60, second < 60 else { return nil }
            if scanner.skip("Z") || scanner.skip("z") {
                offsetSeconds = 0
            } else if let sign = scanner.oneOf("+-") {
                guard let hours = scanner.number(2), scanner.skip(":"), let minutes = scanner.number(2),
                    hours < 24, minutes < 60
                else { return nil }
                offsetSeconds = (sign == UInt8(ascii: "-") ? -1 : 1) * (hours * 3600 + minutes * 60)
            }
        }
        guard scanner.atEnd else { return nil }
    }

    /// The fields read as UTC.
    var secondsSinceEpoch: Int64 {
        Timestamp.days(year: year, month: month, day: day) * 86400 + hour * 3600 + minute * 60 + second
    }

    static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Reads ASCII fields one after another.
    private struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        var atEnd: Bool { index == bytes.count }

        mutating func skip(_ character: Unicode.Scalar) -> Bool {
            guard index < bytes.count, bytes[index] == UInt8(ascii: character) else { return false }
            index += 1
            return true
        }

        mutating func oneOf(_ characters: String) -> UInt8? {
            guard index < bytes.count, characters.utf8.contains(bytes[index]) else { return nil }
            index += 1
            return bytes[index - 1]
        }

        /// Exactly `count` digits.
        mutating func number(_ count: Int) -> Int64? {
            guard index + count <= bytes.count else { return nil }
            var value: Int64 = 0
            for byte in bytes[index..<index + count] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            }
            index += count
            return value
        }

        mutating func digits() -> Slice<UnsafeBufferPointer<UInt8>> {
            let start = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            return bytes[start..<index]
        }
    }
}

import Foundation

/// The instant `--since` names:
/// - an RFC 3339 / ISO 8601 time: `2026-11-21T10:00:00Z`, `2026-11-21T11:00:00+01:00`;
///   without a zone (`2026-11-21T10:00`) it is local time, as `date` reads it;
/// - a date, `2026-11-21`: the start of that day, local time;
/// - a duration ago: `30s`, `30m`, `2h`, `7d`, `2w`, or several, `1h30m`.
public enum TimeFilter {
    public struct ParseError: Error, Equatable, CustomStringConvertible {
        public var text: String

        public init(text: String) { self.text = text }

        public var description: String {
            "not a time: \"\(text)\" (give 2026-11-21T10:00:00Z, a date such as 2026-11-21, or how long ago: 30m, 2h, 7d)"
        }
    }

    public static func since(_ text: String, now: Date = Date(), timeZone: TimeZone = .current) throws(ParseError)
        -> AuditTime
    {
        if let ago = duration(text) { return AuditTime(now.addingTimeInterval(-ago)) }
        guard let civil = CivilTime(text) else { throw ParseError(text: text) }
        if let offset = civil.offsetSeconds {
            return AuditTime(seconds: civil.secondsSinceEpoch - offset, microseconds: civil.microseconds)
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let fields = DateComponents(
            year: Int(civil.year), month: Int(civil.month), day: Int(civil.day), hour: Int(civil.hour),
            minute: Int(civil.minute), second: Int(civil.second))
        guard let date = calendar.date(from: fields) else { throw ParseError(text: text) }
        var time = AuditTime(date)
        time.microseconds = civil.microseconds
        return time
    }

    /// Seconds in `2h`, `1h30m`, …; nil unless the whole text is number-and-unit pairs.
    static func duration(_ text: String) -> TimeInterval? {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604_800]
        var total = 0.0
        var number = ""
        for character in text {
            if character.isASCII && character.isNumber {
                number.append(character)
            } else if let unit = units[character], let value = Double(number), number.count <= 9 {
                total += value * unit
                number = ""
            } else {
                return nil
            }
        }
        return number.isEmpty && !text.isEmpty ? total : nil
    }
}

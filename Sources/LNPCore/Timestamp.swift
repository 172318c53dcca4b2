/// A UTC instant written as RFC 3339 with microseconds: `2026-11-21T04:55:00.123456Z`.
public struct Timestamp: BitwiseCopyable {
    public var seconds: Int64
    public var microseconds: Int32

    public init(seconds: Int64, microseconds: Int32) {
        self.seconds = seconds
        self.microseconds = microseconds
    }

    public func write(to writer: inout ByteWriter) {
        let days = seconds >= 0 ? seconds / 86400 : (seconds - 86399) / 86400
        let secondOfDay = seconds - days * 86400
        let (year, month, day) = Self.civil(fromDays: days)
        writer.appendDecimal(UInt64(max(year, 0)), minimumDigits: 4)
        writer.append(UInt8(ascii: "-"))
        writer.appendDecimal(UInt64(month), minimumDigits: 2)
        writer.append(UInt8(ascii: "-"))
        writer.appendDecimal(UInt64(day), minimumDigits: 2)
        writer.append(UInt8(ascii: "T"))
        writer.appendDecimal(UInt64(secondOfDay / 3600), minimumDigits: 2)
        writer.append(UInt8(ascii: ":"))
        writer.appendDecimal(UInt64(secondOfDay / 60 % 60), minimumDigits: 2)
        writer.append(UInt8(ascii: ":"))
        writer.appendDecimal(UInt64(secondOfDay % 60), minimumDigits: 2)
        writer.append(UInt8(ascii: "."))
        writer.appendDecimal(UInt64(min(max(microseconds, 0), 999_999)), minimumDigits: 6)
        writer.append(UInt8(ascii: "Z"))
    }

    /// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

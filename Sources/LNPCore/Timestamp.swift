/// A UTC instant written as RFC 3339 with microseconds: `2026-11-21T04:55:00.123456Z`.
public struct Timestamp: BitwiseCopyable {
    public var seconds: Int64
    public var microseconds: Int32

    public init(seconds: Int64, microseconds: Int32) {
        self.seconds = seconds
        self.microseconds = microseconds
    }

    /// Whole days since 1970-01-01, and the second within the day (negative times too).
    var daysAndSecond: (days: Int64, secondOfDay: Int64) {
        let days = seconds >= 0 ? seconds / 86400 : (seconds - 86399) / 86400
        return (days, seconds - days * 86400)
    }

    /// `hh:mm:ss`.
    static func writeClock(_ secondOfDay: Int64, to writer: inout ByteWriter) {
        writer.appendDecimal(UInt64(secondOfDay / 3600), minimumDigits: 2)
        writer.append(UInt8(ascii: ":"))
        writer.appendDecimal(UInt64(secondOfDay / 60 % 60), minimumDigits: 2)
        writer.append(UInt8(ascii: ":"))
        writer.appendDecimal(UInt64(secondOfDay % 60), minimumDigits: 2)
    }

    public func write(to writer: inout ByteWriter) {
        let (days, secondOfDay) = daysAndSecond
        let (year, month, day) = DateCache.civil(fromDays: days)
        let microseconds = Int(min(max(self.microseconds, 0), 999_999))
        if year >= 0 && year <= 9999 && writer.writeInPlace(maximum: 27, { text in
            Self.writeInPlace(year: Int(year), month: Int(month), day: Int(day), secondOfDay: Int(secondOfDay),
                              microseconds: microseconds, to: text)
            return 27
        }) {
            return
        }
        // A year of five digits, a clamped one, or a buffer about to end: piece by piece.
        writer.appendDecimal(UInt64(max(year, 0)), minimumDigits: 4)
        writer.append(UInt8(ascii: "-"))
        writer.appendDecimal(UInt64(month), minimumDigits: 2)
        writer.append(UInt8(ascii: "-"))
        writer.appendDecimal(UInt64(day), minimumDigits: 2)
        writer.append(UInt8(ascii: "T"))
        Self.writeClock(secondOfDay, to: &writer)
        writer.append(UInt8(ascii: "."))
        writer.appendDecimal(UInt64(microseconds), minimumDigits: 6)
        writer.append(UInt8(ascii: "Z"))
    }

    /// All 27 characters at once, two digits per table load: `yyyy-mm-ddThh:mm:ss.uuuuuuZ`.
    @inline(__always)
    static func writeInPlace(year: Int, month: Int, day: Int, secondOfDay: Int, microseconds: Int, to text: UnsafeMutableRawPointer) {
        DecimalDigits.writePair(year / 100, at: text)
        DecimalDigits.writePair(year % 100, at: text + 2)
        text.storeBytes(of: UInt8(ascii: "-"), toByteOffset: 4, as: UInt8.self)
        DecimalDigits.writePair(month, at: text + 5)
        text.storeBytes(of: UInt8(ascii: "-"), toByteOffset: 7, as: UInt8.self)
        DecimalDigits.writePair(day, at: text + 8)
        text.storeBytes(of: UInt8(ascii: "T"), toByteOffset: 10, as: UInt8.self)
        DecimalDigits.writePair(secondOfDay / 3600, at: text + 11)
        text.storeBytes(of: UInt8(ascii: ":"), toByteOffset: 13, as: UInt8.self)
        DecimalDigits.writePair(secondOfDay / 60 % 60, at: text + 14)
        text.storeBytes(of: UInt8(ascii: ":"), toByteOffset: 16, as: UInt8.self)
        DecimalDigits.writePair(secondOfDay % 60, at: text + 17)
        text.storeBytes(of: UInt8(ascii: "."), toByteOffset: 19, as: UInt8.self)
        DecimalDigits.writePair(microseconds / 10_000, at: text + 20)
        DecimalDigits.writePair(microseconds / 100 % 100, at: text + 22)
        DecimalDigits.writePair(microseconds % 100, at: text + 24)
        text.storeBytes(of: UInt8(ascii: "Z"), toByteOffset: 26, as: UInt8.self)
    }

    /// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm).
    public static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
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

    /// The inverse of `civil(fromDays:)`: days from 1970-01-01 to a proleptic Gregorian date,
    /// years counted from March so that the leap day ends each, in 400-year eras.
    public static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * ((month + 9) % 12) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

import Foundation
import Testing
@testable import LNPCoreHost

private func written(_ seconds: Int64, _ microseconds: Int32 = 0) -> String {
    writeText { Timestamp(seconds: seconds, microseconds: microseconds).write(to: &$0) }
}

@Suite("Timestamp")
struct TimestampTests {
    @Test(arguments: [
        (Int64(0), Int32(0), "1970-01-01T00:00:00.000000Z"),
        (1_709_210_096, 7, "2024-02-29T12:34:56.000007Z"),  // a leap day
        (951_868_800, 0, "2000-03-01T00:00:00.000000Z"),  // the day after 2000's leap day
        (951_868_799, 999_999, "2000-02-29T23:59:59.999999Z"),
        (1_700_000_000, 123_456, "2023-11-14T22:13:20.123456Z"),
        (2_147_483_648, 0, "2038-01-19T03:14:08.000000Z"),  // past 32-bit time_t
        (4_294_967_296, 10, "2106-02-07T06:28:16.000010Z"),  // past 32-bit unsigned
        (4_107_542_399, 0, "2100-02-28T23:59:59.000000Z"),  // 2100 is not a leap year
        (4_107_542_400, 0, "2100-03-01T00:00:00.000000Z"),
        (253_402_300_799, 500_000, "9999-12-31T23:59:59.500000Z"),
        (-1, 0, "1969-12-31T23:59:59.000000Z"),
        (-86_400, 0, "1969-12-31T00:00:00.000000Z"),
        (-86_401, 0, "1969-12-30T23:59:59.000000Z"),
        (-2_203_891_200, 0, "1900-03-01T00:00:00.000000Z"),
        (-2_203_891_201, 0, "1900-02-28T23:59:59.000000Z"),
        (-11_676_096_000, 0, "1600-01-01T00:00:00.000000Z"),
        (-62_135_596_800, 0, "0001-01-01T00:00:00.000000Z"),
    ])
    func knownInstants(seconds: Int64, microseconds: Int32, expected: String) {
        #expect(written(seconds, microseconds) == expected)
    }

    @Test func microsecondsArePaddedAndClamped() {
        #expect(written(0, 1).hasSuffix(".000001Z"))
        #expect(written(0, 10).hasSuffix(".000010Z"))
        #expect(written(0, 100_000).hasSuffix(".100000Z"))
        #expect(written(0, 999_999).hasSuffix(".999999Z"))
        #expect(written(0, 1_000_000).hasSuffix(".999999Z"), "never a seventh digit")
        #expect(written(0, Int32.max).hasSuffix(".999999Z"))
        #expect(written(0, -3).hasSuffix(".000000Z"))
        #expect(written(0, 1_000_000) == "1970-01-01T00:00:00.999999Z", "clamping does not carry into the seconds")
    }

    /// The proleptic calendar before year 1, where the 400-year eras must round down.
    @Test func civilDatesBeforeTheCommonEra() {
        let firstOfMarchYear0: Int64 = -719_468
        let era: Int64 = 146_097  // days in 400 Gregorian years
        #expect(Timestamp.civil(fromDays: firstOfMarchYear0) == (0, 3, 1))
        #expect(Timestamp.civil(fromDays: firstOfMarchYear0 - 1) == (0, 2, 29), "year 0 is a leap year")
        #expect(Timestamp.civil(fromDays: firstOfMarchYear0 + 306) == (1, 1, 1))
        #expect(Timestamp.civil(fromDays: firstOfMarchYear0 - era) == (-400, 3, 1))
        #expect(Timestamp.civil(fromDays: firstOfMarchYear0 - era - 1) == (-400, 2, 29))
        #expect(Timestamp.civil(fromDays: firstOfMarchYear0 - 366) == (-1, 3, 1), "across the leap day of year 0")
    }

    @Test func alwaysTwentySevenCharacters() {
        var random = SeededRandom(seed: 11)
        for _ in 0..<2_000 {
            let seconds = Int64.random(in: -62_135_596_800...253_402_300_799, using: &random)
            #expect(written(seconds, Int32.random(in: 0...999_999, using: &random)).utf8.count == 27)
        }
    }

    /// Day numbers to dates against Foundation's Gregorian calendar, from 1601 (after
    /// Foundation's switch from the Julian calendar) to 9999.
    @Test func civilDatesAgreeWithFoundation() {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        var random = SeededRandom(seed: 2024)
        var days = (0..<3_000).map { _ in Int64.random(in: -134_774...2_932_896, using: &random) }
        days += Array(-800...800)  // every day around the epoch
        days += Array(10_900...11_100)  // around 2000-02-29
        days += Array(47_400...47_500)  // around 2100-03-01
        for day in days {
            let date = Date(timeIntervalSince1970: TimeInterval(day) * 86_400)
            let expected = calendar.dateComponents([.year, .month, .day], from: date)
            let civil = Timestamp.civil(fromDays: day)
            #expect(
                Int(civil.year) == expected.year && Int(civil.month) == expected.month && Int(civil.day) == expected.day,
                "day \(day): \(civil) vs \(expected)")
            #expect(Timestamp.days(year: civil.year, month: civil.month, day: civil.day) == day, "the inverse, day \(day)")
        }
    }

    @Test func wholeTextAgreesWithDateFormatter() {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss"
        var random = SeededRandom(seed: 1234)
        for _ in 0..<3_000 {
            // 1601-01-01 to 9999-12-31.
            let seconds = Int64.random(in: -11_644_473_600...253_402_300_799, using: &random)
            let expected = formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds))) + ".000000Z"
            #expect(written(seconds) == expected)
        }
    }
}

import Foundation
import Testing
@testable import LNPCoreHost

/// The day's date kept between records (DateCache) and the time written in place (issue 12),
/// against Foundation's formatter.
@Suite("Date cache")
struct DateCacheTests {
    static func formatted(_ seconds: Int64, _ microseconds: Int32) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss"
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds))) + String(format: ".%06dZ", microseconds)
    }

    static func written(_ seconds: Int64, _ microseconds: Int32 = 0) -> String {
        writeText { Timestamp(seconds: seconds, microseconds: microseconds).write(to: &$0) }
    }

    /// The last second of a minute, hour, day, month, year, leap day and century, and the
    /// first of the next, written one after the other and back again: each crossing changes
    /// what the cache holds, and going back must not find the other day's date.
    @Test(arguments: [
        Int64(1_798_761_600),  // 2027-01-01T00:00:00: a new year
        1_709_164_800,  // 2024-02-29T00:00:00: a leap day begins
        1_709_251_200,  // 2024-03-01T00:00:00: it ends
        951_868_800,  // 2000-03-01, after 2000's leap day
        4_107_542_400,  // 2100-03-01, 2100 has none
        1_764_028_800,  // 2025-11-25T00:00:00: a day
        1_764_061_200,  // 09:00:00: an hour
        1_764_061_260,  // 09:01:00: a minute
        0, -86_400,  // the epoch and the day before
        253_402_300_800,  // 10000-01-01: five digits, not cached
    ])
    func acrossABoundary(first: Int64) {
        let times = [first - 1, first, first - 1, first + 1, first - 60, first + 59, first + 86_400, first - 1]
        for (index, seconds) in times.enumerated() {
            let microseconds = Int32(index * 111_111)
            #expect(Self.written(seconds, microseconds) == Self.formatted(seconds, microseconds), "\(seconds)")
        }
    }

    /// Every day of four years in order (each a miss, then a hit within the day), and days drawn
    /// at random, so that an entry is replaced at every call: each written as Foundation does.
    @Test func daysInOrderAndAtRandom() {
        let start: Int64 = 1_704_067_200  // 2024-01-01
        for day in Int64(0)..<1_461 {
            let seconds = start + day * 86_400 + day * 37 % 86_400
            #expect(Self.written(seconds, 5) == Self.formatted(seconds, 5))
            #expect(Self.written(seconds + 1, 6) == Self.formatted(seconds + 1, 6), "the same day again")
        }
        var random = SeededRandom(seed: 86_400)
        for _ in 0..<2_000 {
            let seconds = Int64(random.next() % 8_000_000_000) - 2_000_000_000  // 1906 to 2223
            #expect(Self.written(seconds, 7) == Self.formatted(seconds, 7))
        }
    }

    /// The word holds one day's date and no other: a day's entry answers that day only.
    @Test func entriesAnswerTheirOwnDay() {
        let days: [Int64] = [-719_468, -1, 0, 1, 20_417, 2_932_896]
        for day in days {
            for other in days {
                _ = DateCache.civil(fromDays: other)  // leaves the other day's entry, maybe
                let cached = DateCache.civil(fromDays: day)
                let computed = Timestamp.civil(fromDays: day)
                #expect(cached == computed, "day \(day) after \(other)")
            }
        }
        // Beyond the years kept: computed each time, and right.
        for day in [Int64(2_932_897), -719_469, 8_388_608, -8_388_609, Int64.max / 86_400, Int64.min / 86_400] {
            #expect(DateCache.civil(fromDays: day) == Timestamp.civil(fromDays: day), "day \(day)")
        }
    }

    /// Threads writing times of different days at once: no thread ever reads a date that is not
    /// its day's (an entry is one word, stored and loaded whole).
    @Test func threadsAtOnce() {
        let seconds: [Int64] = (0..<64).map { 1_600_000_000 + Int64($0) * 86_400 * 11 + Int64($0) * 3_601 }
        let expected = seconds.map { Self.formatted($0, 42) }
        let wrong = ManagedAtomicCounter()
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            var random = SeededRandom(seed: UInt64(thread + 1))
            for _ in 0..<20_000 {
                let index = Int(random.next() % UInt64(seconds.count))
                if Self.written(seconds[index], 42) != expected[index] { wrong.increment() }
            }
        }
        #expect(wrong.value == 0)
    }

    /// Near the buffer's end the time is written piece by piece and cut where the buffer ends.
    @Test func nearTheEnd() {
        let whole = Self.formatted(1_764_061_260, 123_456)
        for room in 1...28 {
            let written = writeBytes(capacity: room) { Timestamp(seconds: 1_764_061_260, microseconds: 123_456).write(to: &$0) }
            #expect(String(decoding: written.bytes, as: UTF8.self) == String(whole.prefix(room)), "room \(room)")
            #expect(written.truncated == (room < 27))
        }
    }
}

/// A count many threads add to.
final class ManagedAtomicCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func increment() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}

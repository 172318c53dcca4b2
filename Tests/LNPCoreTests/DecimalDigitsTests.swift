import Foundation
import Testing
@testable import LNPCoreHost

/// The record's fast number writing (issue 12), against the standard library's text.
@Suite("Decimal digits")
struct DecimalDigitsTests {
    /// 0, 9, 10, 99, 100 … every power of ten and the number before it, and the maximum.
    static let edges: [UInt64] = [0, 1, 9] + (1...19).flatMap { power -> [UInt64] in
        let ten = (0..<power).reduce(UInt64(1)) { product, _ in product * 10 }
        return [ten - 1, ten, ten + 1]
    } + [UInt64(UInt32.max), UInt64(Int64.max), UInt64.max - 1, UInt64.max]

    @Test func countsDigits() {
        for value in Self.edges {
            #expect(DecimalDigits.count(value) == String(value).count, "\(value)")
        }
    }

    @Test func everyWidthWhereItFits() {
        for value in Self.edges {
            for minimum in 0...22 {
                let text = String(value)
                let expected = String(repeating: "0", count: max(0, minimum - text.count)) + text
                let written = writeBytes(capacity: 32) { $0.appendDecimal(value, minimumDigits: minimum) }
                #expect(String(decoding: written.bytes, as: UTF8.self) == expected, "\(value) in \(minimum)")
                #expect(!written.truncated)
            }
        }
    }

    /// With less room than the number takes, the leading digits that fit, and a cut noted;
    /// with just enough, the whole number.
    @Test func everyRoomNearTheEnd() {
        for value in Self.edges {
            for minimum in [1, 4, 6, 21] {
                let text = String(value)
                let whole = String(repeating: "0", count: max(0, minimum - text.count)) + text
                for room in 1...(whole.count + 1) {
                    let written = writeBytes(capacity: room) { $0.appendDecimal(value, minimumDigits: minimum) }
                    #expect(String(decoding: written.bytes, as: UTF8.self) == String(whole.prefix(room)), "\(value) in \(room)")
                    #expect(written.truncated == (room < whole.count))
                }
            }
        }
    }

    @Test func afterOtherText() {
        let written = writeText { writer in
            writer.append("a")
            writer.appendDecimal(UInt64(99))
            writer.append(UInt8(ascii: "b"))
            writer.appendDecimal(UInt64(100), minimumDigits: 5)
            writer.appendDecimal(Int64(-10))
        }
        #expect(written == "a99b00100-10")
    }

    @Test func pairs() {
        for value in 0...99 {
            var bytes: [UInt8] = [0, 0, 0, 0]
            bytes.withUnsafeMutableBytes { DecimalDigits.writePair(value, at: $0.baseAddress! + 1) }
            #expect(bytes == [0] + Array(String(format: "%02d", value).utf8) + [0], "\(value)")
        }
    }

    /// Every octet value in every place, next to octets of each width.
    @Test func everyOctetInEveryPlace() {
        for place in 0..<4 {
            for other: UInt32 in [0, 7, 10, 99, 100, 255] {
                for octet: UInt32 in 0...255 {
                    var octets = [other, other, other, other]
                    octets[place] = octet
                    let value = octets.reduce(UInt32(0)) { $0 << 8 | $1 }
                    let expected = octets.map(String.init).joined(separator: ".")
                    #expect(text(of: IPAddress(v4: value)) == expected)
                }
            }
        }
    }

    /// Near the buffer's end an address is cut where the buffer ends, as before.
    @Test func dottedNearTheEnd() {
        for (value, expected) in [(UInt32(0xFFFF_FFFF), "255.255.255.255"), (0x0A4D_0002, "10.77.0.2"), (0, "0.0.0.0")] {
            for room in 1...17 {
                let written = writeBytes(capacity: room) { IPAddress(v4: value).write(to: &$0) }
                #expect(String(decoding: written.bytes, as: UTF8.self) == String(expected.prefix(room)), "\(expected) in \(room)")
                #expect(written.truncated == (room < expected.count))
            }
        }
    }
}

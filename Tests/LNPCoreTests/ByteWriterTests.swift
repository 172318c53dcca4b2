import Foundation
import Testing
@testable import LNPCoreHost

private func json(_ bytes: [UInt8], budget: Int = 1024, capacity: Int = 4096) -> (bytes: [UInt8], truncated: Bool) {
    writeBytes(capacity: capacity) { writer in bytes.withUnsafeBufferPointer { writer.appendJSONString($0, budget: budget) } }
}

private func jsonText(_ bytes: [UInt8], budget: Int = 1024) -> String {
    String(decoding: json(bytes, budget: budget).bytes, as: UTF8.self)
}

/// What the JSON string should decode to: the bytes as UTF-8, with every byte that does not
/// start a well-formed sequence replaced by U+FFFD (decided by the standard library's
/// validator, not the implementation's).
private func expectedScalars(_ bytes: [UInt8]) -> [Unicode.Scalar] {
    var scalars: [Unicode.Scalar] = []
    var index = 0
    outer: while index < bytes.count {
        if bytes[index] < 0x80 {
            scalars.append(Unicode.Scalar(bytes[index]))
            index += 1
            continue
        }
        for length in 2...4 where index + length <= bytes.count {
            if let text = String(validating: bytes[index..<(index + length)], as: UTF8.self), text.unicodeScalars.count == 1 {
                scalars.append(contentsOf: text.unicodeScalars)
                index += length
                continue outer
            }
        }
        scalars.append("\u{FFFD}")
        index += 1
    }
    return scalars
}

private let ellipsis: [Unicode.Scalar] = [".", ".", "."]

@Suite("ByteWriter numbers and truncation")
struct ByteWriterBasicTests {
    @Test func decimals() {
        #expect(writeText { $0.appendDecimal(UInt64(0)) } == "0")
        #expect(writeText { $0.appendDecimal(UInt64(42)) } == "42")
        #expect(writeText { $0.appendDecimal(UInt64(7), minimumDigits: 3) } == "007")
        #expect(writeText { $0.appendDecimal(UInt64(0), minimumDigits: 4) } == "0000")
        #expect(writeText { $0.appendDecimal(UInt64(12345), minimumDigits: 2) } == "12345")
        #expect(writeText { $0.appendDecimal(UInt64.max) } == "18446744073709551615")
        #expect(writeText { $0.appendDecimal(Int64(-1)) } == "-1")
        #expect(writeText { $0.appendDecimal(Int64(0)) } == "0")
        #expect(writeText { $0.appendDecimal(Int64.max) } == "9223372036854775807")
        #expect(writeText { $0.appendDecimal(Int64.min) } == "-9223372036854775808")
    }

    @Test func decimalsAgreeWithTheStandardLibrary() {
        var random = SeededRandom(seed: 3)
        for _ in 0..<2_000 {
            let value = random.next() >> UInt64.random(in: 0...63, using: &random)
            #expect(writeText { $0.appendDecimal(value) } == String(value))
            let signed = Int64(bitPattern: random.next())
            #expect(writeText { $0.appendDecimal(signed) } == String(signed))
        }
    }

    @Test func hex() {
        #expect(writeText { $0.appendHex(0) } == "0")
        #expect(writeText { $0.appendHex(0xa) } == "a")
        #expect(writeText { $0.appendHex(0x10) } == "10")
        #expect(writeText { $0.appendHex(0xdead_beef) } == "deadbeef")
        #expect(writeText { $0.appendHex(0x0123_4567_89ab_cdef) } == "123456789abcdef")
        #expect(writeText { $0.appendHex(UInt64.max) } == "ffffffffffffffff")
        var random = SeededRandom(seed: 4)
        for _ in 0..<1_000 {
            let value = random.next() >> UInt64.random(in: 0...63, using: &random)
            #expect(writeText { $0.appendHex(value) } == String(value, radix: 16))
        }
    }

    @Test func truncation() {
        let fits = writeBytes(capacity: 5) { $0.append("hello") }
        #expect(fits.bytes == Array("hello".utf8))
        #expect(!fits.truncated)

        let cut = writeBytes(capacity: 5) { $0.append("hello world") }
        #expect(cut.bytes == Array("hello".utf8))
        #expect(cut.truncated)

        let numbers = writeBytes(capacity: 3) { $0.appendDecimal(UInt64(123_456)) }
        #expect(numbers.bytes == Array("123".utf8), "the leading digits are kept")
        #expect(numbers.truncated)

        let bytes: [UInt8] = [1, 2, 3, 4]
        let raw = writeBytes(capacity: 2) { writer in bytes.withUnsafeBufferPointer { writer.append(bytes: $0) } }
        #expect(raw.bytes == [1, 2])
        #expect(raw.truncated)

        var storage = [UInt8](repeating: 0, count: 4)
        storage.withUnsafeMutableBytes { buffer in
            var writer = ByteWriter(buffer)
            #expect(writer.remaining == 4)
            writer.append(UInt8(ascii: "a"))
            #expect(writer.count == 1 && writer.remaining == 3)
            writer.append("bcdef")
            #expect(writer.count == 4 && writer.remaining == 0 && writer.truncated)
        }
    }
}

@Suite("ByteWriter JSON strings")
struct ByteWriterJSONTests {
    @Test func escapes() {
        #expect(jsonText(Array("plain".utf8)) == "\"plain\"")
        #expect(jsonText([]) == "\"\"")
        #expect(jsonText(Array("a\"b\\c".utf8)) == #""a\"b\\c""#)
        #expect(jsonText(Array("\n\r\t".utf8)) == #""\n\r\t""#)
        #expect(jsonText([0x00, 0x01, 0x08, 0x0c, 0x1b, 0x1f]) == #""\u0000\u0001\u0008\u000c\u001b\u001f""#)
        // DEL and the C1 controls need no escape in JSON, but a terminal showing the line would
        // act on them, and lnp-run takes no record with them bare (RecordLine).
        #expect(jsonText([0x20, 0x7e, 0x7f]) == #"" ~\u007f""#)
        #expect(jsonText([0xc2, 0x80, 0xc2, 0x9b, 0xc2, 0x9f, 0xc2, 0xa0]) == "\"\\u0080\\u009b\\u009f\u{a0}\"")
        #expect(jsonText(Array("/path/to/x".utf8)) == "\"/path/to/x\"", "slashes are left alone")
    }

    @Test func wellFormedUTF8IsKept() {
        for text in ["é", "€", "😀", "日本語", "\u{a0}", "\u{7ff}", "\u{800}", "\u{ffff}", "\u{10000}", "\u{10ffff}", "\u{e000}", "\u{d7ff}"] {
            #expect(jsonText(Array(text.utf8)) == "\"\(text)\"", "\(text.unicodeScalars.map { $0.value })")
        }
    }

    @Test(arguments: [
        ([0x80] as [UInt8], 1), ([0xbf], 1), ([0xc0, 0xaf], 2), ([0xc1, 0xbf], 2),  // lone continuation, overlong 2-byte
        ([0xe0, 0x80, 0xaf], 3), ([0xe0, 0x9f, 0xbf], 3),  // overlong 3-byte
        ([0xf0, 0x80, 0x80, 0xaf], 4), ([0xf0, 0x8f, 0xbf, 0xbf], 4),  // overlong 4-byte
        ([0xed, 0xa0, 0x80], 3), ([0xed, 0xbf, 0xbf], 3),  // UTF-16 surrogates
        ([0xf4, 0x90, 0x80, 0x80], 4), ([0xf5, 0x80, 0x80, 0x80], 4), ([0xff], 1), ([0xfe], 1),  // past U+10FFFF
        ([0xc3], 1), ([0xe2, 0x82], 2), ([0xf0, 0x9f, 0x98], 3),  // cut short by the end
        ([0xc3, 0x41], 1),  // cut short by ASCII
    ])
    func illFormedUTF8BecomesReplacementCharacters(bytes: [UInt8], replacements: Int) {
        let expected = "\"" + String(repeating: #"\ufffd"#, count: replacements)
            + (bytes.last == 0x41 ? "A" : "") + "\""
        #expect(jsonText(bytes) == expected)
    }

    @Test func replacementDoesNotSwallowTheNextCharacter() {
        #expect(jsonText([0x61, 0xe2, 0x82, 0x62]) == #""a\ufffd\ufffdb""#)
        #expect(jsonText([0xe2, 0x82, 0xe2, 0x82, 0xac]) == "\"\\ufffd\\ufffd€\"")
    }

    @Test func budgetCutsWithAnEllipsis() throws {
        let input = Array("abcdefghijklmnopqrstuvwxyz".utf8)
        for budget in 8...27 {
            let output = json(input, budget: budget).bytes
            #expect(output.count <= budget)
            #expect(output.suffix(4) == Array("...\"".utf8), "budget \(budget)")
            let decoded = try #require(parseJSON(output) as? String)
            #expect("abcdefghijklmnopqrstuvwxyz".hasPrefix(String(decoded.dropLast(3))))
        }
        // Below 8 the budget is 8: room for a quote, a character, "..." and a quote at least.
        #expect(json(input, budget: 0).bytes.count == 8)
        #expect(json(input, budget: -5).bytes.count == 8)
    }

    /// A string whose JSON form fits the budget is written whole, not cut.
    @Test func aStringThatFitsIsNotCut() {
        var cut: [String] = []
        for length in 0...40 {
            let input = Array(String(repeating: "x", count: length).utf8)
            for spare in 0...4 {
                let budget = length + 2 + spare  // the quotes, the characters, and some room to spare
                let output = json(input, budget: budget).bytes
                if output != [UInt8(ascii: "\"")] + input + [UInt8(ascii: "\"")] {
                    cut.append("\(length) characters, budget \(budget): \(String(decoding: output, as: UTF8.self))")
                }
            }
        }
        let cutCount = cut.count
        #expect(cutCount == 0, "strings that fit were cut, e.g. \(cut.prefix(3))")
    }

    @Test func budgetNeverSplitsASequenceOrAnEscape() throws {
        let input = Array(String(repeating: "é\"😀\u{1}", count: 20).utf8)
        for budget in 8...120 {
            let output = json(input, budget: budget).bytes
            #expect(output.count <= budget)
            let decoded = try #require(parseJSON(output) as? String, "budget \(budget)")
            #expect(Array(decoded.unicodeScalars.suffix(3)) == ellipsis)
            let kept = Array(decoded.unicodeScalars.dropLast(3))
            #expect(Array(expectedScalars(input).prefix(kept.count)) == kept)
        }
    }

    /// Random bytes (rich in quotes, controls and UTF-8 pieces) and random budgets always
    /// give valid JSON within the budget, equal to the input or a cut prefix of it.
    @Test func alwaysValidJSON() throws {
        var random = SeededRandom(seed: 0x15_0D)
        let interesting: [UInt8] = [0x22, 0x5c, 0x0a, 0x00, 0x1f, 0x7f, 0x80, 0xbf, 0xc0, 0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xed, 0xa0,
                                    0xf0, 0x9f, 0x98, 0x80, 0xf4, 0x90, 0xff, 0x41]
        for round in 0..<4_000 {
            let length = Int.random(in: 0...40, using: &random)
            let input: [UInt8] = (0..<length).map { _ in
                Bool.random(using: &random) ? interesting.randomElement(using: &random)! : UInt8.random(in: 0...255, using: &random)
            }
            let budget = Int.random(in: -2...80, using: &random)
            let output = json(input, budget: budget).bytes
            let decoded = try #require(parseJSON(output) as? String, "round \(round): \(input) budget \(budget) gave \(output)")
            #expect(String(validating: output, as: UTF8.self) != nil)
            #expect(output.count <= max(budget, 8))
            let expected = expectedScalars(input)
            let scalars = Array(decoded.unicodeScalars)
            if scalars != expected {
                // Compared as scalars: as characters, a prepended mark (U+0600) would absorb the first dot.
                #expect(Array(scalars.suffix(3)) == ellipsis, "round \(round): changed but not marked as cut")
                #expect(Array(expected.prefix(scalars.count - 3)) == Array(scalars.dropLast(3)), "round \(round)")
            }
        }
    }

    /// Even when the buffer, not the budget, runs out, the string stays valid JSON.
    @Test func validJSONWhenTheBufferIsSmall() throws {
        var random = SeededRandom(seed: 77)
        for _ in 0..<3_000 {
            let input: [UInt8] = (0..<Int.random(in: 0...30, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            let capacity = Int.random(in: 2...40, using: &random)
            let result = json(input, budget: Int.random(in: 0...60, using: &random), capacity: capacity)
            #expect(result.bytes.count <= capacity)
            #expect(parseJSON(result.bytes) is String, "capacity \(capacity): \(input) gave \(result.bytes)")
        }
    }

    @Test func followsEarlierOutput() throws {
        let output = writeBytes { writer in
            writer.append("[")
            Array("a\"b".utf8).withUnsafeBufferPointer { writer.appendJSONString($0, budget: 100) }
            writer.append(",")
            Array("xyz".utf8).withUnsafeBufferPointer { writer.appendJSONString($0, budget: 100) }
            writer.append("]")
        }
        #expect(try #require(parseJSON(output.bytes) as? [String]) == ["a\"b", "xyz"])
    }
}

@Suite("ByteWriter numbers cut short")
struct ByteWriterNumbersCutShortTests {
    @Test func aNumberThatDoesNotFitKeepsItsLeadingDigits() {
        for (value, digits, room, expected) in [(UInt64(12345), 1, 3, "123"), (UInt64(7), 4, 2, "00"), (UInt64.max, 1, 5, "18446")] {
            var memory = [UInt8](repeating: 0, count: room)
            let (text, truncated) = memory.withUnsafeMutableBytes { raw -> (String, Bool) in
                var writer = ByteWriter(raw)
                writer.appendDecimal(value, minimumDigits: digits)
                return (String(decoding: writer.written, as: UTF8.self), writer.truncated)
            }
            #expect(text == expected)
            #expect(truncated)
        }
    }
}

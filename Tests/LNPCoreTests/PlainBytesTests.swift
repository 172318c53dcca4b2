import Foundation
import Testing
@testable import LNPCoreHost

/// The record's word-at-a-time paths (issue 12): the plain-text test, copies, interface names.
@Suite("Plain bytes and word copies")
struct PlainBytesTests {
    static func plainByByte(_ byte: UInt8) -> Bool {
        byte >= 0x20 && byte < 0x7f && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\")
    }

    /// Each byte value, alone in plain text, at every place of strings of 1 to 24 bytes: the
    /// words' test agrees with a byte's.
    @Test func everyByteAtEveryPlace() {
        for length in 1...24 {
            for place in 0..<length {
                for byte in UInt8.min...UInt8.max {
                    var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    bytes[place] = byte
                    let plain = bytes.withUnsafeBufferPointer { PlainBytes.all($0) }
                    #expect(plain == Self.plainByByte(byte), "byte \(byte) at \(place) of \(length)")
                }
            }
        }
        #expect(PlainBytes.all(UnsafeBufferPointer(start: nil, count: 0)))
    }

    /// Neighbours of the edges in every byte of a word at once (0x1f and 0x20, 0x7e and 0x7f,
    /// 0x21 to 0x23, 0x5b to 0x5d), where a borrow between bytes would show.
    @Test func edgesSideBySide() {
        var random = SeededRandom(seed: 12)
        let edges: [UInt8] = [0x00, 0x01, 0x1f, 0x20, 0x21, 0x22, 0x23, 0x5b, 0x5c, 0x5d, 0x7e, 0x7f, 0x80, 0xff, 0x41]
        for _ in 0..<50_000 {
            let bytes = (0..<Int(random.next() % 20 + 1)).map { _ in edges[Int(random.next() % UInt64(edges.count))] }
            let plain = bytes.withUnsafeBufferPointer { PlainBytes.all($0) }
            #expect(plain == bytes.allSatisfy(Self.plainByByte), "\(bytes)")
        }
    }

    /// Copies of every length to 40: exactly the source's bytes, nothing before or after.
    @Test func copiesEveryLength() {
        let source = (0..<40).map { UInt8($0 + 1) }
        for length in 0...40 {
            var destination = [UInt8](repeating: 0xee, count: 48)
            destination.withUnsafeMutableBytes { to in
                source.withUnsafeBytes { from in ByteCopy.copy(to.baseAddress! + 4, from.baseAddress!, count: length) }
            }
            #expect(Array(destination[0..<4]) == [0xee, 0xee, 0xee, 0xee])
            #expect(Array(destination[4..<(4 + length)]) == Array(source.prefix(length)), "length \(length)")
            #expect(destination[(4 + length)...].allSatisfy { $0 == 0xee }, "length \(length)")
        }
    }

    /// Interface names of every length, the kernel's 15 bytes and a full 16 (from words), as
    /// their bytes up to the first NUL, and cut where the buffer ends.
    @Test func interfaceNames() {
        for length in 0...15 {
            let name = String("abcdefghijklmnop".prefix(length))
            #expect(writeText { interfaceName(name).write(to: &$0) } == name)
            #expect(interfaceName(name).length == length)
            for room in 1...(length + 1) {
                let written = writeBytes(capacity: room) { interfaceName(name).write(to: &$0) }
                #expect(String(decoding: written.bytes, as: UTF8.self) == String(name.prefix(room)), "\(name) in \(room)")
                #expect(written.truncated == (room < length))
            }
        }
        let full = InterfaceName(first: 0x3736_3534_3332_3130, second: 0x6665_6463_6261_3938)
        #expect(writeText { full.write(to: &$0) } == "0123456789abcdef")
        // A NUL followed by 0x01 (where a word's test for a zero byte can flag more than the
        // first): the name still ends at its first NUL.
        let holed = InterfaceName(first: 0x3736_0100_0032_3130, second: 0x0101)
        #expect(writeText { holed.write(to: &$0) } == "012", "the name ends at its first NUL")
        let holedLate = InterfaceName(first: 0x3736_3534_3332_3130, second: 0x0000_0001_0039_3801)
        #expect(writeText { holedLate.write(to: &$0) } == "01234567\u{01}89")
        #expect(writeText { writer in
            writer.append("[")
            interfaceName("eth1").write(to: &writer)
            writer.append("]")
        } == "[eth1]", "what follows the name is written over the rest of its words")
    }

    @Test func writeInPlaceOnlyWithRoom() {
        var storage = [UInt8](repeating: 0, count: 8)
        storage.withUnsafeMutableBytes { raw in
            var writer = ByteWriter(raw)
            writer.append("abc")
            #expect(!writer.writeInPlace(maximum: 6) { _ in Issue.record("called without room"); return 6 })
            #expect(writer.count == 3 && !writer.truncated)
            #expect(writer.writeInPlace(maximum: 5) { text in
                text.storeBytes(of: UInt8(ascii: "d"), as: UInt8.self)
                return 1
            })
            #expect(String(decoding: writer.written, as: UTF8.self) == "abcd")
        }
    }
}

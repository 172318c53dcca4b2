import Testing
@testable import LNPCoreHost

/// D-Bus messages read from the wire as the gate on the stream reads them, and the stand-in
/// it sends for a refused call: checked against messages GDBus serialised (Python's
/// Gio.DBusMessage.to_blob), and against any bytes at all.
struct BusMessageTests {
    /// Avahi's ServiceBrowserNew(-1, -1, "_ipp._tcp", "local", 0), serial 7, as GDBus writes it
    /// little- and big-endian.
    static let browseLittle = hex("6c01000128000000070000008200000001016f00010000002f00000000000000020173001c0000006f72672e667265656465736b746f702e41766168692e5365727665720000000006017300150000006f72672e667265656465736b746f702e41766168690000000801670005696973737500000000000003017300110000005365727669636542726f777365724e657700000000000000ffffffffffffffff090000005f6970702e5f746370000000050000006c6f63616c00000000000000")
    static let browseBig = hex("4201000100000028000000070000008201016f00000000012f00000000000000020173000000001c6f72672e667265656465736b746f702e41766168692e5365727665720000000006017300000000156f72672e667265656465736b746f702e41766168690000000801670005696973737500000000000003017300000000115365727669636542726f777365724e657700000000000000ffffffffffffffff000000095f6970702e5f746370000000000000056c6f63616c00000000000000")

    static func hex(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            bytes.append(UInt8(text[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }

    private func text(_ bytes: [UInt8], _ range: Range<Int>?) -> String? {
        range.map { String(decoding: bytes[$0], as: UTF8.self) }
    }

    @Test(arguments: [browseLittle, browseBig])
    func aMethodCallReadsWithItsFieldsAndArguments(bytes: [UInt8]) throws {
        let length = bytes.withUnsafeBytes { BusMessage.length(ofMessageStartingWith: UnsafeRawBufferPointer(rebasing: $0[0..<16])) }
        #expect(length == bytes.count)
        let message = try #require(bytes.withUnsafeBytes { BusMessage.read($0) })
        #expect(message.kind == .methodCall && message.serial == 7)
        #expect(text(bytes, message.path) == "/")
        #expect(text(bytes, message.interface) == "org.freedesktop.Avahi.Server")
        #expect(text(bytes, message.member) == "ServiceBrowserNew")
        #expect(text(bytes, message.destination) == "org.freedesktop.Avahi")
        #expect(text(bytes, message.signature) == "iissu")
        var found = InlineArray<8, Range<Int>?>(repeating: nil)
        let count = bytes.withUnsafeBytes { message.arguments(in: $0, into: &found) }
        #expect(count == 5)
        #expect(found[0] == nil && text(bytes, found[2]) == "_ipp._tcp" && text(bytes, found[3]) == "local" && found[4] == nil)
        // The table of gated methods knows it.
        let method = bytes.withUnsafeBufferPointer { all in
            BusMethod.find(interface: UnsafeBufferPointer(rebasing: all[message.interface!]),
                           member: UnsafeBufferPointer(rebasing: all[message.member!]),
                           signature: UnsafeBufferPointer(rebasing: all[message.signature!]))
        }
        #expect(method?.operation == .browse)
    }

    @Test(arguments: [browseLittle, browseBig])
    func theStandInIsACallWithTheRefusedOnesSerialToANameNobodyOwns(call bytes: [UInt8]) throws {
        let call = try #require(bytes.withUnsafeBytes { BusMessage.read($0) })
        var memory = [UInt8](repeating: 0, count: 512)
        let written = memory.withUnsafeMutableBytes { raw -> Int? in
            var writer = ByteWriter(raw)
            return BusStandIn.write(for: call, destination: "lnp.LocalNetworkAccessDenied", to: &writer) ? writer.count : nil
        }
        let standIn = Array(memory[0..<(try #require(written))])
        #expect(standIn.withUnsafeBytes { BusMessage.length(ofMessageStartingWith: $0) } == standIn.count)
        let read = try #require(standIn.withUnsafeBytes { BusMessage.read($0) })
        #expect(read.kind == .methodCall && read.serial == 7 && read.littleEndian == call.littleEndian)
        #expect(read.flags == BusMessage.noAutoStart)  // a reply wanted; no service started for it
        #expect(text(standIn, read.destination) == "lnp.LocalNetworkAccessDenied")
        #expect(text(standIn, read.path) == "/" && text(standIn, read.member) == "LocalNetworkAccessDenied")
        #expect(read.signature == nil && read.body.isEmpty)
    }

    @Test func aMessagesStartReadsWithItsFieldsAndTheArgumentsThere() throws {
        let bytes = Self.browseLittle
        // The fields end at 16 + 0x82; cut inside the body, before the type argument ends.
        let cut = Array(bytes[0..<166])
        let message = try #require(cut.withUnsafeBytes { BusMessage.read($0) })
        #expect(message.length == bytes.count && message.body.upperBound == cut.count)
        var found = InlineArray<8, Range<Int>?>(repeating: nil)
        #expect(cut.withUnsafeBytes { message.arguments(in: $0, into: &found) } == nil)
        // Cut inside the header fields: not readable.
        #expect(Array(bytes[0..<100]).withUnsafeBytes { BusMessage.read($0) } == nil)
    }

    @Test func anythingElseIsNilNeverACrash() {
        var generator = SystemRandomNumberGenerator()
        for round in 0..<20_000 {
            var bytes = round % 2 == 0 ? Self.browseLittle : Self.browseBig
            // Flip a few bytes (lengths, codes, alignment), or cut the message short.
            for _ in 0..<(1 + round % 4) {
                bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            if round % 7 == 0 { bytes = Array(bytes.prefix(Int.random(in: 0..<bytes.count, using: &generator))) }
            bytes.withUnsafeBytes { raw in
                _ = BusMessage.length(ofMessageStartingWith: raw)
                guard let message = BusMessage.read(raw) else { return }
                for range in [message.path, message.interface, message.member, message.signature].compactMap({ $0 }) {
                    #expect(range.upperBound <= raw.count)
                }
                var found = InlineArray<8, Range<Int>?>(repeating: nil)
                if let count = message.arguments(in: raw, into: &found) {
                    for i in 0..<count { if let range = found[i] { #expect(range.upperBound <= raw.count) } }
                }
            }
        }
    }
}

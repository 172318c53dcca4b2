/// One D-Bus message as it travels on a connection (the D-Bus specification's wire format),
/// read without trusting a byte of it — for a gate that sits on the stream itself, where no
/// D-Bus library has parsed the message (a client that is not libdbus). Every offset is
/// checked; what does not read as a message is nil, never a crash.
///
///     byte order (l or B), type, flags, version 1, body length, serial, header fields length,
///     the header fields — (code, variant) structures, each 8-aligned — then, at the next
///     multiple of 8, the body.
public struct BusMessage {
    public static let fixedLength = 16
    /// The specification's limit on a whole message.
    public static let longest = 1 << 27

    public enum Kind: UInt8 {
        case methodCall = 1, methodReturn = 2, error = 3, signal = 4
    }

    /// The message's flag that it wants no reply.
    public static let noReplyExpected: UInt8 = 0x1

    public var kind: Kind
    public var flags: UInt8
    public var serial: UInt32
    public var littleEndian: Bool
    /// Where the header fields and the body lie in the message's bytes.
    public var path: Range<Int>? = nil
    public var interface: Range<Int>? = nil
    public var member: Range<Int>? = nil
    public var destination: Range<Int>? = nil
    public var sender: Range<Int>? = nil
    public var signature: Range<Int>? = nil
    public var body: Range<Int> = 0..<0

    /// The length of the whole message whose first 16 bytes these are; nil when they cannot
    /// start a message (the stream is then not D-Bus, and is left alone).
    public static func length(ofMessageStartingWith bytes: UnsafeRawBufferPointer) -> Int? {
        guard bytes.count >= fixedLength, let little = byteOrder(bytes[0]), bytes[3] == 1,
            Kind(rawValue: bytes[1]) != nil
        else { return nil }
        let body = Int(word(bytes, at: 4, little: little))
        let fields = Int(word(bytes, at: 12, little: little))
        let total = aligned(fixedLength + fields, to: 8) + body
        return total <= longest ? total : nil
    }

    /// Reads a whole message (exactly the bytes `length(ofMessageStartingWith:)` counted).
    public static func read(_ bytes: UnsafeRawBufferPointer) -> BusMessage? {
        guard let total = length(ofMessageStartingWith: bytes), total == bytes.count, let little = byteOrder(bytes[0]),
            let kind = Kind(rawValue: bytes[1])
        else { return nil }
        var message = BusMessage(kind: kind, flags: bytes[2], serial: word(bytes, at: 8, little: little), littleEndian: little)
        let fieldsEnd = fixedLength + Int(word(bytes, at: 12, little: little))
        var at = fixedLength
        while at < fieldsEnd {
            at = aligned(at, to: 8)
            guard at + 4 <= fieldsEnd else { return nil }
            let code = bytes[at]
            // The variant: its signature (one type here), then the value.
            let typeLength = Int(bytes[at + 1])
            guard typeLength == 1, bytes[at + 3] == 0 else { return nil }
            let type = bytes[at + 2]
            guard let (value, next) = basicValue(type, in: bytes, at: at + 4, end: fieldsEnd, little: little) else { return nil }
            switch code {
            case 1: message.path = value
            case 2: message.interface = value
            case 3: message.member = value
            case 6: message.destination = value
            case 7: message.sender = value
            case 8: message.signature = value
            default: break
            }
            at = next
        }
        message.body = aligned(fieldsEnd, to: 8)..<total
        guard message.body.lowerBound <= total else { return nil }
        return message
    }

    /// The body's leading arguments, as the signature has them, up to the first that is not a
    /// basic type: `found[i]` the i-th one's bytes for a string, object path or signature, nil
    /// for a number. Returns how many were read; nil when the body does not fit its signature.
    public func arguments(
        in bytes: UnsafeRawBufferPointer, into found: inout InlineArray<8, Range<Int>?>
    ) -> Int? {
        guard let signature else { return 0 }
        var at = body.lowerBound
        var count = 0
        for index in signature where count < 8 {
            let type = bytes[index]
            guard let (value, next) = Self.basicValue(type, in: bytes, at: at, end: body.upperBound, little: littleEndian) else {
                return Self.isBasic(type) ? nil : count
            }
            found[count] = type == UInt8(ascii: "s") || type == UInt8(ascii: "o") || type == UInt8(ascii: "g") ? value : nil
            count += 1
            at = next
        }
        return count
    }

    // MARK: Reading values

    private static func byteOrder(_ byte: UInt8) -> Bool? {
        byte == UInt8(ascii: "l") ? true : byte == UInt8(ascii: "B") ? false : nil
    }

    static func aligned(_ offset: Int, to alignment: Int) -> Int { (offset + alignment - 1) / alignment * alignment }

    static func word(_ bytes: UnsafeRawBufferPointer, at offset: Int, little: Bool) -> UInt32 {
        let b0 = UInt32(bytes[offset]), b1 = UInt32(bytes[offset + 1]), b2 = UInt32(bytes[offset + 2]), b3 = UInt32(bytes[offset + 3])
        return little ? b0 | b1 << 8 | b2 << 16 | b3 << 24 : b3 | b2 << 8 | b1 << 16 | b0 << 24
    }

    private static func isBasic(_ type: UInt8) -> Bool { size(of: type) != nil || type == UInt8(ascii: "s") || type == UInt8(ascii: "o") || type == UInt8(ascii: "g") }

    /// Fixed-size basic types: their size, which is also their alignment.
    private static func size(of type: UInt8) -> Int? {
        switch type {
        case UInt8(ascii: "y"): return 1
        case UInt8(ascii: "n"), UInt8(ascii: "q"): return 2
        case UInt8(ascii: "b"), UInt8(ascii: "i"), UInt8(ascii: "u"), UInt8(ascii: "h"): return 4
        case UInt8(ascii: "x"), UInt8(ascii: "t"), UInt8(ascii: "d"): return 8
        default: return nil
        }
    }

    /// A basic value of `type` at `at` (aligned first), within `end`: where its bytes lie (a
    /// string's without its length and NUL) and where the next value may start.
    private static func basicValue(
        _ type: UInt8, in bytes: UnsafeRawBufferPointer, at: Int, end: Int, little: Bool
    ) -> (Range<Int>, Int)? {
        if let size = size(of: type) {
            let start = aligned(at, to: size)
            guard start + size <= end else { return nil }
            return (start..<start + size, start + size)
        }
        if type == UInt8(ascii: "g") {
            guard at < end else { return nil }
            let length = Int(bytes[at])
            guard at + 1 + length < end, bytes[at + 1 + length] == 0 else { return nil }
            return (at + 1..<at + 1 + length, at + 2 + length)
        }
        guard type == UInt8(ascii: "s") || type == UInt8(ascii: "o") else { return nil }
        let start = aligned(at, to: 4)
        guard start + 4 <= end else { return nil }
        let length = Int(word(bytes, at: start, little: little))
        guard length < end, start + 4 + length < end, bytes[start + 4 + length] == 0 else { return nil }
        return (start + 4..<start + 4 + length, start + 5 + length)
    }
}

/// The reply a bus gives a call its policy refuses, made here for a call a gate on the stream
/// refuses: an error from `org.freedesktop.DBus`, replying to the call's serial, its text the
/// only argument. The caller's connection goes on as before.
public enum BusErrorReply {
    /// Writes the reply to `call` (in the call's byte order); false if it did not fit.
    public static func write(
        replyingTo call: BusMessage, serial: UInt32, name: StaticString, text: StaticString, to writer: inout ByteWriter
    ) -> Bool {
        let little = call.littleEndian
        var fields = InlineArray<512, UInt8>(repeating: 0)
        let fieldsLength = withUnsafeMutableBytes(of: &fields) { raw -> Int in
            var header = ByteWriter(raw)
            field(4, string: name, little: little, to: &header)  // ERROR_NAME
            field(5, word: call.serial, little: little, to: &header)  // REPLY_SERIAL
            field(7, string: "org.freedesktop.DBus", little: little, to: &header)  // SENDER
            pad(&header, to: 8)
            header.append(8)  // SIGNATURE
            header.append(1)
            header.append(UInt8(ascii: "g"))
            header.append(0)
            header.append(1)
            header.append(UInt8(ascii: "s"))
            header.append(0)
            return header.truncated ? -1 : header.count
        }
        guard fieldsLength > 0 else { return false }
        let bodyLength = 4 + text.utf8CodeUnitCount + 1
        let start = writer.count
        writer.append(little ? UInt8(ascii: "l") : UInt8(ascii: "B"))
        writer.append(BusMessage.Kind.error.rawValue)
        writer.append(BusMessage.noReplyExpected)
        writer.append(1)
        appendWord(UInt32(bodyLength), little: little, to: &writer)
        appendWord(serial, little: little, to: &writer)
        appendWord(UInt32(fieldsLength), little: little, to: &writer)
        withUnsafeBytes(of: &fields) { writer.append(bytes: UnsafeBufferPointer(rebasing: $0.bindMemory(to: UInt8.self)[0..<fieldsLength])) }
        while (writer.count - start) % 8 != 0 { writer.append(0) }
        appendWord(UInt32(text.utf8CodeUnitCount), little: little, to: &writer)
        writer.append(text)
        writer.append(0)
        return !writer.truncated
    }

    private static func field(_ code: UInt8, string: StaticString, little: Bool, to writer: inout ByteWriter) {
        pad(&writer, to: 8)
        writer.append(code)
        writer.append(1)
        writer.append(UInt8(ascii: "s"))
        writer.append(0)
        // The value: a 4-aligned length (the header is on 8), the text, a NUL.
        appendWord(UInt32(string.utf8CodeUnitCount), little: little, to: &writer)
        writer.append(string)
        writer.append(0)
    }

    private static func field(_ code: UInt8, word: UInt32, little: Bool, to writer: inout ByteWriter) {
        pad(&writer, to: 8)
        writer.append(code)
        writer.append(1)
        writer.append(UInt8(ascii: "u"))
        writer.append(0)
        appendWord(word, little: little, to: &writer)
    }

    private static func pad(_ writer: inout ByteWriter, to alignment: Int) {
        while writer.count % alignment != 0 { writer.append(0) }
    }

    private static func appendWord(_ value: UInt32, little: Bool, to writer: inout ByteWriter) {
        for i in 0..<4 {
            let shift = UInt32(little ? i * 8 : (3 - i) * 8)
            writer.append(UInt8(truncatingIfNeeded: value >> shift))
        }
    }
}

/// One D-Bus message as it travels on a connection (the D-Bus specification's wire format),
/// read without trusting a byte of it — for the gate on the bus stream (`BusStream`), where no
/// D-Bus library has parsed the message (a client that is not libdbus). It reads from the
/// message's first bytes alone: the header fields must be there, the body may be cut short.
/// Every offset is checked; what does not read as a message is nil, never a crash.
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
    /// The flag that the bus is not to start a service for the destination.
    public static let noAutoStart: UInt8 = 0x2

    public var kind: Kind
    public var flags: UInt8
    public var serial: UInt32
    public var littleEndian: Bool
    /// The whole message's length, of which the bytes read may be the first part.
    public var length: Int = 0
    /// Where the header fields and the body lie in the message's bytes (the body: as far as
    /// the bytes read reach).
    public var path: Range<Int>? { fields[0].range }
    public var interface: Range<Int>? { fields[1].range }
    public var member: Range<Int>? { fields[2].range }
    public var destination: Range<Int>? { fields[3].range }
    public var signature: Range<Int>? { fields[4].range }
    /// The fields above, each a span in one word: the message is copied at every step of the
    /// stream's reading, so it is kept small.
    var fields = InlineArray<5, Span>(repeating: Span())
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

    /// What the fixed header of the message these bytes start says (kind, flags, serial, byte
    /// order, length), with no field read.
    public static func fixedHeader(_ bytes: UnsafeRawBufferPointer) -> BusMessage? {
        guard let total = length(ofMessageStartingWith: bytes), let little = byteOrder(bytes[0]),
            let kind = Kind(rawValue: bytes[1])
        else { return nil }
        var message = BusMessage(kind: kind, flags: bytes[2], serial: word(bytes, at: 8, little: little), littleEndian: little)
        message.length = total
        return message
    }

    /// Where the header fields of the message whose first 16 bytes these are end.
    public static func fieldsEnd(ofMessageStartingWith bytes: UnsafeRawBufferPointer) -> Int {
        guard bytes.count >= fixedLength, let little = byteOrder(bytes[0]) else { return 0 }
        return fixedLength + Int(word(bytes, at: 12, little: little))
    }

    /// Reads a message from its first bytes (at most the `length(ofMessageStartingWith:)` they
    /// count), which must hold all its header fields; nil if they do not.
    public static func read(_ bytes: UnsafeRawBufferPointer) -> BusMessage? {
        guard let total = length(ofMessageStartingWith: bytes), bytes.count <= total, let little = byteOrder(bytes[0]),
            let kind = Kind(rawValue: bytes[1])
        else { return nil }
        var message = BusMessage(kind: kind, flags: bytes[2], serial: word(bytes, at: 8, little: little), littleEndian: little)
        message.length = total
        let fieldsEnd = fixedLength + Int(word(bytes, at: 12, little: little))
        guard fieldsEnd <= bytes.count else { return nil }
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
            case 1: message.fields[0] = Span(value)
            case 2: message.fields[1] = Span(value)
            case 3: message.fields[2] = Span(value)
            case 6: message.fields[3] = Span(value)
            case 8: message.fields[4] = Span(value)
            default: break
            }
            at = next
        }
        let bodyStart = aligned(fieldsEnd, to: 8)
        guard bodyStart <= total else { return nil }
        message.body = min(bodyStart, bytes.count)..<bytes.count
        return message
    }

    /// The body's leading arguments, as the signature has them, up to the first that is not a
    /// basic type: `found[i]` the i-th one's bytes for a string, object path or signature, nil
    /// for a number. Returns how many were read; nil when the body does not fit its signature
    /// (or is cut short before them).
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

    /// Where a field's bytes lie, in one word: start and end (messages are at most 2^27
    /// bytes long), or none.
    struct Span: BitwiseCopyable {
        private var word: UInt64 = UInt64.max

        init() {}
        init(_ range: Range<Int>) { word = UInt64(range.lowerBound) << 32 | UInt64(range.upperBound) }

        var range: Range<Int>? {
            word == UInt64.max ? nil : Int(word >> 32)..<Int(word & 0xffff_ffff)
        }
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

/// What goes to the bus in place of a call the gate on the stream refuses (`BusStream`): a
/// call with the refused one's serial to a name nobody owns — on a system bus no one may take
/// it — so the bus itself answers the program with an error reply (NameHasNoOwner, naming
/// `destination`, which says why) and the connection goes on as before.
public enum BusStandIn {
    /// Writes the stand-in for `call` (in the call's byte order); false if it did not fit.
    public static func write(for call: BusMessage, destination: StaticString, to writer: inout ByteWriter) -> Bool {
        let little = call.littleEndian
        let start = writer.count
        writer.append(little ? UInt8(ascii: "l") : UInt8(ascii: "B"))
        writer.append(BusMessage.Kind.methodCall.rawValue)
        writer.append(BusMessage.noAutoStart)
        writer.append(1)
        appendWord(0, little: little, to: &writer)  // no body
        appendWord(call.serial, little: little, to: &writer)
        let fieldsLengthAt = writer.count
        appendWord(0, little: little, to: &writer)  // the fields' length, filled below
        field(1, type: "o", string: "/", little: little, from: start, to: &writer)  // PATH
        field(3, type: "s", string: "LocalNetworkAccessDenied", little: little, from: start, to: &writer)  // MEMBER
        field(6, type: "s", string: destination, little: little, from: start, to: &writer)  // DESTINATION
        let fieldsLength = writer.count - start - BusMessage.fixedLength
        while (writer.count - start) % 8 != 0 { writer.append(0) }
        guard !writer.truncated else { return false }
        for i in 0..<4 {
            let shift = little ? i * 8 : (3 - i) * 8
            writer.replace(at: fieldsLengthAt + i, with: UInt8(truncatingIfNeeded: fieldsLength >> shift))
        }
        return true
    }

    private static func field(
        _ code: UInt8, type: Unicode.Scalar, string: StaticString, little: Bool, from start: Int, to writer: inout ByteWriter
    ) {
        while (writer.count - start) % 8 != 0 { writer.append(0) }
        writer.append(code)
        writer.append(1)
        writer.append(UInt8(ascii: type))
        writer.append(0)
        // The value: a 4-aligned length (the field starts on 8), the text, a NUL.
        appendWord(UInt32(string.utf8CodeUnitCount), little: little, to: &writer)
        writer.append(string)
        writer.append(0)
    }

    private static func appendWord(_ value: UInt32, little: Bool, to writer: inout ByteWriter) {
        for i in 0..<4 {
            let shift = UInt32(little ? i * 8 : (3 - i) * 8)
            writer.append(UInt8(truncatingIfNeeded: value >> shift))
        }
    }
}

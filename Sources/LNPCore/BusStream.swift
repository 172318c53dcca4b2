import LNPSys

/// Where a program's stream to the system bus stands between its writes, and what to do with
/// the next bytes it writes — for the gate on the stream (`BusStreamGate`), which sees the
/// method calls of D-Bus clients that are not libdbus (GDBus, sd-bus, jeepney, dbus-next).
///
/// It reads the stream as the bus does: the authentication lines, up to `BEGIN`, then
/// messages, each framed by its fixed header, and finds the calls lnp gates (`BusMethod`).
/// Pure: bytes in, a step out. The caller sends, decides, and keeps what is held.
public struct BusStream: Equatable, BitwiseCopyable {
    public enum Phase: UInt8, BitwiseCopyable {
        case authenticating = 0, messages = 1
        /// libdbus decides the calls on this connection itself (its hooks, bus_calls.c).
        case library = 2
        /// Where a message should have started there was none: the connection is shut.
        case broken = 3
    }

    public var phase = Phase.authenticating
    /// Authenticating: whether the stream's first byte (the credentials byte) went, and how
    /// much of `BEGIN\r\n` the current line has matched (`otherLine`: a line that is not it;
    /// `beginLine`: BEGIN with arguments after it, which the bus ignores).
    var started = false
    var matched: UInt8 = 0
    /// Bytes of the current message still to go as they are, or to drop (a refused call's).
    public var passing = 0
    public var swallowing = 0

    static let begin: StaticString = "BEGIN\r\n"
    static let otherLine: UInt8 = 0xff
    static let otherLineCR: UInt8 = 0xfd  // … whose last byte was `\r`
    static let beginLine: UInt8 = 0xfe
    static let beginLineCR: UInt8 = 0xfc

    /// The most of a message's start read to know what it is: its header fields and the
    /// arguments the gate reads. A message written in smaller pieces is held until this much
    /// of it (or all of it) has come.
    public static let readLimit = Int(LNP_BUS_HOLD)

    public init() {}

    public enum Step {
        /// The first n bytes go as they are.
        case send(Int)
        /// The first n bytes are dropped: the rest of a refused call.
        case drop(Int)
        /// A call lnp gates starts the bytes (`gatedCall`): decide it, set `passing` or
        /// `swallowing` to its length, and scan again.
        case decide
        /// The bytes are the start of a message, too little of it to read: keep them.
        case hold
        /// A message whose header fields do not fit in `readLimit` bytes (an object path of
        /// kilobytes): lnp cannot tell what it calls, so it is refused as a gated call is, with
        /// no record — set `swallowing` to its length and scan again.
        case refuse
        /// Where a message should start, the bytes are not one.
        case unreadable
    }

    /// The step for `bytes`, the next of the stream (held bytes first), and the state once
    /// the bytes it sends or drops have gone. To plan, scan a copy; once the send is done,
    /// scan the state itself with `limit` the count that went.
    public mutating func scan(_ bytes: UnsafeRawBufferPointer, limit: Int) -> Step {
        let limit = min(limit, bytes.count)
        var at = 0
        while at < limit {
            switch phase {
            case .library:
                return .send(limit)
            case .broken:
                return at == 0 ? .unreadable : .send(at)
            case .authenticating:
                at = authenticate(bytes, from: at, limit: limit)
            case .messages:
                if swallowing > 0 {
                    guard at == 0 else { return .send(at) }
                    let dropped = min(swallowing, limit)
                    swallowing -= dropped
                    return .drop(dropped)
                }
                if passing > 0 {
                    let run = min(passing, limit - at)
                    passing -= run
                    at += run
                    continue
                }
                switch Self.classify(UnsafeRawBufferPointer(rebasing: bytes[at...])) {
                case .short: return at == 0 ? .hold : .send(at)
                case .unreadable: return at == 0 ? .unreadable : .send(at)
                case .gated: return at == 0 ? .decide : .send(at)
                case .oversized: return at == 0 ? .refuse : .send(at)
                case .other(let length): passing = length
                }
            }
        }
        return .send(at)
    }

    /// Steps through authentication lines; returns where it stopped: `limit`, or just after
    /// the `BEGIN` line, where messages start. A line ends at `\r\n` alone, as the bus reads
    /// it: a bare `\n` does not end one.
    private mutating func authenticate(_ bytes: UnsafeRawBufferPointer, from start: Int, limit: Int) -> Int {
        var at = start
        while at < limit {
            let byte = bytes[at]
            at += 1
            if !started {
                started = true  // the credentials byte, NUL
                continue
            }
            switch matched {
            case Self.otherLine, Self.otherLineCR, Self.beginLine, Self.beginLineCR:
                let isBegin = matched == Self.beginLine || matched == Self.beginLineCR
                if byte == UInt8(ascii: "\n") && (matched == Self.otherLineCR || matched == Self.beginLineCR) {
                    if isBegin {
                        phase = .messages
                        return at
                    }
                    matched = 0
                } else if byte == UInt8(ascii: "\r") {
                    matched = isBegin ? Self.beginLineCR : Self.otherLineCR
                } else {
                    matched = isBegin ? Self.beginLine : Self.otherLine
                }
            default:
                if byte == Self.begin.utf8Start[Int(matched)] {
                    matched += 1
                    if Int(matched) == Self.begin.utf8CodeUnitCount {
                        phase = .messages
                        return at
                    }
                } else if matched == 5 && (byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")) {
                    matched = Self.beginLine  // arguments, which the bus ignores
                } else {
                    matched = byte == UInt8(ascii: "\r") ? Self.otherLineCR : Self.otherLine
                }
            }
        }
        return at
    }

    enum Boundary {
        case short, unreadable, oversized, other(Int), gated
    }

    /// What the message these bytes start is, from its first `readLimit` bytes at most.
    static func classify(_ bytes: UnsafeRawBufferPointer) -> Boundary {
        guard bytes.count >= BusMessage.fixedLength else { return .short }
        guard let length = BusMessage.length(ofMessageStartingWith: bytes) else { return .unreadable }
        let needed = min(length, readLimit)
        guard bytes.count >= needed else { return .short }
        guard let message = BusMessage.read(UnsafeRawBufferPointer(rebasing: bytes[0..<needed])) else {
            return BusMessage.fieldsEnd(ofMessageStartingWith: bytes) > needed ? .oversized : .unreadable
        }
        return method(of: message, in: bytes) == nil ? .other(length) : .gated
    }

    /// The call lnp gates that these bytes start (`Step.decide`), and its method.
    public static func gatedCall(_ bytes: UnsafeRawBufferPointer) -> (BusMessage, BusMethod)? {
        guard bytes.count >= BusMessage.fixedLength, let length = BusMessage.length(ofMessageStartingWith: bytes),
            let message = BusMessage.read(UnsafeRawBufferPointer(rebasing: bytes[0..<min(length, readLimit, bytes.count)])),
            let method = method(of: message, in: bytes)
        else { return nil }
        return (message, method)
    }

    private static func method(of message: BusMessage, in bytes: UnsafeRawBufferPointer) -> BusMethod? {
        guard message.kind == .methodCall, let member = message.member, let signature = message.signature else { return nil }
        let words = UnsafeBufferPointer(start: bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), count: bytes.count)
        return BusMethod.find(
            interface: message.interface.map { UnsafeBufferPointer(rebasing: words[$0]) },
            member: UnsafeBufferPointer(rebasing: words[member]), signature: UnsafeBufferPointer(rebasing: words[signature]))
    }
}

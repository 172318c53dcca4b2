import LNPCoreHost

#if canImport(Glibc)
import Glibc
#endif

/// The quick way to read a line of an audit file, for `AuditEntry.parse`: the record's fields
/// read straight from the bytes. Foundation's JSONDecoder took about 8 µs a line, most of the
/// time of a report on a large audit file; this takes well under one.
///
/// It reads the lines lnp-run writes and nothing it is unsure of: a line with an error, or with
/// anything unusual (a field given twice, a number with a fraction or an exponent, an escaped
/// key, a lone surrogate escape, deep nesting), gives nil, and the decoder reads it instead and says
/// what is wrong in its own words. So the two never disagree on a line: whatever this reads, the
/// decoder reads the same (the unit tests compare them on many lines). A field given twice,
/// which the decoder would read at its first value, is found by `repeatedKey` instead.
struct AuditLineScanner {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0

    private init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    /// The record on `line`, or nil for the decoder to read.
    static func entry(_ line: UnsafeBufferPointer<UInt8>) -> AuditEntry? {
        // Non-ASCII text must be valid UTF-8 everywhere, in fields this skips too.
        if line.contains(where: { $0 >= 0x80 }), String(validating: line, as: UTF8.self) == nil { return nil }
        var scanner = AuditLineScanner(line)
        return scanner.record()
    }

    // MARK: The record

    private mutating func record() -> AuditEntry? {
        skipSpace()
        guard take(UInt8(ascii: "{")) else { return nil }
        var time: AuditTime?, program: String?, op: String?, decision: AuditEntry.Decision?
        var attribution: AuditEntry.Attribution?
        // Nil when absent or null, as the decoder's decodeIfPresent.
        var pid: Int?, exe: String?, fd: Int?, transport: String?, address: String?, port: Int?, host: String?
        var domains: [String]?, reason: String?, because: String?, local: Bool?, by: String?
        var lost: AuditEntry.Lost?
        var seen: UInt32 = 0  // a bit per `Field` read, so that one given twice is noticed
        var others: [Range<Int>] = []  // where unknown keys are, to notice one given twice
        skipSpace()
        if take(UInt8(ascii: "}")) { return nil }
        while true {
            skipSpace()
            guard let key = plainKey() else { return nil }
            skipSpace()
            guard take(UInt8(ascii: ":")) else { return nil }
            skipSpace()
            let field = Field(key)
            if let field {
                let bit: UInt32 = 1 << field.rawValue
                guard seen & bit == 0 else { return nil }
                seen |= bit
            }
            switch field {
            case .time:
                guard let text = plainStringBytes(), let parsed = AuditTime(rfc3339Bytes: text) else {
                    return nil
                }
                time = parsed
            case .pid: guard let value = optionalWhole() else { return nil }; pid = value
            case .program: guard let value = string() else { return nil }; program = value
            case .exe: guard let value = optionalString() else { return nil }; exe = value
            case .op: guard let value = string() else { return nil }; op = value
            case .fd: guard let value = optionalWhole() else { return nil }; fd = value
            case .transport: guard let value = optionalString() else { return nil }; transport = value
            case .address: guard let value = optionalString() else { return nil }; address = value
            case .port: guard let value = optionalWhole() else { return nil }; port = value
            case .host: guard let value = optionalString() else { return nil }; host = value
            case .domains: guard let value = optionalStrings() else { return nil }; domains = value
            case .reason: guard let value = optionalString() else { return nil }; reason = value
            case .because: guard let value = optionalString() else { return nil }; because = value
            case .decision:
                guard let text = plainStringBytes() else { return nil }
                if text.elementsEqual("allow".utf8) { decision = .allow }
                else if text.elementsEqual("deny".utf8) { decision = .deny }
                else { return nil }
            case .attribution:
                guard let text = plainStringBytes() else { return nil }
                if text.elementsEqual("app".utf8) { attribution = .app }
                else if text.elementsEqual("user".utf8) { attribution = .user }
                else { return nil }
            case .local: guard let value = optionalBool() else { return nil }; local = value
            case .by: guard let value = optionalString() else { return nil }; by = value
            case .lost: guard let value = optionalLost() else { return nil }; lost = value
            case nil:
                guard !others.contains(where: { bytes[$0].elementsEqual(key) }) else { return nil }
                others.append(key.startIndex..<key.endIndex)
                guard skipValue(depth: 0) else { return nil }
            }
            skipSpace()
            if take(UInt8(ascii: ",")) { continue }
            guard take(UInt8(ascii: "}")) else { return nil }
            break
        }
        skipSpace()
        guard index == bytes.count else { return nil }
        guard let time, let program, !program.isEmpty, let op, let decision, let attribution else { return nil }
        guard host != nil || address != nil || op == "socket" else { return nil }
        return AuditEntry(
            time: time, pid: pid, program: program, exe: exe, op: op, fd: fd, transport: transport, address: address,
            port: port, host: host, domains: domains ?? [], reason: reason, decision: decision, because: because,
            attribution: attribution, isLocal: local ?? true, by: by, lost: lost)
    }

    /// The record's fields, told apart by length and first letter (no two share both), then
    /// checked whole.
    private enum Field: UInt32 {
        case time, pid, program, exe, op, fd, transport, address, port, host, domains, reason, decision, because,
            attribution, local, by, lost

        init?(_ key: Slice<UnsafeBufferPointer<UInt8>>) {
            guard let letter = key.first else { return nil }
            let field: Field
            switch (key.count, letter) {
            case (4, UInt8(ascii: "t")): field = .time
            case (3, UInt8(ascii: "p")): field = .pid
            case (7, UInt8(ascii: "p")): field = .program
            case (3, UInt8(ascii: "e")): field = .exe
            case (2, UInt8(ascii: "o")): field = .op
            case (2, UInt8(ascii: "f")): field = .fd
            case (9, UInt8(ascii: "t")): field = .transport
            case (7, UInt8(ascii: "a")): field = .address
            case (4, UInt8(ascii: "p")): field = .port
            case (4, UInt8(ascii: "h")): field = .host
            case (7, UInt8(ascii: "d")): field = .domains
            case (6, UInt8(ascii: "r")): field = .reason
            case (8, UInt8(ascii: "d")): field = .decision
            case (7, UInt8(ascii: "b")): field = .because
            case (11, UInt8(ascii: "a")): field = .attribution
            case (5, UInt8(ascii: "l")): field = .local
            case (2, UInt8(ascii: "b")): field = .by
            case (4, UInt8(ascii: "l")): field = .lost
            default: return nil
            }
            let matches = field.name.withUTF8Buffer { name in
                name.count == key.count && memcmp(name.baseAddress!, key.base.baseAddress! + key.startIndex, name.count) == 0
            }
            guard matches else { return nil }
            self = field
        }

        var name: StaticString {
            switch self {
            case .time: "time"
            case .pid: "pid"
            case .program: "program"
            case .exe: "exe"
            case .op: "op"
            case .fd: "fd"
            case .transport: "transport"
            case .address: "address"
            case .port: "port"
            case .host: "host"
            case .domains: "domains"
            case .reason: "reason"
            case .decision: "decision"
            case .because: "because"
            case .attribution: "attribution"
            case .local: "local"
            case .by: "by"
            case .lost: "lost"
            }
        }
    }

    // MARK: Keys given twice

    /// The first key given twice in the object of `line`, a line the decoder read: it takes a
    /// field's first value and says nothing of the second. Keys are compared unescaped
    /// (`"decisio\u006e"` is `"decision"`). Nil when none is, or for a key this cannot read.
    static func repeatedKey(_ line: UnsafeBufferPointer<UInt8>) -> String? {
        var scanner = AuditLineScanner(line)
        return scanner.repeatedKey()
    }

    private mutating func repeatedKey() -> String? {
        skipSpace()
        guard take(UInt8(ascii: "{")) else { return nil }
        var keys: Set<String> = []
        while true {
            skipSpace()
            guard let key = string() else { return nil }
            guard keys.insert(key).inserted else { return key }
            skipSpace()
            guard take(UInt8(ascii: ":")), skipJSONValue(), take(UInt8(ascii: ",")) else { return nil }
        }
    }

    /// Steps over a value of a line known to be JSON, to the comma or brace after it.
    private mutating func skipJSONValue() -> Bool {
        var depth = 0
        var inString = false
        while let byte = next {
            if inString {
                if byte == UInt8(ascii: "\\") { index += 1 } else if byte == UInt8(ascii: "\"") { inString = false }
            } else {
                switch byte {
                case UInt8(ascii: "\""): inString = true
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"), UInt8(ascii: ","):
                    if depth == 0 { return true }
                    if byte != UInt8(ascii: ",") { depth -= 1 }
                default: break
                }
            }
            index += 1
        }
        return false
    }

    // MARK: Values

    private var next: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func take(_ byte: UInt8) -> Bool {
        guard next == byte else { return false }
        index += 1
        return true
    }

    private mutating func take(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        let matches = word.withUTF8Buffer { word in
            (0..<count).allSatisfy { bytes[index + $0] == word[$0] }
        }
        if matches { index += count }
        return matches
    }

    /// JSON's white space.
    private mutating func skipSpace() {
        while let byte = next, byte == 0x20 || byte == 0x0a || byte == 0x0d || byte == 0x09 { index += 1 }
    }

    /// The bytes of a string without escapes, between its quotes; nil for any other value.
    private mutating func plainStringBytes() -> Slice<UnsafeBufferPointer<UInt8>>? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = index
        while let byte = next {
            if byte == UInt8(ascii: "\"") {
                index += 1
                return bytes[start..<index - 1]
            }
            guard byte >= 0x20, byte != UInt8(ascii: "\\") else { return nil }
            index += 1
        }
        return nil
    }

    /// A key: a string without escapes.
    private mutating func plainKey() -> Slice<UnsafeBufferPointer<UInt8>>? { plainStringBytes() }

    /// A string, its escapes undone; nil for anything else, a lone surrogate escape included.
    private mutating func string() -> String? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = index
        while let byte = next, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") {
            guard byte >= 0x20 else { return nil }
            index += 1
        }
        if take(UInt8(ascii: "\"")) {
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index - 1]), as: UTF8.self)
        }
        // Escapes: rare in records (a program path with a quote or a control character).
        var text = Array(bytes[start..<index])
        while let byte = next {
            index += 1
            switch byte {
            case UInt8(ascii: "\""): return String(decoding: text, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard let escaped = next else { return nil }
                index += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): text.append(escaped)
                case UInt8(ascii: "b"): text.append(0x08)
                case UInt8(ascii: "f"): text.append(0x0c)
                case UInt8(ascii: "n"): text.append(0x0a)
                case UInt8(ascii: "r"): text.append(0x0d)
                case UInt8(ascii: "t"): text.append(0x09)
                case UInt8(ascii: "u"):
                    guard var value = hex4() else { return nil }
                    // A character past the first plane: a pair of surrogates; one alone is refused.
                    if (0xd800...0xdbff).contains(value) {
                        guard take("\\u"), let low = hex4(), (0xdc00...0xdfff).contains(low) else { return nil }
                        value = 0x10000 + (value - 0xd800) << 10 + (low - 0xdc00)
                    }
                    guard let scalar = Unicode.Scalar(value) else { return nil }
                    text += Array(String(Character(scalar)).utf8)
                default: return nil
                }
            default:
                guard byte >= 0x20 else { return nil }
                text.append(byte)
            }
        }
        return nil
    }

    /// The four hexadecimal digits of a \u escape.
    private mutating func hex4() -> UInt32? {
        guard index + 4 <= bytes.count,
            let value = Bytes.parseHexadecimal(UnsafeBufferPointer(rebasing: bytes[index..<index + 4]))
        else { return nil }
        index += 4
        return UInt32(value)
    }

    /// A string, or null (`.some(nil)`); nil for anything else.
    private mutating func optionalString() -> String?? {
        if take("null") { return .some(nil) }
        guard let text = string() else { return nil }
        return .some(text)
    }

    /// A whole number of at most 15 digits, without fraction or exponent, or null.
    private mutating func optionalWhole() -> Int?? {
        if take("null") { return .some(nil) }
        let negative = take(UInt8(ascii: "-"))
        let start = index
        var value = 0
        while let byte = next, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
            index += 1
        }
        let digits = index - start
        guard digits >= 1, digits <= 15, digits == 1 || bytes[start] != UInt8(ascii: "0") else { return nil }
        if let byte = next, byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
            return nil
        }
        return .some(negative ? -value : value)
    }

    private mutating func optionalBool() -> Bool?? {
        if take("true") { return .some(true) }
        if take("false") { return .some(false) }
        if take("null") { return .some(nil) }
        return nil
    }

    /// lnp-run's note of records lost, `{"count":N,"because":"…"}` (its two keys once each,
    /// in either order), or null.
    private mutating func optionalLost() -> AuditEntry.Lost?? {
        if take("null") { return .some(nil) }
        guard take(UInt8(ascii: "{")) else { return nil }
        var count: Int?, because: String?
        repeat {
            skipSpace()
            guard let key = plainKey() else { return nil }
            skipSpace()
            guard take(UInt8(ascii: ":")) else { return nil }
            skipSpace()
            if key.elementsEqual("count".utf8) && count == nil {
                guard let value = optionalWhole(), let value else { return nil }
                count = value
            } else if key.elementsEqual("because".utf8) && because == nil {
                guard let value = string() else { return nil }
                because = value
            } else {
                return nil
            }
            skipSpace()
        } while take(UInt8(ascii: ","))
        guard take(UInt8(ascii: "}")), let count, let because else { return nil }
        return .some(AuditEntry.Lost(count: count, because: because))
    }

    /// A list of strings, or null.
    private mutating func optionalStrings() -> [String]?? {
        if take("null") { return .some(nil) }
        guard take(UInt8(ascii: "[")) else { return nil }
        var list: [String] = []
        skipSpace()
        if take(UInt8(ascii: "]")) { return .some(list) }
        while true {
            skipSpace()
            guard let element = string() else { return nil }
            list.append(element)
            skipSpace()
            if take(UInt8(ascii: ",")) { continue }
            return take(UInt8(ascii: "]")) ? .some(list) : nil
        }
    }

    /// Steps over a value of a field a report does not read (one added later), checking
    /// it is well-formed JSON; false for anything else, or nesting deeper than a record has.
    private mutating func skipValue(depth: Int) -> Bool {
        guard depth < 8, let byte = next else { return false }
        switch byte {
        case UInt8(ascii: "\""): return string() != nil
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            let object = byte == UInt8(ascii: "{")
            let close = object ? UInt8(ascii: "}") : UInt8(ascii: "]")
            index += 1
            skipSpace()
            if take(close) { return true }
            while true {
                skipSpace()
                if object {
                    guard plainKey() != nil else { return false }
                    skipSpace()
                    guard take(UInt8(ascii: ":")) else { return false }
                    skipSpace()
                }
                guard skipValue(depth: depth + 1) else { return false }
                skipSpace()
                if take(UInt8(ascii: ",")) { continue }
                return take(close)
            }
        case UInt8(ascii: "t"): return take("true")
        case UInt8(ascii: "f"): return take("false")
        case UInt8(ascii: "n"): return take("null")
        default: return optionalWhole() != nil
        }
    }
}

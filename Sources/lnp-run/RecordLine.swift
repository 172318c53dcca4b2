#if canImport(Glibc)
import Glibc
#endif

/// A record line as the preload writes it (Sources/LNPCore/AuditRecord.swift), checked before
/// lnp-run writes it anywhere: one JSON object, strictly — no whitespace outside strings, no
/// control byte (so no second line can ride in it), UTF-8 with no C1 control, every value
/// well-formed — whose top-level keys start with `time`, are written plainly (no escapes) and
/// each once, so that what lnp-run checks (`pid`) is what every reader of the audit reads.
/// Keys lnp-run adds itself (`lost`, `by`) are not the process's to write.
struct RecordLine {
    let bytes: [UInt8]
    /// The top-level members: each key, and where its value lies in `bytes`.
    private(set) var members: [(key: String, value: Range<Int>)] = []

    static let reservedKeys: Set<String> = ["lost", "by"]

    init?(_ line: ArraySlice<UInt8>) {
        bytes = Array(line)
        var reader = StrictJSON(bytes)
        guard let members = reader.topLevelObject(), reader.atEnd, members.first?.key == "time" else { return nil }
        var keys = Set<String>()
        for member in members {
            guard keys.insert(member.key).inserted, !Self.reservedKeys.contains(member.key) else { return nil }
        }
        self.members = members
    }

    /// The value of top-level `key`, as written.
    func value(of key: String) -> ArraySlice<UInt8>? {
        members.first { $0.key == key }.map { bytes[$0.value] }
    }

    /// The process the record is about: its top-level `pid`.
    var pid: pid_t? {
        guard let digits = value(of: "pid"), !digits.isEmpty, digits.count <= 9,
            digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else { return nil }
        return pid_t(String(decoding: digits, as: UTF8.self))
    }

    /// The line with top-level `key`'s value replaced by `json` (already JSON).
    func replacing(_ key: String, with json: [UInt8]) -> [UInt8] {
        guard let range = members.first(where: { $0.key == key })?.value else { return bytes }
        return Array(bytes[..<range.lowerBound]) + json + Array(bytes[range.upperBound...])
    }
}

/// A strict reader of the JSON the preload writes.
private struct StrictJSON {
    let bytes: [UInt8]
    var index = 0
    private static let maximumDepth = 4

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var atEnd: Bool { index == bytes.count }

    mutating func topLevelObject() -> [(key: String, value: Range<Int>)]? {
        guard take(UInt8(ascii: "{")) else { return nil }
        var members: [(key: String, value: Range<Int>)] = []
        if take(UInt8(ascii: "}")) { return members }
        repeat {
            let keyStart = index
            guard string() else { return nil }
            let key = bytes[(keyStart + 1)..<(index - 1)]
            guard !key.contains(UInt8(ascii: "\\")), take(UInt8(ascii: ":")) else { return nil }
            let valueStart = index
            guard value(depth: 1) else { return nil }
            members.append((String(decoding: key, as: UTF8.self), valueStart..<index))
        } while take(UInt8(ascii: ","))
        return take(UInt8(ascii: "}")) ? members : nil
    }

    private mutating func take(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    private mutating func value(depth: Int) -> Bool {
        guard index < bytes.count, depth <= Self.maximumDepth else { return false }
        switch bytes[index] {
        case UInt8(ascii: "\""): return string()
        case UInt8(ascii: "{"):
            index += 1
            if take(UInt8(ascii: "}")) { return true }
            repeat {
                guard string(), take(UInt8(ascii: ":")), value(depth: depth + 1) else { return false }
            } while take(UInt8(ascii: ","))
            return take(UInt8(ascii: "}"))
        case UInt8(ascii: "["):
            index += 1
            if take(UInt8(ascii: "]")) { return true }
            repeat {
                guard value(depth: depth + 1) else { return false }
            } while take(UInt8(ascii: ","))
            return take(UInt8(ascii: "]"))
        case UInt8(ascii: "t"): return word("true")
        case UInt8(ascii: "f"): return word("false")
        case UInt8(ascii: "n"): return word("null")
        default: return number()
        }
    }

    private mutating func word(_ text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        for i in 0..<count where bytes[index + i] != text.utf8Start[i] { return false }
        index += count
        return true
    }

    private mutating func number() -> Bool {
        _ = take(UInt8(ascii: "-"))
        func digits() -> Int {
            let start = index
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") { index += 1 }
            return index - start
        }
        let start = index
        let whole = digits()
        guard whole > 0, whole == 1 || bytes[start] != UInt8(ascii: "0") else { return false }
        if take(UInt8(ascii: ".")) { guard digits() > 0 else { return false } }
        if take(UInt8(ascii: "e")) || take(UInt8(ascii: "E")) {
            if !take(UInt8(ascii: "+")) { _ = take(UInt8(ascii: "-")) }
            guard digits() > 0 else { return false }
        }
        return true
    }

    /// A string: plain bytes from U+0020, the escapes JSON has, and UTF-8 that decodes to a
    /// scalar that is not a C1 control.
    private mutating func string() -> Bool {
        guard take(UInt8(ascii: "\"")) else { return false }
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return true
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { return false }
                let escape = bytes[index]
                index += 1
                if escape == UInt8(ascii: "u") {
                    guard index + 4 <= bytes.count, bytes[index..<(index + 4)].allSatisfy({ Self.isHex($0) }) else { return false }
                    index += 4
                } else if !"\"\\/bfnrt".utf8.contains(escape) {
                    return false
                }
            case 0..<0x20, 0x7f: return false
            case 0x20..<0x80: index += 1
            default:
                guard let scalar = scalar(), !(0x80...0x9f).contains(scalar) else { return false }
            }
        }
        return false
    }

    /// One UTF-8 sequence at `index`, strictly (no overlong form, no surrogate).
    private mutating func scalar() -> UInt32? {
        let lead = bytes[index]
        let (count, minimum, initial): (Int, UInt32, UInt32)
        switch lead {
        case 0xc2...0xdf: (count, minimum, initial) = (2, 0x80, UInt32(lead & 0x1f))
        case 0xe0...0xef: (count, minimum, initial) = (3, 0x800, UInt32(lead & 0x0f))
        case 0xf0...0xf4: (count, minimum, initial) = (4, 0x10000, UInt32(lead & 0x07))
        default: return nil
        }
        guard index + count <= bytes.count else { return nil }
        var value = initial
        for i in 1..<count {
            let next = bytes[index + i]
            guard next & 0xc0 == 0x80 else { return nil }
            value = value << 6 | UInt32(next & 0x3f)
        }
        guard value >= minimum, value <= 0x10ffff, !(0xd800...0xdfff).contains(value) else { return nil }
        index += count
        return value
    }

    private static func isHex(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }
}

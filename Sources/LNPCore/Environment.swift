import LNPSys

/// The process environment read in place, without copying or allocating. Start-up cost
/// matters (every process of a wrapped tree pays it), so entries are rejected by their
/// first bytes before any comparison.
enum Environment {
    /// Calls `body` with every entry, a NUL-terminated `NAME=value`.
    @inline(__always)
    static func forEachEntry(_ body: (UnsafePointer<UInt8>) -> Void) {
        guard let environ = lnp_sys_environ() else { return }
        var index = 0
        while let entry = environ[index] {
            body(UnsafeRawPointer(entry).assumingMemoryBound(to: UInt8.self))
            index += 1
        }
    }

    /// The value of `entry` if it is `name=value`.
    static func value(of entry: UnsafePointer<UInt8>, ifNamed name: StaticString) -> UnsafeBufferPointer<UInt8>? {
        let count = name.utf8CodeUnitCount
        for i in 0..<count where entry[i] != name.utf8Start[i] { return nil }
        guard entry[count] == UInt8(ascii: "=") else { return nil }
        let value = entry + count + 1
        return UnsafeBufferPointer(start: value, count: CString.length(value, limit: Int(Int32.max)))
    }

    /// Whether `entry` may be an `LNP_` variable.
    @inline(__always) static func mayBeLNP(_ entry: UnsafePointer<UInt8>) -> Bool {
        entry[0] == UInt8(ascii: "L") && entry[1] == UInt8(ascii: "N") && entry[2] == UInt8(ascii: "P")
            && entry[3] == UInt8(ascii: "_")
    }

    /// The value of `entry` if it is one of the proxy variables lnp honours, as curl and
    /// most tools read them: http_proxy, https_proxy, all_proxy, in either case.
    static func proxyValue(_ entry: UnsafePointer<UInt8>) -> UnsafeBufferPointer<UInt8>? {
        let first = entry[0] | 0x20
        let second = entry[1] | 0x20
        guard (first == UInt8(ascii: "h") && second == UInt8(ascii: "t")) || (first == UInt8(ascii: "a") && second == UInt8(ascii: "l"))
        else { return nil }
        return value(of: entry, ifNamed: "http_proxy") ?? value(of: entry, ifNamed: "https_proxy")
            ?? value(of: entry, ifNamed: "all_proxy") ?? value(of: entry, ifNamed: "HTTP_PROXY")
            ?? value(of: entry, ifNamed: "HTTPS_PROXY") ?? value(of: entry, ifNamed: "ALL_PROXY")
    }
}

/// NUL-terminated strings from C.
enum CString {
    static func length(_ pointer: UnsafePointer<UInt8>, limit: Int) -> Int {
        var count = 0
        while count < limit && pointer[count] != 0 { count += 1 }
        return count
    }

    static func bytes(_ pointer: UnsafePointer<CChar>, limit: Int = 4096) -> UnsafeBufferPointer<UInt8> {
        let bytes = UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self)
        return UnsafeBufferPointer(start: bytes, count: length(bytes, limit: limit))
    }
}

/// Comparisons of byte strings.
public enum Bytes {
    static func equal(_ bytes: UnsafeBufferPointer<UInt8>, _ text: StaticString) -> Bool {
        guard bytes.count == text.utf8CodeUnitCount else { return false }
        for i in 0..<bytes.count where bytes[i] != text.utf8Start[i] { return false }
        return true
    }

    static func equalIgnoringCase(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        for i in 0..<a.count where lower(a[i]) != lower(b[i]) { return false }
        return true
    }

    /// Against lower-case `text`.
    static func equalIgnoringCase(_ bytes: UnsafeBufferPointer<UInt8>, _ text: StaticString) -> Bool {
        guard bytes.count == text.utf8CodeUnitCount else { return false }
        for i in 0..<bytes.count where lower(bytes[i]) != text.utf8Start[i] { return false }
        return true
    }

    @inline(__always) static func lower(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }

    /// Hexadecimal (either case, as /proc prints it), at most 16 digits. `package`: the
    /// reports read JSON's \u escapes with it too.
    package static func parseHexadecimal(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64? {
        guard !bytes.isEmpty, bytes.count <= 16 else { return nil }
        var value: UInt64 = 0
        for byte in bytes {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt64(digit)
        }
        return value
    }

    static func parseDecimal(_ bytes: UnsafeBufferPointer<UInt8>, digits: Int = 9) -> Int? {
        guard !bytes.isEmpty, bytes.count <= digits, digits <= 18 else { return nil }
        var value = 0
        for byte in bytes {
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }
}

/// The Bonjour service types a program declares, the counterpart of Apple's
/// `NSBonjourServices` (lnp-run's `--bonjour-services _ipp._tcp,_http._tcp`, or the program's
/// `LNP_BONJOUR_SERVICES`): when a program declares any, browsing for or advertising a type
/// it did not declare fails as Apple's undeclared types do (NoAuth), even when allowed.
/// Resolving is not checked, as on Apple's systems.
public enum BonjourServices {
    /// lnp-run's word for "the program declared no list": every type may be used.
    public static let anyType: StaticString = "*"

    /// Whether `list` — comma-separated types, or `anyType` — declares `type`. Types compare
    /// without case, a trailing dot or a subtype (`_printer._sub._ipp._tcp` and dns_sd's
    /// `_ipp._tcp,_printer` are `_ipp._tcp`).
    public static func declares(_ list: UnsafeBufferPointer<UInt8>, _ type: UnsafeBufferPointer<UInt8>) -> Bool {
        if Bytes.equal(list, anyType) { return true }
        let wanted = baseType(type)
        var start = 0
        for index in 0...list.count where index == list.count || list[index] == UInt8(ascii: ",") {
            let entry = baseType(trimmed(UnsafeBufferPointer(rebasing: list[start..<index])))
            start = index + 1
            if !entry.isEmpty && Bytes.equalIgnoringCase(entry, wanted) { return true }
        }
        return false
    }

    /// Whether `entry` reads as a service type: `_name._tcp` or `_name._udp`, the name 1 to 15
    /// letters, digits and hyphens (RFC 6335).
    public static func isServiceType(_ entry: UnsafeBufferPointer<UInt8>) -> Bool {
        guard entry.count >= 7, entry[0] == UInt8(ascii: "_") else { return false }
        let dot = entry.count - 5
        guard entry[dot] == UInt8(ascii: "."), dot - 1 >= 1, dot - 1 <= 15 else { return false }
        guard ServiceName.isProtocol(UnsafeBufferPointer(rebasing: entry[(dot + 1)...])) else { return false }
        for byte in entry[1..<dot] {
            let lower = Bytes.lower(byte)
            guard (lower >= UInt8(ascii: "a") && lower <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "-")
            else { return false }
        }
        return true
    }

    /// The type without subtype, trailing dot or domain-free excess: its last two labels.
    static func baseType(_ type: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        var end = type.count
        for i in 0..<type.count where type[i] == UInt8(ascii: ",") {
            end = i
            break
        }
        if end > 0 && type[end - 1] == UInt8(ascii: ".") { end -= 1 }
        var dots = 0
        var start = 0
        var index = end
        while index > 0 {
            index -= 1
            if type[index] == UInt8(ascii: ".") {
                dots += 1
                if dots == 2 {
                    start = index + 1
                    break
                }
            }
        }
        return UnsafeBufferPointer(rebasing: type[start..<end])
    }

    private static func trimmed(_ bytes: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        var start = 0
        var end = bytes.count
        while start < end && bytes[start] == UInt8(ascii: " ") { start += 1 }
        while end > start && bytes[end - 1] == UInt8(ascii: " ") { end -= 1 }
        return UnsafeBufferPointer(rebasing: bytes[start..<end])
    }
}

/// An IPv4 or IPv6 address as a plain value: its bytes in network order, packed big-endian
/// into two words (`high` holds bytes 0–7, `low` bytes 8–15). An IPv4 address occupies the
/// low 32 bits of `low`, so `10.77.0.2` has `low == 0x0A4D_0002`.
public struct IPAddress: Equatable, BitwiseCopyable {
    public enum Family: UInt8, BitwiseCopyable {
        case v4 = 4
        case v6 = 6
    }

    public var family: Family
    public var high: UInt64
    public var low: UInt64

    public init(v4 value: UInt32) {
        family = .v4
        high = 0
        low = UInt64(value)
    }

    public init(v6High high: UInt64, low: UInt64) {
        family = .v6
        self.high = high
        self.low = low
    }

    /// Reads four bytes in network order.
    public init(v4Bytes pointer: UnsafeRawPointer) {
        self.init(v4: UInt32(bigEndian: pointer.loadUnaligned(as: UInt32.self)))
    }

    /// Reads sixteen bytes in network order.
    public init(v6Bytes pointer: UnsafeRawPointer) {
        self.init(
            v6High: UInt64(bigEndian: pointer.loadUnaligned(as: UInt64.self)),
            low: UInt64(bigEndian: pointer.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
    }

    /// The numeric value of an IPv4 address (meaningless for IPv6).
    @inline(__always) public var v4: UInt32 { UInt32(truncatingIfNeeded: low) }

    public var bitWidth: Int { family == .v4 ? 32 : 128 }

    /// `::ffff:a.b.c.d` as the IPv4 address it carries, anything else unchanged. Decisions
    /// are made on the unmapped address: mapped addresses are a classic way around filters.
    @inline(__always) public var unmapped: IPAddress {
        if family == .v6 && high == 0 && low >> 32 == 0xffff {
            return IPAddress(v4: UInt32(truncatingIfNeeded: low))
        }
        return self
    }

    @inline(__always) public var isLoopback: Bool {
        family == .v4 ? v4 >> 24 == 127 : (high == 0 && low == 1)
    }

    @inline(__always) public var isUnspecified: Bool {
        family == .v4 ? v4 == 0 : (high == 0 && low == 0)
    }

    /// Loopback or unspecified: never on the local network, whatever the routes say.
    @inline(__always) public var isNeverLocal: Bool {
        family == .v4 ? (v4 >> 24 == 127 || v4 == 0) : (high == 0 && low <= 1)
    }

    /// 224.0.0.0/4 or ff00::/8.
    @inline(__always) public var isMulticast: Bool {
        family == .v4 ? v4 >> 28 == 0xE : high >> 56 == 0xff
    }

    /// 255.255.255.255.
    @inline(__always) public var isLimitedBroadcast: Bool { family == .v4 && v4 == 0xffff_ffff }

    /// 169.254.0.0/16 or fe80::/10.
    @inline(__always) public var isLinkLocal: Bool {
        family == .v4 ? v4 >> 16 == 0xA9FE : high >> 54 == 0x3FA
    }

    /// Writes the 4 or 16 network-order bytes; returns how many.
    @discardableResult
    public func storeBytes(to pointer: UnsafeMutableRawPointer) -> Int {
        if family == .v4 {
            pointer.storeBytes(of: v4.bigEndian, as: UInt32.self)
            return 4
        }
        pointer.storeBytes(of: high.bigEndian, as: UInt64.self)
        pointer.storeBytes(of: low.bigEndian, toByteOffset: 8, as: UInt64.self)
        return 16
    }

    /// The sixteen-bit group `index` (0–7) of an IPv6 address.
    func group(_ index: Int) -> UInt16 {
        let word = index < 4 ? high : low
        return UInt16(truncatingIfNeeded: word >> UInt64((3 - index % 4) * 16))
    }

    /// A short, well-spread hash for table lookups.
    @inline(__always) var hashBits: UInt64 {
        (high ^ low ^ UInt64(family.rawValue)) &* 0x9E37_79B9_7F4A_7C15
    }
}

// MARK: - Text

extension IPAddress {
    /// Parses an address in the usual text forms: dotted IPv4 (as inet_pton: four decimal
    /// parts, no leading zeros) or IPv6 (with `::` and an optional trailing dotted quad).
    /// No scope (`%eth0`), no brackets: callers strip those.
    public static func parse(_ text: UnsafeBufferPointer<UInt8>) -> IPAddress? {
        var hasColon = false
        for byte in text where byte == UInt8(ascii: ":") { hasColon = true }
        if hasColon { return parseV6(text) }
        guard let value = parseV4(text, from: 0, to: text.count) else { return nil }
        return IPAddress(v4: value)
    }

    static func parseV4(_ text: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int) -> UInt32? {
        var value: UInt32 = 0
        var part: UInt32 = 0
        var digits = 0
        var parts = 0
        var index = start
        while index <= end {
            let byte: UInt8 = index == end ? UInt8(ascii: ".") : text[index]
            if byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") {
                if digits > 0 && part == 0 { return nil }  // leading zero
                part = part * 10 + UInt32(byte - UInt8(ascii: "0"))
                digits += 1
                if part > 255 { return nil }
            } else if byte == UInt8(ascii: ".") {
                guard digits > 0, parts < 4 else { return nil }
                value = value << 8 | part
                parts += 1
                part = 0
                digits = 0
            } else {
                return nil
            }
            index += 1
        }
        return parts == 4 ? value : nil
    }

    static func parseV6(_ text: UnsafeBufferPointer<UInt8>) -> IPAddress? {
        var groups = InlineArray<8, UInt16>(repeating: 0)
        var count = 0
        var gap = -1  // where "::" stood, in groups
        var index = 0
        let end = text.count
        if end >= 2 && text[0] == UInt8(ascii: ":") {
            guard text[1] == UInt8(ascii: ":") else { return nil }
            gap = 0
            index = 2
        }
        while index < end {
            // A trailing dotted quad fills the last two groups.
            var dotAhead = false
            var scan = index
            while scan < end && text[scan] != UInt8(ascii: ":") {
                if text[scan] == UInt8(ascii: ".") { dotAhead = true }
                scan += 1
            }
            if dotAhead {
                guard scan == end, count <= 6, let v4 = parseV4(text, from: index, to: end) else { return nil }
                groups[count] = UInt16(truncatingIfNeeded: v4 >> 16)
                groups[count + 1] = UInt16(truncatingIfNeeded: v4)
                count += 2
                index = end
                break
            }
            var group: UInt32 = 0
            var digits = 0
            while index < end, let nibble = hexValue(text[index]) {
                group = group << 4 | UInt32(nibble)
                digits += 1
                index += 1
                if digits > 4 { return nil }
            }
            guard digits > 0, count < 8 else { return nil }
            groups[count] = UInt16(group)
            count += 1
            if index == end { break }
            guard text[index] == UInt8(ascii: ":") else { return nil }
            index += 1
            if index < end && text[index] == UInt8(ascii: ":") {
                guard gap < 0 else { return nil }
                gap = count
                index += 1
            } else if index == end {
                return nil  // a single trailing colon
            }
        }
        if gap >= 0 {
            guard count < 8 else { return nil }
            let tail = count - gap
            var moved = 0
            while moved < tail {
                groups[7 - moved] = groups[count - 1 - moved]
                groups[count - 1 - moved] = 0
                moved += 1
            }
            var fill = gap
            while fill < 8 - tail {
                groups[fill] = 0
                fill += 1
            }
        } else if count != 8 {
            return nil
        }
        var high: UInt64 = 0
        var low: UInt64 = 0
        for i in 0..<4 { high = high << 16 | UInt64(groups[i]) }
        for i in 4..<8 { low = low << 16 | UInt64(groups[i]) }
        return IPAddress(v6High: high, low: low)
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// Writes the address in its canonical text form: dotted IPv4, or IPv6 as RFC 5952
    /// recommends (lower case, the longest run of zero groups as `::`, mapped IPv4 dotted).
    public func write(to writer: inout ByteWriter) {
        if family == .v4 {
            writeDotted(v4, to: &writer)
            return
        }
        if high == 0 && low >> 32 == 0xffff {
            writer.append("::ffff:")
            writeDotted(UInt32(truncatingIfNeeded: low), to: &writer)
            return
        }
        var bestStart = -1
        var bestLength = 1
        var runStart = -1
        for i in 0...8 {
            if i < 8 && group(i) == 0 {
                if runStart < 0 { runStart = i }
            } else if runStart >= 0 {
                if i - runStart > bestLength {
                    bestStart = runStart
                    bestLength = i - runStart
                }
                runStart = -1
            }
        }
        var i = 0
        while i < 8 {
            if i == bestStart {
                writer.append("::")
                i += bestLength
                continue
            }
            if i > 0 && i != bestStart + bestLength { writer.append(UInt8(ascii: ":")) }
            writer.appendHex(UInt64(group(i)))
            i += 1
        }
    }

    private func writeDotted(_ value: UInt32, to writer: inout ByteWriter) {
        if writer.writeInPlace(maximum: 15, { DecimalDigits.writeDotted(value, at: $0) }) { return }
        // Near the buffer's end: octet by octet, cut where it ends.
        for octet in 0..<4 {
            writer.appendDecimal(UInt64(value >> UInt32(24 - 8 * octet) & 0xff))
            if octet != 3 { writer.append(UInt8(ascii: ".")) }
        }
    }
}

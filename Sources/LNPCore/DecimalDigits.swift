/// Decimal numbers written two digits at a time from a table, straight into a buffer the
/// caller has checked has room: a record holds about twenty numbers (the time's seven parts,
/// the pid, the fd, the port, two addresses' octets), and a digit at a time, each with its
/// own bounds check, they were a third of what composing a record cost.
enum DecimalDigits {
    /// "00", "01", … "99": a literal, so the table is constant data, never built or allocated.
    @inline(__always) static var pairs: UnsafeRawPointer {
        UnsafeRawPointer(Self.table.utf8Start)
    }

    private static var table: StaticString {
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"
    }

    /// How many digits `value` takes (1 for 0).
    @inline(__always) static func count(_ value: UInt64) -> Int {
        var digits = 1
        var bound: UInt64 = 10
        while digits < 20 && value >= bound {
            digits &+= 1
            bound &*= 10
        }
        return digits
    }

    /// Two digits of `value` (0–99) at `destination`.
    @inline(__always) static func writePair(_ value: Int, at destination: UnsafeMutableRawPointer) {
        destination.storeBytes(of: pairs.loadUnaligned(fromByteOffset: value &* 2, as: UInt16.self), as: UInt16.self)
    }

    /// `value` in exactly `width` digits ending just before `end`, zeros in front; `width`
    /// must be at least `count(value)`.
    @inline(__always) static func write(_ value: UInt64, width: Int, endingAt end: UnsafeMutableRawPointer) {
        var n = value
        var position = end
        while n >= 100 {
            let quotient = n / 100
            position -= 2
            writePair(Int(truncatingIfNeeded: n &- quotient &* 100), at: position)
            n = quotient
        }
        if n >= 10 {
            position -= 2
            writePair(Int(truncatingIfNeeded: n), at: position)
        } else {
            position -= 1
            position.storeBytes(of: UInt8(truncatingIfNeeded: n) &+ 0x30, as: UInt8.self)
        }
        let start = end - width
        while position > start {
            position -= 1
            position.storeBytes(of: 0x30, as: UInt8.self)
        }
    }

    /// An IPv4 octet (0–255) at `destination`, without leading zeros; how many digits.
    @inline(__always) static func writeOctet(_ value: UInt32, at destination: UnsafeMutableRawPointer) -> Int {
        if value < 10 {
            destination.storeBytes(of: UInt8(truncatingIfNeeded: value) &+ 0x30, as: UInt8.self)
            return 1
        }
        if value < 100 {
            writePair(Int(value), at: destination)
            return 2
        }
        let hundreds: UInt32 = value >= 200 ? 2 : 1
        destination.storeBytes(of: UInt8(truncatingIfNeeded: hundreds) &+ 0x30, as: UInt8.self)
        writePair(Int(value &- hundreds &* 100), at: destination + 1)
        return 3
    }

    /// A dotted IPv4 address (at most 15 bytes) at `destination`; how many bytes.
    @inline(__always) static func writeDotted(_ value: UInt32, at destination: UnsafeMutableRawPointer) -> Int {
        var length = writeOctet(value >> 24, at: destination)
        (destination + length).storeBytes(of: UInt8(ascii: "."), as: UInt8.self)
        length &+= 1 &+ writeOctet(value >> 16 & 0xff, at: destination + (length &+ 1))
        (destination + length).storeBytes(of: UInt8(ascii: "."), as: UInt8.self)
        length &+= 1 &+ writeOctet(value >> 8 & 0xff, at: destination + (length &+ 1))
        (destination + length).storeBytes(of: UInt8(ascii: "."), as: UInt8.self)
        length &+= 1 &+ writeOctet(value & 0xff, at: destination + (length &+ 1))
        return length
    }
}

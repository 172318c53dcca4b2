/// Appends text to a fixed buffer the caller owns (usually on its stack). Past the end it
/// drops what does not fit and remembers that it did; it never allocates.
public struct ByteWriter {
    let base: UnsafeMutablePointer<UInt8>
    let capacity: Int
    public private(set) var count = 0
    public private(set) var truncated = false

    public init(_ buffer: UnsafeMutableRawBufferPointer) {
        base = buffer.baseAddress!.assumingMemoryBound(to: UInt8.self)
        capacity = buffer.count
    }

    public var written: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: base, count: count) }
    public var remaining: Int { capacity - count }

    @inline(__always) public mutating func append(_ byte: UInt8) {
        if count < capacity {
            base[count] = byte
            count += 1
        } else {
            truncated = true
        }
    }

    /// Replaces a byte already written (a length known only once what follows is written).
    public mutating func replace(at index: Int, with byte: UInt8) {
        if index < count { base[index] = byte }
    }

    /// Inlined, so that a literal's length is known where it is appended and its copy is a
    /// few moves of words (ByteCopy).
    @inline(__always) public mutating func append(_ text: StaticString) {
        append(UnsafeRawPointer(text.utf8Start), count: text.utf8CodeUnitCount)
    }

    public mutating func append(bytes: UnsafeBufferPointer<UInt8>) {
        guard let start = bytes.baseAddress else { return }
        append(UnsafeRawPointer(start), count: bytes.count)
    }

    /// Copies whole pieces in words; only a piece that does not fit takes the slow way.
    @inline(__always) private mutating func append(_ start: UnsafeRawPointer, count length: Int) {
        if length <= capacity &- count {
            ByteCopy.copy(UnsafeMutableRawPointer(base + count), start, count: length)
            count &+= length
        } else {
            appendCut(start, count: length)
        }
    }

    /// What fits of a piece that does not, and a note that the line was cut.
    @inline(never) private mutating func appendCut(_ start: UnsafeRawPointer, count length: Int) {
        let fitting = min(length, capacity - count)
        UnsafeMutableRawPointer(base + count).copyMemory(from: start, byteCount: fitting)
        count += fitting
        truncated = true
    }

    /// Lets `body` write up to `maximum` bytes straight into the buffer and returns true, when
    /// that many fit; `body` returns how many it wrote. When they might not fit it writes
    /// nothing and returns false: the caller then appends piece by piece, which cuts where the
    /// buffer ends. One check of room for a whole number or address, none per byte.
    @inline(__always) public mutating func writeInPlace(maximum: Int, _ body: (UnsafeMutableRawPointer) -> Int) -> Bool {
        guard maximum <= capacity &- count else { return false }
        count &+= body(UnsafeMutableRawPointer(base + count))
        return true
    }

    public mutating func appendDecimal(_ value: UInt64, minimumDigits: Int = 1) {
        let digits = DecimalDigits.count(value)
        let width = max(digits, minimumDigits)
        guard width <= capacity - count else {  // what fits, from the left, and no more
            for _ in digits..<width { append(UInt8(ascii: "0")) }
            var text = InlineArray<20, UInt8>(repeating: 0)
            var n = value
            for place in 0..<digits {
                text[digits - 1 - place] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: n % 10)
                n /= 10
            }
            for index in 0..<digits { append(text[index]) }
            return
        }
        DecimalDigits.write(value, width: width, endingAt: UnsafeMutableRawPointer(base + count + width))
        count += width
    }

    public mutating func appendDecimal(_ value: Int64) {
        if value < 0 {
            append(UInt8(ascii: "-"))
            appendDecimal(UInt64(bitPattern: 0 &- value))
        } else {
            appendDecimal(UInt64(value))
        }
    }

    /// Lower-case hex without leading zeros.
    public mutating func appendHex(_ value: UInt64) {
        var started = false
        var shift = 60
        while shift >= 0 {
            let nibble = UInt8(truncatingIfNeeded: value >> UInt64(shift)) & 0xf
            if nibble != 0 || started || shift == 0 {
                started = true
                append(nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10)
            }
            shift -= 4
        }
    }

    /// Appends `bytes` as a JSON string, quotes included, using at most `budget` bytes of
    /// output. Control characters (C0, DEL, C1) are escaped and invalid UTF-8 becomes U+FFFD,
    /// so the result is always valid JSON, and the strict JSON lnp-run takes (`RecordLine`); a string cut short by the budget ends in `...`.
    public mutating func appendJSONString(_ bytes: UnsafeBufferPointer<UInt8>, budget: Int) {
        // `stop` is where the closing quote goes. A string that does not fit whole is cut so
        // that it can say so: every character before the cut leaves room for "...".
        let stop = min(count + max(budget, 8), capacity) - 1
        if bytes.count <= stop - count - 1 && PlainBytes.all(bytes) {  // most paths and names: copied whole
            // (room is certain: `stop` is within the buffer)
            let destination = UnsafeMutableRawPointer(base + count)
            destination.storeBytes(of: UInt8(ascii: "\""), as: UInt8.self)
            if let start = bytes.baseAddress { ByteCopy.copy(destination + 1, UnsafeRawPointer(start), count: bytes.count) }
            destination.storeBytes(of: UInt8(ascii: "\""), toByteOffset: bytes.count + 1, as: UInt8.self)
            count += bytes.count + 2
            return
        }
        append(UInt8(ascii: "\""))
        let fitsWhole = Self.escapedLength(bytes) <= stop - count
        var index = 0
        while index < bytes.count {
            let (length, needed) = Self.escape(bytes, at: index)
            let room = stop - count
            if !fitsWhole && (needed > room - 3) {
                append("...")
                break
            }
            if needed == 1 {  // printable ASCII: most of every path and name
                append(bytes[index])
                index += 1
                continue
            }
            switch bytes[index] {
            case UInt8(ascii: "\""): append("\\\"")
            case UInt8(ascii: "\\"): append("\\\\")
            case 0x0a: append("\\n")
            case 0x0d: append("\\r")
            case 0x09: append("\\t")
            case 0..<0x20, 0x7f:
                append("\\u00")
                appendHexDigit(bytes[index] >> 4)
                appendHexDigit(bytes[index] & 0xf)
            case 0x20..<0x80: append(bytes[index])
            default:
                if needed == 6 && length == 2 {  // a C1 control: U+0080 to U+009F
                    append("\\u00")
                    appendHexDigit(bytes[index + 1] >> 4)
                    appendHexDigit(bytes[index + 1] & 0xf)
                } else if length == 0 {
                    append("\\ufffd")
                } else {
                    for offset in 0..<length { append(bytes[index + offset]) }
                }
            }
            index += max(length, 1)
        }
        if count < capacity {
            append(UInt8(ascii: "\""))
        } else {
            base[capacity - 1] = UInt8(ascii: "\"")
            truncated = true
        }
    }

    /// The UTF-8 sequence length at `index` (0 if ill-formed) and the bytes its escape takes.
    static func escape(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> (length: Int, needed: Int) {
        let byte = bytes[index]
        if PlainBytes.isPlain(byte) { return (1, 1) }
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x0a, 0x0d, 0x09: return (1, 2)
        case 0..<0x20, 0x7f: return (1, 6)
        case 0x20..<0x80: return (1, 1)
        default:
            let length = UTF8Scalar.sequenceLength(bytes, at: index)
            // C1 controls (U+0080 to U+009F: C2 80 to C2 9F) are escaped, like C0: a terminal
            // showing the line would act on them.
            if length == 2 && byte == 0xc2 && bytes[index + 1] <= 0x9f { return (2, 6) }
            return (length, length == 0 ? 6 : length)
        }
    }

    /// The bytes `bytes` takes escaped, quotes excluded.
    static func escapedLength(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var total = 0
        var index = 0
        while index < bytes.count {
            let (length, needed) = escape(bytes, at: index)
            total += needed
            index += max(length, 1)
        }
        return total
    }

    private mutating func appendHexDigit(_ nibble: UInt8) {
        append(nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10)
    }
}

/// UTF-8 validation, enough to keep audit lines valid JSON whatever bytes a path holds.
enum UTF8Scalar {
    /// The length of the well-formed UTF-8 sequence starting at `index`, or 0 if ill-formed.
    static func sequenceLength(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> Int {
        let lead = bytes[index]
        let length: Int
        var lower: UInt8 = 0x80
        var upper: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; lower = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; upper = 0x9F
        case 0xF0: length = 4; lower = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; upper = 0x8F
        default: return 0
        }
        guard index + length <= bytes.count else { return 0 }
        for offset in 1..<length {
            let byte = bytes[index + offset]
            let low: UInt8 = offset == 1 ? lower : 0x80
            let high: UInt8 = offset == 1 ? upper : 0xBF
            if byte < low || byte > high { return 0 }
        }
        return length
    }
}

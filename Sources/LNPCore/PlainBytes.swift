/// Whether bytes go into a JSON string as they are — printable ASCII, but `"` and `\` — tested
/// eight at a time: most paths and names are plain, and a test per byte (four comparisons)
/// was most of what writing a record's strings cost.
enum PlainBytes {
    static let ones: UInt64 = 0x0101_0101_0101_0101
    static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// Non-zero when any byte of `word` needs an escape. Each term sets a byte's high bit for
    /// one kind (a byte below 0x20; 0x7f or above; a quote; a backslash). The subtractions can
    /// borrow only out of a byte that is itself such a byte, so "any" is exact.
    @inline(__always) static func escapes(_ word: UInt64) -> UInt64 {
        let control = (word &- ones &* 0x20) & ~word
        let high = ((word & ~highBits) &+ ones) | word
        let quote = word ^ (ones &* 0x22)
        let backslash = word ^ (ones &* 0x5c)
        return (control | high | ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash)) & highBits
    }

    /// One byte's test: the words' test for a short string, and the writer's, byte by byte.
    @inline(__always) static func isPlain(_ byte: UInt8) -> Bool {
        byte >= 0x20 && byte < 0x7f && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\")
    }

    static func all(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let start = bytes.baseAddress else { return true }
        let raw = UnsafeRawPointer(start)
        let count = bytes.count
        guard count >= 8 else {
            for index in 0..<count where !isPlain(start[index]) { return false }
            return true
        }
        var offset = 0
        while offset < count &- 8 {
            if escapes(raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) != 0 { return false }
            offset &+= 8
        }
        // The last eight, overlapping bytes already tested.
        return escapes(raw.loadUnaligned(fromByteOffset: count &- 8, as: UInt64.self)) == 0
    }
}

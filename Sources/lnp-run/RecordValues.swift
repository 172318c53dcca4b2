/// The values of a record's top-level members, decoded from the JSON `RecordLine` checked:
/// strings with their escapes, whole numbers, booleans. What `--summary` reads of a record,
/// without a JSON library (lnp-run links no Foundation).
extension RecordLine {
    /// A member's value, or why it cannot be read as the kind asked for.
    enum Value<T> {
        case absent
        case null
        case value(T)
        case invalid

        /// Nil when absent or null (as an optional field reads), the value, or nil twice over
        /// when it is of another kind.
        var optional: T?? {
            switch self {
            case .absent, .null: return .some(nil)
            case .value(let value): return .some(value)
            case .invalid: return nil
            }
        }

        /// The value when there is one; nil otherwise (as a required field reads).
        var required: T? {
            if case .value(let value) = self { return value }
            return nil
        }
    }

    func string(_ key: String) -> Value<String> {
        read(key) { Self.decodeString($0) }
    }

    /// A number with no fraction, as an Int (an audit's pids, descriptors and ports).
    func wholeNumber(_ key: String) -> Value<Int> {
        read(key) { bytes in
            guard let number = Double(String(decoding: bytes, as: UTF8.self)), number.rounded() == number,
                abs(number) < 1e15
            else { return nil }
            return Int(number)
        }
    }

    func bool(_ key: String) -> Value<Bool> {
        read(key) { bytes in
            if bytes.elementsEqual("true".utf8) { return true }
            if bytes.elementsEqual("false".utf8) { return false }
            return nil
        }
    }

    /// A list of strings.
    func strings(_ key: String) -> Value<[String]> {
        read(key) { bytes in
            guard bytes.first == UInt8(ascii: "["), bytes.last == UInt8(ascii: "]") else { return nil }
            var items: [String] = []
            var index = bytes.startIndex + 1
            let end = bytes.endIndex - 1
            while index < end {
                // RecordLine checked the JSON: a string ends at the first quote not escaped.
                guard bytes[index] == UInt8(ascii: "\"") else { return nil }
                var close = index + 1
                while bytes[close] != UInt8(ascii: "\"") { close += bytes[close] == UInt8(ascii: "\\") ? 2 : 1 }
                guard let item = Self.decodeString(bytes[index...close]) else { return nil }
                items.append(item)
                index = close + 1
                if index < end {
                    guard bytes[index] == UInt8(ascii: ",") else { return nil }
                    index += 1
                }
            }
            return items
        }
    }

    private func read<T>(_ key: String, _ decode: (ArraySlice<UInt8>) -> T?) -> Value<T> {
        guard let bytes = value(of: key) else { return .absent }
        if bytes.elementsEqual("null".utf8) { return .null }
        return decode(bytes).map { .value($0) } ?? .invalid
    }

    /// A JSON string (quotes included, well-formed: RecordLine checked it) as text; nil for a
    /// non-string or an escape that is no character (a lone surrogate).
    static func decodeString(_ bytes: ArraySlice<UInt8>) -> String? {
        guard bytes.count >= 2, bytes.first == UInt8(ascii: "\""), bytes.last == UInt8(ascii: "\"") else { return nil }
        var text = String.UnicodeScalarView()
        var utf8: [UInt8] = []
        func flush() {
            text.append(contentsOf: String(decoding: utf8, as: UTF8.self).unicodeScalars)
            utf8.removeAll(keepingCapacity: true)
        }
        var index = bytes.startIndex + 1
        let end = bytes.endIndex - 1
        func hex4(at start: Int) -> UInt32? {
            guard start + 4 <= end else { return nil }
            return UInt32(String(decoding: bytes[start..<(start + 4)], as: UTF8.self), radix: 16)
        }
        while index < end {
            let byte = bytes[index]
            guard byte == UInt8(ascii: "\\") else {
                utf8.append(byte)
                index += 1
                continue
            }
            flush()
            let escape = bytes[index + 1]
            index += 2
            switch escape {
            case UInt8(ascii: "b"): text.append("\u{8}")
            case UInt8(ascii: "f"): text.append("\u{c}")
            case UInt8(ascii: "n"): text.append("\n")
            case UInt8(ascii: "r"): text.append("\r")
            case UInt8(ascii: "t"): text.append("\t")
            case UInt8(ascii: "u"):
                guard var value = hex4(at: index) else { return nil }
                index += 4
                if (0xd800...0xdbff).contains(value) {
                    // A high surrogate: the low one must follow, as `\uDCxx`.
                    guard index + 6 <= end, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u"),
                        let low = hex4(at: index + 2), (0xdc00...0xdfff).contains(low)
                    else { return nil }
                    value = 0x10000 + ((value - 0xd800) << 10) + (low - 0xdc00)
                    index += 6
                }
                guard let scalar = Unicode.Scalar(value) else { return nil }
                text.append(scalar)
            default: text.append(Unicode.Scalar(escape))  // \" \\ \/
            }
        }
        flush()
        return String(text)
    }
}

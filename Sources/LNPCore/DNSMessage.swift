/// DNS messages, as the resolver's `res_send` takes them ready-made (RFC 1035 §4.1).
public enum DNSMessage {
    /// The first question's name as text (`printer.local`), written into `name` with a NUL
    /// after it; its length, or nil when the message holds no well-formed question (a
    /// compression pointer is not one: a query's first name is never compressed).
    public static func questionName(_ message: UnsafeRawBufferPointer, into name: UnsafeMutableRawBufferPointer) -> Int? {
        guard message.count > 12, name.count >= 1, message[4] != 0 || message[5] != 0 else { return nil }  // QDCOUNT ≥ 1
        var offset = 12
        var written = 0
        while true {
            guard offset < message.count else { return nil }
            let label = Int(message[offset])
            offset += 1
            if label == 0 { break }
            let separator = written > 0 ? 1 : 0
            guard label <= 63, offset + label <= message.count, written + separator + label < name.count else { return nil }
            if separator == 1 { name[written] = UInt8(ascii: ".") }
            for i in 0..<label { name[written + separator + i] = message[offset + i] }
            written += separator + label
            offset += label
        }
        name[written] = 0
        return written
    }
}

import LNPSys

/// Which entry of the domain store holds a socket's domains: 8 bits of index and 22 of
/// generation, so a tag whose entry was reused since reads as "no domains" instead of
/// someone else's.
public struct DomainReference: Equatable, BitwiseCopyable {
    public var rawValue: UInt32
    public init(rawValue: UInt32 = 0) { self.rawValue = rawValue & 0x3fff_ffff }
    public var isNone: Bool { rawValue == 0 }
    var index: Int { Int(rawValue & 0xff) }
    var generation: UInt32 { rawValue >> 8 }
}

/// The domain names programs attach to sockets (`ne_socket_set_domains`), kept in a ring of
/// fixed entries mapped on first use. Entry words: 0 sequence, 1 generation (bits 0–21),
/// name count (22–37) and byte length (38–53); then the names, NUL-separated.
public enum DomainStore {
    static let entries = Int(LNP_DOMAIN_ENTRIES)
    static let entryWords = Int(LNP_DOMAIN_WORDS)
    public static let byteCapacity = (Int(LNP_DOMAIN_WORDS) - 2) * 8

    static func table(create: Bool) -> UnsafeMutablePointer<UInt64>? {
        let holder = lnp_storage_domain_table()!
        if let table = lnp_load_pointer(holder) { return table.assumingMemoryBound(to: UInt64.self) }
        guard create, let mapped = lnp_sys_map_zeroed(entries * entryWords * 8) else { return nil }
        if lnp_install_pointer(holder, mapped) == 0 {
            _ = Sys.call(Int(SYS_munmap), Int(bitPattern: mapped), entries * entryWords * 8)
        }
        return lnp_load_pointer(holder)?.assumingMemoryBound(to: UInt64.self)
    }

    /// Stores names already validated and joined with NULs; returns their reference.
    static func store(_ joined: UnsafeBufferPointer<UInt8>, count: Int) -> DomainReference? {
        guard joined.count <= byteCapacity, let table = table(create: true) else { return nil }
        let ticket = lnp_fetch_add(Counter.domainTickets.word, 1)
        let index = Int(ticket % UInt64(entries))
        let generation = UInt32(truncatingIfNeeded: ticket / UInt64(entries)) % 0x3f_ffff + 1
        let record = SequencedRecord(words: SharedWords(table + index * entryWords))
        guard let claimed = record.beginWrite() else { return nil }
        record.words.storeBytes(joined, from: 2)
        record.words.storeRelaxed(1, UInt64(generation) | UInt64(count) << 22 | UInt64(joined.count) << 38)
        record.endWrite(claimed)
        return DomainReference(rawValue: generation << 8 | UInt32(index))
    }

    /// Copies the names `reference` points to into `buffer` (NUL-separated); returns the
    /// byte length and name count, or nil if the entry is gone or being rewritten.
    static func load(_ reference: DomainReference, into buffer: UnsafeMutableRawBufferPointer) -> (length: Int, count: Int)? {
        guard !reference.isNone, let table = table(create: false) else { return nil }
        let record = SequencedRecord(words: SharedWords(table + reference.index * entryWords))
        guard let sequence = record.beginRead() else { return nil }
        let header = record.words.loadRelaxed(1)
        guard UInt32(truncatingIfNeeded: header & 0x3f_ffff) == reference.generation else { return nil }
        let count = Int(header >> 22 & 0xffff)
        let length = min(Int(header >> 38 & 0xffff), byteCapacity, buffer.count)
        record.words.loadBytes(from: 2, count: length, into: buffer)
        return record.endRead(sequence) ? (length, count) : nil
    }
}

/// Apple's rules for the names given to `ne_socket_set_domains`: at most 253 characters,
/// labels of at most 63, printable ASCII.
public enum DomainName {
    public static func isValid(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        var end = name.count
        if end > 1 && name[end - 1] == UInt8(ascii: ".") { end -= 1 }  // a fully qualified name
        guard end > 0, end <= 253 else { return false }
        var label = 0
        for i in 0..<end {
            let byte = name[i]
            guard byte > 0x20 && byte < 0x7f else { return false }
            if byte == UInt8(ascii: ".") {
                guard label > 0 else { return false }
                label = 0
            } else {
                label += 1
                guard label <= 63 else { return false }
            }
        }
        return label > 0
    }
}

import LNPSys

/// Names the program resolved, by address, so that a record of a connection to
/// 10.77.0.2 can say it was `printer.local`. A ring of sequenced records in static storage:
/// word 0 sequence, 1 family, 2–3 address, 4 name length, then the name.
enum ResolvedNames {
    static let entries = Int(LNP_NAME_ENTRIES)
    static let entryWords = Int(LNP_NAME_WORDS)
    static let nameCapacity = (Int(LNP_NAME_WORDS) - 5) * 8

    static func remember(_ name: UnsafeBufferPointer<UInt8>, for address: IPAddress) {
        guard !name.isEmpty, name.count <= nameCapacity else { return }
        let ticket = lnp_fetch_add(Counter.nameTickets.word, 1)
        let base = lnp_storage_names() + Int(ticket % UInt64(entries)) * entryWords
        let record = SequencedRecord(words: SharedWords(base))
        guard let claimed = record.beginWrite() else { return }
        let w = record.words
        w.storeRelaxed(1, UInt64(address.family.rawValue))
        w.storeRelaxed(2, address.high)
        w.storeRelaxed(3, address.low)
        w.storeRelaxed(4, UInt64(name.count))
        w.storeBytes(name, from: 5)
        record.endWrite(claimed)
    }

    /// Copies the most recent name for `address` into `buffer`; returns its length, or 0.
    static func name(for address: IPAddress, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let newest = lnp_load_relaxed(Counter.nameTickets.word)
        for age in 0..<Int(min(UInt64(entries), newest)) {  // (none when nothing was resolved)
            let ticket = newest &- 1 &- UInt64(age)
            let base = lnp_storage_names() + Int(ticket % UInt64(entries)) * entryWords
            let record = SequencedRecord(words: SharedWords(base))
            guard let sequence = record.beginRead() else { continue }
            let w = record.words
            guard w.loadRelaxed(1) == UInt64(address.family.rawValue), w.loadRelaxed(2) == address.high,
                w.loadRelaxed(3) == address.low
            else { continue }
            let length = min(Int(w.loadRelaxed(4)), nameCapacity, buffer.count)
            w.loadBytes(from: 5, count: length, into: buffer)
            if record.endRead(sequence) { return length }
        }
        return 0
    }
}

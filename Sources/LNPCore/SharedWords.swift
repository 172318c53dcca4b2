import LNPSys

/// A window on 64-bit words that every thread of the process shares (the static storage in
/// CShim/sys/storage.c). Every access is atomic, so readers never see a torn word.
struct SharedWords {
    let base: UnsafeMutablePointer<UInt64>

    @inline(__always) init(_ base: UnsafeMutablePointer<UInt64>) { self.base = base }

    @inline(__always) func load(_ index: Int) -> UInt64 { lnp_load_acquire(base + index) }
    @inline(__always) func loadRelaxed(_ index: Int) -> UInt64 { lnp_load_relaxed(base + index) }
    @inline(__always) func store(_ index: Int, _ value: UInt64) { lnp_store_release(base + index, value) }
    @inline(__always) func storeRelaxed(_ index: Int, _ value: UInt64) { lnp_store_relaxed(base + index, value) }
    @inline(__always) func compareExchange(_ index: Int, expected: UInt64, desired: UInt64) -> Bool {
        lnp_compare_exchange(base + index, expected, desired) != 0
    }
    @inline(__always) func fetchAdd(_ index: Int, _ value: UInt64) -> UInt64 { lnp_fetch_add(base + index, value) }

    func advanced(by words: Int) -> SharedWords { SharedWords(base + words) }

    /// Stores `bytes` from word `start` on, eight to a word, so that readers load whole
    /// words (inside a sequenced record, which orders them).
    func storeBytes(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) {
        var offset = 0
        while offset < bytes.count {
            var word: UInt64 = 0
            withUnsafeMutableBytes(of: &word) { raw in
                for j in 0..<min(8, bytes.count - offset) { raw[j] = bytes[offset + j] }
            }
            storeRelaxed(start + offset / 8, word)
            offset += 8
        }
    }

    /// Copies `count` bytes stored by `storeBytes` into `buffer` (at most its size).
    func loadBytes(from start: Int, count: Int, into buffer: UnsafeMutableRawBufferPointer) {
        let length = min(count, buffer.count)
        var offset = 0
        while offset < length {
            var word = loadRelaxed(start + offset / 8)
            withUnsafeBytes(of: &word) { raw in
                for j in 0..<min(8, length - offset) { buffer[offset + j] = raw[j] }
            }
            offset += 8
        }
    }
}

/// The counters in static storage (CShim/sys/storage.c), one word each.
enum Counter: Int {
    /// Sequence numbers of route queries.
    case netlinkSequence
    /// Tickets for entries of the domain store.
    case domainTickets
    /// Tickets for entries of the resolved-names ring.
    case nameTickets
    /// Turns for choosing which socket tag gives way.
    case tagEvictions
    /// Turns for choosing which record of a route cache set gives way.
    case routeEvictions

    var word: UnsafeMutablePointer<UInt64> { lnp_storage_counters() + rawValue }
}

/// A record of shared words guarded by its first word, a sequence number: even while the
/// record is stable, odd while one writer fills it. Readers never wait: a record being
/// written, or rewritten under them, reads as "absent", and they take the slow path.
/// Writers never wait either: a writer that cannot claim the record just doesn't store.
struct SequencedRecord {
    let words: SharedWords

    /// The sequence to validate against later, or nil while a writer holds the record.
    @inline(__always) func beginRead() -> UInt64? {
        let sequence = words.load(0)
        return sequence & 1 == 0 ? sequence : nil
    }

    /// Whether what was read since `beginRead` is consistent.
    @inline(__always) func endRead(_ sequence: UInt64) -> Bool {
        lnp_fence_acquire()
        return words.loadRelaxed(0) == sequence
    }

    /// Claims the record for writing; nil if another writer has it.
    func beginWrite() -> UInt64? {
        let sequence = words.load(0)
        guard sequence & 1 == 0, words.compareExchange(0, expected: sequence, desired: sequence &+ 1) else {
            return nil
        }
        lnp_fence_release()
        return sequence &+ 1
    }

    func endWrite(_ claimed: UInt64) { words.store(0, claimed &+ 1) }
}

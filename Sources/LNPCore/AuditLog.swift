import LNPSys

/// Sends records to lnp-run, which writes them where the person asked — a file, a pipe, the
/// system log. The program never writes the audit itself: a full disk, a slow reader or a
/// file size limit never holds it up or ends it, and nothing in its environment can send its
/// records elsewhere. A record that cannot be sent (lnp-run gone, no descriptor left, its
/// queue full for five seconds) is counted, and the count goes with the next record that is, or
/// alone when the process exits; lnp-run says how many were lost.
enum AuditLog {
    /// Composes `record` after the datagram's header in `buffer`, and sends it. The record is
    /// read where the caller keeps it: passed by value, it was copied whole first (232 bytes).
    static func send(_ record: UnsafePointer<AuditRecord>, to runPID: Int32, in buffer: UnsafeMutableRawBufferPointer) {
        var writer = ByteWriter(UnsafeMutableRawBufferPointer(rebasing: buffer[RecordDatagram.headerSize...]))
        AuditRecord.write(record, to: &writer)
        deliver(buffer, length: writer.count, severity: RecordDatagram.severity(of: record.pointee), to: runPID)
    }

    /// When the process ends: records it could not send, reported if they can be now.
    static func reportLost() {
        let words = SharedWords(lnp_storage_settings())
        guard words.load(7) != 0, words.load(0) == SettingsStore.ready else { return }
        var header = InlineArray<16, UInt8>(repeating: 0)
        withUnsafeMutableBytes(of: &header) { raw in
            deliver(raw, length: 0, severity: 0, to: Int32(truncatingIfNeeded: words.load(4)))
        }
    }

    private static func deliver(_ buffer: UnsafeMutableRawBufferPointer, length: Int, severity: UInt8, to runPID: Int32) {
        SettingsStore.registerIfForked(with: runPID)
        let lost = lnp_fetch_and(lostCounter, 0)  // taken: they go with this one
        // (No page: --strict, MemoryDenyWriteExecute=, LNP_GADGET removed; lnp-run knows whether
        // its supervisor is there to make the calls.)
        RecordDatagram.writeHeader(lost: UInt32(truncatingIfNeeded: lost), severity: severity,
                                   outsidePage: lnp_gadget_mapped() == 0, into: buffer)
        let datagram = UnsafeRawBufferPointer(start: buffer.baseAddress, count: RecordDatagram.headerSize + length)
        if !RunChannel.sendRecord(datagram, to: runPID) {
            _ = lnp_fetch_add(lostCounter, lost + (length > 0 ? 1 : 0))
        }
    }

    private static var lostCounter: UnsafeMutablePointer<UInt64> { lnp_storage_settings() + 7 }
}

/// Static buffers to compose records in, so that a record costs its thread almost no
/// stack: a hook may run in a signal handler on a small alternate stack. A buffer is claimed
/// with the claiming process's id; one claimed by another process was claimed by a parent
/// before a fork, and is taken back. When all are busy (many threads recording at once, or
/// a handler interrupting a record), the record is made on the stack with small budgets.
enum RecordBuffers {
    static let count = Int(LNP_RECORD_BUFFERS)
    static let size = Int(LNP_RECORD_BUFFER_SIZE)

    /// The parts of a buffer: the line, then room for the exe path, domains and a name.
    struct Regions {
        var line: UnsafeMutableRawBufferPointer
        var executable: UnsafeMutableRawBufferPointer
        var domains: UnsafeMutableRawBufferPointer
        var name: UnsafeMutableRawBufferPointer

        init(_ memory: UnsafeMutableRawBufferPointer, budgets: AuditRecord.Budgets) {
            let lineEnd = RecordDatagram.headerSize + budgets.lineCapacity
            let executableEnd = lineEnd + budgets.path
            let domainsEnd = executableEnd + budgets.domains
            line = UnsafeMutableRawBufferPointer(rebasing: memory[0..<lineEnd])
            executable = UnsafeMutableRawBufferPointer(rebasing: memory[lineEnd..<executableEnd])
            domains = UnsafeMutableRawBufferPointer(rebasing: memory[executableEnd..<domainsEnd])
            name = UnsafeMutableRawBufferPointer(rebasing: memory[domainsEnd..<min(domainsEnd + 256, memory.count)])
            // (a longer name is cut to fit: ResolvedNames copies what the region holds)
        }

        /// Bytes a buffer must have for `budgets`.
        static func size(for budgets: AuditRecord.Budgets) -> Int {
            RecordDatagram.headerSize + budgets.lineCapacity + budgets.path + budgets.domains + 256
        }
    }

    static func claim() -> Int? {
        let holders = SharedWords(lnp_storage_record_holders())
        let pid = UInt64(UInt32(bitPattern: Sys.getpid()))
        for index in 0..<count {
            let holder = holders.load(index)
            if holder == 0 || holder != pid {
                if holders.compareExchange(index, expected: holder, desired: pid) { return index }
            }
        }
        return nil
    }

    static func release(_ index: Int) { SharedWords(lnp_storage_record_holders()).store(index, 0) }

    static func memory(_ index: Int) -> UnsafeMutableRawBufferPointer {
        UnsafeMutableRawBufferPointer(start: lnp_storage_record_buffers() + index * size, count: size)
    }
}

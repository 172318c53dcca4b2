import LNPSys

/// Appends records to the audit file. Each line is written whole with one `write` to a
/// descriptor opened with O_APPEND, so lines from many processes and threads never
/// interleave. The file is opened and closed around each record: the library keeps no
/// descriptor of its own in the program's descriptor space. An audit "file" named `syslog`
/// sends the records to the system logger instead (`SyslogSink`).
enum AuditLog {
    /// Writes `record` as one line, composed in `line` (which has room for a syslog header
    /// besides the record's line).
    static func append(_ record: AuditRecord, to path: UnsafePointer<UInt8>, line: UnsafeMutableRawBufferPointer) {
        if SyslogSink.isTarget(path) { return SyslogSink.send(record, in: line) }
        var writer = ByteWriter(UnsafeMutableRawBufferPointer(rebasing: line[0..<(line.count - 1)]))
        record.write(to: &writer)
        let length = writer.count
        line[length] = 0x0a
        let flags = Int32(LNP_O_WRONLY | LNP_O_APPEND | LNP_O_CREAT | LNP_O_NOCTTY)
        guard case .success(let fd) = Sys.openingPastTheLimit({ Sys.open(path, flags: flags, mode: 0o600) }) else { return }
        _ = Sys.write(fd, UnsafeRawBufferPointer(rebasing: line[0...length]))
        Sys.close(fd)
    }
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
            let lineEnd = budgets.lineCapacity + 1 + SyslogSink.headerCapacity
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
            budgets.lineCapacity + 1 + SyslogSink.headerCapacity + budgets.path + budgets.domains + 256
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

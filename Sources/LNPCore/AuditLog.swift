import LNPSys

/// Appends records to the audit file. Each line is built on the stack and written whole
/// with one `write` to a descriptor opened with O_APPEND, so lines from many processes and
/// threads never interleave. The file is opened and closed around each record: the library
/// keeps no descriptor of its own in the program's descriptor space.
enum AuditLog {
    static let lineCapacity = 4096

    static func append(_ record: AuditRecord, to path: UnsafePointer<UInt8>) {
        var line = InlineArray<4096, UInt8>(repeating: 0)
        withUnsafeMutableBytes(of: &line) { raw in
            var writer = ByteWriter(UnsafeMutableRawBufferPointer(rebasing: raw[0..<(raw.count - 1)]))
            record.write(to: &writer)
            let length = writer.count
            raw[length] = 0x0a
            let flags = Int32(LNP_O_WRONLY | LNP_O_APPEND | LNP_O_CREAT | LNP_O_NOCTTY)
            guard case .success(let fd) = Sys.open(path, flags: flags, mode: 0o600) else { return }
            _ = Sys.write(fd, UnsafeRawBufferPointer(rebasing: raw[0...length]))
            Sys.close(fd)
        }
    }
}

import LNPCoreHost
import LNPTools

#if canImport(Glibc)
import Glibc
#endif

/// Where the run's records are written — by lnp-run alone; the program only sends them
/// (`RunServer`), so neither its descriptors nor its file size limit nor a slow reader ever
/// touch it. A regular file is appended to, one line per record in one write. A pipe or a
/// terminal (`--audit /dev/stderr`, `--audit >(jq .)`, a collector's named pipe) is written
/// without blocking: what its reader has not taken yet is held back, up to a limit. The
/// system log gets one datagram per record. Each write that fails says why (`LostRecords`).
final class AuditDestination {
    enum Kind: Equatable { case file, stream, syslog }

    static let syslog = "syslog"
    static let systemLoggerPath = "/dev/log"
    /// What a slow reader may leave unread before records are dropped.
    static let holdLimit = 1 << 20

    let kind: Kind
    /// The file, made absolute; or `syslog`.
    let name: String
    let fd: Int32
    private let sizeLimit: UInt64?
    /// Bytes (a stream) or datagrams (the logger) not taken yet.
    private var held: [UInt8] = []
    private var heldMessages: [[UInt8]] = []

    private init(kind: Kind, name: String, fd: Int32) {
        self.kind = kind
        self.name = name
        self.fd = fd
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &limit)
        sizeLimit = limit.rlim_cur == rlim_t.max ? nil : UInt64(limit.rlim_cur)  // rlim_t.max: RLIM_INFINITY
    }

    /// Opens `argument` (a path, or `syslog`), so that a mistake is reported before the
    /// program runs: a directory, a file lnp-run cannot write, a pipe no one reads yet.
    static func open(_ argument: String) throws(Failure) -> AuditDestination {
        guard !argument.isEmpty else { throw Failure("--audit needs a file") }
        if argument == syslog { return try openSystemLogger() }
        let path = ProgramLocator.absolute(argument)
        var info = stat()
        let exists = stat(path, &info) == 0
        let type = info.st_mode & S_IFMT
        if exists && type == S_IFDIR { throw Failure("cannot write the audit file \(path): it is a directory") }
        let isStream = exists && (type == S_IFIFO || type == S_IFCHR || type == S_IFSOCK)
        let flags = isStream ? O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC : O_WRONLY | O_APPEND | O_CREAT | O_NOCTTY | O_CLOEXEC
        let fd = Glibc.open(path, flags, 0o600)
        guard fd >= 0 else {
            if errno == ENXIO {
                throw Failure("--audit \(path): no process reads this pipe; start its reader first")
            }
            throw Failure("cannot write the audit file \(path): \(ErrnoName.description(of: errno))")
        }
        return AuditDestination(kind: isStream ? .stream : .file, name: path, fd: fd)
    }

    private static func openSystemLogger() throws(Failure) -> AuditDestination {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw Failure("cannot make a socket for the system logger: \(ErrnoName.description(of: errno))") }
        guard UnixSocketAddress.with(systemLoggerPath, { connect(fd, $0, $1) }) == 0 else {
            let failure = errno
            Glibc.close(fd)
            throw Failure("--audit syslog: no system logger listens on \(systemLoggerPath): \(ErrnoName.description(of: failure))")
        }
        return AuditDestination(kind: .syslog, name: syslog, fd: fd)
    }

    /// Writes one record: nil when it was written (or held for a slow reader), else why not.
    func write(_ line: [UInt8], severity: UInt8, sender: pid_t) -> LostRecords.Reason? {
        switch kind {
        case .file: return append(line + [0x0a])
        case .stream: return pour(line + [0x0a])
        case .syslog: return log(Self.syslogHeader(severity: severity, pid: sender) + line)
        }
    }

    /// Whether bytes wait for the reader or the logger (poll the descriptor for POLLOUT).
    var waitsToWrite: Bool { !held.isEmpty || !heldMessages.isEmpty }

    /// Writes what waits, as far as the reader takes it; records lost if the reader left.
    func flush() -> (count: Int, reason: LostRecords.Reason)? {
        if kind == .syslog {
            while let message = heldMessages.first {
                let sent = message.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
                if sent < 0 && (errno == EAGAIN || errno == EINTR) { return nil }
                heldMessages.removeFirst()
                if sent < 0 { return (1, .logger(errno)) }
            }
            return nil
        }
        while !held.isEmpty {
            let written = held.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if written < 0 && (errno == EAGAIN || errno == EINTR) { return nil }
            if written < 0 {
                let lost = Self.lines(in: held)
                held = []
                return (lost, errno == EPIPE ? .readerGone : .write(errno))
            }
            held.removeFirst(written)
        }
        return nil
    }

    /// At the end of the run: waits up to `seconds` for the reader to take what is held;
    /// the records left are lost.
    func finish(within seconds: Int32 = 2) -> (count: Int, reason: LostRecords.Reason)? {
        var waited: Int32 = 0
        while waitsToWrite && waited < seconds * 10 {
            if let lost = flush() { return lost }
            guard waitsToWrite else { break }
            var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            _ = poll(&poller, 1, 100)
            waited += 1
        }
        let left = kind == .syslog ? heldMessages.count : Self.lines(in: held)
        held = []
        heldMessages = []
        return left > 0 ? (left, kind == .syslog ? .logger(EAGAIN) : .slowReader) : nil
    }

    func close() { Glibc.close(fd) }

    private func append(_ bytes: [UInt8]) -> LostRecords.Reason? {
        var info = stat()
        if fstat(fd, &info) == 0 {
            if info.st_nlink == 0 { return .fileRemoved }
            if let sizeLimit, UInt64(info.st_size) + UInt64(bytes.count) > sizeLimit { return .sizeLimit }
        }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written > 0 {
                offset += written
                continue
            }
            if written < 0 && errno == EINTR { continue }
            let failure = written < 0 ? errno : ENOSPC
            // A line cut short is ended, so that the next record starts a line of its own.
            if offset > 0 { _ = [UInt8(0x0a)].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, 1) } }
            return failure == EFBIG ? .sizeLimit : .write(failure)
        }
        return nil
    }

    private func pour(_ bytes: [UInt8]) -> LostRecords.Reason? {
        if !held.isEmpty {
            guard held.count + bytes.count <= Self.holdLimit else { return .slowReader }
            held += bytes
            return nil
        }
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        if written == bytes.count { return nil }
        if written < 0 {
            guard errno == EAGAIN || errno == EINTR else { return errno == EPIPE ? .readerGone : .write(errno) }
            held = bytes
            return nil
        }
        held = Array(bytes[written...])
        return nil
    }

    private func log(_ message: [UInt8]) -> LostRecords.Reason? {
        if !heldMessages.isEmpty {
            guard heldMessages.count < 1000 else { return .logger(EAGAIN) }
            heldMessages.append(message)
            return nil
        }
        let sent = message.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
        if sent >= 0 { return nil }
        guard errno == EAGAIN || errno == EINTR else { return .logger(errno) }
        heldMessages.append(message)
        return nil
    }

    private static func lines(in bytes: [UInt8]) -> Int { bytes.filter { $0 == 0x0a }.count }

    /// The traditional local syslog header glibc's syslog() writes — `<PRI>Mmm dd hh:mm:ss
    /// lnp[PID]: ` — then a CEE cookie: facility user, the record's severity, the time now in
    /// UTC (loggers stamp what they receive; the record's own `time` is exact), and the pid
    /// the kernel gave for the sender.
    static func syslogHeader(severity: UInt8, pid: pid_t, now: time_t = time(nil)) -> [UInt8] {
        var seconds = now
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var text = [CChar](repeating: 0, count: 32)
        let length = strftime(&text, text.count, "%b %e %H:%M:%S", &parts)
        let stamp = String(decoding: text[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return Array("<\(8 + Int(severity))>\(stamp) lnp[\(pid)]: @cee: ".utf8)
    }
}

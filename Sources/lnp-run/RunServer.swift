import CGNUExtensions
import LNPCoreHost
import LNPTools

#if canImport(Glibc)
import Glibc
#endif

/// lnp-run's end of the channel every process of its tree uses (Sources/LNPCore/
/// RunChannel.swift): a SOCK_SEQPACKET socket for requests — settings, asks — and a
/// SOCK_DGRAM socket for records, whose senders the kernel names. Both in the abstract
/// namespace under lnp-run's process id: nothing on the file system to protect, remove or
/// leave behind.
final class RunServer {
    let requests: Int32
    let records: Int32

    private init(requests: Int32, records: Int32) {
        self.requests = requests
        self.records = records
    }

    static func start() throws(Failure) -> RunServer {
        let requests = try listen(type: Int32(SOCK_SEQPACKET.rawValue), records: false)
        do {
            return RunServer(requests: requests, records: try listen(type: Int32(SOCK_DGRAM.rawValue), records: true))
        } catch {
            close(requests)
            throw error
        }
    }

    private static func listen(type: Int32, records: Bool) throws(Failure) -> Int32 {
        let fd = socket(AF_UNIX, type | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw Failure("cannot make lnp-run's socket: \(ErrnoName.description(of: errno))") }
        var address = [UInt8](repeating: 0, count: 112)
        let length = address.withUnsafeMutableBytes { RunChannel.address(of: getpid(), records: records, into: $0) }
        let bound = address.withUnsafeBytes { raw in
            bind(fd, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(length))
        }
        let name = String(decoding: address[3..<length], as: UTF8.self)
        guard bound == 0 else {
            let failure = errno
            close(fd)
            if failure == EADDRINUSE {
                throw Failure("another process holds lnp-run's socket name @\(name); refusing to run the program unwatched")
            }
            throw Failure("cannot listen on @\(name): \(ErrnoName.description(of: failure))")
        }
        if records {
            guard lnp_pass_credentials(fd) == 0 else {
                close(fd)
                throw Failure("cannot take senders' credentials on @\(name): \(ErrnoName.description(of: errno))")
            }
            var size: Int32 = 1 << 20  // room for bursts of records while lnp-run writes
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        } else if Glibc.listen(fd, 128) != 0 {
            let failure = errno
            close(fd)
            throw Failure("cannot listen on @\(name): \(ErrnoName.description(of: failure))")
        }
        return fd
    }

    /// A connection waiting to be accepted, if any.
    func accept() -> Int32? {
        let client = lnp_accept_nonblocking(requests)
        return client >= 0 ? client : nil
    }

    /// The request on a connection, once it has arrived: nil while it has not; `.failure`
    /// when the connection is unusable (closed, or not a request).
    static func readRequest(_ client: Int32) -> Result<RunRequest, Failure>? {
        var buffer = [UInt8](repeating: 0, count: 2048)
        let count = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
        if count < 0 && (errno == EAGAIN || errno == EINTR) { return nil }
        guard count > 0, let request = RunRequest.parse(Array(buffer[0..<count])) else {
            return .failure(Failure("a malformed request"))
        }
        return .success(request)
    }

    /// The process that made a connection, as the kernel knows it.
    static func sender(of client: Int32) -> pid_t { pid_t(lnp_peer_pid(client)) }

    /// Datagrams passed over: not records, or cut.
    private(set) var unreadable = 0

    /// The next record waiting, if any.
    func receive() -> ReceivedRecord? {
        var buffer = [UInt8](repeating: 0, count: 16384)
        var sender: Int32 = 0
        var truncated: Int32 = 0
        while true {
            let count = buffer.withUnsafeMutableBytes {
                lnp_receive_with_sender(records, $0.baseAddress, $0.count, &sender, &truncated)
            }
            if count < 0 { return nil }  // none waiting (EAGAIN), or an interrupted read: the next poll says
            if truncated == 0, let record = ReceivedRecord(Array(buffer[0..<count]), sender: pid_t(sender)) { return record }
            unreadable += 1  // not a record, or cut: passed over, and counted
        }
    }

    static func reply(_ client: Int32, _ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        close(client)
    }

    static func reply(_ client: Int32, _ answer: Answer) {
        let wire = answer.wire
        reply(client, [wire.0, wire.1, wire.2])
    }

    func stop() {
        close(requests)
        close(records)
    }
}

/// What a process of the tree asks lnp-run.
enum RunRequest: Equatable {
    /// Its settings (`Settings.fromReply` reads the reply).
    case settings
    /// The settings of a nested lnp-run, which registers as such.
    case nested
    /// Whether its program may use the local network (while undetermined).
    case ask(ReceivedAsk)
    /// Whether this run took the process as a nested run (`RunChannel.isVouchedFor`).
    case vouch(pid_t)
    /// The Bonjour service types the program declares (`BonjourDeclaration`).
    case services

    static func parse(_ bytes: [UInt8]) -> RunRequest? {
        if bytes == Array("settings".utf8) { return .settings }
        if bytes == Array("nested".utf8) { return .nested }
        if bytes == Array("services".utf8) { return .services }
        if bytes.starts(with: Array("vouch ".utf8)) {
            return pid_t(String(decoding: bytes.dropFirst(6), as: UTF8.self)).map { .vouch($0) }
        }
        return ReceivedAsk.parse(bytes).map { .ask($0) }
    }
}

/// One record datagram (`RecordDatagram`): who sent it, as the kernel says.
struct ReceivedRecord: Equatable {
    var sender: pid_t
    /// Records the sender could not send before this one.
    var lost: UInt32
    var severity: UInt8
    /// Whether the sender says a supervisor decided it (believed only from an lnp-run).
    var bySupervisor: Bool
    /// Whether the sender says it has no gadget page (its calls all reach a supervisor).
    var outsidePage: Bool
    /// The record's JSON; empty for a datagram that only reports records lost.
    var line: ArraySlice<UInt8>

    init?(_ bytes: [UInt8], sender: pid_t) {
        let magic = RecordDatagram.magic
        guard bytes.count >= RecordDatagram.headerSize, bytes[0] == magic.0, bytes[1] == magic.1, bytes[2] == magic.2,
            bytes[3] == magic.3
        else { return nil }
        self.sender = sender
        lost = UInt32(bytes[4]) | UInt32(bytes[5]) << 8 | UInt32(bytes[6]) << 16 | UInt32(bytes[7]) << 24
        severity = bytes[8]
        bySupervisor = bytes[9] == 1
        outsidePage = bytes[10] == 1
        line = bytes[RecordDatagram.headerSize...]
    }
}

import LNPSys

/// The channel to lnp-run, the process that started this program's tree: where a process
/// fetches its settings, asks while its program is undetermined, and sends its records — not
/// the environment, which any descendant can rewrite or empty.
///
/// lnp-run listens on two abstract sockets named for its process id: `lnp-run/PID`
/// (SOCK_SEQPACKET: one request and its reply per connection) and `lnp-run/PID/records`
/// (SOCK_DGRAM: one record per datagram, with the sender's credentials, which the kernel
/// fills in). lnp-run answers only the processes of its own tree, which it checks in /proc;
/// a process checks in turn that the listener is that process (SO_PEERCRED). Every
/// descriptor lives for the call.
public enum RunChannel {
    /// `sockaddr_un` for `\0lnp-run/PID` (with `/records`) into `buffer` (≥ 110 bytes); its length.
    public static func address(of pid: Int32, records: Bool, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        var writer = ByteWriter(UnsafeMutableRawBufferPointer(rebasing: buffer[3...]))
        writer.append("lnp-run/")
        writer.appendDecimal(Int64(pid))
        if records { writer.append("/records") }
        buffer[0] = UInt8(LNP_AF_UNIX)
        buffer[1] = 0
        buffer[2] = 0  // the abstract namespace: a name, not a path
        return 3 + writer.count
    }

    /// One request on a connection to lnp-run `pid`: the reply's length, or nil when lnp-run
    /// cannot be reached, or another process listens under its name. A held ask waits here
    /// for the person's answer (`answeredAtOnce` false); any other request waits at most two
    /// seconds for its reply, and every connect and send one second — so a listener that
    /// never accepts or never answers (anyone may listen under a name) holds no one up.
    public static func request(
        _ message: UnsafeRawBufferPointer, to pid: Int32, reply: UnsafeMutableRawBufferPointer, answeredAtOnce: Bool = true
    ) -> Int? {
        guard pid > 0, case .success(let fd) = openSocket(Int32(LNP_SOCK_SEQPACKET)) else { return nil }
        defer { Sys.close(fd) }
        limitWait(fd, Int32(LNP_SO_SNDTIMEO), seconds: 1)
        if answeredAtOnce { limitWait(fd, Int32(LNP_SO_RCVTIMEO), seconds: 2) }
        guard connect(fd, to: pid, records: false), peerIs(pid, fd) else { return nil }
        guard case .success = Sys.retryingInterrupted({
            Sys.call(Int(LNP_SYS_SENDTO), Int(fd), Int(bitPattern: message.baseAddress), message.count, Int(LNP_MSG_NOSIGNAL))
        }) else { return nil }
        guard case .success(let count) = Sys.retryingInterrupted({
            Sys.call(Int(LNP_SYS_RECVFROM), Int(fd), Int(bitPattern: reply.baseAddress), reply.count)
        }) else { return nil }
        return count
    }

    /// Whether the lnp-run `pid` is one the runs above it vouch for: the nearest lnp-run
    /// above it took it as nested, and so on up to the outermost, which has none above. A
    /// process that merely listens where an lnp-run would is vouched for by none — unless no
    /// lnp-run is above it at all, and then it is no run's to answer for.
    public static func isVouchedFor(_ pid: Int32) -> Bool {
        var run = pid
        var above = ProcessAncestry.parent(of: pid)
        for _ in 0..<ProcessAncestry.depth {
            guard let candidate = above, candidate > 1 else { return true }
            switch vouch(for: run, asking: candidate) {
            case nil: break  // no lnp-run there
            case false?: return false
            case true?: run = candidate
            }
            above = ProcessAncestry.parent(of: candidate)
        }
        return false
    }

    /// lnp-run `candidate`'s word on `run` (`vouch PID`, answered `yes` for a nested run it
    /// registered); nil when no lnp-run listens there.
    private static func vouch(for run: Int32, asking candidate: Int32) -> Bool? {
        var request = InlineArray<24, UInt8>(repeating: 0)
        var reply = InlineArray<4, UInt8>(repeating: 0)
        return withUnsafeMutableBytes(of: &request) { raw -> Bool? in
            var writer = ByteWriter(raw)
            writer.append("vouch ")
            writer.appendDecimal(Int64(run))
            let message = UnsafeRawBufferPointer(start: raw.baseAddress, count: writer.count)
            return withUnsafeMutableBytes(of: &reply) { answer -> Bool? in
                guard let count = Self.request(message, to: candidate, reply: answer) else { return nil }
                return count == 3 && answer[0] == UInt8(ascii: "y") && answer[1] == UInt8(ascii: "e")
                    && answer[2] == UInt8(ascii: "s")
            }
        }
    }

    /// Sends one record to lnp-run `pid`. A full queue (lnp-run busy with many records at
    /// once) is waited on for up to five seconds; whether the record went. (The queue holds
    /// `net.unix.max_dgram_qlen` records, 10 by default; a hundred threads recording at once
    /// on a machine whose processors other work keeps busy kept it full for over a second.)
    public static func sendRecord(_ datagram: UnsafeRawBufferPointer, to pid: Int32) -> Bool {
        guard pid > 0, case .success(let fd) = openSocket(Int32(LNP_SOCK_DGRAM)) else { return false }
        defer { Sys.close(fd) }
        // Addressed rather than connected: a call less per record. Only a full queue needs
        // the connection, for poll to report room in it.
        var address = InlineArray<112, UInt8>(repeating: 0)
        let first = withUnsafeMutableBytes(of: &address) { raw in
            Sys.call(Int(LNP_SYS_SENDTO), Int(fd), Int(bitPattern: datagram.baseAddress), datagram.count,
                     Int(LNP_MSG_NOSIGNAL | LNP_MSG_DONTWAIT), Int(bitPattern: raw.baseAddress),
                     RunChannel.address(of: pid, records: true, into: raw))
        }
        if case .success = first { return true }
        guard case .failure(let error) = first, error.rawValue == Int32(LNP_EAGAIN) || error.rawValue == Int32(LNP_EINTR),
            connect(fd, to: pid, records: true)
        else { return false }
        return sendRecord(datagram, onConnected: fd)
    }

    /// A socket connected to lnp-run `pid`'s records, for a sender of many (a nested lnp-run
    /// passing its tree's records up): its sends name no address, so no seccomp filter above is
    /// notified of them. (An enclosing --strict run's supervisor is, of an addressed send; it
    /// may be waiting on this very sender to answer for a call of its tree.)
    public static func recordConnection(to pid: Int32) -> Int32? {
        guard pid > 0, case .success(let fd) = openSocket(Int32(LNP_SOCK_DGRAM)) else { return nil }
        guard connect(fd, to: pid, records: true) else {
            Sys.close(fd)
            return nil
        }
        return fd
    }

    /// Sends one record on a socket connected to lnp-run's records, waiting on a full queue as
    /// `sendRecord(_:to:)` does.
    public static func sendRecord(_ datagram: UnsafeRawBufferPointer, onConnected fd: Int32) -> Bool {
        // Bounded by time, not by tries: many threads waiting on one queue are all woken when
        // a place frees, and most find it taken again.
        let start = lnp_sys_half_seconds()
        while true {
            let sent = Sys.call(Int(LNP_SYS_SENDTO), Int(fd), Int(bitPattern: datagram.baseAddress), datagram.count,
                                Int(LNP_MSG_NOSIGNAL | LNP_MSG_DONTWAIT))
            if case .success = sent { return true }
            guard case .failure(let error) = sent, error.rawValue == Int32(LNP_EAGAIN) || error.rawValue == Int32(LNP_EINTR)
            else { return false }
            let elapsed = lnp_sys_half_seconds() - start  // (the wall clock: set back, it gives up)
            if elapsed >= 10 || elapsed < 0 { return false }  // four and a half to five seconds
            waitForRoom(fd)  // connected, so poll reports room in lnp-run's queue
        }
    }

    /// SO_SNDTIMEO or SO_RCVTIMEO (a struct timeval): a connect to a full queue waits as a send.
    private static func limitWait(_ fd: Int32, _ option: Int32, seconds: Int64) {
        var time = InlineArray<2, Int64>(repeating: 0)
        time[0] = seconds
        withUnsafeMutableBytes(of: &time) { raw in
            _ = Sys.call(Int(LNP_SYS_SETSOCKOPT), Int(fd), Int(LNP_SOL_SOCKET), Int(option), Int(bitPattern: raw.baseAddress), 16)
        }
    }

    private static func openSocket(_ type: Int32) -> Result<Int32, Errno> {
        Sys.openingPastTheLimit {
            Sys.call(Int(LNP_SYS_SOCKET), Int(LNP_AF_UNIX), Int(type | Int32(LNP_SOCK_CLOEXEC)), 0)
                .map { Int32(truncatingIfNeeded: $0) }
        }
    }

    private static func connect(_ fd: Int32, to pid: Int32, records: Bool) -> Bool {
        var address = InlineArray<112, UInt8>(repeating: 0)
        return withUnsafeMutableBytes(of: &address) { raw in
            let length = RunChannel.address(of: pid, records: records, into: raw)
            let connected = Sys.retryingInterrupted {
                Sys.call(Int(LNP_SYS_CONNECT), Int(fd), Int(bitPattern: raw.baseAddress), length)
            }
            // (EISCONN: a connect interrupted by a signal went on to complete)
            if case .failure(let error) = connected, error.rawValue != Int32(LNP_EISCONN) { return false }
            return true
        }
    }

    /// Whether the process listening at the other end is `pid` (struct ucred: pid first).
    private static func peerIs(_ pid: Int32, _ fd: Int32) -> Bool {
        var credentials = InlineArray<3, Int32>(repeating: 0)
        return withUnsafeMutableBytes(of: &credentials) { raw in
            guard case .success = Sys.socketOption(fd, level: Int32(LNP_SOL_SOCKET), Int32(LNP_SO_PEERCRED), into: raw) else {
                return false
            }
            return raw.load(as: Int32.self) == pid
        }
    }

    private static func waitForRoom(_ fd: Int32) {
        var pollfd = InlineArray<8, UInt8>(repeating: 0)  // int fd; short events; short revents
        var timeout = InlineArray<2, Int64>(repeating: 0)  // struct timespec: 100 ms
        timeout[1] = 100_000_000
        withUnsafeMutableBytes(of: &pollfd) { poll in
            poll.storeBytes(of: fd, toByteOffset: 0, as: Int32.self)
            poll.storeBytes(of: Int16(LNP_POLLOUT), toByteOffset: 4, as: Int16.self)
            withUnsafeMutableBytes(of: &timeout) { time in
                _ = Sys.call(Int(LNP_SYS_PPOLL), Int(bitPattern: poll.baseAddress), 1, Int(bitPattern: time.baseAddress), 0, 8)
            }
        }
    }
}

/// A record as sent to lnp-run: `lnp1`, how many records this process could not send since
/// the last one that went (a little-endian UInt32), its system-log severity, which path
/// decided it (0: the preload; 1: a supervisor — believed only from another lnp-run), two
/// bytes of padding; then the record's JSON, without a newline (none at all for a datagram
/// that only reports records lost).
public enum RecordDatagram {
    public static let headerSize = 12
    public static let magic: (UInt8, UInt8, UInt8, UInt8) = (0x6c, 0x6e, 0x70, 0x31)  // "lnp1"

    /// `outsidePage`: the sender makes its calls without the gadget page (it has none), so
    /// a supervisor that filters it is notified of each, and makes and records the allowed ones.
    public static func writeHeader(
        lost: UInt32, severity: UInt8, bySupervisor: Bool = false, outsidePage: Bool = false,
        into buffer: UnsafeMutableRawBufferPointer
    ) {
        buffer[0] = magic.0
        buffer[1] = magic.1
        buffer[2] = magic.2
        buffer[3] = magic.3
        buffer.storeBytes(of: lost.littleEndian, toByteOffset: 4, as: UInt32.self)
        buffer[8] = severity
        buffer[9] = bySupervisor ? 1 : 0
        buffer[10] = outsidePage ? 1 : 0
        buffer[11] = 0
    }

    /// The severities a record datagram may carry (syslog's warning, notice, info).
    public static var severities: ClosedRange<UInt8> { 4...6 }

    /// The system log's severity for a record: warning when denied, notice when allowed,
    /// info for activity off the local network.
    public static func severity(of record: AuditRecord) -> UInt8 { !record.verdict.isLocal ? 6 : record.decision == .allow ? 5 : 4 }
}

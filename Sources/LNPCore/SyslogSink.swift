import LNPSys

/// The audit sent to the system logger (`LNP_AUDIT=syslog`): each record is one datagram to
/// `/dev/log` (journald or rsyslog), in the traditional local format glibc's syslog() uses,
/// with the record as CEE-style JSON after the tag:
///
///     <13>Nov 21 10:00:00 lnp[1234]: @cee: {"time":"…",…,"local":true}
///
/// Facility user; severity notice for an allowed local operation, warning for a denied one,
/// info for activity that is not local. The header's time is UTC (local daemons stamp what
/// they receive themselves); the record's `time` is the exact one. A socket is opened and
/// closed per record, like the audit file, so the program's descriptors are left alone.
/// When the logger's queue stays full for 100 ms the record is dropped: a stalled logger must
/// not stop every wrapped program.
enum SyslogSink {
    /// Room the header takes before the record, at most.
    static let headerCapacity = 64
    static let path: StaticString = "/dev/log"

    static func isTarget(_ auditPath: UnsafePointer<UInt8>) -> Bool {
        Bytes.equal(UnsafeBufferPointer(start: auditPath, count: CString.length(auditPath, limit: 7)), "syslog")
    }

    /// Composes the message in `buffer` and sends it.
    static func send(_ record: AuditRecord, in buffer: UnsafeMutableRawBufferPointer) {
        var writer = ByteWriter(buffer)
        writeHeader(for: record, to: &writer)
        record.write(to: &writer)
        deliver(UnsafeRawBufferPointer(start: buffer.baseAddress, count: writer.count))
    }

    static func writeHeader(for record: AuditRecord, to w: inout ByteWriter) {
        let severity: UInt64 = !record.verdict.isLocal ? 6 : record.decision == .allow ? 5 : 4
        w.append(UInt8(ascii: "<"))
        w.appendDecimal(1 << 3 | severity)  // facility 1, user
        w.append(UInt8(ascii: ">"))
        record.time.writeSyslogStyle(to: &w)
        w.append(" lnp[")
        w.appendDecimal(Int64(record.pid))
        w.append("]: @cee: ")
    }

    /// How long a record waits for a stalled logger before it is dropped.
    static let stallNanoseconds = 100_000_000

    private static func deliver(_ message: UnsafeRawBufferPointer) {
        let opened = Sys.openingPastTheLimit {
            Sys.call(Int(LNP_SYS_SOCKET), Int(LNP_AF_UNIX), Int(LNP_SOCK_DGRAM | LNP_SOCK_CLOEXEC), 0)
                .map { Int32(truncatingIfNeeded: $0) }
        }
        guard case .success(let fd) = opened else { return }
        defer { Sys.close(fd) }
        var address = InlineArray<16, UInt8>(repeating: 0)  // sockaddr_un: family, "/dev/log", NUL
        let connected = withUnsafeMutableBytes(of: &address) { sockaddr in
            sockaddr[0] = UInt8(LNP_AF_UNIX)
            for i in 0..<path.utf8CodeUnitCount { sockaddr[2 + i] = path.utf8Start[i] }
            return Sys.retryingInterrupted {
                Sys.call(Int(LNP_SYS_CONNECT), Int(fd), Int(bitPattern: sockaddr.baseAddress), 2 + path.utf8CodeUnitCount + 1)
            }
        }
        guard case .success = connected else { return }
        // Never block the program on a stalled logger: wait for room once, briefly, then drop.
        for attempt in 0..<2 {
            let sent = Sys.call(Int(LNP_SYS_SENDTO), Int(fd), Int(bitPattern: message.baseAddress), message.count,
                                Int(LNP_MSG_NOSIGNAL | LNP_MSG_DONTWAIT))
            guard case .failure(let error) = sent, error.rawValue == Int32(LNP_EAGAIN), attempt == 0 else { return }
            waitForRoom(fd)
        }
    }

    /// ppoll for POLLOUT: on a connected datagram socket, room in the logger's queue.
    private static func waitForRoom(_ fd: Int32) {
        var pollfd = InlineArray<8, UInt8>(repeating: 0)  // int fd; short events; short revents
        var timeout = InlineArray<2, Int64>(repeating: 0)  // struct timespec
        timeout[1] = Int64(stallNanoseconds)
        withUnsafeMutableBytes(of: &pollfd) { poll in
            poll.storeBytes(of: fd, toByteOffset: 0, as: Int32.self)
            poll.storeBytes(of: Int16(LNP_POLLOUT), toByteOffset: 4, as: Int16.self)
            withUnsafeMutableBytes(of: &timeout) { time in
                _ = Sys.call(Int(LNP_SYS_PPOLL), Int(bitPattern: poll.baseAddress), 1, Int(bitPattern: time.baseAddress), 0, 8)
            }
        }
    }
}

extension Timestamp {
    /// `Nov 21 10:00:00`, `Nov  1 10:00:00`: RFC 3164's time, in UTC.
    func writeSyslogStyle(to w: inout ByteWriter) {
        let (days, secondOfDay) = daysAndSecond
        let (_, month, day) = Self.civil(fromDays: days)
        let names: StaticString = "JanFebMarAprMayJunJulAugSepOctNovDec"
        let first = Int(month - 1) * 3
        for i in first..<(first + 3) { w.append(names.utf8Start[i]) }
        w.append(day < 10 ? "  " : " ")
        w.appendDecimal(UInt64(day))
        w.append(UInt8(ascii: " "))
        Self.writeClock(secondOfDay, to: &w)
    }
}

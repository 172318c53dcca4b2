import LNPSys

/// The peer a raw socket is connected to. No socket call names it — SO_PEERNAME and
/// getpeername answer ENOTCONN while the peer's port is 0, as it is for a raw socket connected
/// to a plain address — but the network namespace's /proc/net/raw (raw6) lists it: the line
/// of the socket's inode, in state 01 (connected).
enum RawSocketPeer {
    enum Peer {
        case connected(SocketEndpoint)
        case unconnected
        /// The table could not be read, or does not list the socket (another namespace's, or a
        /// /proc that is not the kernel's): the caller fails closed.
        case unknown
    }

    static func peer(_ fd: Int32, _ socket: SocketKind) -> Peer {
        if let peer = SocketPeer.endpoint(fd, socket) { return .connected(peer) }
        switch line(of: fd, socket) {
        case .thisSocket(let peer?): return .connected(peer)
        case .thisSocket(nil): return .unconnected
        case .otherSocket: return .unknown
        }
    }

    /// The socket's line of the table; `.otherSocket` when there is none to be read.
    private static func line(of fd: Int32, _ socket: SocketKind) -> LineMatch {
        let inode = lnp_sys_inode(fd)
        guard inode != 0 else { return .otherSocket }
        let file: StaticString = socket.domain == Int32(LNP_AF_INET6) ? "/proc/self/net/raw6" : "/proc/self/net/raw"
        guard case .success(let table) = Sys.openingPastTheLimit({ Sys.open(file.utf8Start, flags: Int32(LNP_O_RDONLY)) })
        else { return .otherSocket }
        defer { Sys.close(table) }
        var text = InlineArray<4096, UInt8>(repeating: 0)
        return withUnsafeMutableBytes(of: &text) { buffer -> LineMatch in
            var held = 0  // the start of a line the last read cut
            while case .success(let count) = Sys.retryingInterrupted({
                Sys.read(table, into: UnsafeMutableRawBufferPointer(rebasing: buffer[held...]))
            }), count > 0 {
                let end = held + count
                var start = 0
                for index in 0..<end where buffer[index] == UInt8(ascii: "\n") {
                    let match = line(UnsafeRawBufferPointer(rebasing: buffer[start..<index]), inode: inode)
                    if case .thisSocket = match { return match }
                    start = index + 1
                }
                guard start > 0 else { return .otherSocket }  // a line longer than the buffer: not this table
                held = end - start
                buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: buffer[start..<end]))
            }
            return .otherSocket
        }
    }

    enum LineMatch: Equatable {
        case otherSocket
        /// The socket's line, with its peer when it is connected.
        case thisSocket(SocketEndpoint?)
    }

    /// One line of the table: `sl: local rem st tx:rx tr:when retrnsmt uid timeout inode …`,
    /// the addresses in hex as the kernel holds them in memory, each 32-bit word printed as a
    /// number.
    static func line(_ line: UnsafeRawBufferPointer, inode: UInt64) -> LineMatch {
        var fields = InlineArray<10, Range<Int>>(repeating: 0..<0)
        var count = 0, index = 0
        while count < 10 {
            while index < line.count && line[index] == UInt8(ascii: " ") { index += 1 }
            guard index < line.count else { return .otherSocket }
            let start = index
            while index < line.count && line[index] != UInt8(ascii: " ") { index += 1 }
            fields[count] = start..<index
            count += 1
        }
        guard let number = decimal(line, fields[9]), number == inode else { return .otherSocket }
        guard hex(line, fields[3]) == 1 else { return .thisSocket(nil) }  // TCP_ESTABLISHED: connected
        let remote = fields[2]
        let digits = remote.lowerBound..<(line[remote].firstIndex(of: UInt8(ascii: ":")) ?? remote.lowerBound)
        guard digits.count == 8 || digits.count == 32 else { return .thisSocket(nil) }
        var bytes = InlineArray<16, UInt8>(repeating: 0)
        return withUnsafeMutableBytes(of: &bytes) { raw -> LineMatch in
            for word in 0..<(digits.count / 8) {
                let start = digits.lowerBound + word * 8
                guard let value = hex(line, start..<(start + 8)) else { return .thisSocket(nil) }
                raw.storeBytes(of: UInt32(truncatingIfNeeded: value), toByteOffset: word * 4, as: UInt32.self)
            }
            let address = digits.count == 8 ? IPAddress(v4Bytes: raw.baseAddress!) : IPAddress(v6Bytes: raw.baseAddress!).unmapped
            return .thisSocket(SocketEndpoint(address: address))
        }
    }

    private static func decimal(_ line: UnsafeRawBufferPointer, _ range: Range<Int>) -> UInt64? {
        Bytes.parseDecimal(text(line, range), digits: 18).map { UInt64($0) }
    }

    private static func hex(_ line: UnsafeRawBufferPointer, _ range: Range<Int>) -> UInt64? {
        Bytes.parseHexadecimal(text(line, range))
    }

    private static func text(_ line: UnsafeRawBufferPointer, _ range: Range<Int>) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: line.baseAddress!.assumingMemoryBound(to: UInt8.self) + range.lowerBound, count: range.count)
    }
}

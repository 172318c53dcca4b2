import LNPSys

/// How a socket's packets leave, where the socket chose it rather than its destination: an
/// output interface it forces, and, for a raw socket, an IP header of its own. Asked of the
/// kernel each time, and only in a process that has done either (`SocketFlags`).
public enum SocketEgress {
    /// The options that force a socket's output interface: opening one is noted.
    static func forcesInterface(level: Int32, name: Int32) -> Bool {
        switch (level, name) {
        case (Int32(LNP_SOL_SOCKET), Int32(LNP_SO_BINDTODEVICE)), (Int32(LNP_SOL_SOCKET), Int32(LNP_SO_BINDTOIFINDEX)),
            (Int32(LNP_IPPROTO_IP), Int32(LNP_IP_UNICAST_IF)), (Int32(LNP_IPPROTO_IPV6), Int32(LNP_IPV6_UNICAST_IF)):
            return true
        default:
            return false
        }
    }

    /// The interface `fd`'s unicast traffic is forced out of: the device it is bound to
    /// (SO_BINDTODEVICE, SO_BINDTOIFINDEX), else IP_UNICAST_IF or IPV6_UNICAST_IF (which the
    /// kernel keeps in network byte order); 0 for none. `domain`, when known: an IPv4 socket
    /// has no IPv6 option to ask.
    public static func forcedInterface(_ fd: Int32, domain: Int32 = 0) -> UInt32 {
        if case .success(let bound) = Sys.socketOption(fd, Int32(LNP_SO_BINDTOIFINDEX)), bound > 0 { return UInt32(bound) }
        let levels = domain == Int32(LNP_AF_INET) ? 1 : 2
        for (level, name) in [(Int32(LNP_IPPROTO_IP), Int32(LNP_IP_UNICAST_IF)), (Int32(LNP_IPPROTO_IPV6), Int32(LNP_IPV6_UNICAST_IF))].prefix(levels) {
            if case .success(let index) = Sys.socketOption(fd, level: level, name), index != 0 {
                return UInt32(bigEndian: UInt32(bitPattern: index))
            }
        }
        return 0
    }

    /// The interface a setsockopt call forces (its value), or nil when it forces none (or
    /// unbinds). SO_BINDTODEVICE names the device; the others give its index.
    static func interface(forcedBy name: Int32, value: UnsafeRawPointer, length: Int) -> UInt32? {
        switch name {
        case Int32(LNP_SO_BINDTODEVICE):
            let bytes = UnsafeBufferPointer(start: value.assumingMemoryBound(to: UInt8.self), count: min(length, 16))
            let nameLength = CString.length(bytes.baseAddress!, limit: bytes.count)
            guard nameLength > 0, case .success(let socket) = NetlinkSocket.open() else { return nil }
            defer { Sys.close(socket) }
            let index = lnp_sys_interface_index(socket, bytes.baseAddress, nameLength)
            return index > 0 ? UInt32(index) : nil
        case Int32(LNP_IP_UNICAST_IF), Int32(LNP_IPV6_UNICAST_IF):
            guard length >= 4 else { return nil }
            let index = UInt32(bigEndian: value.loadUnaligned(as: UInt32.self))
            return index != 0 ? index : nil
        default:
            guard length >= 4 else { return nil }
            let index = value.loadUnaligned(as: Int32.self)
            return index > 0 ? UInt32(index) : nil
        }
    }

    /// Whether a setsockopt option makes a raw socket write its own IP headers.
    static func writesHeaders(level: Int32, name: Int32) -> Bool {
        (level, name) == (Int32(LNP_IPPROTO_IP), Int32(LNP_IP_HDRINCL))
            || (level, name) == (Int32(LNP_IPPROTO_IPV6), Int32(LNP_IPV6_HDRINCL))
    }

    /// Whether an IP_HDRINCL or IPV6_HDRINCL value turns it on, read as the kernel reads it:
    /// IPv4 takes an int, or a single byte from a shorter option; IPv6 an int only (shorter
    /// ones are refused).
    static func turnsOn(level: Int32, value: UnsafeRawPointer, length: Int) -> Bool {
        if length >= 4 { return value.loadUnaligned(as: Int32.self) != 0 }
        return level == Int32(LNP_IPPROTO_IP) && length >= 1 && value.load(as: UInt8.self) != 0
    }

    /// Whether a raw socket writes its own IP header: IPPROTO_RAW sockets always do, others
    /// once IP_HDRINCL (or IPV6_HDRINCL) is set.
    public static func writesHeader(_ fd: Int32, _ socket: SocketKind) -> Bool {
        guard socket.transport == .raw else { return false }
        if socket.protocolNumber == Int32(LNP_IPPROTO_RAW) { return true }
        let (level, name) = socket.domain == Int32(LNP_AF_INET6)
            ? (Int32(LNP_IPPROTO_IPV6), Int32(LNP_IPV6_HDRINCL)) : (Int32(LNP_IPPROTO_IP), Int32(LNP_IP_HDRINCL))
        if case .success(let on) = Sys.socketOption(fd, level: level, name) { return on != 0 }
        return false
    }

    /// The destination an IP header names (IPv4's at byte 16, IPv6's at 24), or nil.
    static func headerDestination(_ header: UnsafeRawBufferPointer) -> SocketEndpoint? {
        guard header.count >= 20 else { return nil }
        switch header[0] >> 4 {
        case 4: return SocketEndpoint(address: IPAddress(v4Bytes: header.baseAddress! + 16))
        case 6: return header.count >= 40 ? SocketEndpoint(address: IPAddress(v6Bytes: header.baseAddress! + 24).unmapped) : nil
        default: return nil
        }
    }
}

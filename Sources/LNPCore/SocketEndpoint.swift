import LNPSys

/// Where a socket call is headed: an address, a port and, for IPv6, a scope (an interface).
public struct SocketEndpoint: Equatable, BitwiseCopyable {
    public var address: IPAddress
    public var port: UInt16
    public var scopeID: UInt32
    /// The family the program wrote in its sockaddr (an IPv4-mapped IPv6 address is an IPv4
    /// `address` from an AF_INET6 sockaddr), to tell what the kernel will make of it.
    public var sockaddrFamily: UInt16

    public init(address: IPAddress, port: UInt16 = 0, scopeID: UInt32 = 0, sockaddrFamily: UInt16? = nil) {
        self.address = address
        self.port = port
        self.scopeID = scopeID
        self.sockaddrFamily = sockaddrFamily ?? UInt16(address.family == .v4 ? LNP_AF_INET : LNP_AF_INET6)
    }

    /// Reads a `sockaddr` the program passed. Returns nil for everything the core leaves to
    /// the kernel untouched: a pointer that cannot be user memory, a length too short for the
    /// family or longer than any sockaddr (the kernel answers those with its own EFAULT or
    /// EINVAL), and families other than IPv4 and IPv6, AF_UNSPEC included (see
    /// `parseUnspecified`). The address comes back unmapped unless asked otherwise.
    @inline(__always)
    public static func parse(_ pointer: UnsafeRawPointer?, length: Int, unmapping: Bool = true) -> SocketEndpoint? {
        guard let pointer, ProgramMemory.isPlausible(pointer), length >= 2, length <= Int(LNP_SOCKADDR_CAPACITY) else { return nil }
        let family = pointer.loadUnaligned(as: UInt16.self)
        if family == UInt16(LNP_AF_INET) {
            guard length >= 16 else { return nil }
            return SocketEndpoint(
                address: IPAddress(v4Bytes: pointer + 4),
                port: UInt16(bigEndian: pointer.loadUnaligned(fromByteOffset: 2, as: UInt16.self)))
        }
        if family == UInt16(LNP_AF_INET6) {
            guard length >= 24 else { return nil }  // SIN6_LEN_RFC2133: the scope is optional
            let scope = length >= 28 ? pointer.loadUnaligned(fromByteOffset: 24, as: UInt32.self) : 0
            let address = IPAddress(v6Bytes: pointer + 8)
            return SocketEndpoint(
                address: unmapping ? address.unmapped : address,
                port: UInt16(bigEndian: pointer.loadUnaligned(fromByteOffset: 2, as: UInt16.self)),
                scopeID: scope, sockaddrFamily: family)
        }
        return nil
    }

    /// A destination whose family is AF_UNSPEC (0): the kernel reads it as IPv4 for UDP,
    /// UDP-Lite and raw IPv4 sockets, and as IPv6 for raw IPv6 sockets. A zeroed sockaddr
    /// with only the address and port filled in is a common mistake, so it is gated too.
    static func parseUnspecified(_ pointer: UnsafeRawPointer, length: Int, socket: SocketKind) -> SocketEndpoint? {
        guard ProgramMemory.isPlausible(pointer), length <= 128, pointer.loadUnaligned(as: UInt16.self) == UInt16(LNP_AF_UNSPEC) else {
            return nil
        }
        let port = UInt16(bigEndian: pointer.loadUnaligned(fromByteOffset: 2, as: UInt16.self))
        if socket.domain == Int32(LNP_AF_INET) && length >= 16
            && (socket.transport == .udp || socket.transport == .udplite || socket.transport == .raw)
        {
            return SocketEndpoint(address: IPAddress(v4Bytes: pointer + 4), port: port, sockaddrFamily: UInt16(LNP_AF_UNSPEC))
        }
        if socket.domain == Int32(LNP_AF_INET6) && length >= 24 && socket.transport == .raw {
            let scope = length >= 28 ? pointer.loadUnaligned(fromByteOffset: 24, as: UInt32.self) : 0
            return SocketEndpoint(address: IPAddress(v6Bytes: pointer + 8), port: port, scopeID: scope, sockaddrFamily: UInt16(LNP_AF_UNSPEC))
        }
        return nil
    }
}

/// Memory the program passed to a hook. The kernel never faults on a bad pointer (it answers
/// EFAULT), so a hook must not either: a pointer that cannot be user memory goes to the
/// kernel unread. (A pointer into an unmapped page of the user range is read; telling those
/// apart would take a system call, see README's limits.)
enum ProgramMemory {
    @inline(__always) static func isPlausible(_ pointer: UnsafeRawPointer) -> Bool { lnp_is_plausible(pointer) != 0 }
}

import LNPSys

/// Where a socket call is headed: an address, a port and, for IPv6, a scope (an interface).
public struct SocketEndpoint: Equatable, BitwiseCopyable {
    public var address: IPAddress
    public var port: UInt16
    public var scopeID: UInt32

    public init(address: IPAddress, port: UInt16 = 0, scopeID: UInt32 = 0) {
        self.address = address
        self.port = port
        self.scopeID = scopeID
    }

    /// Reads a `sockaddr` the program passed. Returns nil for everything the core leaves to
    /// the kernel untouched: a NULL or implausible pointer, a length too short for the family
    /// (the kernel answers those with its own EFAULT or EINVAL), and families other than
    /// IPv4 and IPv6, AF_UNSPEC included. The address comes back unmapped.
    @inline(__always)
    public static func parse(_ pointer: UnsafeRawPointer?, length: Int) -> SocketEndpoint? {
        // The zero page is never mapped: an address there is a bug the kernel reports as EFAULT.
        guard let pointer, UInt(bitPattern: pointer) >= 4096, length >= 2 else { return nil }
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
            return SocketEndpoint(
                address: IPAddress(v6Bytes: pointer + 8).unmapped,
                port: UInt16(bigEndian: pointer.loadUnaligned(fromByteOffset: 2, as: UInt16.self)),
                scopeID: scope)
        }
        return nil
    }
}

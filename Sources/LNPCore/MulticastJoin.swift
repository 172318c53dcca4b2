import LNPSys

/// The group a `setsockopt` call joins, read from whichever structure its option takes.
enum MulticastJoin {
    /// nil when the call joins nothing, or is too short to read (the kernel answers that).
    /// IPv6 groups are not unmapped: an IPv4-mapped group is no IPv6 multicast group, and
    /// the kernel refuses it (EINVAL) by itself.
    /// Whether the option joins a group (whatever its value says).
    static func isJoin(level: Int32, name: Int32) -> Bool {
        switch (level, name) {
        case (Int32(LNP_IPPROTO_IP), Int32(LNP_IP_ADD_MEMBERSHIP)), (Int32(LNP_IPPROTO_IP), Int32(LNP_IP_ADD_SOURCE_MEMBERSHIP)),
            (Int32(LNP_IPPROTO_IPV6), Int32(LNP_IPV6_JOIN_GROUP)), (Int32(LNP_IPPROTO_IP), Int32(LNP_MCAST_JOIN_GROUP)),
            (Int32(LNP_IPPROTO_IPV6), Int32(LNP_MCAST_JOIN_GROUP)), (Int32(LNP_IPPROTO_IP), Int32(LNP_MCAST_JOIN_SOURCE_GROUP)),
            (Int32(LNP_IPPROTO_IPV6), Int32(LNP_MCAST_JOIN_SOURCE_GROUP)):
            return true
        default:
            return false
        }
    }

    static func group(level: Int32, name: Int32, value: UnsafeRawPointer?, length: Int) -> SocketEndpoint? {
        guard let value, ProgramMemory.isPlausible(value) else { return nil }
        switch (level, name) {
        case (Int32(LNP_IPPROTO_IP), Int32(LNP_IP_ADD_MEMBERSHIP)):
            // struct ip_mreq / ip_mreqn: the group comes first.
            guard length >= 8 else { return nil }
            return SocketEndpoint(address: IPAddress(v4Bytes: value))
        case (Int32(LNP_IPPROTO_IP), Int32(LNP_IP_ADD_SOURCE_MEMBERSHIP)):
            // struct ip_mreq_source: group, interface, source.
            guard length >= 12 else { return nil }
            return SocketEndpoint(address: IPAddress(v4Bytes: value))
        case (Int32(LNP_IPPROTO_IPV6), Int32(LNP_IPV6_JOIN_GROUP)):
            // struct ipv6_mreq: the group, then the interface index.
            guard length >= 20 else { return nil }
            return SocketEndpoint(address: IPAddress(v6Bytes: value), scopeID: value.loadUnaligned(fromByteOffset: 16, as: UInt32.self))
        case (Int32(LNP_IPPROTO_IP), Int32(LNP_MCAST_JOIN_GROUP)), (Int32(LNP_IPPROTO_IPV6), Int32(LNP_MCAST_JOIN_GROUP)):
            guard length >= Int(LNP_GROUP_REQ_SIZE) else { return nil }
            return SocketEndpoint.parse(value + Int(LNP_GROUP_REQ_ADDRESS_OFFSET), length: 128, unmapping: false)
        case (Int32(LNP_IPPROTO_IP), Int32(LNP_MCAST_JOIN_SOURCE_GROUP)), (Int32(LNP_IPPROTO_IPV6), Int32(LNP_MCAST_JOIN_SOURCE_GROUP)):
            guard length >= Int(LNP_GROUP_SOURCE_REQ_SIZE) else { return nil }
            return SocketEndpoint.parse(value + Int(LNP_GROUP_REQ_ADDRESS_OFFSET), length: 128, unmapping: false)
        default:
            return nil
        }
    }
}

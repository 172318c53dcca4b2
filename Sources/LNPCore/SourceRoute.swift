import LNPSys

/// A source route: IPv4 options (IP_OPTIONS, or IP_RETOPTS in one message) or an IPv6
/// routing header (IPV6_RTHDR) that send a socket's packets to a first hop the program names,
/// whatever their destination says — the kernel routes to that hop. So the hop is decided as
/// a destination (`Decisions.firstHop`). Read as the kernel reads them; a malformed one sets
/// no route (the kernel refuses it).
public enum SourceRoute {
    /// Whether a setsockopt option may set a source route.
    static func isRoute(level: Int32, name: Int32) -> Bool {
        (level, name) == (Int32(LNP_IPPROTO_IP), Int32(LNP_IP_OPTIONS))
            || (level, name) == (Int32(LNP_IPPROTO_IPV6), Int32(LNP_IPV6_RTHDR))
    }

    /// The first hop the option's value routes to, or nil when it routes nowhere.
    static func firstHop(level: Int32, value: UnsafeRawBufferPointer) -> IPAddress? {
        level == Int32(LNP_IPPROTO_IP) ? firstHop(ipv4Options: value) : firstHop(ipv6RoutingHeader: value)
    }

    /// The first hop of the source route a message's control messages give (IP_RETOPTS).
    public static func firstHop(of message: UnsafePointer<msghdr>) -> IPAddress? {
        var length: UInt32 = 0
        guard let options = lnp_control_ip_options(message, &length) else { return nil }
        return firstHop(ipv4Options: UnsafeRawBufferPointer(start: options, count: Int(length)))
    }

    /// IPv4 options: the first address of a loose or strict source route (LSRR, SSRR), as the
    /// kernel compiles a socket's options — the route's pointer at 4 and whole addresses.
    static func firstHop(ipv4Options options: UnsafeRawBufferPointer) -> IPAddress? {
        var offset = 0
        while offset < options.count {
            switch options[offset] {
            case 0: return nil  // end of the options
            case 1: offset += 1  // no operation
            case let kind:
                guard offset + 2 <= options.count else { return nil }
                let length = Int(options[offset + 1])
                guard length >= 2, offset + length <= options.count else { return nil }
                if kind == 131 || kind == 137 {  // loose, strict source and record route
                    guard length >= 7, (length - 3) % 4 == 0, options[offset + 2] == 4 else { return nil }
                    return IPAddress(v4Bytes: options.baseAddress! + offset + 3)
                }
                offset += length
            }
        }
        return nil
    }

    /// An IPv6 segment routing header (type 4; the only one with more than one address the
    /// kernel takes from a program): its active segment, `segments[segments_left]`. The
    /// header's length must be the option's, as the kernel checks.
    static func firstHop(ipv6RoutingHeader header: UnsafeRawBufferPointer) -> IPAddress? {
        guard header.count >= 24, header[2] == 4, (Int(header[1]) + 1) * 8 == header.count else { return nil }
        let segment = 8 + Int(header[3]) * 16
        guard header[3] <= header[4], segment + 16 <= header.count else { return nil }
        return IPAddress(v6Bytes: header.baseAddress! + segment).unmapped
    }
}

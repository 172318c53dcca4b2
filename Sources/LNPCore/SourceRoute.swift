import LNPSys

/// A source route: IPv4 options (IP_OPTIONS, or IP_RETOPTS in one message) or an IPv6
/// routing header (IPV6_RTHDR) that send a socket's packets to a first hop the program names,
/// whatever their destination says — the kernel routes to that hop. So the hop is decided as
/// a destination (`Decisions.firstHop`). Read as the kernel reads them; a malformed one sets
/// no route (the kernel refuses it).
public enum SourceRoute {
    /// Whether a setsockopt option may set a source route: IP_OPTIONS, IPV6_RTHDR, and
    /// IPV6_2292PKTOPTIONS, whose value is control messages (a routing header among them).
    static func isRoute(level: Int32, name: Int32) -> Bool {
        (level, name) == (Int32(LNP_IPPROTO_IP), Int32(LNP_IP_OPTIONS))
            || (level, name) == (Int32(LNP_IPPROTO_IPV6), Int32(LNP_IPV6_RTHDR))
            || (level, name) == (Int32(LNP_IPPROTO_IPV6), Int32(LNP_IPV6_2292PKTOPTIONS))
    }

    /// The first hop the option's value routes to, or nil when it routes nowhere.
    static func firstHop(level: Int32, name: Int32, value: UnsafeRawBufferPointer) -> IPAddress? {
        if level == Int32(LNP_IPPROTO_IP) { return firstHop(ipv4Options: value) }
        if name == Int32(LNP_IPV6_RTHDR) { return firstHop(ipv6RoutingHeader: value) }
        return routingHeader(inControl: value).flatMap { firstHop(ipv6RoutingHeader: $0) }
    }

    /// The first hop of the source route a message's control messages give (IP_RETOPTS, or an
    /// IPv6 routing header).
    public static func firstHop(of message: UnsafePointer<msghdr>) -> IPAddress? {
        var length: UInt32 = 0
        if let options = lnp_control_ip_options(message, &length),
            let hop = firstHop(ipv4Options: UnsafeRawBufferPointer(start: options, count: Int(length)))
        {
            return hop
        }
        let control = UnsafeRawBufferPointer(start: message.pointee.msg_control, count: Int(message.pointee.msg_controllen))
        return routingHeader(inControl: control).flatMap { firstHop(ipv6RoutingHeader: $0) }
    }

    private static func routingHeader(inControl control: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        guard let base = control.baseAddress else { return nil }
        var length: UInt32 = 0
        guard let header = lnp_control_routing_header(base.assumingMemoryBound(to: UInt8.self), control.count, &length) else {
            return nil
        }
        return UnsafeRawBufferPointer(start: header, count: Int(length))
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

    /// An IPv6 routing header, routed as the kernel routes it (`fl6_update_dst`): a segment
    /// routing header (type 4) to its active segment, `segments[segments_left]`; types 0, 1
    /// and 2 (the mobile IPv6 one, which kernels built with it take from a program) to their
    /// first address. The header's length must be the option's, as the kernel checks.
    static func firstHop(ipv6RoutingHeader header: UnsafeRawBufferPointer) -> IPAddress? {
        guard header.count >= 24, (Int(header[1]) + 1) * 8 == header.count else { return nil }
        switch header[2] {
        case 0, 1, 2: return IPAddress(v6Bytes: header.baseAddress! + 8).unmapped
        case 4:
            let segment = 8 + Int(header[3]) * 16
            guard header[3] <= header[4], segment + 16 <= header.count else { return nil }
            return IPAddress(v6Bytes: header.baseAddress! + segment).unmapped
        default: return nil
        }
    }
}

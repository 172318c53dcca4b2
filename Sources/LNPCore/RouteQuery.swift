import LNPSys

/// The kernel's answer to "which route would carry traffic to this address?": the routing
/// entry it matched, as `ip route get fibmatch ADDRESS` shows it. The kernel's own routing
/// decides what is local, as on Apple's systems; lnp does not keep a copy of the table.
public struct RouteAnswer: Equatable, BitwiseCopyable {
    public enum Kind: UInt8, BitwiseCopyable {
        /// An ordinary route: on-link when it has no gateway.
        case unicast = 1
        /// One of this machine's own addresses (RTN_LOCAL, RTN_ANYCAST).
        case ownAddress = 2
        /// A subnet broadcast address (RTN_BROADCAST).
        case broadcast = 3
        case multicast = 4
        /// No usable route: the kernel would fail the call itself.
        case unreachable = 5
    }

    public var kind: Kind
    public var prefix: IPAddress
    public var prefixLength: UInt8
    public var hasGateway: Bool
    public var outputInterface: UInt32

    public init(kind: Kind, prefix: IPAddress, prefixLength: UInt8, hasGateway: Bool = false, outputInterface: UInt32 = 0) {
        self.kind = kind
        self.prefix = prefix
        self.prefixLength = prefixLength
        self.hasGateway = hasGateway
        self.outputInterface = outputInterface
    }

    static func unreachable(_ address: IPAddress) -> RouteAnswer {
        RouteAnswer(kind: .unreachable, prefix: address, prefixLength: 0)
    }
}

/// The rtnetlink messages of a route query, built and read as bytes.
enum RouteQuery {
    static let headerSize = 16  // struct nlmsghdr
    static let routeMessageSize = 12  // struct rtmsg

    /// Writes an RTM_GETROUTE request for `address`, with RTM_F_FIB_MATCH (the routing entry)
    /// unless `fibMatch` is false (the route as a socket takes it), and RTA_OIF when an
    /// output interface is given; returns its length. `buffer` must hold 64 bytes.
    static func writeRequest(
        for address: IPAddress, outputInterface: UInt32 = 0, fibMatch: Bool = true, sequence: UInt32,
        into buffer: UnsafeMutableRawPointer
    ) -> Int {
        let addressSize = address.family == .v4 ? 4 : 16
        let interfaceSize = outputInterface != 0 ? 8 : 0
        let length = headerSize + routeMessageSize + 4 + addressSize + interfaceSize
        buffer.initializeMemory(as: UInt8.self, repeating: 0, count: 64)
        buffer.storeBytes(of: UInt32(length), toByteOffset: 0, as: UInt32.self)
        buffer.storeBytes(of: UInt16(LNP_RTM_GETROUTE), toByteOffset: 4, as: UInt16.self)
        buffer.storeBytes(of: UInt16(LNP_NLM_F_REQUEST), toByteOffset: 6, as: UInt16.self)
        buffer.storeBytes(of: sequence, toByteOffset: 8, as: UInt32.self)
        let family = address.family == .v4 ? LNP_AF_INET : LNP_AF_INET6
        buffer.storeBytes(of: UInt8(family), toByteOffset: headerSize, as: UInt8.self)
        buffer.storeBytes(of: UInt8(addressSize * 8), toByteOffset: headerSize + 1, as: UInt8.self)
        if fibMatch { buffer.storeBytes(of: UInt32(LNP_RTM_F_FIB_MATCH), toByteOffset: headerSize + 8, as: UInt32.self) }
        let attribute = headerSize + routeMessageSize
        buffer.storeBytes(of: UInt16(4 + addressSize), toByteOffset: attribute, as: UInt16.self)
        buffer.storeBytes(of: UInt16(LNP_RTA_DST), toByteOffset: attribute + 2, as: UInt16.self)
        address.storeBytes(to: buffer + attribute + 4)
        if outputInterface != 0 {
            let oif = attribute + 4 + addressSize
            buffer.storeBytes(of: UInt16(8), toByteOffset: oif, as: UInt16.self)
            buffer.storeBytes(of: UInt16(LNP_RTA_OIF), toByteOffset: oif + 2, as: UInt16.self)
            buffer.storeBytes(of: outputInterface, toByteOffset: oif + 4, as: UInt32.self)
        }
        return length
    }

    /// Reads the kernel's reply. Returns nil if `bytes` holds no complete reply to request
    /// `sequence`; an error reply (no route) is an `.unreachable` answer.
    static func readReply(_ bytes: UnsafeRawBufferPointer, sequence: UInt32, for address: IPAddress) -> RouteAnswer? {
        var offset = 0
        while offset + headerSize <= bytes.count {
            let message = bytes.baseAddress! + offset
            let length = Int(message.loadUnaligned(as: UInt32.self))
            let type = Int(message.loadUnaligned(fromByteOffset: 4, as: UInt16.self))
            let messageSequence = message.loadUnaligned(fromByteOffset: 8, as: UInt32.self)
            guard length >= headerSize, offset + length <= bytes.count else { return nil }
            if messageSequence == sequence {
                if type == Int(LNP_NLMSG_ERROR) { return .unreachable(address) }
                if type == Int(LNP_RTM_NEWROUTE) {
                    return readRoute(UnsafeRawBufferPointer(start: message, count: length), for: address)
                }
            }
            offset += (length + 3) & ~3
        }
        return nil
    }

    private static func readRoute(_ message: UnsafeRawBufferPointer, for address: IPAddress) -> RouteAnswer? {
        guard message.count >= headerSize + routeMessageSize else { return nil }
        let base = message.baseAddress!
        let prefixLength = base.load(fromByteOffset: headerSize + 1, as: UInt8.self)
        let type = Int(base.load(fromByteOffset: headerSize + 7, as: UInt8.self))
        let kind: RouteAnswer.Kind
        switch type {
        case Int(LNP_RTN_UNICAST): kind = .unicast
        case Int(LNP_RTN_LOCAL), Int(LNP_RTN_ANYCAST): kind = .ownAddress
        case Int(LNP_RTN_BROADCAST): kind = .broadcast
        case Int(LNP_RTN_MULTICAST): kind = .multicast
        default: kind = .unreachable
        }
        // A default route has no RTA_DST: its prefix is the zero address of the family.
        var answer = RouteAnswer(
            kind: kind, prefix: address.family == .v4 ? IPAddress(v4: 0) : IPAddress(v6High: 0, low: 0),
            prefixLength: min(prefixLength, UInt8(address.bitWidth)))
        var offset = headerSize + routeMessageSize
        while offset + 4 <= message.count {
            let length = Int(base.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
            let attributeType = Int(base.loadUnaligned(fromByteOffset: offset + 2, as: UInt16.self)) & 0x3fff
            guard length >= 4, offset + length <= message.count else { break }
            let payload = length - 4
            switch attributeType {
            case Int(LNP_RTA_DST):
                if address.family == .v4 && payload == 4 {
                    answer.prefix = IPAddress(v4Bytes: base + offset + 4)
                } else if address.family == .v6 && payload == 16 {
                    answer.prefix = IPAddress(v6Bytes: base + offset + 4)
                }
            case Int(LNP_RTA_OIF):
                if payload == 4 { answer.outputInterface = base.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self) }
            case Int(LNP_RTA_GATEWAY), Int(LNP_RTA_VIA):
                answer.hasGateway = true
            case Int(LNP_RTA_MULTIPATH):
                // Several next hops: if one reaches the destination directly, the route is
                // taken as on-link through that hop's interface (the cautious reading).
                if let hop = firstOnLinkHop(UnsafeRawBufferPointer(start: base + offset + 4, count: payload)) {
                    answer.outputInterface = hop
                } else {
                    answer.hasGateway = true
                }
            default:
                break
            }
            offset += (length + 3) & ~3
        }
        return answer
    }

    /// The interface of the first `struct rtnexthop` that has no gateway, if any.
    static func firstOnLinkHop(_ hops: UnsafeRawBufferPointer) -> UInt32? {
        let base = hops.baseAddress!
        var offset = 0
        while offset + 8 <= hops.count {
            let length = Int(base.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
            guard length >= 8, offset + length <= hops.count else { return nil }
            let interface = base.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
            var hasGateway = false
            var attribute = offset + 8
            while attribute + 4 <= offset + length {
                let attributeLength = Int(base.loadUnaligned(fromByteOffset: attribute, as: UInt16.self))
                let type = Int(base.loadUnaligned(fromByteOffset: attribute + 2, as: UInt16.self)) & 0x3fff
                guard attributeLength >= 4, attribute + attributeLength <= offset + length else { break }
                if type == Int(LNP_RTA_GATEWAY) || type == Int(LNP_RTA_VIA) { hasGateway = true }
                attribute += (attributeLength + 3) & ~3
            }
            if !hasGateway && interface != 0 { return interface }
            offset += (length + 3) & ~3
        }
        return nil
    }
}

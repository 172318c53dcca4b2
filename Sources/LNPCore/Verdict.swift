/// Why an operation reaches the local network.
public enum LocalReason: Equatable, BitwiseCopyable {
    /// 224.0.0.0/4 or ff00::/8.
    case multicast
    /// 255.255.255.255.
    case limitedBroadcast
    /// 169.254.0.0/16 or fe80::/10; the scope names the interface when the program gave one.
    case linkLocal(scopeID: UInt32)
    /// Reached directly, by a route without a gateway, through a broadcast-capable interface.
    case onLink(prefix: IPAddress, length: UInt8, interface: InterfaceName)
    /// The broadcast address of such an interface's subnet.
    case subnetBroadcast(interface: InterfaceName)
    /// A name ending in `.local`, resolved by multicast DNS.
    case localName
    /// The route could not be learned (the kernel could not be asked, or its answer could not
    /// be read; the errno when there is one): taken as local, so that lnp fails closed.
    case routeUnknown(Errno?)
    /// A packet socket (AF_PACKET), which sends and receives frames on a link directly.
    case packetSocket
    /// A raw socket that writes its own IP headers, connected: its writes go where their
    /// headers say, which no call lnp sees names.
    case headerWriter
    /// Bonjour through the system's mDNS daemon (browsing, resolving, advertising), or a
    /// name the daemon resolves by multicast DNS: the daemon sends the packets.
    case bonjour
}

/// Why an operation does not reach the local network.
public enum NotLocalReason: Equatable, BitwiseCopyable {
    case loopback
    case unspecified
    case ownAddress
    case viaGateway(prefix: IPAddress, length: UInt8, interface: InterfaceName)
    case pointToPoint(interface: InterfaceName)
    case loopbackInterface(interface: InterfaceName)
    case notBroadcastCapable(interface: InterfaceName)
    case interfaceDown(interface: InterfaceName)
    case noRoute
    /// Exempt, as on Apple's systems: a DNS server named in /etc/resolv.conf.
    case dnsServer
    /// Exempt, as on Apple's systems: the proxy named in the environment.
    case proxy
    /// A name that does not end in `.local`.
    case notLocalName
    /// A bind to a unicast or wildcard address (only multicast and broadcast binds count).
    case unicastBind
}

public enum Verdict: Equatable, BitwiseCopyable {
    case local(LocalReason)
    case notLocal(NotLocalReason)

    public var isLocal: Bool {
        if case .local = self { return true }
        return false
    }
}

// MARK: - Text

extension LocalReason {
    /// The `reason` of an audit record, e.g. `on-link 10.77.0.0/24 via eth1`.
    public func write(to writer: inout ByteWriter, scopeName: InterfaceName = InterfaceName()) {
        switch self {
        case .multicast: writer.append("multicast")
        case .limitedBroadcast: writer.append("broadcast")
        case .linkLocal:
            writer.append("link-local")
            if !scopeName.isEmpty {
                writer.append(" via ")
                scopeName.write(to: &writer)
            }
        case .onLink(let prefix, let length, let interface):
            writer.append("on-link ")
            prefix.write(to: &writer)
            writer.append(UInt8(ascii: "/"))
            writer.appendDecimal(UInt64(length))
            writer.append(" via ")
            interface.write(to: &writer)
        case .subnetBroadcast(let interface):
            writer.append("subnet broadcast via ")
            interface.write(to: &writer)
        case .localName: writer.append(".local name")
        case .routeUnknown(let error):
            writer.append("route could not be learned")
            if let error {
                writer.append(" (")
                error.write(to: &writer)
                writer.append(")")
            }
        case .packetSocket: writer.append("packet socket (it talks to the link directly)")
        case .headerWriter: writer.append("a raw socket writing its own IP headers (they name where its writes go)")
        case .bonjour: writer.append("Bonjour, through the system's mDNS daemon")
        }
    }
}

extension NotLocalReason {
    public func write(to writer: inout ByteWriter) {
        switch self {
        case .loopback: writer.append("loopback")
        case .unspecified: writer.append("unspecified address")
        case .ownAddress: writer.append("an address of this machine")
        case .viaGateway(let prefix, let length, let interface):
            writer.append("through a gateway (route ")
            prefix.write(to: &writer)
            writer.append(UInt8(ascii: "/"))
            writer.appendDecimal(UInt64(length))
            if !interface.isEmpty {
                writer.append(" on ")
                interface.write(to: &writer)
            }
            writer.append(")")
        case .pointToPoint(let interface):
            writer.append("point-to-point interface ")
            interface.write(to: &writer)
        case .loopbackInterface(let interface):
            writer.append("loopback interface ")
            interface.write(to: &writer)
        case .notBroadcastCapable(let interface):
            writer.append("interface ")
            interface.write(to: &writer)
            writer.append(" is not broadcast-capable")
        case .interfaceDown(let interface):
            writer.append("interface ")
            interface.write(to: &writer)
            writer.append(" is down")
        case .noRoute: writer.append("no route")
        case .dnsServer: writer.append("DNS server named in /etc/resolv.conf (exempt)")
        case .proxy: writer.append("proxy named in the environment (exempt)")
        case .notLocalName: writer.append("not a .local name")
        case .unicastBind: writer.append("bind to a unicast or wildcard address")
        }
    }
}

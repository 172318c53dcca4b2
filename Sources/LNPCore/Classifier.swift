/// Whether a route, as the kernel answered it, leads onto the local network.
public enum RouteVerdict {
    /// The verdict the kernel's route to `address` implies. A route that could not be learned
    /// is local: lnp fails closed rather than guess.
    public static func verdict(from lookup: Result<RouteFacts, Errno>, for address: IPAddress) -> Verdict {
        let facts: RouteFacts
        switch lookup {
        case .success(let found): facts = found
        case .failure(let error): return .local(.routeUnknown(error))
        }
        let answer = facts.answer
        switch answer.kind {
        case .ownAddress: return .notLocal(.ownAddress)
        case .unreachable: return .notLocal(.noRoute)
        case .multicast: return .local(.multicast)
        case .unicast, .broadcast: break
        }
        let name = facts.interface?.name ?? InterfaceName()
        if answer.hasGateway {
            return .notLocal(.viaGateway(prefix: answer.prefix, length: answer.prefixLength, interface: name))
        }
        guard let interface = facts.interface else { return .local(.routeUnknown(nil)) }  // (its interface unreadable)
        if !interface.isUp { return .notLocal(.interfaceDown(interface: name)) }
        if interface.isLoopback { return .notLocal(.loopbackInterface(interface: name)) }
        if interface.isPointToPoint { return .notLocal(.pointToPoint(interface: name)) }
        if !interface.isBroadcastCapable { return .notLocal(.notBroadcastCapable(interface: name)) }
        if answer.kind == .broadcast { return .local(.subnetBroadcast(interface: name)) }
        return .local(.onLink(prefix: answer.prefix, length: answer.prefixLength, interface: name))
    }
}

/// Destinations exempt from local network privacy even when they are local.
public protocol ExemptionSource {
    func exemption(for endpoint: SocketEndpoint) -> NotLocalReason?
}

/// Apple's rule for what is on the local network, applied to one destination.
///
/// Never local: loopback and the unspecified address. Always local: multicast, the limited
/// broadcast, link-local. Otherwise the kernel's route decides: local when the route has no
/// gateway and leaves through an interface that is up, broadcast-capable and neither loopback
/// nor point-to-point; a subnet broadcast address of such an interface is local too; this
/// machine's own addresses are not. A local DNS server or proxy is exempt.
public struct Classifier<Routes: RouteSource, Exemptions: ExemptionSource> {
    public var routes: Routes
    public var exemptions: Exemptions

    public init(routes: Routes, exemptions: Exemptions) {
        self.routes = routes
        self.exemptions = exemptions
    }

    /// Where a connect or a send is headed. `endpoint.address` is already unmapped.
    @inline(__always)
    public func classify(_ endpoint: SocketEndpoint) -> Verdict {
        let address = endpoint.address
        if address.isLoopback { return .notLocal(.loopback) }
        if address.isUnspecified { return .notLocal(.unspecified) }
        let verdict: Verdict
        if address.isMulticast {
            verdict = .local(.multicast)
        } else if address.isLimitedBroadcast {
            verdict = .local(.limitedBroadcast)
        } else if address.isLinkLocal {
            verdict = .local(.linkLocal(scopeID: endpoint.scopeID))
        } else {
            verdict = RouteVerdict.verdict(from: routes.route(to: address), for: address)
            guard verdict.isLocal else { return verdict }
        }
        if let exempt = exemptions.exemption(for: endpoint) { return .notLocal(exempt) }
        return verdict
    }

    /// What a `bind` to `endpoint` means: only multicast and broadcast addresses count,
    /// because binding to them is how a socket receives that traffic.
    public func classifyBind(_ endpoint: SocketEndpoint) -> Verdict {
        let address = endpoint.address
        if address.isMulticast { return .local(.multicast) }
        if address.isLimitedBroadcast { return .local(.limitedBroadcast) }
        if address.isLoopback || address.isUnspecified || address.isLinkLocal { return .notLocal(.unicastBind) }
        guard case .success(let facts) = routes.route(to: address), facts.answer.kind == .broadcast else {
            return .notLocal(.unicastBind)
        }
        return RouteVerdict.verdict(from: .success(facts), for: address)
    }

    /// The hot question, answered cheaply: could an operation to `endpoint` be local? False
    /// means certainly not; true means `classify` must decide (and may still exempt it).
    @inline(__always)
    public func mayBeLocal(_ endpoint: SocketEndpoint) -> Bool {
        let address = endpoint.address
        if address.isNeverLocal { return false }
        if address.isMulticast || address.isLimitedBroadcast || address.isLinkLocal { return true }
        return routes.isLocalRoute(to: address)
    }
}

/// Names: `.local` (RFC 6762) is the multicast DNS domain, and resolving in it is local.
public enum LocalName {
    /// Whether `name` ends in `.local` or `.local.`, in any case. The bare name `local` is
    /// not in the domain: glibc sends it to DNS like any single-label name.
    public static func isLocal(_ name: UnsafeBufferPointer<UInt8>) -> Bool { endsWith(name, ".local") }

    /// Whether `name` is the domain itself, `local` or `local.`, as DNS-SD calls name it, or a
    /// name in it.
    public static func isLocalDomain(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        endsWith(name, ".local") || endsWith(name, "local") && withoutDot(name) == 5
    }

    /// Whether `name` is one label (`printer`, `printer.`), which systemd-resolved asks the link
    /// about by LLMNR.
    public static func isSingleLabel(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        let end = withoutDot(name)
        guard end > 0 else { return false }
        for i in 0..<end where name[i] == UInt8(ascii: ".") { return false }
        return true
    }

    /// Whether `name` is an address's reverse name (`….in-addr.arpa`, `….ip6.arpa`), which an
    /// mDNS daemon asks the link about.
    public static func isReverse(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        endsWith(name, ".in-addr.arpa") || endsWith(name, ".ip6.arpa")
    }

    /// Whether `name`, less one trailing dot, ends in `suffix` (lower case), in any case.
    @inline(__always)
    private static func endsWith(_ name: UnsafeBufferPointer<UInt8>, _ suffix: StaticString) -> Bool {
        let end = withoutDot(name), length = suffix.utf8CodeUnitCount
        guard end >= length else { return false }
        for i in 0..<length where Bytes.lower(name[end - length + i]) != suffix.utf8Start[i] { return false }
        return true
    }

    @inline(__always)
    private static func withoutDot(_ name: UnsafeBufferPointer<UInt8>) -> Int {
        name.count > 0 && name[name.count - 1] == UInt8(ascii: ".") ? name.count - 1 : name.count
    }
}

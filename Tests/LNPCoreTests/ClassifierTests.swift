import Testing
@testable import LNPCoreHost

// Interface flags, as <net/if.h> defines them.
private let up: UInt32 = 0x1
private let broadcast: UInt32 = 0x2
private let loopbackFlag: UInt32 = 0x8
private let pointToPoint: UInt32 = 0x10

private var eth1: InterfaceFacts { InterfaceFacts(index: 3, name: interfaceName("eth1"), flags: up | broadcast) }

/// Counts the questions a fake asks, to show which verdicts need no route at all.
private final class Counter {
    var value = 0
}

/// A routing table in a list: canned facts per address; for the rest, the kernel could not
/// be asked (no descriptor left).
private struct FakeRoutes: RouteSource {
    var table: [(IPAddress, RouteFacts)] = []
    let asked = Counter()

    func route(to address: IPAddress) -> Result<RouteFacts, Errno> {
        asked.value += 1
        guard let facts = table.first(where: { $0.0 == address })?.1 else { return .failure(Errno(24)) }
        return .success(facts)
    }
}

private struct FakeExemptions: ExemptionSource {
    var table: [(IPAddress, NotLocalReason)] = []

    func exemption(for endpoint: SocketEndpoint) -> NotLocalReason? {
        table.first { $0.0 == endpoint.address }?.1
    }
}

/// Facts for an on-link route through `interface`.
private func onLink(_ prefix: IPAddress, _ length: UInt8, through interface: InterfaceFacts? = eth1) -> RouteFacts {
    RouteFacts(
        answer: RouteAnswer(kind: .unicast, prefix: prefix, prefixLength: length, outputInterface: interface?.index ?? 0),
        interface: interface)
}

private func classify(
    _ address: IPAddress, scope: UInt32 = 0, routes: FakeRoutes = FakeRoutes(), exemptions: FakeExemptions = FakeExemptions()
) -> Verdict {
    Classifier(routes: routes, exemptions: exemptions).classify(SocketEndpoint(address: address, port: 80, scopeID: scope))
}

private func classifyBind(_ address: IPAddress, routes: FakeRoutes = FakeRoutes()) -> Verdict {
    Classifier(routes: routes, exemptions: FakeExemptions()).classifyBind(SocketEndpoint(address: address))
}

@Suite("Classifier: fixed rules")
struct ClassifierFixedRuleTests {
    @Test func loopbackIsNeverLocalWhateverTheRoutesSay() {
        for address in [v4(127, 0, 0, 1), v4(127, 1, 2, 3), v6(0, 0, 0, 0, 0, 0, 0, 1)] {
            let routes = FakeRoutes(table: [(address, onLink(address, 8))])
            #expect(classify(address, routes: routes) == .notLocal(.loopback))
            #expect(routes.asked.value == 0)
        }
    }

    @Test func unspecifiedIsNeverLocal() {
        for address in [v4(0, 0, 0, 0), v6(0, 0, 0, 0, 0, 0, 0, 0)] {
            let routes = FakeRoutes(table: [(address, onLink(address, 0))])
            #expect(classify(address, routes: routes) == .notLocal(.unspecified))
            #expect(routes.asked.value == 0)
        }
    }

    @Test func multicastIsAlwaysLocalWithoutAskingRoutes() {
        for address in [v4(224, 0, 0, 251), v4(239, 255, 255, 250), v6(0xff02, 0, 0, 0, 0, 0, 0, 0xfb)] {
            let unreachable = RouteFacts(answer: .unreachable(address), interface: nil)
            let routes = FakeRoutes(table: [(address, unreachable)])
            #expect(classify(address, routes: routes) == .local(.multicast))
            #expect(routes.asked.value == 0)
        }
    }

    @Test func limitedBroadcastIsAlwaysLocal() {
        let routes = FakeRoutes()
        #expect(classify(v4(255, 255, 255, 255), routes: routes) == .local(.limitedBroadcast))
        #expect(routes.asked.value == 0)
    }

    @Test func linkLocalIsAlwaysLocalAndKeepsItsScope() {
        let routes = FakeRoutes()
        #expect(classify(v4(169, 254, 10, 1), routes: routes) == .local(.linkLocal(scopeID: 0)))
        #expect(classify(v6(0xfe80, 0, 0, 0, 0, 0, 0, 1), scope: 3, routes: routes) == .local(.linkLocal(scopeID: 3)))
        #expect(routes.asked.value == 0)
    }
}

@Suite("Classifier: routes")
struct ClassifierRouteTests {
    @Test func onLinkThroughABroadcastInterfaceIsLocal() {
        let address = v4(10, 77, 0, 2)
        let routes = FakeRoutes(table: [(address, onLink(v4(10, 77, 0, 0), 24))])
        #expect(classify(address, routes: routes) == .local(.onLink(prefix: v4(10, 77, 0, 0), length: 24, interface: eth1.name)))
        #expect(routes.asked.value == 1)
    }

    @Test func onLinkIPv6IsLocal() {
        let address = v6(0x2001, 0xdb8, 1, 0, 0, 0, 0, 5)
        let prefix = v6(0x2001, 0xdb8, 1, 0, 0, 0, 0, 0)
        let routes = FakeRoutes(table: [(address, onLink(prefix, 64))])
        #expect(classify(address, routes: routes) == .local(.onLink(prefix: prefix, length: 64, interface: eth1.name)))
    }

    @Test func aGatewayRouteIsNotLocal() {
        let address = v4(93, 184, 216, 34)
        let answer = RouteAnswer(kind: .unicast, prefix: v4(0, 0, 0, 0), prefixLength: 0, hasGateway: true, outputInterface: 3)
        let routes = FakeRoutes(table: [(address, RouteFacts(answer: answer, interface: eth1))])
        #expect(classify(address, routes: routes) == .notLocal(.viaGateway(prefix: v4(0, 0, 0, 0), length: 0, interface: eth1.name)))
    }

    @Test func aGatewayRouteWithoutInterfaceFactsIsStillAGatewayRoute() {
        let address = v4(8, 8, 8, 8)
        let answer = RouteAnswer(kind: .unicast, prefix: v4(0, 0, 0, 0), prefixLength: 0, hasGateway: true)
        let routes = FakeRoutes(table: [(address, RouteFacts(answer: answer, interface: nil))])
        #expect(classify(address, routes: routes) == .notLocal(.viaGateway(prefix: v4(0, 0, 0, 0), length: 0, interface: InterfaceName())))
    }

    /// Interfaces that do not make an on-link route local, each with its reason.
    @Test(arguments: [
        ("wg0", up | pointToPoint, "pointToPoint"),
        ("tun0", up | broadcast | pointToPoint, "pointToPoint"),
        ("lo", up | loopbackFlag, "loopbackInterface"),
        ("lo", up | loopbackFlag | broadcast, "loopbackInterface"),
        ("ib0", up, "notBroadcastCapable"),
        ("eth2", broadcast, "interfaceDown"),
        ("eth2", 0, "interfaceDown"),
        ("lo", loopbackFlag, "interfaceDown"),
    ])
    func unsuitableInterfaces(name: String, flags: UInt32, reason: String) {
        let address = v4(10, 9, 0, 2)
        let interface = InterfaceFacts(index: 9, name: interfaceName(name), flags: flags)
        let routes = FakeRoutes(table: [(address, onLink(v4(10, 9, 0, 0), 24, through: interface))])
        let expected: NotLocalReason
        switch reason {
        case "pointToPoint": expected = .pointToPoint(interface: interface.name)
        case "loopbackInterface": expected = .loopbackInterface(interface: interface.name)
        case "notBroadcastCapable": expected = .notBroadcastCapable(interface: interface.name)
        default: expected = .interfaceDown(interface: interface.name)
        }
        #expect(classify(address, routes: routes) == .notLocal(expected))
    }

    @Test func answerKinds() {
        let own = v4(10, 77, 0, 1)
        let subnetBroadcast = v4(10, 77, 0, 255)
        let nowhere = v4(203, 0, 113, 9)
        let multicastRoute = v4(10, 1, 1, 1)
        let routes = FakeRoutes(table: [
            (own, RouteFacts(answer: RouteAnswer(kind: .ownAddress, prefix: own, prefixLength: 32), interface: eth1)),
            (subnetBroadcast, RouteFacts(answer: RouteAnswer(kind: .broadcast, prefix: subnetBroadcast, prefixLength: 32), interface: eth1)),
            (nowhere, RouteFacts(answer: .unreachable(nowhere), interface: nil)),
            (multicastRoute, RouteFacts(answer: RouteAnswer(kind: .multicast, prefix: multicastRoute, prefixLength: 32), interface: nil)),
        ])
        #expect(classify(own, routes: routes) == .notLocal(.ownAddress))
        #expect(classify(subnetBroadcast, routes: routes) == .local(.subnetBroadcast(interface: eth1.name)))
        #expect(classify(nowhere, routes: routes) == .notLocal(.noRoute))
        #expect(classify(multicastRoute, routes: routes) == .local(.multicast))
    }

    @Test func aSubnetBroadcastOnAnUnsuitableInterfaceIsNotLocal() {
        let address = v4(10, 9, 0, 255)
        let tunnel = InterfaceFacts(index: 9, name: interfaceName("tun0"), flags: up | pointToPoint)
        let answer = RouteAnswer(kind: .broadcast, prefix: address, prefixLength: 32, outputInterface: 9)
        let routes = FakeRoutes(table: [(address, RouteFacts(answer: answer, interface: tunnel))])
        #expect(classify(address, routes: routes) == .notLocal(.pointToPoint(interface: tunnel.name)))
    }

    /// No route learned: local, whatever the address, with why — lnp fails closed.
    @Test func unknownRoutesFailClosed() {
        #expect(classify(v4(198, 51, 100, 1), routes: FakeRoutes()) == .local(.routeUnknown(Errno(24))))
        #expect(classify(v4(10, 0, 0, 1), routes: FakeRoutes()) == .local(.routeUnknown(Errno(24))))
        // On-link, but the interface could not be read.
        let address = v4(10, 77, 0, 2)
        let routes = FakeRoutes(table: [(address, onLink(v4(10, 77, 0, 0), 24, through: nil))])
        // An on-link route whose interface cannot be read: local, public address or not.
        #expect(classify(address, routes: routes) == .local(.routeUnknown(nil)))
        let publicAddress = v4(198, 51, 100, 7)
        let publicRoutes = FakeRoutes(table: [(publicAddress, onLink(v4(198, 51, 100, 0), 24, through: nil))])
        #expect(classify(publicAddress, routes: publicRoutes) == .local(.routeUnknown(nil)))
    }

    /// The kernel could not be asked: local, with why, for every address — private ranges
    /// are no guide (a LAN may use a public /24, or 192.0.2.0/24 in a test).
    @Test func verdictWithoutARoute() {
        for address in [v4(8, 8, 8, 8), v4(10, 1, 2, 3), v4(192, 0, 2, 2), IPAddress(v6High: 0x2001_0db8_0000_0000, low: 1)] {
            #expect(RouteVerdict.verdict(from: .failure(Errno(24)), for: address) == .local(.routeUnknown(Errno(24))))
        }
        var bytes = [UInt8](repeating: 0, count: 128)
        let text = bytes.withUnsafeMutableBytes { raw in
            var writer = ByteWriter(raw)
            LocalReason.routeUnknown(Errno(24)).write(to: &writer)
            return String(decoding: raw[0..<writer.count], as: UTF8.self)
        }
        #expect(text == "route could not be learned (EMFILE)")
    }
}

@Suite("Classifier: exemptions")
struct ClassifierExemptionTests {
    @Test func exemptionsTurnLocalVerdictsIntoTheirReason() {
        let dns = v4(10, 77, 0, 53)
        let proxy = v4(10, 77, 0, 80)
        let routerDNS = v6(0xfe80, 0, 0, 0, 0, 0, 0, 1)  // a router's link-local address in resolv.conf
        let routes = FakeRoutes(table: [(dns, onLink(v4(10, 77, 0, 0), 24)), (proxy, onLink(v4(10, 77, 0, 0), 24))])
        let exemptions = FakeExemptions(table: [(dns, .dnsServer), (proxy, .proxy), (routerDNS, .dnsServer)])
        #expect(classify(dns, routes: routes, exemptions: exemptions) == .notLocal(.dnsServer))
        #expect(classify(proxy, routes: routes, exemptions: exemptions) == .notLocal(.proxy))
        #expect(classify(routerDNS, scope: 2, routes: routes, exemptions: exemptions) == .notLocal(.dnsServer))
    }

    @Test func exemptionsNeverChangeANonLocalVerdict() {
        let remote = v4(8, 8, 8, 8)
        let own = v4(10, 77, 0, 1)
        let gateway = RouteAnswer(kind: .unicast, prefix: v4(0, 0, 0, 0), prefixLength: 0, hasGateway: true, outputInterface: 3)
        let routes = FakeRoutes(table: [
            (remote, RouteFacts(answer: gateway, interface: eth1)),
            (own, RouteFacts(answer: RouteAnswer(kind: .ownAddress, prefix: own, prefixLength: 32), interface: eth1)),
        ])
        let loopback = v4(127, 0, 0, 53)
        let exemptions = FakeExemptions(table: [(remote, .dnsServer), (own, .proxy), (loopback, .dnsServer)])
        #expect(classify(remote, routes: routes, exemptions: exemptions)
            == .notLocal(.viaGateway(prefix: v4(0, 0, 0, 0), length: 0, interface: eth1.name)))
        #expect(classify(own, routes: routes, exemptions: exemptions) == .notLocal(.ownAddress))
        #expect(classify(loopback, routes: routes, exemptions: exemptions) == .notLocal(.loopback))
        // No route learned: local, but an exemption still holds (a DNS server stays reachable
        // where netlink is forbidden).
        #expect(classify(v4(198, 51, 100, 3), routes: routes, exemptions: FakeExemptions(table: [(v4(198, 51, 100, 3), .proxy)]))
            == .notLocal(.proxy))
    }

    @Test func anExemptionForAnotherAddressChangesNothing() {
        let address = v4(10, 77, 0, 2)
        let routes = FakeRoutes(table: [(address, onLink(v4(10, 77, 0, 0), 24))])
        let exemptions = FakeExemptions(table: [(v4(10, 77, 0, 53), .dnsServer)])
        #expect(classify(address, routes: routes, exemptions: exemptions).isLocal)
    }
}

@Suite("Classifier: the quick question")
struct ClassifierMayBeLocalTests {
    private func mayBeLocal(_ address: IPAddress, routes: FakeRoutes) -> Bool {
        Classifier(routes: routes, exemptions: FakeExemptions()).mayBeLocal(SocketEndpoint(address: address))
    }

    @Test func fixedAnswersAskNoRoute() {
        let routes = FakeRoutes(table: [(v4(127, 0, 0, 1), onLink(v4(127, 0, 0, 0), 8))])
        #expect(!mayBeLocal(v4(127, 0, 0, 1), routes: routes))
        #expect(!mayBeLocal(v4(0, 0, 0, 0), routes: routes))
        #expect(!mayBeLocal(v6(0, 0, 0, 0, 0, 0, 0, 1), routes: routes))
        #expect(!mayBeLocal(v6(0, 0, 0, 0, 0, 0, 0, 0), routes: routes))
        #expect(mayBeLocal(v4(224, 0, 0, 251), routes: routes))
        #expect(mayBeLocal(v4(255, 255, 255, 255), routes: routes))
        #expect(mayBeLocal(v4(169, 254, 3, 4), routes: routes))
        #expect(mayBeLocal(v6(0xfe80, 0, 0, 0, 0, 0, 0, 9), routes: routes))
        #expect(routes.asked.value == 0)
    }

    @Test func routedAddressesFollowTheRoute() {
        let near = v4(10, 77, 0, 2)
        let far = v4(8, 8, 8, 8)
        let gateway = RouteAnswer(kind: .unicast, prefix: v4(0, 0, 0, 0), prefixLength: 0, hasGateway: true, outputInterface: 3)
        let routes = FakeRoutes(table: [(near, onLink(v4(10, 77, 0, 0), 24)), (far, RouteFacts(answer: gateway, interface: eth1))])
        #expect(mayBeLocal(near, routes: routes))
        #expect(!mayBeLocal(far, routes: routes))
        #expect(mayBeLocal(v4(198, 51, 100, 1), routes: routes), "no route known: it may be local, public or not")
        #expect(mayBeLocal(v4(10, 1, 1, 1), routes: routes), "no route known, a private address")
        #expect(routes.asked.value == 4)
    }

    /// "False means certainly not": whenever `classify` finds an operation local, the quick
    /// question must have said it may be.
    @Test func neverSaysNoToALocalDestination() {
        var random = SeededRandom(seed: 31)
        let interfaces = [eth1, InterfaceFacts(index: 4, name: interfaceName("wg0"), flags: up | pointToPoint),
                          InterfaceFacts(index: 5, name: interfaceName("lo"), flags: up | loopbackFlag),
                          InterfaceFacts(index: 6, name: interfaceName("down0"), flags: broadcast)]
        let kinds: [RouteAnswer.Kind] = [.unicast, .ownAddress, .broadcast, .multicast, .unreachable]
        for _ in 0..<5_000 {
            let address = randomAddress(&random)
            var facts: RouteFacts? = nil
            if Int.random(in: 0..<5, using: &random) != 0 {
                let answer = RouteAnswer(
                    kind: kinds.randomElement(using: &random)!, prefix: address, prefixLength: 24,
                    hasGateway: Bool.random(using: &random))
                facts = RouteFacts(answer: answer, interface: Bool.random(using: &random) ? interfaces.randomElement(using: &random)! : nil)
            }
            let routes = FakeRoutes(table: facts.map { [(address, $0)] } ?? [])
            let verdict = classify(address, routes: routes)
            if verdict.isLocal {
                #expect(mayBeLocal(address, routes: routes), "\(text(of: address)): \(verdict)")
            }
        }
    }
}

@Suite("Classifier: bind")
struct ClassifierBindTests {
    @Test func multicastAndLimitedBroadcastBindsAreLocal() {
        let routes = FakeRoutes()
        #expect(classifyBind(v4(224, 0, 0, 251), routes: routes) == .local(.multicast))
        #expect(classifyBind(v6(0xff02, 0, 0, 0, 0, 0, 0, 1), routes: routes) == .local(.multicast))
        #expect(classifyBind(v4(255, 255, 255, 255), routes: routes) == .local(.limitedBroadcast))
        #expect(routes.asked.value == 0)
    }

    @Test func wildcardLoopbackAndLinkLocalBindsAreNotLocal() {
        let routes = FakeRoutes()
        for address in [
            v4(0, 0, 0, 0), v6(0, 0, 0, 0, 0, 0, 0, 0), v4(127, 0, 0, 1), v6(0, 0, 0, 0, 0, 0, 0, 1), v4(169, 254, 1, 1),
            v6(0xfe80, 0, 0, 0, 0, 0, 0, 1),
        ] {
            #expect(classifyBind(address, routes: routes) == .notLocal(.unicastBind), "\(text(of: address))")
        }
        #expect(routes.asked.value == 0)
    }

    @Test func unicastBindsAreNotLocalEvenOnLink() {
        let address = v4(10, 77, 0, 2)
        let own = v4(10, 77, 0, 1)
        let routes = FakeRoutes(table: [
            (address, onLink(v4(10, 77, 0, 0), 24)),
            (own, RouteFacts(answer: RouteAnswer(kind: .ownAddress, prefix: own, prefixLength: 32), interface: eth1)),
        ])
        #expect(classifyBind(address, routes: routes) == .notLocal(.unicastBind))
        #expect(classifyBind(own, routes: routes) == .notLocal(.unicastBind))
        #expect(classifyBind(v4(10, 5, 5, 5), routes: routes) == .notLocal(.unicastBind), "no route known")
    }

    @Test func bindingASubnetBroadcastAddressIsLocal() {
        let address = v4(10, 77, 0, 255)
        let answer = RouteAnswer(kind: .broadcast, prefix: address, prefixLength: 32, outputInterface: 3)
        let routes = FakeRoutes(table: [(address, RouteFacts(answer: answer, interface: eth1))])
        #expect(classifyBind(address, routes: routes) == .local(.subnetBroadcast(interface: eth1.name)))

        let down = InterfaceFacts(index: 3, name: eth1.name, flags: broadcast)
        let downRoutes = FakeRoutes(table: [(address, RouteFacts(answer: answer, interface: down))])
        #expect(classifyBind(address, routes: downRoutes) == .notLocal(.interfaceDown(interface: eth1.name)))
    }
}

@Suite("Interface facts")
struct InterfaceFactsTests {
    @Test func flagPredicates() {
        let all = InterfaceFacts(index: 1, flags: up | broadcast | loopbackFlag | pointToPoint)
        #expect(all.isUp && all.isBroadcastCapable && all.isLoopback && all.isPointToPoint)
        let none = InterfaceFacts(index: 1, flags: 0x1000)  // IFF_MULTICAST only
        #expect(!none.isUp && !none.isBroadcastCapable && !none.isLoopback && !none.isPointToPoint)
        #expect(InterfaceFacts(index: 1, flags: up).isUp)
        #expect(InterfaceFacts(index: 1, flags: broadcast).isBroadcastCapable)
        #expect(!InterfaceFacts(index: 1, flags: broadcast).isUp)
    }

    @Test func interfaceNames() {
        #expect(writeText { interfaceName("eth1").write(to: &$0) } == "eth1")
        #expect(writeText { interfaceName("abcdefghijklmno").write(to: &$0) } == "abcdefghijklmno")
        #expect(writeText { InterfaceName().write(to: &$0) } == "")
        #expect(InterfaceName().isEmpty)
        #expect(!interfaceName("x").isEmpty)
        // Read from kernel bytes: the sixteenth byte is always the terminator.
        let bytes = Array("0123456789abcdefXYZ".utf8)
        let name = bytes.withUnsafeBytes { InterfaceName(bytes: $0.baseAddress!) }
        #expect(writeText { name.write(to: &$0) } == "0123456789abcde")
    }
}

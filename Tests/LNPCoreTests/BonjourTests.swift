import Testing
@testable import LNPCoreHost
@testable import lnp_run

/// The declared Bonjour service types (Apple's NSBonjourServices) and the D-Bus methods lnp
/// reads as Bonjour operations.
struct BonjourTests {
    private func declares(_ list: String, _ type: String) -> Bool {
        Array(list.utf8).withUnsafeBufferPointer { list in Array(type.utf8).withUnsafeBufferPointer { BonjourServices.declares(list, $0) } }
    }

    private func method(_ interface: String?, _ member: String, _ signature: String) -> BusMethod? {
        Array(member.utf8).withUnsafeBufferPointer { member in
            Array(signature.utf8).withUnsafeBufferPointer { signature in
                guard let interface else { return BusMethod.find(interface: nil, member: member, signature: signature) }
                return Array(interface.utf8).withUnsafeBufferPointer { BusMethod.find(interface: $0, member: member, signature: signature) }
            }
        }
    }

    @Test func aDeclaredTypeMatchesWithoutCaseTrailingDotOrSubtype() {
        #expect(declares("_ipp._tcp,_http._tcp", "_http._tcp"))
        #expect(declares("_ipp._tcp, _http._tcp", "_HTTP._tcp."))
        #expect(declares("_ipp._tcp", "_printer._sub._ipp._tcp"))
        #expect(declares("_ipp._tcp", "_ipp._tcp,_printer"))  // dns_sd's subtype form
        #expect(!declares("_ipp._tcp", "_ipps._tcp"))
        #expect(!declares("_ipp._tcp", "_ipp._udp"))
        #expect(!declares("", "_ipp._tcp"))  // an empty declaration declares nothing
        #expect(declares("*", "_anything._udp"))  // no declaration: any type
    }

    @Test func aRecordNameNamesItsServiceTypeAndWhetherAnInstanceComesFirst() {
        func read(_ name: String) -> (String, Bool)? {
            Array(name.utf8).withUnsafeBufferPointer { bytes in
                ServiceName.type(in: bytes).map { (String(decoding: $0.type, as: UTF8.self), $0.hasInstance) }
            }
        }
        #expect(read("_http._tcp.local")! == ("_http._tcp", false))
        #expect(read("_http._tcp.local.")! == ("_http._tcp", false))
        #expect(read("_printer._sub._ipp._tcp.local")! == ("_ipp._tcp", false))
        #expect(read("peer web._http._tcp.local")! == ("_http._tcp", true))
        #expect(read("a.b._http._UDP.local")! == ("_http._UDP", true))
        #expect(read("_services._dns-sd._udp.local")! == ("_dns-sd._udp", true))
        #expect(read("peer.local") == nil)
        #expect(read("tcp._tcp.local") == nil)  // no underscore before the protocol
        #expect(read("2.0.79.10.in-addr.arpa") == nil)
    }

    @Test func reverseNamesAreAskedOfTheLink() {
        for name in ["2.0.79.10.in-addr.arpa", "2.0.79.10.IN-ADDR.ARPA.", "b.a.9.8.ip6.arpa"] {
            #expect(Array(name.utf8).withUnsafeBufferPointer { LocalName.isReverse($0) }, "\(name)")
        }
        for name in ["in-addr.arpa", "example.arpa", "peer.local"] {
            #expect(!Array(name.utf8).withUnsafeBufferPointer { LocalName.isReverse($0) }, "\(name)")
        }
    }

    @Test func serviceTypesAreReadAsRFC6335Names() {
        let valid = ["_ipp._tcp", "_http._udp", "_a._tcp", "_abcdefghijklmno._tcp", "_IPP._TCP"]
        let invalid = ["ipp", "_ipp", "_ipp._xyz", "__._tcp", "_._tcp", "_abcdefghijklmnop._tcp", "_ip p._tcp", "_ipp.tcp"]
        for type in valid { #expect(Array(type.utf8).withUnsafeBufferPointer { BonjourServices.isServiceType($0) }, "\(type)") }
        for type in invalid { #expect(!Array(type.utf8).withUnsafeBufferPointer { BonjourServices.isServiceType($0) }, "\(type)") }
    }

    @Test func avahisAndResolvedsMethodsAreKnownByMemberAndSignature() {
        #expect(method("org.freedesktop.Avahi.Server", "ServiceBrowserNew", "iissu")?.operation == .browse)
        #expect(method("org.freedesktop.Avahi.Server2", "ServiceBrowserPrepare", "iissu")?.typeArgument == 2)
        #expect(method(nil, "ServiceBrowserNew", "iissu")?.operation == .browse)  // no interface: the daemon dispatches it
        #expect(method("org.freedesktop.Avahi.Server", "ServiceResolverNew", "iisssiu")?.operation == .resolveService)
        #expect(method("org.freedesktop.Avahi.Server", "ResolveHostName", "iisiu")?.operation == .resolve)
        #expect(method("org.freedesktop.Avahi.EntryGroup", "AddService", "iiussssqaay")?.operation == .register)
        #expect(method("org.freedesktop.resolve1.Manager", "ResolveService", "isssit")?.localArgument == 3)
        #expect(method(nil, "ResolveService", "iisssiu")?.service == .avahiServer)
        #expect(method(nil, "ResolveService", "isssit")?.service == .resolved)
        // Not gated: another interface, another signature, the group itself, the server's state.
        #expect(method("org.example.Other", "ServiceBrowserNew", "iissu") == nil)
        #expect(method("org.freedesktop.Avahi.Server", "ServiceBrowserNew", "iiss") == nil)
        // Avahi ignores arguments after those it reads; resolved's sd-bus refuses them.
        #expect(method("org.freedesktop.Avahi.Server", "ServiceBrowserNew", "iissus")?.operation == .browse)
        #expect(method("org.freedesktop.resolve1.Manager", "ResolveService", "isssits") == nil)
        #expect(method("org.freedesktop.Avahi.Server", "EntryGroupNew", "") == nil)
        #expect(method("org.freedesktop.Avahi.Server", "GetState", "") == nil)
    }

    @Test func resolvedsCallsGoToTheLinkForLocalNamesTheLocalDomainAndSingleLabels() throws {
        func asks(_ member: String, _ signature: String, _ argument: String) throws -> Bool {
            let found = try #require(method("org.freedesktop.resolve1.Manager", member, signature))
            return Array(argument.utf8).withUnsafeBufferPointer { found.asksTheLink($0) }
        }
        #expect(try asks("ResolveHostname", "isit", "peer.local"))
        #expect(try !asks("ResolveHostname", "isit", "example.com"))
        // ResolveService's domain argument: `local` itself, as DNS-SD names it.
        #expect(try asks("ResolveService", "isssit", "local"))
        #expect(try asks("ResolveService", "isssit", "local."))
        #expect(try !asks("ResolveService", "isssit", "example.com"))
        // A single label goes to LLMNR, on the link: a name's lookup, not a service's domain.
        #expect(try asks("ResolveHostname", "isit", "printer"))
        #expect(try asks("ResolveRecord", "isqqt", "printer."))
        #expect(try !asks("ResolveService", "isssit", "corp"))
        #expect(try !asks("ResolveHostname", "isit", ""))
        // resolved reads escapes: `peer.loca\108` is peer.local to it.
        #expect(try asks("ResolveHostname", "isit", "peer.loca\\108"))
        #expect(try asks("ResolveRecord", "isqqt", "_http._tcp.loca\\108"))
    }

    @Test func aDeclarationNarrowedByTheEnclosingRunKeepsWhatBothDeclare() throws {
        let own = try BonjourDeclaration.parse("_ipp._tcp,_http._tcp", from: "test")
        #expect(own.narrowed(by: .undeclared) == own)
        #expect(BonjourDeclaration.undeclared.narrowed(by: own) == own)
        #expect(own.narrowed(by: try BonjourDeclaration.parse("_http._tcp", from: "test")).types == ["_http._tcp"])
        #expect(BonjourDeclaration(wire: own.wire) == own)
        #expect(BonjourDeclaration(wire: BonjourDeclaration.undeclared.wire) == .undeclared)
        #expect(try BonjourDeclaration.parse("", from: "test").types == [])
    }
}

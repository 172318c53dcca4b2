import Testing
@testable import LNPCoreHost
@testable import LNPTools

#if canImport(Glibc)
import Glibc
#endif

@Suite("CheckTarget")
struct CheckTargetTests {
    @Test func ipv4() {
        #expect(CheckTarget.parse("10.0.0.1") == .success(.address(SocketEndpoint(address: v4(10, 0, 0, 1)), text: "10.0.0.1")))
    }

    @Test func bracketedWithInterfaceName() throws {
        let loopbackIndex = if_nametoindex("lo")
        try #require(loopbackIndex != 0, "every Linux system has lo")
        let expected = SocketEndpoint(address: v6(0xfe80, 0, 0, 0, 0, 0, 0, 1), scopeID: loopbackIndex)
        #expect(CheckTarget.parse("[fe80::1%lo]") == .success(.address(expected, text: "[fe80::1%lo]")))
        #expect(CheckTarget.parse("fe80::1%lo") == .success(.address(expected, text: "fe80::1%lo")))
    }

    @Test func numericScope() {
        let expected = SocketEndpoint(address: v6(0xfe80, 0, 0, 0, 0, 0, 0, 1), scopeID: 1)
        #expect(CheckTarget.parse("fe80::1%1") == .success(.address(expected, text: "fe80::1%1")))
        let large = SocketEndpoint(address: v6(0xfe80, 0, 0, 0, 0, 0, 0, 1), scopeID: 4_000_000_000)
        #expect(CheckTarget.parse("fe80::1%4000000000") == .success(.address(large, text: "fe80::1%4000000000")))
    }

    @Test func unknownScope() {
        #expect(CheckTarget.parse("fe80::1%nosuchif") == .failure(.unknownScope("nosuchif")))
        #expect(CheckTarget.parse("[fe80::1%nosuchif]") == .failure(.unknownScope("nosuchif")))
        #expect(CheckTarget.parse("fe80::1%") == .failure(.unknownScope("")))
    }

    @Test func localNames() {
        #expect(CheckTarget.parse("printer.local") == .success(.localName("printer.local")))
        #expect(CheckTarget.parse("Printer.LOCAL.") == .success(.localName("Printer.LOCAL.")))
        #expect(CheckTarget.parse("printer.local%1") == .failure(.notAnAddress("printer.local%1")), "a name has no scope")
    }

    @Test(arguments: ["example.com", "", "10.0.0", "10.0.0.256", "fe80:::1", "[10.0.0.1", "printer.localhost", "local host"])
    func notAnAddress(text: String) {
        #expect(CheckTarget.parse(text) == .failure(.notAnAddress(text)))
    }

    @Test func mappedAddressesAreUnmapped() {
        #expect(CheckTarget.parse("::ffff:10.0.0.1") == .success(.address(SocketEndpoint(address: v4(10, 0, 0, 1)), text: "::ffff:10.0.0.1")))
        #expect(CheckTarget.parse("[::ffff:10.0.0.1]") == .success(.address(SocketEndpoint(address: v4(10, 0, 0, 1)), text: "[::ffff:10.0.0.1]")))
    }

    @Test func failureDescriptions() {
        #expect(CheckTarget.Failure.notAnAddress("x").description == "'x' is not an IP address or a .local name")
        #expect(CheckTarget.Failure.unknownScope("eth9").description == "'eth9' names no interface here")
    }
}

@Suite("VerdictText and AddressText")
struct VerdictTextTests {
    @Test func localReasons() {
        let eth1 = interfaceName("eth1")
        #expect(VerdictText.reason(.local(.onLink(prefix: v4(10, 77, 0, 0), length: 24, interface: eth1))) == "on-link 10.77.0.0/24 via eth1")
        #expect(VerdictText.reason(.local(.linkLocal(scopeID: 2)), scopeName: "eth0") == "link-local via eth0")
        #expect(VerdictText.reason(.local(.linkLocal(scopeID: 0))) == "link-local")
        #expect(VerdictText.reason(.local(.linkLocal(scopeID: 2)), scopeName: "averyveryverylonginterfacename") == "link-local via averyveryverylo",
                "interface names hold 15 bytes")
        #expect(VerdictText.reason(.local(.subnetBroadcast(interface: eth1))) == "subnet broadcast via eth1")
        #expect(VerdictText.reason(.local(.multicast)) == "multicast")
        #expect(VerdictText.reason(.local(.limitedBroadcast)) == "broadcast")
        #expect(VerdictText.reason(.local(.localName)) == ".local name")
    }

    @Test func notLocalReasons() {
        let wg0 = interfaceName("wg0")
        let cases: [(NotLocalReason, String)] = [
            (.loopback, "loopback"),
            (.unspecified, "unspecified address"),
            (.ownAddress, "an address of this machine"),
            (.viaGateway(prefix: v4(0, 0, 0, 0), length: 0, interface: interfaceName("eth0")), "through a gateway (route 0.0.0.0/0 on eth0)"),
            (.viaGateway(prefix: v6(0x2000, 0, 0, 0, 0, 0, 0, 0), length: 3, interface: InterfaceName()), "through a gateway (route 2000::/3)"),
            (.pointToPoint(interface: wg0), "point-to-point interface wg0"),
            (.loopbackInterface(interface: interfaceName("lo")), "loopback interface lo"),
            (.notBroadcastCapable(interface: wg0), "interface wg0 is not broadcast-capable"),
            (.interfaceDown(interface: wg0), "interface wg0 is down"),
            (.noRoute, "no route"),
            (.dnsServer, "DNS server named in /etc/resolv.conf (exempt)"),
            (.proxy, "proxy named in the environment (exempt)"),
            (.notLocalName, "not a .local name"),
            (.unicastBind, "bind to a unicast or wildcard address"),
        ]
        for (reason, text) in cases {
            #expect(VerdictText.reason(.notLocal(reason)) == text)
        }
    }

    @Test func addressText() {
        #expect(AddressText.string(v4(192, 168, 1, 1)) == "192.168.1.1")
        #expect(AddressText.string(v6(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1)) == "2001:db8::1")
        #expect(AddressText.string(v6(0xffff, 0xffff, 0xffff, 0xffff, 0xffff, 0xffff, 0xffff, 0xffff)) == "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff")
    }

    @Test func interfaceNames() throws {
        let index = if_nametoindex("lo")
        try #require(index != 0)
        #expect(VerdictText.interfaceName(index) == "lo")
        #expect(VerdictText.interfaceName(0) == nil)
        #expect(VerdictText.interfaceName(0x7fff_fff0) == nil)
    }
}

import Testing
@testable import LNPCoreHost

#if canImport(Glibc)
import Glibc
#endif

/// The bytes of a sockaddr_in, as a program passes them.
private func sockaddrIn(_ address: String, port: UInt16) -> [UInt8] {
    var socketAddress = sockaddr_in()
    socketAddress.sin_family = sa_family_t(AF_INET)
    socketAddress.sin_port = port.bigEndian
    let status = inet_pton(AF_INET, address, &socketAddress.sin_addr)
    precondition(status == 1, "test address \(address)")
    return withUnsafeBytes(of: &socketAddress) { Array($0) }
}

/// The bytes of a sockaddr_in6.
private func sockaddrIn6(_ address: String, port: UInt16, scope: UInt32 = 0, flowInfo: UInt32 = 0) -> [UInt8] {
    var socketAddress = sockaddr_in6()
    socketAddress.sin6_family = sa_family_t(AF_INET6)
    socketAddress.sin6_port = port.bigEndian
    socketAddress.sin6_flowinfo = flowInfo
    socketAddress.sin6_scope_id = scope
    let status = inet_pton(AF_INET6, address, &socketAddress.sin6_addr)
    precondition(status == 1, "test address \(address)")
    return withUnsafeBytes(of: &socketAddress) { Array($0) }
}

private func parse(_ bytes: [UInt8], length: Int? = nil) -> SocketEndpoint? {
    bytes.withUnsafeBytes { SocketEndpoint.parse($0.baseAddress, length: length ?? bytes.count) }
}

@Suite("SocketEndpoint")
struct SocketEndpointTests {
    @Test func structSizesAreTheKernelOnes() {
        // The length checks below rely on these.
        #expect(MemoryLayout<sockaddr_in>.size == 16)
        #expect(MemoryLayout<sockaddr_in6>.size == 28)
    }

    @Test func ipv4() throws {
        let endpoint = try #require(parse(sockaddrIn("10.77.0.2", port: 8080)))
        #expect(endpoint.address == v4(10, 77, 0, 2))
        #expect(endpoint.port == 8080)
        #expect(endpoint.scopeID == 0)
    }

    @Test func portIsReadInNetworkOrder() throws {
        var bytes = sockaddrIn("1.2.3.4", port: 0)
        bytes[2] = 0x01
        bytes[3] = 0xbb
        #expect(try #require(parse(bytes)).port == 443)
        let endpoint = try #require(parse(sockaddrIn("1.2.3.4", port: 0x1234)))
        #expect(endpoint.port == 0x1234)
        #expect(try #require(parse(sockaddrIn6("::1", port: 0xfe01))).port == 0xfe01)
    }

    @Test func ipv4NeedsSixteenBytes() {
        let bytes = sockaddrIn("10.0.0.1", port: 80)
        #expect(parse(bytes, length: 15) == nil)
        #expect(parse(bytes, length: 16) != nil)
        #expect(parse(bytes, length: 128) != nil, "a longer buffer is fine, as for the kernel")
    }

    @Test func ipv6WithAndWithoutScope() throws {
        let bytes = sockaddrIn6("fe80::1", port: 5353, scope: 7, flowInfo: 0xabcdef)
        let full = try #require(parse(bytes, length: 28))
        #expect(full.address == v6(0xfe80, 0, 0, 0, 0, 0, 0, 1))
        #expect(full.port == 5353)
        #expect(full.scopeID == 7)
        // RFC 2133's 24-byte sockaddr_in6 has no scope: none is read, even if bytes follow.
        let short = try #require(parse(bytes, length: 24))
        #expect(short.address == full.address)
        #expect(short.scopeID == 0)
        #expect(parse(bytes, length: 23) == nil)
        #expect(try #require(parse(bytes, length: 27)).scopeID == 0)
    }

    @Test func mappedIPv6ComesBackAsIPv4() throws {
        let endpoint = try #require(parse(sockaddrIn6("::ffff:192.168.1.20", port: 631)))
        #expect(endpoint.address == v4(192, 168, 1, 20))
        #expect(endpoint.address.family == .v4)
        #expect(endpoint.port == 631)
    }

    @Test func ignoredInputs() {
        #expect(SocketEndpoint.parse(nil, length: 16) == nil)
        // Pointers into the zero page are never dereferenced.
        #expect(SocketEndpoint.parse(UnsafeRawPointer(bitPattern: 16), length: 16) == nil)
        #expect(SocketEndpoint.parse(UnsafeRawPointer(bitPattern: 4095), length: 28) == nil)
        let bytes = sockaddrIn("10.0.0.1", port: 80)
        #expect(parse(bytes, length: 0) == nil)
        #expect(parse(bytes, length: 1) == nil)
        #expect(parse(bytes, length: -16) == nil)
    }

    @Test func otherFamiliesAreIgnored() {
        var unspecified = sockaddrIn("10.0.0.1", port: 80)
        withUnsafeBytes(of: sa_family_t(AF_UNSPEC)) { unspecified.replaceSubrange(0..<2, with: $0) }
        #expect(parse(unspecified) == nil)

        var local = sockaddr_un()
        local.sun_family = sa_family_t(AF_UNIX)
        let unixBytes = withUnsafeBytes(of: &local) { Array($0) }
        #expect(parse(unixBytes) == nil)

        var netlink = [UInt8](repeating: 0, count: 12)
        withUnsafeBytes(of: sa_family_t(AF_NETLINK)) { netlink.replaceSubrange(0..<2, with: $0) }
        #expect(parse(netlink) == nil)
    }

    /// A program may pass a sockaddr at any alignment.
    @Test func unalignedBuffers() throws {
        for shift in 1..<8 {
            let bytes = [UInt8](repeating: 0xaa, count: shift) + sockaddrIn6("2001:db8::5", port: 80, scope: 3)
            let endpoint = try bytes.withUnsafeBytes { raw in
                try #require(SocketEndpoint.parse(raw.baseAddress! + shift, length: 28))
            }
            #expect(endpoint == SocketEndpoint(address: v6(0x2001, 0xdb8, 0, 0, 0, 0, 0, 5), port: 80, scopeID: 3))
        }
    }
}

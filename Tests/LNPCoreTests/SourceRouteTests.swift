import Testing
@testable import LNPCoreHost

/// Source routes read as the kernel compiles a socket's IP options and checks an IPv6
/// segment routing header: the first hop, or nothing when the kernel would set no route.
struct SourceRouteTests {
    private func hop(ipv4 options: [UInt8]) -> IPAddress? {
        options.withUnsafeBytes { SourceRoute.firstHop(ipv4Options: $0) }
    }

    private func hop(ipv6 header: [UInt8]) -> IPAddress? {
        header.withUnsafeBytes { SourceRoute.firstHop(ipv6RoutingHeader: $0) }
    }

    @Test func aLooseOrStrictRouteGoesToItsFirstAddress() {
        #expect(hop(ipv4: [131, 7, 4, 10, 77, 0, 2, 0]) == parseAddress("10.77.0.2"))
        #expect(hop(ipv4: [137, 11, 4, 10, 77, 0, 2, 8, 8, 8, 8, 0]) == parseAddress("10.77.0.2"))
        #expect(hop(ipv4: [1, 1, 131, 7, 4, 192, 168, 1, 9]) == parseAddress("192.168.1.9"))
        // After another option (a timestamp) the route still counts.
        #expect(hop(ipv4: [68, 4, 5, 0, 131, 7, 4, 10, 0, 0, 1, 0]) == parseAddress("10.0.0.1"))
    }

    @Test func optionsWithoutARouteOrMalformedOnesRouteNowhere() {
        #expect(hop(ipv4: []) == nil)
        #expect(hop(ipv4: [1, 1, 1, 1]) == nil)
        #expect(hop(ipv4: [7, 7, 4, 10, 77, 0, 2, 0]) == nil)  // record route
        #expect(hop(ipv4: [0, 131, 7, 4, 10, 77, 0, 2]) == nil)  // after the end of the options
        #expect(hop(ipv4: [131, 7, 8, 10, 77, 0, 2, 0]) == nil)  // pointer past the first address
        #expect(hop(ipv4: [131, 8, 4, 10, 77, 0, 2, 0]) == nil)  // not whole addresses
        #expect(hop(ipv4: [131, 3, 4, 0]) == nil)  // no address
        #expect(hop(ipv4: [131, 9, 4, 10, 77, 0, 2]) == nil)  // longer than the options
        #expect(hop(ipv4: [131]) == nil)
    }

    private func segmentRoutingHeader(segmentsLeft: UInt8, lastEntry: UInt8, segments: [String]) -> [UInt8] {
        var header: [UInt8] = [0, UInt8(segments.count * 2), 4, segmentsLeft, lastEntry, 0, 0, 0]
        for segment in segments {
            var bytes = [UInt8](repeating: 0, count: 16)
            bytes.withUnsafeMutableBytes { _ = parseAddress(segment)!.storeBytes(to: $0.baseAddress!) }
            header += bytes
        }
        return header
    }

    @Test func aSegmentRoutingHeaderGoesToItsActiveSegment() {
        #expect(hop(ipv6: segmentRoutingHeader(segmentsLeft: 1, lastEntry: 1, segments: ["2001:db8::5", "fd77::2"]))
            == parseAddress("fd77::2"))
        #expect(hop(ipv6: segmentRoutingHeader(segmentsLeft: 0, lastEntry: 1, segments: ["fe80::1", "fd77::2"]))
            == parseAddress("fe80::1"))
        // An IPv4-mapped segment is decided as the IPv4 address it is.
        #expect(hop(ipv6: segmentRoutingHeader(segmentsLeft: 0, lastEntry: 0, segments: ["::ffff:10.77.0.2"]))
            == parseAddress("10.77.0.2"))
    }

    @Test func typeZeroOneAndTwoHeadersGoToTheirFirstAddress() {
        for type: UInt8 in [0, 1, 2] {
            var header = segmentRoutingHeader(segmentsLeft: 1, lastEntry: 0, segments: ["fd77::2"])
            header[2] = type
            #expect(hop(ipv6: header) == parseAddress("fd77::2"), "type \(type)")
        }
    }

    @Test func aMessagesRoutingHeaderIsItsLastOne() {
        // Two IPV6_RTHDR control messages: the kernel keeps the second.
        func message(_ segment: String) -> [UInt8] {
            let header = segmentRoutingHeader(segmentsLeft: 0, lastEntry: 0, segments: [segment])
            var bytes = withUnsafeBytes(of: UInt64(16 + header.count)) { Array($0) }  // cmsg_len
            bytes += withUnsafeBytes(of: Int32(41)) { Array($0) } + withUnsafeBytes(of: Int32(57)) { Array($0) }
            return bytes + header
        }
        let control = message("fd77::3") + message("fd77::2")
        let hop = control.withUnsafeBytes { SourceRoute.firstHop(level: 41, name: 6, value: $0) }
        #expect(hop == parseAddress("fd77::2"))
    }

    @Test func otherRoutingHeadersRouteNowhere() {
        var typeThree = segmentRoutingHeader(segmentsLeft: 0, lastEntry: 0, segments: ["fd77::2"])
        typeThree[2] = 3
        #expect(hop(ipv6: typeThree) == nil)
        #expect(hop(ipv6: segmentRoutingHeader(segmentsLeft: 2, lastEntry: 1, segments: ["fd77::2", "fd77::3"])) == nil)
        #expect(hop(ipv6: Array(segmentRoutingHeader(segmentsLeft: 0, lastEntry: 0, segments: ["fd77::2"]).dropLast(8))) == nil)
        #expect(hop(ipv6: [0, 0, 4, 0, 0, 0, 0, 0]) == nil)
    }

    @Test func theOptionsThatSetARoute() {
        #expect(SourceRoute.isRoute(level: 0, name: 4))  // IP_OPTIONS
        #expect(SourceRoute.isRoute(level: 41, name: 57))  // IPV6_RTHDR
        #expect(SourceRoute.isRoute(level: 41, name: 6))  // IPV6_2292PKTOPTIONS
        #expect(!SourceRoute.isRoute(level: 0, name: 57))
        #expect(!SourceRoute.isRoute(level: 41, name: 4))
    }
}

/// The lines of /proc/net/raw and raw6 as the kernel prints them.
struct RawSocketPeerTests {
    private func match(_ text: String, inode: UInt64) -> RawSocketPeer.LineMatch {
        Array(text.utf8).withUnsafeBytes { RawSocketPeer.line($0, inode: inode) }
    }

    @Test func aConnectedSocketsLineNamesItsPeer() {
        let line = "   1: 0100000A:0011 0500710C:0000 01 00000000:00000000 00:00000000 00000000     0        0 48213 2 0000000000000000 0"
        #expect(match(line, inode: 48213) == .thisSocket(SocketEndpoint(address: parseAddress("12.113.0.5")!)))
        #expect(match(line, inode: 48214) == .otherSocket)
    }

    @Test func anUnconnectedSocketHasNoPeer() {
        let line = "  17: 00000000:0011 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 48213 2 0000000000000000 0"
        #expect(match(line, inode: 48213) == .thisSocket(nil))
    }

    @Test func anIPv6LineNamesItsPeerWordByWord() {
        let line = "  17: 00000000000000000000000000000000:0011 000077FD000000000000000002000000:0000 01 00000000:00000000 00:00000000 00000000     0        0 900 2 0000000000000000 0"
        #expect(match(line, inode: 900) == .thisSocket(SocketEndpoint(address: parseAddress("fd77::2")!)))
    }

    @Test func theHeaderAndShortLinesAreNoSocket() {
        #expect(match("  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops", inode: 0) == .otherSocket)
        #expect(match("   1: 0100000A:0011", inode: 1) == .otherSocket)
        #expect(match("", inode: 0) == .otherSocket)
    }
}

import Testing
@testable import LNPCoreHost

// rtnetlink constants, from <linux/netlink.h> and <linux/rtnetlink.h>; written out here so
// the tests do not borrow the implementation's own.
private let nlmsgError: UInt16 = 2
private let nlmsgDone: UInt16 = 3
private let rtmNewRoute: UInt16 = 24
private let rtmGetRoute: UInt16 = 26
private let rtaDst: UInt16 = 1
private let rtaOif: UInt16 = 4
private let rtaGateway: UInt16 = 5
private let rtaMultipath: UInt16 = 9
private let rtaTable: UInt16 = 15
private let rtaVia: UInt16 = 18
private let afInet: UInt8 = 2
private let afInet6: UInt8 = 10

private func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xff), UInt8(value >> 8)] }
private func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
private func padded(_ bytes: [UInt8]) -> [UInt8] { bytes + [UInt8](repeating: 0, count: (4 - bytes.count % 4) % 4) }

/// One netlink message: header (length, type, flags, sequence, port id) and payload.
private func message(type: UInt16, sequence: UInt32, payload: [UInt8], length: UInt32? = nil) -> [UInt8] {
    let header = le32(length ?? UInt32(16 + payload.count)) + le16(type) + le16(0) + le32(sequence) + le32(0)
    return padded(header + payload)
}

/// struct rtmsg: family, dst_len, src_len, tos, table, protocol, scope, type, flags.
private func rtmsg(family: UInt8, destinationLength: UInt8, type: UInt8 = 1) -> [UInt8] {
    [family, destinationLength, 0, 0, 254, 2, 0, type] + le32(0)
}

private func attribute(_ type: UInt16, _ payload: [UInt8]) -> [UInt8] {
    padded(le16(UInt16(4 + payload.count)) + le16(type) + payload)
}

private func bytes(of address: IPAddress) -> [UInt8] {
    var storage = [UInt8](repeating: 0, count: 16)
    let count = storage.withUnsafeMutableBytes { address.storeBytes(to: $0.baseAddress!) }
    return Array(storage.prefix(count))
}

private func read(_ reply: [UInt8], sequence: UInt32, for address: IPAddress) -> RouteAnswer? {
    reply.withUnsafeBytes { RouteQuery.readReply($0, sequence: sequence, for: address) }
}

/// The reply `ip route get fibmatch 10.77.0.2` would give for an on-link /24 on ifindex 3.
private func onLinkReply(sequence: UInt32 = 7) -> [UInt8] {
    message(
        type: rtmNewRoute, sequence: sequence,
        payload: rtmsg(family: afInet, destinationLength: 24) + attribute(rtaTable, le32(254))
            + attribute(rtaDst, [10, 77, 0, 0]) + attribute(rtaOif, le32(3)))
}

@Suite("RouteQuery request")
struct RouteQueryRequestTests {
    private func request(for address: IPAddress, outputInterface: UInt32 = 0, fibMatch: Bool = true, sequence: UInt32)
        -> (length: Int, bytes: [UInt8])
    {
        var buffer = [UInt8](repeating: 0xaa, count: 64)
        let length = buffer.withUnsafeMutableBytes {
            RouteQuery.writeRequest(
                for: address, outputInterface: outputInterface, fibMatch: fibMatch, sequence: sequence, into: $0.baseAddress!)
        }
        return (length, buffer)
    }

    /// As `ip route get ADDRESS oif IF`: the route a socket that forces its interface takes.
    @Test func requestWithAnOutputInterface() {
        let (length, bytes) = request(for: v4(198, 51, 100, 7), outputInterface: 3, fibMatch: false, sequence: 9)
        #expect(length == 44)
        #expect(Array(bytes[0..<4]) == le32(44), "nlmsg_len")
        #expect(Array(bytes[24..<28]) == le32(0), "rtm_flags: no RTM_F_FIB_MATCH")
        #expect(Array(bytes[32..<36]) == [198, 51, 100, 7])
        #expect(Array(bytes[36..<38]) == le16(8), "rta_len")
        #expect(Array(bytes[38..<40]) == le16(rtaOif), "rta_type: RTA_OIF")
        #expect(Array(bytes[40..<44]) == le32(3))
        #expect(bytes[44..<64].allSatisfy { $0 == 0 })
    }

    @Test func ipv4Request() {
        let (length, bytes) = request(for: v4(10, 77, 0, 2), sequence: 0x0102_0304)
        #expect(length == 36)
        #expect(Array(bytes[0..<4]) == le32(36), "nlmsg_len")
        #expect(Array(bytes[4..<6]) == le16(rtmGetRoute), "nlmsg_type")
        #expect(Array(bytes[6..<8]) == le16(1), "nlmsg_flags: NLM_F_REQUEST only")
        #expect(Array(bytes[8..<12]) == le32(0x0102_0304), "nlmsg_seq")
        #expect(Array(bytes[12..<16]) == le32(0), "nlmsg_pid: the kernel fills it")
        #expect(bytes[16] == afInet, "rtm_family")
        #expect(bytes[17] == 32, "rtm_dst_len")
        #expect(Array(bytes[18..<24]) == [0, 0, 0, 0, 0, 0], "src_len, tos, table, protocol, scope, type")
        #expect(Array(bytes[24..<28]) == le32(0x2000), "rtm_flags: RTM_F_FIB_MATCH")
        #expect(Array(bytes[28..<30]) == le16(8), "rta_len")
        #expect(Array(bytes[30..<32]) == le16(rtaDst), "rta_type")
        #expect(Array(bytes[32..<36]) == [10, 77, 0, 2])
        #expect(bytes[36..<64].allSatisfy { $0 == 0 }, "the rest of the buffer is cleared")
    }

    @Test func ipv6Request() {
        let address = v6(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0x42)
        let (length, bytes) = request(for: address, sequence: 9)
        #expect(length == 48)
        #expect(Array(bytes[0..<4]) == le32(48))
        #expect(Array(bytes[4..<6]) == le16(rtmGetRoute))
        #expect(Array(bytes[6..<8]) == le16(1))
        #expect(Array(bytes[8..<12]) == le32(9))
        #expect(bytes[16] == afInet6)
        #expect(bytes[17] == 128)
        #expect(Array(bytes[24..<28]) == le32(0x2000))
        #expect(Array(bytes[28..<30]) == le16(20))
        #expect(Array(bytes[30..<32]) == le16(rtaDst))
        #expect(Array(bytes[32..<48]) == [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x42])
    }
}

@Suite("RouteQuery reply")
struct RouteQueryReplyTests {
    let address = v4(10, 77, 0, 2)

    @Test func onLinkRoute() throws {
        let answer = try #require(read(onLinkReply(), sequence: 7, for: address))
        #expect(answer == RouteAnswer(kind: .unicast, prefix: v4(10, 77, 0, 0), prefixLength: 24, hasGateway: false, outputInterface: 3))
    }

    @Test(arguments: [rtaGateway, rtaVia, rtaMultipath])
    func gatewayAttributesMarkAGateway(type: UInt16) throws {
        let reply = message(
            type: rtmNewRoute, sequence: 1,
            payload: rtmsg(family: afInet, destinationLength: 16) + attribute(rtaDst, [10, 78, 0, 0])
                + attribute(type, [10, 77, 0, 1]) + attribute(rtaOif, le32(5)))
        let answer = try #require(read(reply, sequence: 1, for: v4(10, 78, 3, 4)))
        #expect(answer.hasGateway)
        #expect(answer.prefix == v4(10, 78, 0, 0))
        #expect(answer.prefixLength == 16)
        #expect(answer.outputInterface == 5)
    }

    @Test func defaultRouteHasTheZeroPrefix() throws {
        let reply = message(
            type: rtmNewRoute, sequence: 2,
            payload: rtmsg(family: afInet, destinationLength: 0) + attribute(rtaGateway, [192, 168, 1, 1]) + attribute(rtaOif, le32(2)))
        let answer = try #require(read(reply, sequence: 2, for: v4(93, 184, 216, 34)))
        #expect(answer == RouteAnswer(kind: .unicast, prefix: v4(0, 0, 0, 0), prefixLength: 0, hasGateway: true, outputInterface: 2))

        let reply6 = message(
            type: rtmNewRoute, sequence: 2,
            payload: rtmsg(family: afInet6, destinationLength: 0) + attribute(rtaGateway, bytes(of: v6(0xfe80, 0, 0, 0, 0, 0, 0, 1))))
        let answer6 = try #require(read(reply6, sequence: 2, for: v6(0x2606, 0x4700, 0, 0, 0, 0, 0, 0x1111)))
        #expect(answer6.prefix == v6(0, 0, 0, 0, 0, 0, 0, 0))
        #expect(answer6.prefix.family == .v6)
        #expect(answer6.hasGateway)
        #expect(answer6.outputInterface == 0)
    }

    @Test func ipv6OnLinkRoute() throws {
        let prefix = v6(0x2001, 0xdb8, 1, 0, 0, 0, 0, 0)
        let reply = message(
            type: rtmNewRoute, sequence: 3,
            payload: rtmsg(family: afInet6, destinationLength: 64) + attribute(rtaDst, bytes(of: prefix)) + attribute(rtaOif, le32(4)))
        let answer = try #require(read(reply, sequence: 3, for: v6(0x2001, 0xdb8, 1, 0, 0, 0, 0, 9)))
        #expect(answer == RouteAnswer(kind: .unicast, prefix: prefix, prefixLength: 64, outputInterface: 4))
    }

    /// RTN_* route types: unicast, local, broadcast, anycast, multicast, then blackhole,
    /// unreachable, prohibit, throw (and unspec), none of which carries traffic.
    @Test(arguments: [
        (UInt8(1), RouteAnswer.Kind.unicast.rawValue), (2, RouteAnswer.Kind.ownAddress.rawValue),
        (3, RouteAnswer.Kind.broadcast.rawValue), (4, RouteAnswer.Kind.ownAddress.rawValue),
        (5, RouteAnswer.Kind.multicast.rawValue), (6, RouteAnswer.Kind.unreachable.rawValue),
        (7, RouteAnswer.Kind.unreachable.rawValue), (8, RouteAnswer.Kind.unreachable.rawValue),
        (9, RouteAnswer.Kind.unreachable.rawValue), (0, RouteAnswer.Kind.unreachable.rawValue),
    ] as [(UInt8, UInt8)])
    func routeTypes(type: UInt8, kind: UInt8) throws {
        let reply = message(type: rtmNewRoute, sequence: 4, payload: rtmsg(family: afInet, destinationLength: 32, type: type))
        #expect(try #require(read(reply, sequence: 4, for: address)).kind.rawValue == kind)
    }

    /// struct rtnexthop: length, flags, hops, interface index; then the hop's attributes.
    private func hop(interface: UInt32, gateway: [UInt8]? = nil) -> [UInt8] {
        let attributes = gateway.map { attribute(rtaGateway, $0) } ?? []
        return le16(UInt16(8 + attributes.count)) + [0, 0] + le32(interface) + attributes
    }

    @Test func multipathWithAnOnLinkHopIsOnLinkThroughIt() throws {
        let address = IPAddress(v4: 0x0A2C_0005)
        let hops = hop(interface: 4, gateway: [10, 77, 0, 2]) + hop(interface: 3)
        let reply = message(
            type: rtmNewRoute, sequence: 9,
            payload: rtmsg(family: afInet, destinationLength: 24) + attribute(rtaDst, [10, 44, 0, 0]) + attribute(rtaMultipath, hops))
        let answer = try #require(read(reply, sequence: 9, for: address))
        #expect(!answer.hasGateway)
        #expect(answer.outputInterface == 3)
        #expect(answer.prefixLength == 24)
    }

    @Test func multipathWithGatewaysOnlyIsThroughAGateway() throws {
        let address = IPAddress(v4: 0x0A2C_0005)
        let hops = hop(interface: 4, gateway: [10, 77, 0, 2]) + hop(interface: 3, gateway: [10, 77, 0, 3])
        let reply = message(
            type: rtmNewRoute, sequence: 9,
            payload: rtmsg(family: afInet, destinationLength: 24) + attribute(rtaDst, [10, 44, 0, 0]) + attribute(rtaMultipath, hops))
        let answer = try #require(read(reply, sequence: 9, for: address))
        #expect(answer.hasGateway)
    }

    @Test func errorReplyMeansUnreachable() throws {
        // struct nlmsgerr: error (-ENETUNREACH) and the request's header.
        let reply = message(type: nlmsgError, sequence: 5, payload: le32(UInt32(bitPattern: -101)) + [UInt8](repeating: 0, count: 16))
        let answer = try #require(read(reply, sequence: 5, for: address))
        #expect(answer.kind == .unreachable)
        #expect(answer.prefix == address)
        #expect(answer.prefixLength == 0)
    }

    @Test func otherSequencesAreSkipped() throws {
        #expect(read(onLinkReply(sequence: 8), sequence: 7, for: address) == nil)
        let stale = message(type: rtmNewRoute, sequence: 6, payload: rtmsg(family: afInet, destinationLength: 8, type: 2) + [1])
        #expect(stale.count == 32, "a 29-byte message padded to 32")
        let answer = try #require(read(stale + onLinkReply(sequence: 7), sequence: 7, for: address))
        #expect(answer.prefixLength == 24, "the second message answers")
        let staleError = message(type: nlmsgError, sequence: 6, payload: le32(0) + [UInt8](repeating: 0, count: 16))
        #expect(try #require(read(staleError + onLinkReply(), sequence: 7, for: address)).kind == .unicast)
    }

    @Test func messagesOfOtherTypesAreSkipped() {
        #expect(read(message(type: nlmsgDone, sequence: 7, payload: le32(0)), sequence: 7, for: address) == nil)
        #expect(read(message(type: rtmGetRoute, sequence: 7, payload: rtmsg(family: afInet, destinationLength: 32)), sequence: 7, for: address) == nil)
    }

    @Test func unknownAndFlaggedAttributes() throws {
        // NLA_F_NESTED and NLA_F_NET_BYTEORDER are not part of the type.
        let reply = message(
            type: rtmNewRoute, sequence: 7,
            payload: rtmsg(family: afInet, destinationLength: 24) + attribute(0x7ff, [1, 2, 3]) + attribute(rtaOif | 0x8000, le32(6))
                + attribute(rtaDst | 0x4000, [10, 77, 0, 0]))
        let answer = try #require(read(reply, sequence: 7, for: address))
        #expect(answer.outputInterface == 6)
        #expect(answer.prefix == v4(10, 77, 0, 0))
    }

    @Test func destinationOfTheWrongSizeIsIgnored() throws {
        let reply = message(
            type: rtmNewRoute, sequence: 7,
            payload: rtmsg(family: afInet, destinationLength: 24) + attribute(rtaDst, bytes(of: v6(0x2001, 0, 0, 0, 0, 0, 0, 1)))
                + attribute(rtaOif, [1, 2]))
        let answer = try #require(read(reply, sequence: 7, for: address))
        #expect(answer.prefix == v4(0, 0, 0, 0))
        #expect(answer.outputInterface == 0, "an RTA_OIF of two bytes is not read")
    }

    @Test func prefixLengthIsClampedToTheFamily() throws {
        let reply = message(type: rtmNewRoute, sequence: 7, payload: rtmsg(family: afInet, destinationLength: 200))
        #expect(try #require(read(reply, sequence: 7, for: address)).prefixLength == 32)
        let reply6 = message(type: rtmNewRoute, sequence: 7, payload: rtmsg(family: afInet6, destinationLength: 255))
        #expect(try #require(read(reply6, sequence: 7, for: v6(1, 0, 0, 0, 0, 0, 0, 1))).prefixLength == 128)
    }

    @Test func everyTruncationIsRejected() {
        let reply = onLinkReply()
        for length in 0..<reply.count {
            #expect(read(Array(reply.prefix(length)), sequence: 7, for: address) == nil, "first \(length) bytes")
        }
    }

    @Test func lyingMessageLengthsAreRejected() {
        let payload = rtmsg(family: afInet, destinationLength: 24) + attribute(rtaDst, [10, 77, 0, 0])
        for length: UInt32 in [0, 1, 15, 1000, 0x7fff_ffff, 0xffff_ffff] {
            #expect(read(message(type: rtmNewRoute, sequence: 7, payload: payload, length: length), sequence: 7, for: address) == nil,
                    "nlmsg_len \(length)")
        }
        // A complete header but no room for struct rtmsg.
        #expect(read(message(type: rtmNewRoute, sequence: 7, payload: [], length: 16), sequence: 7, for: address) == nil)
        #expect(read(message(type: rtmNewRoute, sequence: 7, payload: [1, 2, 3, 4], length: 20), sequence: 7, for: address) == nil)
    }

    @Test func lyingAttributeLengthsStopTheAttributes() throws {
        let head = rtmsg(family: afInet, destinationLength: 24) + attribute(rtaOif, le32(3))
        for bogus: UInt16 in [0, 1, 3, 200, 0xffff] {
            let lying = le16(bogus) + le16(rtaDst) + [10, 77, 0, 0]
            let answer = try #require(read(message(type: rtmNewRoute, sequence: 7, payload: head + lying), sequence: 7, for: address))
            #expect(answer.outputInterface == 3, "attributes before the bad one are kept")
            #expect(answer.prefix == v4(0, 0, 0, 0), "rta_len \(bogus): the bad attribute is not read")
        }
    }

    @Test func emptyReply() {
        #expect(read([], sequence: 7, for: address) == nil)
        #expect(RouteQuery.readReply(UnsafeRawBufferPointer(start: nil, count: 0), sequence: 7, for: address) == nil)
    }

    /// Random bytes and random damage to a valid reply must never crash the reader, and
    /// whatever it answers must stay within the queried family.
    @Test func fuzz() {
        var random = SeededRandom(seed: 0xBADC0FFEE)
        let valid = onLinkReply() + message(type: nlmsgError, sequence: 9, payload: le32(0))
        let valid6 = message(
            type: rtmNewRoute, sequence: 7,
            payload: rtmsg(family: afInet6, destinationLength: 64) + attribute(rtaDst, bytes(of: v6(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0)))
                + attribute(rtaGateway, bytes(of: v6(0xfe80, 0, 0, 0, 0, 0, 0, 1))) + attribute(rtaOif, le32(2)))
        let target6 = v6(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1)
        var answered = 0
        for round in 0..<20_000 {
            var buffer: [UInt8]
            let target = round % 3 == 2 ? target6 : address
            switch round % 3 {
            case 0:
                buffer = (0..<Int.random(in: 0...96, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
                if buffer.count >= 12 && Bool.random(using: &random) {
                    // A plausible header, so that the attribute parser is reached.
                    buffer.replaceSubrange(0..<4, with: le32(UInt32(buffer.count)))
                    buffer.replaceSubrange(4..<6, with: le16(rtmNewRoute))
                    buffer.replaceSubrange(8..<12, with: le32(7))
                }
            case 1: buffer = valid
            default: buffer = valid6
            }
            if round % 3 != 0 {
                for _ in 0..<Int.random(in: 1...4, using: &random) {
                    switch Int.random(in: 0..<3, using: &random) {
                    case 0: buffer[Int.random(in: 0..<buffer.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                    case 1: buffer = Array(buffer.prefix(Int.random(in: 0...buffer.count, using: &random)))
                    default: buffer += (0..<Int.random(in: 1...8, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
                    }
                    if buffer.isEmpty { break }
                }
            }
            if let answer = read(buffer, sequence: 7, for: target) {
                answered += 1
                #expect(answer.prefix.family == target.family)
                #expect(Int(answer.prefixLength) <= target.bitWidth)
            }
        }
        #expect(answered > 1_000, "mutations of valid replies should often still be read")
    }
}

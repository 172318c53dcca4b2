import Testing
@testable import LNPCoreHost
import LNPSys

#if canImport(Glibc)
import Glibc
#endif

// The route cache and the hot path read the same static storage, so their tests run one at
// a time; no other test touches that storage.

private let upBroadcast: UInt32 = 0x1 | 0x2

private func randomFacts(for address: IPAddress, _ random: inout SeededRandom) -> RouteFacts {
    let kinds: [RouteAnswer.Kind] = [.unicast, .ownAddress, .broadcast, .multicast, .unreachable]
    let prefix = address.family == .v4 ? IPAddress(v4: address.v4 & 0xffff_ff00) : IPAddress(v6High: address.high, low: 0)
    let answer = RouteAnswer(
        kind: kinds.randomElement(using: &random)!, prefix: prefix, prefixLength: UInt8.random(in: 0...UInt8(address.bitWidth), using: &random),
        hasGateway: Bool.random(using: &random), outputInterface: UInt32.random(in: 0...100, using: &random))
    guard Int.random(in: 0..<4, using: &random) != 0 else { return RouteFacts(answer: answer, interface: nil) }
    let flags: UInt32 = ([upBroadcast, 0x1 | 0x10, 0x1 | 0x8, 0x2, 0x1, UInt32.random(in: 0...UInt32.max, using: &random)] as [UInt32]).randomElement(using: &random)!
    let name = interfaceName(["eth0", "wlan0", "wg0", "lo", "abcdefghijklmno"].randomElement(using: &random)!)
    return RouteFacts(answer: answer, interface: InterfaceFacts(index: answer.outputInterface, name: name, flags: flags))
}

/// A sockaddr for `address` (IPv6 when `mapped`, for an IPv4 address).
private func sockaddrBytes(_ address: IPAddress, mapped: Bool = false) -> [UInt8] {
    if address.family == .v4 && !mapped {
        var socketAddress = sockaddr_in()
        socketAddress.sin_family = sa_family_t(AF_INET)
        socketAddress.sin_addr.s_addr = address.v4.bigEndian
        return withUnsafeBytes(of: &socketAddress) { Array($0) }
    }
    var socketAddress = sockaddr_in6()
    socketAddress.sin6_family = sa_family_t(AF_INET6)
    let carried = mapped ? IPAddress(v6High: 0, low: 0xffff_0000_0000 | UInt64(address.v4)) : address
    withUnsafeMutableBytes(of: &socketAddress.sin6_addr) { _ = carried.storeBytes(to: $0.baseAddress!) }
    return withUnsafeBytes(of: &socketAddress) { Array($0) }
}

private func certainlyNotLocal(_ bytes: [UInt8], length: Int? = nil) -> Bool {
    bytes.withUnsafeBytes { HotPath.certainlyNotLocal($0.baseAddress, UInt32(length ?? bytes.count)) }
}

/// Caches `facts` for `address` at the current stamp, as the slow path would.
private func cache(_ facts: RouteFacts, for address: IPAddress) {
    let stamp = Clock.read()
    RouteCache.write(address, stamp: stamp, facts: facts)
}

private struct OneRoute: RouteSource {
    var facts: RouteFacts?
    func route(to address: IPAddress) -> Result<RouteFacts, Errno> {
        facts.map { .success($0) } ?? .failure(Errno(24))
    }
}

@Suite("Route cache and hot path", .serialized)
struct RouteCacheTests {
    @Test func writtenFactsReadBack() throws {
        let address = v4(10, 77, 0, 2)
        let facts = RouteFacts(
            answer: RouteAnswer(kind: .unicast, prefix: v4(10, 77, 0, 0), prefixLength: 24, outputInterface: 3),
            interface: InterfaceFacts(index: 3, name: interfaceName("eth1"), flags: upBroadcast | 0x1000))
        RouteCache.write(address, stamp: 1234, facts: facts)
        #expect(RouteCache.read(address, stamp: 1234) == facts)
        #expect(RouteCache.readLocal(address, stamp: 1234) == true)
        // Another second, or another address: nothing.
        #expect(RouteCache.read(address, stamp: 1235) == nil)
        #expect(RouteCache.readLocal(address, stamp: 1235) == nil)
        #expect(RouteCache.read(v4(10, 77, 0, 3), stamp: 1234) == nil)
        #expect(RouteCache.read(IPAddress(v6High: 0, low: address.low), stamp: 1234) == nil, "same bits, other family")
        #expect(RouteCache.read(address, stamp: 1234, outputInterface: 3) == nil, "another output interface")
    }

    @Test func randomFactsRoundTrip() {
        var random = SeededRandom(seed: 606)
        for _ in 0..<3_000 {
            let address = randomAddress(&random)
            let facts = randomFacts(for: address, &random)
            let stamp = UInt64.random(in: 0...0xffff_ffff, using: &random)
            RouteCache.write(address, stamp: stamp, facts: facts)
            #expect(RouteCache.read(address, stamp: stamp) == facts)
            #expect(RouteCache.readLocal(address, stamp: stamp) == RouteVerdict.verdict(from: .success(facts), for: address).isLocal)
        }
    }

    /// Addresses that hash to one set share it: as many as it has ways stay, and the next
    /// one evicts one of them, not all.
    @Test func aSetHoldsAsManyAddressesAsItHasWays() throws {
        let first = v4(192, 168, 7, 7)
        var random = SeededRandom(seed: 9)
        var colliding = [first]
        while colliding.count < RouteCache.ways + 1 {
            let candidate = IPAddress(v4: UInt32.random(in: 0...UInt32.max, using: &random))
            if !colliding.contains(candidate) && RouteCache.set(for: candidate) == RouteCache.set(for: first) {
                colliding.append(candidate)
            }
        }
        let facts = RouteFacts(answer: RouteAnswer(kind: .ownAddress, prefix: first, prefixLength: 32), interface: nil)
        for address in colliding.prefix(RouteCache.ways) { RouteCache.write(address, stamp: 5, facts: facts) }
        for address in colliding.prefix(RouteCache.ways) { #expect(RouteCache.read(address, stamp: 5) != nil) }
        // Written again, an address keeps its record.
        RouteCache.write(first, stamp: 5, facts: facts)
        #expect(colliding.prefix(RouteCache.ways).allSatisfy { RouteCache.read($0, stamp: 5) != nil })
        RouteCache.write(colliding[RouteCache.ways], stamp: 5, facts: facts)
        #expect(RouteCache.read(colliding[RouteCache.ways], stamp: 5) != nil)
        #expect(colliding.filter { RouteCache.read($0, stamp: 5) != nil }.count == RouteCache.ways)
        // A record written in an earlier half second gives way first.
        for address in colliding.prefix(RouteCache.ways) { RouteCache.write(address, stamp: 5, facts: facts) }
        RouteCache.write(first, stamp: 4, facts: facts)
        RouteCache.write(colliding[RouteCache.ways], stamp: 5, facts: facts)
        #expect(RouteCache.read(colliding[RouteCache.ways], stamp: 5) != nil)
        #expect(colliding[1..<RouteCache.ways].allSatisfy { RouteCache.read($0, stamp: 5) != nil })
    }

    @Test func hotPathFixedAnswers() {
        #expect(certainlyNotLocal(sockaddrBytes(v4(127, 0, 0, 1))))
        #expect(certainlyNotLocal(sockaddrBytes(v4(0, 0, 0, 0))))
        #expect(certainlyNotLocal(sockaddrBytes(v6(0, 0, 0, 0, 0, 0, 0, 1))))
        #expect(certainlyNotLocal(sockaddrBytes(v6(0, 0, 0, 0, 0, 0, 0, 0))))
        #expect(certainlyNotLocal(sockaddrBytes(v4(127, 0, 0, 1), mapped: true)))
        for address in [v4(224, 0, 0, 251), v4(255, 255, 255, 255), v4(169, 254, 1, 1), v6(0xff02, 0, 0, 0, 0, 0, 0, 0xfb),
                        v6(0xfe80, 0, 0, 0, 0, 0, 0, 1)] {
            #expect(!certainlyNotLocal(sockaddrBytes(address)), "\(text(of: address))")
        }
        #expect(!certainlyNotLocal(sockaddrBytes(v4(224, 0, 0, 251), mapped: true)))
        // What the kernel itself rejects needs no decision.
        #expect(HotPath.certainlyNotLocal(nil, 16))
        #expect(HotPath.certainlyNotLocal(UnsafeRawPointer(bitPattern: 8), 16))
        #expect(certainlyNotLocal(sockaddrBytes(v4(10, 0, 0, 1)), length: 15))
        #expect(certainlyNotLocal(sockaddrBytes(v6(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1)), length: 23))
        var unix = sockaddrBytes(v4(10, 0, 0, 1))
        unix[0] = UInt8(AF_UNIX)
        unix[1] = 0
        #expect(certainlyNotLocal(unix))
    }

    @Test func hotPathUsesTheCacheOnlyForNonLocalRoutes() {
        _ = SettingsStore.current()  // as the preload's constructor does: calls may pass once it has
        let near = v4(10, 88, 0, 2)
        let far = v4(93, 184, 216, 34)
        let onLink = RouteFacts(
            answer: RouteAnswer(kind: .unicast, prefix: v4(10, 88, 0, 0), prefixLength: 24, outputInterface: 3),
            interface: InterfaceFacts(index: 3, name: interfaceName("eth1"), flags: upBroadcast))
        let gateway = RouteFacts(
            answer: RouteAnswer(kind: .unicast, prefix: v4(0, 0, 0, 0), prefixLength: 0, hasGateway: true, outputInterface: 3),
            interface: onLink.interface)
        var farAnswers: [Bool] = []
        for _ in 0..<5 {  // the clock word may go stale between writing and reading; it rarely does twice
            cache(onLink, for: near)
            #expect(!certainlyNotLocal(sockaddrBytes(near)))
            #expect(!certainlyNotLocal(sockaddrBytes(near, mapped: true)))
            cache(gateway, for: far)
            farAnswers.append(certainlyNotLocal(sockaddrBytes(far)) && certainlyNotLocal(sockaddrBytes(far, mapped: true)))
        }
        #expect(farAnswers.contains(true), "a cached gateway route answers on the hot path")
        // Unless every call is recorded (--audit-all): then even a known non-local call takes
        // the slow path, which records it.
        withPassWord(0) {
            cache(gateway, for: far)
            #expect(!certainlyNotLocal(sockaddrBytes(far)))
            #expect(certainlyNotLocal(sockaddrBytes(v4(127, 0, 0, 1))), "loopback is never recorded, so never slowed")
        }
        // Multicast, broadcast and link-local are local whatever a cached route says.
        for special in [v4(169, 254, 1, 1), v4(224, 0, 0, 251), v4(255, 255, 255, 255), v4(240, 0, 0, 1),
                        v6(0xfe80, 0, 0, 0, 0, 0, 0, 1), v6(0xff02, 0, 0, 0, 0, 0, 0, 1)] {
            cache(gateway, for: special)
            #expect(!certainlyNotLocal(sockaddrBytes(special)), "\(text(of: special))")
        }
        // Nothing cached for this one: the slow path decides.
        #expect(!certainlyNotLocal(sockaddrBytes(v4(10, 99, 99, 99))))
    }

    /// The hot path's promise: "certainly not local" only when the classifier, given the same
    /// route, says not local.
    @Test func hotPathIsSound() {
        _ = SettingsStore.current()
        var random = SeededRandom(seed: 4040)
        var answeredFromCache = 0
        for _ in 0..<4_000 {
            var address = randomAddress(&random)
            if Int.random(in: 0..<4, using: &random) == 0 {
                // Near the boundaries of the fixed rules.
                let specials: [UInt32] = [0x7f00_0000, 0x0000_0000, 0xe000_0000, 0xa9fe_0000, 0xffff_ff00, 0xdfff_ff00, 0xa9fd_ff00, 0xa9ff_0000]
                address = IPAddress(v4: specials.randomElement(using: &random)! | UInt32.random(in: 0...255, using: &random))
                if Bool.random(using: &random) { address = IPAddress(v6High: 0, low: 0xffff_0000_0000 | UInt64(address.v4)) }
            }
            // The slow path classifies, and caches, the unmapped address.
            let target = address.unmapped
            let facts = randomFacts(for: target, &random)
            cache(facts, for: target)
            let mapped = address.family == .v4 && Bool.random(using: &random)
            guard certainlyNotLocal(sockaddrBytes(address, mapped: mapped)) else { continue }
            if !target.isNeverLocal { answeredFromCache += 1 }
            let verdict = Classifier(routes: OneRoute(facts: facts), exemptions: NoExemptions()).classify(SocketEndpoint(address: target))
            #expect(!verdict.isLocal, "\(text(of: address)) was let through, but \(verdict)")
        }
        #expect(answeredFromCache > 500, "the cache should answer most non-local routes")
    }

    /// bind's hot path: "certainly not local" only when `classifyBind`, given the same route,
    /// says not local — a subnet broadcast address, whose route is local, must go on.
    @Test func bindHotPathIsSound() {
        _ = SettingsStore.current()
        var random = SeededRandom(seed: 5151)
        var answered = 0
        for _ in 0..<4_000 {
            var address = randomAddress(&random)
            if Int.random(in: 0..<3, using: &random) == 0 {
                let specials: [UInt32] = [0x0a4d_00ff, 0xc0a8_01ff, 0xffff_ffff, 0xe000_00fb, 0x7f00_0001, 0xa9fe_0101, 0]
                address = IPAddress(v4: specials.randomElement(using: &random)!)
            }
            let target = address.unmapped
            var facts = randomFacts(for: target, &random)
            if Bool.random(using: &random) {  // a subnet broadcast route on a usable interface
                facts.answer.kind = .broadcast
                facts.answer.hasGateway = false
                facts.interface = InterfaceFacts(index: 3, name: interfaceName("eth0"), flags: upBroadcast)
            }
            cache(facts, for: target)
            let mapped = address.family == .v4 && Bool.random(using: &random)
            let bytes = sockaddrBytes(address, mapped: mapped)
            guard bytes.withUnsafeBytes({ HotPath.bindCertainlyNotLocal(copy: $0.baseAddress, UInt32(bytes.count)) }) else { continue }
            answered += 1
            let verdict = Classifier(routes: OneRoute(facts: facts), exemptions: NoExemptions()).classifyBind(SocketEndpoint(address: target))
            #expect(!verdict.isLocal, "\(text(of: address)) was let through, but \(verdict)")
        }
        #expect(answered > 1_000, "most unicast binds leave at once")
    }
}

/// Runs `body` with the hot path's "pass untouched" word set to `value`, then puts it back.
private func withPassWord(_ value: UInt64, _ body: () -> Void) {
    let word = SharedWords(lnp_storage_pass_not_local())
    let saved = word.load(0)
    word.store(0, value)
    body()
    word.store(0, saved)
}

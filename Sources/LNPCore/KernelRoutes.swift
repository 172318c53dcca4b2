import LNPSys

/// Everything the classification needs about the way to one address.
public struct RouteFacts: Equatable, BitwiseCopyable {
    public var answer: RouteAnswer
    /// The interface the route leaves through; nil when the kernel could not say.
    public var interface: InterfaceFacts?

    public init(answer: RouteAnswer, interface: InterfaceFacts?) {
        self.answer = answer
        self.interface = interface
    }
}

/// Where the classification learns routes; the kernel in a live process, a table in tests.
public protocol RouteSource {
    /// The route to `address`, or why it could not be learned.
    func route(to address: IPAddress) -> Result<RouteFacts, Errno>

    /// Whether that route leads onto the local network; a source may answer this faster.
    func isLocalRoute(to address: IPAddress) -> Bool
}

extension RouteSource {
    public func isLocalRoute(to address: IPAddress) -> Bool {
        RouteVerdict.verdict(from: route(to: address), for: address).isLocal
    }
}

/// Routes asked of the kernel (rtnetlink, `fibmatch`), or read from this half second's
/// snapshot of its tables (`RouteSnapshot`), and remembered for the rest of the current half
/// second (`Clock`), so that an address added or removed takes effect within a second while a
/// program's repeated calls cost a table probe, not a system call.
public struct KernelRoutes: RouteSource {
    /// The interface the route must leave through, as for a socket that forces its egress
    /// (`ip route get ADDRESS oif IF`); 0 for any, as an unbound socket's.
    public var outputInterface: UInt32
    /// Whether the answers may come from (and go to) the route cache: not for a socket of
    /// another network namespace than the cache's (the supervisor's `SocketNamespace`).
    public var cached: Bool

    public init(outputInterface: UInt32 = 0, cached: Bool = true) {
        self.outputInterface = outputInterface
        self.cached = cached
    }

    public func route(to address: IPAddress) -> Result<RouteFacts, Errno> {
        guard cached else { return KernelRoutes.ask(address, outputInterface: outputInterface) }
        let stamp = Clock.stamp()
        // The hot path learns a gateway's route without its interface (`learn`); a reason
        // names it, in the words `lnp check` uses, so such an entry is asked again here.
        if let facts = RouteCache.read(address, stamp: stamp, outputInterface: outputInterface),
            facts.interface != nil || facts.answer.outputInterface == 0
        {
            return .success(facts)
        }
        let found = snapshotted(address, stamp: stamp).map { Result<RouteFacts, Errno>.success($0) }
            ?? KernelRoutes.ask(address, outputInterface: outputInterface)
        if case .success(let facts) = found {
            RouteCache.write(address, stamp: stamp, facts: facts, outputInterface: outputInterface)
        }
        return found
    }

    public func isLocalRoute(to address: IPAddress) -> Bool {
        guard cached else { return RouteVerdict.verdict(from: KernelRoutes.ask(address, outputInterface: outputInterface), for: address).isLocal }
        let stamp = Clock.stamp()
        if let local = RouteCache.readLocal(address, stamp: stamp, outputInterface: outputInterface) {
            return local
        }
        return learn(address, stamp: stamp)
    }

    /// The hot path, with no call at all: one cached bit, written with the route; nil when
    /// the cache cannot say without a call (a new address, or a clock to read). Any output
    /// interface: a process that forces one never takes the hot path (`PassWord`).
    @inline(__always)
    public func cachedIsLocalRoute(to address: IPAddress) -> Bool? {
        guard let stamp = Clock.cached() else { return nil }
        return RouteCache.readLocal(address, stamp: stamp)
    }

    /// The route from this half second's snapshot of the tables, for a socket that leaves
    /// by the routes (one that forces its interface is asked about: the snapshot does not
    /// model that).
    private func snapshotted(_ address: IPAddress, stamp: UInt64) -> RouteFacts? {
        outputInterface == 0 ? RouteSnapshot.facts(for: address, stamp: stamp) : nil
    }

    @inline(never)
    func learn(_ address: IPAddress, stamp: UInt64) -> Bool {
        // A route through a gateway is not local whatever its interface: no need to ask its name.
        let found = snapshotted(address, stamp: stamp).map { Result<RouteFacts, Errno>.success($0) }
            ?? KernelRoutes.ask(address, outputInterface: outputInterface, interfaceOfGateways: false)
        guard case .success(let facts) = found else {
            return true  // unknown: the slow path decides, failing closed (not cached: asked again next time)
        }
        RouteCache.write(address, stamp: stamp, facts: facts, outputInterface: outputInterface)
        return RouteVerdict.verdict(from: .success(facts), for: address).isLocal
    }

    /// One question to the kernel, through a netlink socket that lives for this call only
    /// (the library keeps no descriptor in the program's descriptor space). The interface's
    /// name and flags take two more system calls; without `interfaceOfGateways`, a route
    /// through a gateway comes without them (its verdict does not depend on them, only the
    /// words of its reason).
    ///
    /// With an output interface and no route through it, the kernel sends straight out of
    /// that interface, taking the address as on-link; `fibmatch` has no routing entry to show
    /// for that, so the route is then asked as a socket would take it (the answer names the
    /// address itself as its prefix).
    @inline(never)
    public static func ask(_ address: IPAddress, outputInterface: UInt32 = 0, interfaceOfGateways: Bool = true)
        -> Result<RouteFacts, Errno>
    {
        let socket: Int32
        switch NetlinkSocket.open() {
        case .success(let opened): socket = opened
        case .failure(let error): return .failure(error)
        }
        defer { Sys.close(socket) }
        var asked = query(address, outputInterface: outputInterface, fibMatch: true, through: socket)
        if case .success(let answer) = asked, answer.kind == .unreachable, outputInterface != 0 {
            asked = query(address, outputInterface: outputInterface, fibMatch: false, through: socket)
        }
        return asked.map { answer in
            let wanted = answer.outputInterface != 0 && (interfaceOfGateways || !answer.hasGateway)
            let interface = wanted ? InterfaceFacts.read(index: answer.outputInterface, through: socket) : nil
            return RouteFacts(answer: answer, interface: interface)
        }
    }

    private static func query(_ address: IPAddress, outputInterface: UInt32, fibMatch: Bool, through socket: Int32)
        -> Result<RouteAnswer, Errno>
    {
        let sequence = UInt32(truncatingIfNeeded: lnp_fetch_add(Counter.netlinkSequence.word, 1) &+ 1)
        var request = InlineArray<64, UInt8>(repeating: 0)
        let sent = withUnsafeMutableBytes(of: &request) { raw in
            let length = RouteQuery.writeRequest(
                for: address, outputInterface: outputInterface, fibMatch: fibMatch, sequence: sequence, into: raw.baseAddress!)
            return Sys.call(Int(LNP_SYS_SENDTO), Int(socket), Int(bitPattern: raw.baseAddress), length)
        }
        if case .failure(let error) = sent { return .failure(error) }

        // rtnetlink answers inside the sending call, so the reply is already queued.
        var reply = InlineArray<512, UInt8>(repeating: 0)
        for _ in 0..<4 {
            let received = withUnsafeMutableBytes(of: &reply) { raw in
                Sys.call(Int(LNP_SYS_RECVFROM), Int(socket), Int(bitPattern: raw.baseAddress), raw.count, Int(LNP_MSG_DONTWAIT))
                    .map { min($0, raw.count) }
            }
            let count: Int
            switch received {
            case .success(let length): count = length
            case .failure(let error): return .failure(error)
            }
            if count == 0 { break }
            let answer = withUnsafeBytes(of: &reply) { raw in
                RouteQuery.readReply(UnsafeRawBufferPointer(rebasing: raw[0..<count]), sequence: sequence, for: address)
            }
            if let answer { return .success(answer) }
        }
        return .failure(Errno(Int32(LNP_EIO)))  // no reply that could be read
    }
}

/// A netlink socket for one question to the kernel.
enum NetlinkSocket {
    static func open() -> Result<Int32, Errno> {
        Sys.openingPastTheLimit {
            Sys.call(Int(LNP_SYS_SOCKET), Int(LNP_AF_NETLINK), Int(LNP_SOCK_RAW | LNP_SOCK_CLOEXEC), Int(LNP_NETLINK_ROUTE))
                .map { Int32(truncatingIfNeeded: $0) }
        }
    }
}

/// The per-destination route cache: a set-associative table of sequenced records in static
/// storage (sets of `ways` records, so that a few addresses hashed alike do not evict each
/// other), keyed by the address and the output interface the route was asked for (0: none,
/// as for the hot path). Words of a record: 0 sequence, 1–2 address, 3 family, stamp and
/// output interface, 4 answer kind, prefix length, gateway, whether it is local, and
/// interface flags, 5 interface index, 6–7 prefix, 8–9 name.
enum RouteCache {
    static let words = Int(LNP_ROUTE_CACHE_WORDS)
    static let ways = Int(LNP_ROUTE_CACHE_WAYS)
    static let setBits = Int(LNP_ROUTE_CACHE_SET_BITS)
    static let localBit: UInt64 = 1 << 18
    /// Output interfaces above this do not fit the tag: their routes are asked every time.
    static let outputInterfaceLimit: UInt32 = 1 << 23

    /// Where word 3 holds the stamp.
    static let stampBits: UInt64 = 0x1_ffff_ffff << 8

    /// Word 3: the family, the stamp plus one (at most 2^32), and the output interface.
    @inline(__always)
    static func tag(_ address: IPAddress, stamp: UInt64, outputInterface: UInt32) -> UInt64 {
        UInt64(address.family.rawValue) | (stamp + 1) << 8 | UInt64(outputInterface) << 41
    }

    /// The first record of the set `address` belongs to.
    @inline(__always) static func set(for address: IPAddress, outputInterface: UInt32 = 0) -> Int {
        let hash = address.hashBits ^ UInt64(outputInterface) &* 0xFF51_AFD7_ED55_8CCD
        return Int(truncatingIfNeeded: hash >> UInt64(64 - setBits)) * ways
    }

    @inline(__always) static func record(_ index: Int) -> SequencedRecord {
        SequencedRecord(words: SharedWords(lnp_storage_route_cache() + index * words))
    }

    /// The record's sequence, if it is stable and holds `address` written during `stamp`.
    @inline(__always)
    static func beginRead(_ record: SequencedRecord, address: IPAddress, stamp: UInt64, outputInterface: UInt32 = 0)
        -> UInt64?
    {
        guard let sequence = record.beginRead() else { return nil }
        let w = record.words
        let tag = tag(address, stamp: stamp, outputInterface: outputInterface)
        guard w.loadRelaxed(1) == address.high, w.loadRelaxed(2) == address.low, w.loadRelaxed(3) == tag else {
            return nil
        }
        return sequence
    }

    /// The record of `address`'s set that holds it for `stamp`, and the sequence to check
    /// once it is read.
    @inline(__always)
    static func find(_ address: IPAddress, stamp: UInt64, outputInterface: UInt32) -> (record: SequencedRecord, sequence: UInt64)? {
        let first = set(for: address, outputInterface: outputInterface)
        for way in 0..<ways {
            let record = record(first + way)
            if let sequence = beginRead(record, address: address, stamp: stamp, outputInterface: outputInterface) {
                return (record, sequence)
            }
        }
        return nil
    }

    @inline(__always)
    static func readLocal(_ address: IPAddress, stamp: UInt64, outputInterface: UInt32 = 0) -> Bool? {
        guard let found = find(address, stamp: stamp, outputInterface: outputInterface) else { return nil }
        let local = found.record.words.loadRelaxed(4) & localBit != 0
        return found.record.endRead(found.sequence) ? local : nil
    }

    @inline(__always)
    static func read(_ address: IPAddress, stamp: UInt64, outputInterface: UInt32 = 0) -> RouteFacts? {
        guard let found = find(address, stamp: stamp, outputInterface: outputInterface) else { return nil }
        return read(found.record, sequence: found.sequence, address: address)
    }

    @inline(__always)
    private static func read(_ record: SequencedRecord, sequence: UInt64, address: IPAddress) -> RouteFacts? {
        let w = record.words
        let packed = w.loadRelaxed(4)
        let interfaceIndex = UInt32(truncatingIfNeeded: w.loadRelaxed(5))
        let prefix = address.family == .v4
            ? IPAddress(v4: UInt32(truncatingIfNeeded: w.loadRelaxed(7)))
            : IPAddress(v6High: w.loadRelaxed(6), low: w.loadRelaxed(7))
        let name = InterfaceName(first: w.loadRelaxed(8), second: w.loadRelaxed(9))
        guard record.endRead(sequence), let kind = RouteAnswer.Kind(rawValue: UInt8(truncatingIfNeeded: packed)) else {
            return nil
        }
        let answer = RouteAnswer(
            kind: kind, prefix: prefix, prefixLength: UInt8(truncatingIfNeeded: packed >> 8),
            hasGateway: packed >> 16 & 1 == 1, outputInterface: interfaceIndex)
        let interface = packed >> 17 & 1 == 1
            ? InterfaceFacts(index: interfaceIndex, name: name, flags: UInt32(truncatingIfNeeded: packed >> 32)) : nil
        return RouteFacts(answer: answer, interface: interface)
    }

    /// Stores a route in its set: over the record that holds the same address and output
    /// interface, else one written before this stamp, else one chosen in turn.
    static func write(_ address: IPAddress, stamp: UInt64, facts: RouteFacts, outputInterface: UInt32 = 0) {
        guard outputInterface < outputInterfaceLimit else { return }
        let first = set(for: address, outputInterface: outputInterface)
        let tag = tag(address, stamp: stamp, outputInterface: outputInterface)
        var chosen = -1
        for way in 0..<ways {
            let w = record(first + way).words
            let held = w.loadRelaxed(3)
            if w.loadRelaxed(1) == address.high && w.loadRelaxed(2) == address.low && held & ~stampBits == tag & ~stampBits {
                chosen = way
                break
            }
            if chosen < 0 && held & stampBits != tag & stampBits { chosen = way }
        }
        if chosen < 0 { chosen = Int(lnp_fetch_add(Counter.routeEvictions.word, 1) % UInt64(ways)) }
        write(record(first + chosen), address: address, tag: tag, facts: facts)
    }

    private static func write(_ record: SequencedRecord, address: IPAddress, tag: UInt64, facts: RouteFacts) {
        guard let claimed = record.beginWrite() else { return }
        let w = record.words
        let answer = facts.answer
        var packed = UInt64(answer.kind.rawValue) | UInt64(answer.prefixLength) << 8
        if answer.hasGateway { packed |= 1 << 16 }
        if let interface = facts.interface { packed |= 1 << 17 | UInt64(interface.flags) << 32 }
        if RouteVerdict.verdict(from: .success(facts), for: address).isLocal { packed |= localBit }
        w.storeRelaxed(1, address.high)
        w.storeRelaxed(2, address.low)
        w.storeRelaxed(3, tag)
        w.storeRelaxed(4, packed)
        w.storeRelaxed(5, UInt64(answer.outputInterface))
        w.storeRelaxed(6, answer.prefix.high)
        w.storeRelaxed(7, answer.prefix.low)
        w.storeRelaxed(8, facts.interface?.name.first ?? 0)
        w.storeRelaxed(9, facts.interface?.name.second ?? 0)
        record.endWrite(claimed)
    }
}

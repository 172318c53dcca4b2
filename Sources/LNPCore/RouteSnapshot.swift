import LNPSys

/// A copy of the kernel's routing tables, taken at most once per half second (`Clock`) once a
/// process meets several new destinations in one, so that a program that sends to thousands
/// of addresses (a DNS or game server, a scanner) costs a table lookup per new address, not a
/// netlink socket and a question (docs/benchmarks.md). The kernel stays the judge: the copy
/// answers only where it decides exactly as the kernel would (`RouteTable`); with policy
/// rules, source-specific or TOS routes the family is left to the kernel, as are multipath
/// routes, nexthop objects, routes whose link is down and prefixes several routes share.
///
/// Shared storage (CShim/sys/storage.c): header words 0 sequence, 1 stamp plus one, 2 which
/// families are modelled (bits 0–1), the number of routes (16–31) and of interfaces (32–47),
/// 3 new destinations this stamp (stamp plus one << 32 | count); then the routes
/// (`RouteEntry`, four words each), then the interfaces (three words each: index and flags,
/// the name). One writer at a time (the sequence); readers never wait.
enum RouteSnapshot {
    /// New destinations in one half second before a snapshot is worth its dumps: a program
    /// that reaches a few hosts asks about each, as it always did.
    static let newDestinationsBeforeSnapshot: UInt64 = 4

    enum Lookup: Equatable {
        case facts(RouteFacts)
        /// The snapshot cannot answer for this address: ask the kernel.
        case ask
        /// No snapshot for this half second.
        case absent
    }

    static let capacity = Int(LNP_ROUTE_SNAPSHOT_ROUTES)
    static let interfaceCapacity = Int(LNP_ROUTE_SNAPSHOT_INTERFACES)
    static var header: SharedWords { SharedWords(lnp_storage_route_snapshot()) }
    static var routes: SharedWords { header.advanced(by: Int(LNP_ROUTE_SNAPSHOT_HEADER_WORDS)) }
    static var interfaces: SharedWords { routes.advanced(by: capacity * RouteEntry.words) }

    /// The route to `address` from the snapshot of `stamp`, taking one when this half second
    /// has seen enough new destinations.
    static func facts(for address: IPAddress, stamp: UInt64) -> RouteFacts? {
        switch lookup(address, stamp: stamp) {
        case .facts(let facts): return facts
        case .ask: return nil
        case .absent:
            guard countNewDestination(stamp: stamp) >= newDestinationsBeforeSnapshot else { return nil }
            take(stamp: stamp)
            if case .facts(let facts) = lookup(address, stamp: stamp) { return facts }
            return nil
        }
    }

    static func lookup(_ address: IPAddress, stamp: UInt64) -> Lookup {
        let record = SequencedRecord(words: header)
        guard let sequence = record.beginRead() else { return .absent }
        guard header.loadRelaxed(1) == stamp + 1 else { return .absent }
        let shape = header.loadRelaxed(2)
        let familyBit: UInt64 = address.family == .v4 ? 1 : 2
        var result = Lookup.ask
        if shape & familyBit != 0 {
            let count = min(Int(truncatingIfNeeded: shape >> 16 & 0xffff), capacity)
            let routes = routes
            if let answer = RouteTable.answer(for: address, count: count, entry: { RouteEntry(loading: routes.advanced(by: $0 * RouteEntry.words)) }) {
                if answer.outputInterface == 0 {
                    result = .facts(RouteFacts(answer: answer, interface: nil))
                } else if let interface = interface(answer.outputInterface, count: Int(truncatingIfNeeded: shape >> 32 & 0xffff)) {
                    result = .facts(RouteFacts(answer: answer, interface: interface))
                }
            }
        }
        return record.endRead(sequence) ? result : .absent
    }

    private static func interface(_ index: UInt32, count: Int) -> InterfaceFacts? {
        for i in 0..<min(count, interfaceCapacity) {
            let w = interfaces.advanced(by: i * 3)
            let first = w.loadRelaxed(0)
            if UInt32(truncatingIfNeeded: first) == index {
                return InterfaceFacts(
                    index: index, name: InterfaceName(first: w.loadRelaxed(1), second: w.loadRelaxed(2)),
                    flags: UInt32(truncatingIfNeeded: first >> 32))
            }
        }
        return nil
    }

    /// Counts a destination the snapshot could not answer for this stamp; returns the count.
    private static func countNewDestination(stamp: UInt64) -> UInt64 {
        let word = header.loadRelaxed(3)
        let count = word >> 32 == stamp + 1 ? (word & 0xffff_ffff) + 1 : 1
        header.storeRelaxed(3, (stamp + 1) << 32 | count)
        return count
    }

    /// Dumps the rules, routes and interfaces into the snapshot, if no other thread is.
    static func take(stamp: UInt64) {
        let record = SequencedRecord(words: header)
        guard let claimed = record.beginWrite() else { return }
        defer { record.endWrite(claimed) }
        var shape: UInt64 = 0
        var dumped = 0
        if case .success(let socket) = NetlinkSocket.open() {
            defer { Sys.close(socket) }
            if let count = dump(.v4, through: socket, from: dumped) {
                dumped = count
                shape |= 1
            }
            if let count = dump(.v6, through: socket, from: dumped) {
                dumped = count
                shape |= 2
            }
            let staging = SharedWords(lnp_storage_route_staging())
            let kept = RouteTable.settleSharedPrefixes(
                count: dumped, entry: { RouteEntry(loading: staging.advanced(by: $0 * RouteEntry.words)) },
                store: { $1.store(to: routes.advanced(by: $0 * RouteEntry.words)) })
            shape |= UInt64(kept) << 16 | UInt64(readInterfaces(routes: kept, through: socket)) << 32
        }
        header.storeRelaxed(2, shape)
        header.storeRelaxed(1, stamp + 1)
    }

    /// Dumps `family`'s routes into the staging area from entry `start` on, if its rules are
    /// the defaults; returns the entries in all, or nil when the family is left to the kernel.
    private static func dump(_ family: IPAddress.Family, through socket: Int32, from start: Int) -> Int? {
        guard NetlinkDump.hasDefaultRules(family, through: socket) else { return nil }
        return NetlinkDump.routes(family, through: socket, into: SharedWords(lnp_storage_route_staging()), from: start)
    }

    /// Stores the name and flags of each interface the routes leave through; returns how
    /// many (an interface past the capacity is missing, and its routes are asked).
    private static func readInterfaces(routes count: Int, through socket: Int32) -> Int {
        var stored = 0
        for i in 0..<count {
            let index = RouteEntry(loading: routes.advanced(by: i * RouteEntry.words)).outputInterface
            guard index != 0, stored < interfaceCapacity, interface(index, count: stored) == nil,
                let facts = InterfaceFacts.read(index: index, through: socket)
            else { continue }
            let w = interfaces.advanced(by: stored * 3)
            w.storeRelaxed(0, UInt64(facts.index) | UInt64(facts.flags) << 32)
            w.storeRelaxed(1, facts.name.first)
            w.storeRelaxed(2, facts.name.second)
            stored += 1
        }
        return stored
    }
}

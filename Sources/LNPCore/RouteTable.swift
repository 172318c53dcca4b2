import LNPSys

/// A routing entry as the kernel's dump of its tables shows it, reduced to what a lookup
/// needs (`RouteTable`), and packed into four words for the snapshot's shared storage.
struct RouteEntry: Equatable, BitwiseCopyable {
    /// The tables the default policy rules consult, in the order they consult them.
    enum Table: UInt8, BitwiseCopyable {
        case local = 0, main = 1, fallback = 2
    }

    var prefix: IPAddress
    var length: UInt8
    /// nil: a kind of route lnp does not model (`throw`, `nat`): only the kernel can say.
    var kind: RouteAnswer.Kind?
    var table: Table
    var hasGateway: Bool
    var outputInterface: UInt32
    var priority: UInt32
    /// Whether a table lookup gives the kernel's own answer for this entry: not for multipath
    /// routes, nexthop objects, next hops that are dead or whose link is down, nor an entry that
    /// shares its prefix with another (the kernel then chooses by what lnp does not see).
    var exact: Bool

    /// Whether `address` falls inside the entry's prefix.
    @inline(__always) func covers(_ address: IPAddress) -> Bool {
        RouteEntry.prefix(high: prefix.high, low: prefix.low, length: length, family: prefix.family, covers: address)
    }

    @inline(__always)
    static func prefix(high: UInt64, low: UInt64, length: UInt8, family: IPAddress.Family, covers address: IPAddress) -> Bool {
        guard address.family == family else { return false }
        if family == .v4 {
            let mask: UInt64 = length == 0 ? 0 : (0xffff_ffff << (32 - UInt64(min(length, 32)))) & 0xffff_ffff
            return (address.low ^ low) & mask == 0
        }
        let bits = UInt64(min(length, 128))
        let highMask: UInt64 = bits == 0 ? 0 : bits >= 64 ? ~0 : ~0 << (64 - bits)
        let lowMask: UInt64 = bits <= 64 ? 0 : bits == 128 ? ~0 : ~0 << (128 - bits)
        return (address.high ^ high) & highMask == 0 && (address.low ^ low) & lowMask == 0
    }

    // Word 2: bit 0 IPv6, 8–15 length, 16–23 kind (0: none), 24–25 table, 28 gateway, 29 exact,
    // 32–63 output interface. Word 3: priority.
    static let words = 4

    func store(to w: SharedWords) {
        var packed = UInt64(prefix.family == .v6 ? 1 : 0) | UInt64(length) << 8 | UInt64(kind?.rawValue ?? 0) << 16
        packed |= UInt64(table.rawValue) << 24 | UInt64(outputInterface) << 32
        if hasGateway { packed |= 1 << 28 }
        if exact { packed |= 1 << 29 }
        w.storeRelaxed(0, prefix.high)
        w.storeRelaxed(1, prefix.low)
        w.storeRelaxed(2, packed)
        w.storeRelaxed(3, UInt64(priority))
    }

    /// The entry stored at `w`; any bit pattern reads as some entry (a torn read is then
    /// discarded by the snapshot's sequence).
    init(loading w: SharedWords) {
        let packed = w.loadRelaxed(2)
        let high = w.loadRelaxed(0), low = w.loadRelaxed(1)
        prefix = packed & 1 == 1 ? IPAddress(v6High: high, low: low) : IPAddress(v4: UInt32(truncatingIfNeeded: low))
        length = UInt8(truncatingIfNeeded: packed >> 8)
        kind = RouteAnswer.Kind(rawValue: UInt8(truncatingIfNeeded: packed >> 16))
        table = Table(rawValue: UInt8(truncatingIfNeeded: packed >> 24) & 3) ?? .fallback
        hasGateway = packed >> 28 & 1 == 1
        exact = packed >> 29 & 1 == 1
        outputInterface = UInt32(truncatingIfNeeded: packed >> 32)
        priority = UInt32(truncatingIfNeeded: w.loadRelaxed(3))
    }

    init(
        prefix: IPAddress, length: UInt8, kind: RouteAnswer.Kind?, table: Table, hasGateway: Bool = false,
        outputInterface: UInt32 = 0, priority: UInt32 = 0, exact: Bool = true
    ) {
        self.prefix = prefix
        self.length = length
        self.kind = kind
        self.table = table
        self.hasGateway = hasGateway
        self.outputInterface = outputInterface
        self.priority = priority
        self.exact = exact
    }
}

/// The kernel's routing decision redone on a copy of its tables, for the one configuration
/// where a copy decides exactly as the kernel does: the default policy rules (`local`, then
/// `main`, then `default` for IPv4), no source-specific or TOS routes. The kernel merges
/// IPv4's `local` and `main` tables into one trie while the rules are the defaults and
/// consults `local` first when they are not; an address both readings would route
/// differently is left to the kernel.
enum RouteTable {
    /// The answer `ip route get fibmatch ADDRESS` would give, from `count` entries of one
    /// snapshot; nil when only the kernel can tell.
    static func answer(for address: IPAddress, count: Int, entry: (Int) -> RouteEntry) -> RouteAnswer? {
        // IPv4 destinations the kernel does not route by the tables alone: a multicast
        // group or the limited broadcast takes that type whatever route covers it, and the
        // unspecified address goes to this host.
        if address.family == .v4 && (address.isMulticast || address.isLimitedBroadcast || address.isUnspecified) { return nil }
        var best = InlineArray<3, Int>(repeating: -1)
        var bestLength = InlineArray<3, Int>(repeating: -1)
        for i in 0..<count {
            let candidate = entry(i)
            guard candidate.covers(address) else { continue }
            let table = Int(candidate.table.rawValue)
            if Int(candidate.length) > bestLength[table] {
                best[table] = i
                bestLength[table] = Int(candidate.length)
            }
        }
        let local = Int(RouteEntry.Table.local.rawValue), main = Int(RouteEntry.Table.main.rawValue)
        // A `main` route at least as specific as the `local` one: the merged trie and the
        // rules could disagree.
        if best[local] >= 0 && best[main] >= 0 && bestLength[main] >= bestLength[local] { return nil }
        let chosen = best[local] >= 0 ? best[local] : best[main] >= 0 ? best[main] : best[2]
        guard chosen >= 0 else { return .unreachable(address) }  // no route: the kernel's error reply
        let found = entry(chosen)
        guard found.exact, let kind = found.kind else { return nil }
        // A route that refuses (unreachable, blackhole, prohibit) is an error reply to `fibmatch`.
        if kind == .unreachable { return .unreachable(address) }
        return RouteAnswer(
            kind: kind, prefix: found.prefix, prefixLength: min(found.length, UInt8(address.bitWidth)),
            hasGateway: found.hasGateway, outputInterface: found.outputInterface)
    }

    /// Settles entries that share a prefix within the tables a lookup reads together (`local`
    /// and `main`, or `default`): the kernel takes the lowest metric among IPv4 routes of one
    /// table, so the others are dropped; any other sharing (IPv6, whose choice also weighs the
    /// routers' reachability, equal metrics, or the two tables) leaves the prefix to the
    /// kernel. Returns the number of entries kept, stored from index 0 on; `store` must not
    /// write where `entry` reads.
    static func settleSharedPrefixes(count: Int, entry: (Int) -> RouteEntry, store: (Int, RouteEntry) -> Void) -> Int {
        var kept = 0
        for i in 0..<count {
            var current = entry(i)
            var dropped = false
            for j in 0..<count where j != i {
                let other = entry(j)
                guard other.length == current.length, other.prefix == current.prefix,
                    (other.table == .fallback) == (current.table == .fallback)
                else { continue }
                let ranked = current.prefix.family == .v4 && other.table == current.table && other.exact && current.exact
                    && other.priority != current.priority
                if ranked {
                    if other.priority < current.priority { dropped = true }
                } else {
                    current.exact = false
                }
            }
            if !dropped {
                store(kept, current)
                kept += 1
            }
        }
        return kept
    }
}

/// The kernel's dump of routes and rules, read message by message.
enum RouteDump {
    static let headerSize = 16  // struct nlmsghdr
    static let bodySize = 12  // struct rtmsg, struct fib_rule_hdr

    enum Item: Equatable {
        case entry(RouteEntry)
        /// A route of a table the default rules never consult.
        case skipped
        /// A route lnp's copy cannot model (source-specific, by type of service): the family's
        /// snapshot is unsound.
        case unmodelled
    }

    /// Reads one RTM_NEWROUTE message of `family`'s dump.
    static func route(_ message: UnsafeRawBufferPointer, family: IPAddress.Family) -> Item {
        guard message.count >= headerSize + bodySize else { return .unmodelled }
        let base = message.baseAddress!
        let length = base.load(fromByteOffset: headerSize + 1, as: UInt8.self)
        let sourceLength = base.load(fromByteOffset: headerSize + 2, as: UInt8.self)
        let typeOfService = base.load(fromByteOffset: headerSize + 3, as: UInt8.self)
        var tableID = UInt32(base.load(fromByteOffset: headerSize + 4, as: UInt8.self))
        let type = Int(base.load(fromByteOffset: headerSize + 7, as: UInt8.self))
        let flags = base.loadUnaligned(fromByteOffset: headerSize + 8, as: UInt32.self)
        if sourceLength != 0 || typeOfService != 0 { return .unmodelled }
        var entry = RouteEntry(
            prefix: family == .v4 ? IPAddress(v4: 0) : IPAddress(v6High: 0, low: 0), length: length,
            kind: kind(ofType: type), table: .main,
            exact: flags & UInt32(LNP_RTNH_F_DEAD | LNP_RTNH_F_LINKDOWN) == 0)
        var offset = headerSize + bodySize
        while offset + 4 <= message.count {
            let attributeLength = Int(base.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
            let attribute = Int(base.loadUnaligned(fromByteOffset: offset + 2, as: UInt16.self)) & 0x3fff
            guard attributeLength >= 4, offset + attributeLength <= message.count else { return .unmodelled }
            let payload = attributeLength - 4
            let value = base + offset + 4
            switch attribute {
            case Int(LNP_RTA_DST):
                if family == .v4 && payload == 4 { entry.prefix = IPAddress(v4Bytes: value) }
                if family == .v6 && payload == 16 { entry.prefix = IPAddress(v6Bytes: value) }
            case Int(LNP_RTA_TABLE):
                if payload == 4 { tableID = value.loadUnaligned(as: UInt32.self) }
            case Int(LNP_RTA_OIF):
                if payload == 4 { entry.outputInterface = value.loadUnaligned(as: UInt32.self) }
            case Int(LNP_RTA_PRIORITY):
                if payload == 4 { entry.priority = value.loadUnaligned(as: UInt32.self) }
            case Int(LNP_RTA_GATEWAY), Int(LNP_RTA_VIA):
                entry.hasGateway = true
            case Int(LNP_RTA_MULTIPATH), Int(LNP_RTA_NH_ID):
                entry.exact = false
            default:
                break
            }
            offset += (attributeLength + 3) & ~3
        }
        switch tableID {
        case UInt32(LNP_RT_TABLE_LOCAL): entry.table = .local
        case UInt32(LNP_RT_TABLE_MAIN): entry.table = .main
        case UInt32(LNP_RT_TABLE_DEFAULT): entry.table = .fallback
        default: return .skipped
        }
        return .entry(entry)
    }

    static func kind(ofType type: Int) -> RouteAnswer.Kind? {
        switch type {
        case Int(LNP_RTN_UNICAST): return .unicast
        case Int(LNP_RTN_LOCAL), Int(LNP_RTN_ANYCAST): return .ownAddress
        case Int(LNP_RTN_BROADCAST): return .broadcast
        case Int(LNP_RTN_MULTICAST): return .multicast
        case Int(LNP_RTN_UNREACHABLE), Int(LNP_RTN_BLACKHOLE), Int(LNP_RTN_PROHIBIT): return .unreachable
        default: return nil
        }
    }

    /// The default rules of `family`, one bit each: IPv4's `0: lookup local`, `32766: lookup
    /// main`, `32767: lookup default`; IPv6 has the first two.
    static func defaultRules(_ family: IPAddress.Family) -> UInt8 { family == .v4 ? 0b111 : 0b011 }

    /// Which default rule one RTM_NEWRULE message is (its bit), or nil for any other rule: one
    /// with a selector, another action or table, or an attribute lnp does not know.
    static func defaultRule(_ message: UnsafeRawBufferPointer) -> UInt8? {
        guard message.count >= headerSize + bodySize else { return nil }
        let base = message.baseAddress!
        // fib_rule_hdr: family, dst_len, src_len, tos, table, res1, res2, action, flags.
        for byte in 1...3 where base.load(fromByteOffset: headerSize + byte, as: UInt8.self) != 0 { return nil }
        guard base.load(fromByteOffset: headerSize + 7, as: UInt8.self) == UInt8(LNP_FR_ACT_TO_TBL),
            base.loadUnaligned(fromByteOffset: headerSize + 8, as: UInt32.self) == 0
        else { return nil }
        var table = UInt32(base.load(fromByteOffset: headerSize + 4, as: UInt8.self))
        var priority: UInt32 = 0
        var offset = headerSize + bodySize
        while offset + 4 <= message.count {
            let attributeLength = Int(base.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
            let attribute = Int(base.loadUnaligned(fromByteOffset: offset + 2, as: UInt16.self)) & 0x3fff
            guard attributeLength >= 4, offset + attributeLength <= message.count else { return nil }
            let value = base + offset + 4
            switch attribute {
            case Int(LNP_FRA_TABLE) where attributeLength == 8: table = value.loadUnaligned(as: UInt32.self)
            case Int(LNP_FRA_PRIORITY) where attributeLength == 8: priority = value.loadUnaligned(as: UInt32.self)
            case Int(LNP_FRA_PROTOCOL): break
            // Sent with every rule; -1 is "not set".
            case Int(LNP_FRA_SUPPRESS_PREFIXLEN), Int(LNP_FRA_SUPPRESS_IFGROUP):
                guard attributeLength == 8, value.loadUnaligned(as: UInt32.self) == UInt32.max else { return nil }
            default: return nil
            }
            offset += (attributeLength + 3) & ~3
        }
        switch (priority, table) {
        case (0, UInt32(LNP_RT_TABLE_LOCAL)): return 0b001
        case (32766, UInt32(LNP_RT_TABLE_MAIN)): return 0b010
        case (32767, UInt32(LNP_RT_TABLE_DEFAULT)): return 0b100
        default: return nil
        }
    }
}

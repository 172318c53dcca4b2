import LNPSys

/// The question every hot call asks first, answered from the `sockaddr` bytes and the route
/// cache with no call at all: is this destination certainly not on the local network?
///
/// It must be sound, not complete: `true` only when the full classification would say "not
/// local"; `false` sends the call to the slow path, which decides properly. It is written
/// against the raw words, not `IPAddress`, because every instruction here is paid by every
/// call a program makes (docs/benchmarks.md).
enum HotPath {
    @inline(__always)
    static func certainlyNotLocal(_ address: UnsafeRawPointer?, _ length: UInt32) -> Bool {
        // Nothing the kernel will accept as an IPv4/IPv6 destination: it answers.
        guard let address, ProgramMemory.isPlausible(address), length >= 16, length <= 128 else { return true }
        let family = address.loadUnaligned(as: UInt16.self)
        if family == UInt16(LNP_AF_INET) {
            return certainlyNotLocal(v4: UInt32(bigEndian: address.loadUnaligned(fromByteOffset: 4, as: UInt32.self)))
        }
        if family == 0 { return false }  // AF_UNSPEC, which some sockets take as theirs: see the slow path
        guard family == UInt16(LNP_AF_INET6), length >= 24 else { return true }
        let high = UInt64(bigEndian: address.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        let low = UInt64(bigEndian: address.loadUnaligned(fromByteOffset: 16, as: UInt64.self))
        if high == 0 {
            if low <= 1 { return true }  // unspecified, loopback
            if low >> 32 == 0xffff { return certainlyNotLocal(v4: UInt32(truncatingIfNeeded: low)) }  // mapped
        }
        if high >> 56 == 0xff || high >> 54 == 0x3FA { return false }  // multicast, link-local
        return cachedNotLocal(high: high, low: low, family: 6)
    }

    @inline(__always)
    static func certainlyNotLocal(v4: UInt32) -> Bool {
        let top = v4 >> 24
        if top == 127 || v4 == 0 { return true }  // loopback, unspecified
        if top >= 224 || v4 >> 16 == 0xA9FE { return false }  // multicast, broadcast, link-local
        return cachedNotLocal(high: 0, low: UInt64(v4), family: 4)
    }

    /// The route cache's answer for an address, if it has one for the current stamp.
    @inline(__always)
    static func cachedNotLocal(high: UInt64, low: UInt64, family: UInt64) -> Bool {
        guard let stamp = Clock.cached() else { return false }
        let hash = (high ^ low ^ family) &* 0x9E37_79B9_7F4A_7C15
        let record = lnp_storage_route_cache() + Int(truncatingIfNeeded: hash >> 56) * RouteCache.words
        let sequence = lnp_load_acquire(record)
        guard sequence & 1 == 0, lnp_load_relaxed(record + 1) == high, lnp_load_relaxed(record + 2) == low,
            lnp_load_relaxed(record + 3) == family | (stamp + 1) << 8
        else { return false }
        let packed = lnp_load_relaxed(record + 4)
        lnp_fence_acquire()
        return lnp_load_relaxed(record) == sequence && packed & RouteCache.localBit == 0
    }
}

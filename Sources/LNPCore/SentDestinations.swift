import LNPSys

/// The datagram destinations each socket has already been recorded sending to, so that with
/// all activity recorded a UDP socket's traffic makes one record per destination, not one
/// per datagram.
///
/// A set of hashes of (socket cookie, address, port), mapped on first use. It is
/// open-addressed with a short probe window; when a window is full, one of its entries gives
/// way, so a program with very many socket–destination pairs may see a pair recorded again.
/// A hash collision (1 in 2^63 per pair) would hide a pair; both trade-offs are documented.
enum SentDestinations {
    static let capacity = 4096
    static let window = 8

    /// True the first time `fd`'s socket sends to `endpoint` (and whenever it cannot tell).
    static func isFirst(_ fd: Int32, to endpoint: SocketEndpoint) -> Bool {
        guard case .success(let cookie) = SocketTags.cookie(of: fd), let table = table() else { return true }
        let key = self.key(cookie: cookie, endpoint: endpoint)
        let words = SharedWords(table)
        let home = Int(truncatingIfNeeded: key >> 20) % capacity
        for step in 0..<window {
            let slot = (home + step) % capacity
            let held = words.load(slot)
            if held == key { return false }
            if held == 0 {
                if words.compareExchange(slot, expected: 0, desired: key) { return true }
                if words.load(slot) == key { return false }  // another thread recorded this pair just now
            }
        }
        words.store((home + Int(truncatingIfNeeded: key & 7)) % capacity, key)
        return true
    }

    /// Never 0 (the empty slot).
    static func key(cookie: UInt64, endpoint: SocketEndpoint) -> UInt64 {
        @inline(__always) func mix(_ hash: UInt64, _ word: UInt64) -> UInt64 {
            let mixed = (hash ^ word) &* 0xBF58_476D_1CE4_E5B9
            return mixed ^ mixed >> 31
        }
        var hash = cookie &* 0x9E37_79B9_7F4A_7C15
        hash = mix(hash, endpoint.address.high)
        hash = mix(hash, endpoint.address.low)
        hash = mix(hash, UInt64(endpoint.port) | UInt64(endpoint.address.family.rawValue) << 16)
        return hash | 1 << 63
    }

    private static func table() -> UnsafeMutablePointer<UInt64>? {
        let holder = lnp_storage_sent_destinations()!
        if let table = lnp_load_pointer(holder) { return table.assumingMemoryBound(to: UInt64.self) }
        guard let mapped = lnp_sys_map_zeroed(capacity * 8) else { return nil }
        if lnp_install_pointer(holder, mapped) == 0 { _ = Sys.call(Int(SYS_munmap), Int(bitPattern: mapped), capacity * 8) }
        return lnp_load_pointer(holder)?.assumingMemoryBound(to: UInt64.self)
    }
}

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
        // Nothing the kernel will read: it answers.
        guard let address, ProgramMemory.isPlausible(address), length <= UInt32(LNP_SOCKADDR_CAPACITY) else { return true }
        return certainlyNotLocal(copy: address, length)
    }

    /// The same for lnp's copy of an address, which is readable and at most 128 bytes long.
    @inline(__always)
    static func certainlyNotLocal(copy address: UnsafeRawPointer, _ length: UInt32) -> Bool {
        // Nothing the kernel will accept as an IPv4/IPv6 destination: it answers.
        guard length >= 16 else { return true }
        let family = address.loadUnaligned(as: UInt16.self)
        if family == UInt16(LNP_AF_INET) {
            return certainlyNotLocal(v4: UInt32(bigEndian: address.loadUnaligned(fromByteOffset: 4, as: UInt32.self)))
        }
        if family == UInt16(LNP_AF_UNSPEC) { return false }  // AF_UNSPEC, which some sockets take as theirs: see the slow path
        guard family == UInt16(LNP_AF_INET6), length >= 24 else { return true }
        let high = UInt64(bigEndian: address.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        let low = UInt64(bigEndian: address.loadUnaligned(fromByteOffset: 16, as: UInt64.self))
        if high == 0 {
            if low <= 1 { return true }  // unspecified, loopback
            if low >> 32 == 0xffff { return certainlyNotLocal(v4: UInt32(truncatingIfNeeded: low)) }  // mapped
        }
        if high >> 56 == 0xff || high >> 54 == 0x3FA { return false }  // multicast, link-local
        return cachedNotLocal(IPAddress(v6High: high, low: low))
    }

    @inline(__always)
    static func certainlyNotLocal(v4: UInt32) -> Bool {
        let top = v4 >> 24
        if top == 127 || v4 == 0 { return true }  // loopback, unspecified
        if top >= 224 || v4 >> 16 == 0xA9FE { return false }  // multicast, broadcast, link-local
        return cachedNotLocal(IPAddress(v4: v4))
    }

    /// Whether a bind to this address (lnp's copy) is certainly no local-network operation,
    /// as `Classifier.classifyBind` would find: multicast and the limited broadcast are, a
    /// loopback, unspecified or link-local address is not, and any other is only when its
    /// route is a broadcast one (a subnet's broadcast address — IPv6 too takes such routes),
    /// so one whose cached route is not local leaves at once. False sends the bind to the
    /// classifier.
    @inline(__always)
    static func bindCertainlyNotLocal(copy address: UnsafeRawPointer?, _ length: UInt32) -> Bool {
        guard let address, ProgramMemory.isPlausible(address), length >= 16, length <= UInt32(LNP_SOCKADDR_CAPACITY)
        else { return false }
        let family = address.loadUnaligned(as: UInt16.self)
        let bound: IPAddress
        if family == UInt16(LNP_AF_INET) {
            // The same tests on the raw word, in the order the usual binds meet them.
            let v4 = UInt32(bigEndian: address.loadUnaligned(fromByteOffset: 4, as: UInt32.self))
            let top = v4 >> 24
            if top == 127 || v4 == 0 || v4 >> 16 == 0xA9FE { return true }  // loopback, unspecified, link-local
            if top & 0xf0 == 0xe0 || v4 == 0xffff_ffff { return false }  // multicast, the limited broadcast
            return KernelRoutes().cachedIsLocalRoute(to: IPAddress(v4: v4)) == false
        } else if family == UInt16(LNP_AF_INET6) && length >= 24 {
            bound = IPAddress(
                v6High: UInt64(bigEndian: address.loadUnaligned(fromByteOffset: 8, as: UInt64.self)),
                low: UInt64(bigEndian: address.loadUnaligned(fromByteOffset: 16, as: UInt64.self))
            ).unmapped
        } else {
            return false
        }
        if bound.isMulticast || bound.isLimitedBroadcast { return false }
        if bound.isLoopback || bound.isUnspecified || bound.isLinkLocal { return true }
        return KernelRoutes().cachedIsLocalRoute(to: bound) == false
    }

    /// Whether two copied names of a sockaddr_in's 16 bytes are the same bytes: a message of a
    /// batch that goes where the message before it went is decided as that one was.
    @inline(__always)
    static func sameIPv4Name(_ name: UnsafeRawPointer, _ other: UnsafeRawPointer) -> Bool {
        name.loadUnaligned(as: UInt64.self) == other.loadUnaligned(as: UInt64.self)
            && name.loadUnaligned(fromByteOffset: 8, as: UInt64.self) == other.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
    }

    /// The route cache's answer, if it has one for the current stamp — and only while such
    /// calls may pass untouched (`PassWord`): not before the settings are read, nor while all
    /// activity is recorded, nor once the process has a socket that chooses its own way out
    /// (loopback is never recorded nor reached any other way, so it is answered above without
    /// this load).
    @inline(__always)
    static func cachedNotLocal(_ address: IPAddress) -> Bool {
        KernelRoutes().cachedIsLocalRoute(to: address) == false && PassWord.isOpen()
    }
}

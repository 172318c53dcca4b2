import LNPSys

/// The stamp that expires cached routes and the DNS servers: the clock in half seconds.
/// An entry written during one stamp is used until the stamp changes, so a route added or
/// removed takes effect within half a second plus at most a sixteenth (see `cached`).
///
/// Reading the clock is a call, and a call costs a hot path its registers; so the current
/// stamp is kept in a shared word with the CPU cycle counter's tick (CShim/sys) it was read
/// at, and read again only when the tick has moved: most calls read no clock at all.
enum Clock {
    /// The current stamp if the shared word still holds it; nil when the clock must be read.
    @inline(__always) static func cached() -> UInt64? {
        let tick = lnp_sys_tick()
        let word = lnp_load_relaxed(lnp_storage_clock())
        if tick != 0 && word >> 32 == tick & 0xffff_ffff { return word & 0xffff_ffff }
        return nil
    }

    static func stamp() -> UInt64 {
        if let stamp = cached() { return stamp }
        return read()
    }

    @inline(never) static func read() -> UInt64 {
        let stamp = UInt64(truncatingIfNeeded: lnp_sys_half_seconds()) & 0xffff_ffff
        lnp_store_relaxed(lnp_storage_clock(), (lnp_sys_tick() & 0xffff_ffff) << 32 | stamp)
        return stamp
    }
}

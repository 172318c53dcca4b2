import LNPSys

/// The stamp that expires cached routes and the DNS servers: the clock in half seconds.
/// An entry written during one stamp is used until the stamp changes, so a route added or
/// removed takes effect within half a second plus at most a sixteenth (see `cached`).
///
/// Reading the clock is a system call, and a call costs a hot path its registers; so the current
/// stamp is kept in a shared word with the CPU cycle counter's tick (CShim/sys) it was read
/// at, and read again only when the tick has moved: most calls read no clock at all. Word:
/// bit 63 "the tick may be read", bits 32–62 the tick, bits 0–31 the stamp.
public enum Clock {
    static let tickUsable: UInt64 = 1 << 63

    /// The current stamp if the shared word still holds it; nil when the clock must be read.
    @inline(__always) static func cached() -> UInt64? {
        let word = lnp_load_relaxed(lnp_storage_clock())
        guard word & tickUsable != 0 else { return nil }
        guard word >> 32 & 0x7fff_ffff == lnp_sys_tick() & 0x7fff_ffff else { return nil }
        return word & 0xffff_ffff
    }

    static func stamp() -> UInt64 {
        if let stamp = cached() { return stamp }
        return read()
    }

    /// Reads the tick first, then the clock: a thread delayed in between stores a stamp newer
    /// than its tick, never an older one, so entries expire early rather than late.
    @inline(never) static func read() -> UInt64 {
        let usable = tickMayBeRead()
        let tick = usable ? lnp_sys_tick() : 0
        let halfSeconds = lnp_sys_half_seconds()
        let stamp = UInt64(truncatingIfNeeded: halfSeconds) & 0xffff_ffff
        let word = usable ? tickUsable | (tick & 0x7fff_ffff) << 32 | stamp : stamp
        lnp_store_relaxed(lnp_storage_clock(), word)
        return stamp
    }

    /// Wall-clock time now, for a record.
    public static func now() -> Timestamp {
        var seconds: Int64 = 0
        var microseconds: Int32 = 0
        lnp_sys_realtime(&seconds, &microseconds)
        return Timestamp(seconds: seconds, microseconds: microseconds)
    }

    /// There is a cycle counter, and this thread has not made reading it fault.
    static func tickMayBeRead() -> Bool { lnp_sys_tick_available() != 0 && !tickIsDisabled() }

    /// Whether this thread made the time-stamp counter fault (prctl PR_SET_TSC, x86 only):
    /// asked of the kernel each time, since a program may do it at any moment.
    static func tickIsDisabled() -> Bool {
        #if arch(x86_64)
        var mode: Int32 = 0
        let result = withUnsafeMutablePointer(to: &mode) { pointer in
            Sys.call(Int(LNP_SYS_PRCTL), Int(LNP_PR_GET_TSC), Int(bitPattern: pointer))
        }
        if case .success = result, mode != Int32(LNP_PR_TSC_ENABLE) { return true }
        #endif
        return false
    }
}

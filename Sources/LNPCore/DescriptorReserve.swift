/// lnp keeps one descriptor of the hard limit for itself. A soft limit asked at the hard one
/// is set one below — by lnp-run for the program it starts, by the preload when a program
/// raises its own (CShim/hooks/limits.c) — so that a program that uses up its descriptors
/// still leaves lnp the one it takes for a moment, raising the soft limit by one
/// (`Sys.openingPastTheLimit`): a netlink socket to ask a route, or a record.
public enum DescriptorReserve {
    public static func softLimit(_ soft: UInt64, hard: UInt64) -> UInt64 {
        guard hard != UInt64.max, hard > 1, soft == hard else { return soft }
        return hard - 1
    }
}

@_cdecl("lnp_descriptor_soft_limit")
public func lnpDescriptorSoftLimit(_ soft: UInt64, _ hard: UInt64) -> UInt64 {
    DescriptorReserve.softLimit(soft, hard: hard)
}

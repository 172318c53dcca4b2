import LNPSys

/// What this process has done that makes a destination address not the whole story, noted by
/// the hooks and never forgotten (a forked child inherits it): it opened a raw IP socket,
/// which may write its own IP header, or forced a socket's output interface. While either is
/// noted, every call takes the slow path, which asks the socket (`SocketEgress`); a process
/// that does neither keeps the hot path.
enum SocketFlags {
    static let rawSockets: UInt64 = 1
    static let forcedEgress: UInt64 = 2

    static func note(_ flag: UInt64) {
        let before = lnp_fetch_or(lnp_storage_socket_flags(), flag)
        if before == 0 { PassWord.close(PassWord.socketsNeedALook) }
    }

    @inline(__always) static func has(_ flag: UInt64) -> Bool {
        lnp_load_relaxed(lnp_storage_socket_flags()) & flag != 0
    }
}

/// The word every hot call reads: calls to a destination the route cache knows is not local
/// may pass untouched only when it is exactly `open`. Each reason to close it is a bit of its
/// own, set and cleared atomically, so none can undo another.
enum PassWord {
    /// Set once the settings are read, unless the audit records all activity.
    static let open: UInt64 = 1
    /// Set when the process has sockets whose destination is not the whole story.
    static let socketsNeedALook: UInt64 = 2

    @inline(__always) static func isOpen() -> Bool { lnp_load_relaxed(lnp_storage_pass_not_local()) == open }

    static func setOpen(_ open: Bool) {
        if open {
            _ = lnp_fetch_or(lnp_storage_pass_not_local(), PassWord.open)
        } else {
            _ = lnp_fetch_and(lnp_storage_pass_not_local(), ~PassWord.open)
        }
    }

    static func close(_ reason: UInt64) { _ = lnp_fetch_or(lnp_storage_pass_not_local(), reason) }
}

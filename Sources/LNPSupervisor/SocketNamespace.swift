import LNPSupervisorSys

#if canImport(Glibc)
import Glibc
#endif

/// The network namespace a notified call's socket lives in (SIOCGSKNS): its routes are the
/// ones that decide whether it reaches the local network, and a program may have made a
/// namespace of its own (`ip netns exec`, `unshare -n`). A privileged lnp-run enters the
/// socket's namespace on its own thread for the decision and comes back. An unprivileged one
/// can neither ask a socket its namespace nor enter one; it decides with its own routes — a
/// namespace an unprivileged program makes reaches other networks only through a process in
/// lnp-run's (slirp4netns, pasta), whose calls are decided there.
final class SocketNamespace {
    /// lnp-run's own namespace: its cookie (0 where the kernel gives none), its inode, and a
    /// descriptor to come back with (nil: the namespace is never changed).
    private let own: (cookie: UInt64, inode: UInt64, fd: Int32)?

    init(privileged: Bool) {
        let fd = privileged ? open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC) : -1
        guard fd >= 0 else {
            own = nil
            return
        }
        let probe = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { if probe >= 0 { close(probe) } }
        own = (probe >= 0 ? lnp_socket_namespace_cookie(probe) : 0, lnp_own_network_namespace(), fd)
    }

    /// `decide`, in `socket`'s namespace: its argument says whether that is another than
    /// lnp-run's. nil when the namespace cannot be entered (the caller fails closed).
    func deciding<T>(on socket: Int32, _ decide: (_ inOther: Bool) -> T) -> T? {
        guard let own else { return decide(false) }
        // The cookie first: one call, where SIOCGSKNS makes a descriptor to look at.
        if own.cookie != 0 && lnp_socket_namespace_cookie(socket) == own.cookie { return decide(false) }
        let namespace = lnp_socket_namespace(socket)
        guard namespace != 0, namespace != own.inode else { return decide(false) }
        guard lnp_enter_socket_namespace(socket) == 0 else { return nil }
        defer {
            // Back in lnp-run's own: every other call of this thread is decided there.
            if lnp_enter_network_namespace(own.fd) != 0 { fatalError("lnp-run cannot return to its own network namespace") }
        }
        return decide(true)
    }
}

import LNPSupervisorSys
import LNPTools

#if canImport(Glibc)
import Glibc
#endif

/// A thread's capability sets, read with one capget: the network's privileges (binding a
/// low port, a raw socket, a device) are capabilities.
public struct CapabilitySets: Equatable, Sendable {
    var inheritable: UInt64
    var permitted: UInt64
    var effective: UInt64

    /// CAP_SYS_ADMIN is effective: a filter may be installed without no_new_privs.
    public var administersTheSystem: Bool { effective & (1 << 21) != 0 }

    /// Thread `thread`'s (0: the calling thread's), or nil when it is gone.
    public static func of(thread: Int32) -> CapabilitySets? {
        var sets = CapabilitySets(inheritable: 0, permitted: 0, effective: 0)
        return lnp_thread_capabilities(thread, &sets.inheritable, &sets.permitted, &sets.effective) == 0 ? sets : nil
    }

    /// Matches no thread's: a caller is then always given its own credentials.
    static let unknown = CapabilitySets(inheritable: .max, permitted: .max, effective: .max)
}

/// A thread's credentials as /proc shows them: who lnp-run acts as when it makes a call for
/// it. lnp-run, when privileged, compares a caller's capabilities with its own, and makes a
/// call under the caller's credentials only where they differ (lnp-run run as root, a program
/// that dropped its rights).
struct CallerCredentials: Equatable {
    var uid: [UInt32]
    var gid: [UInt32]
    var groups: [UInt32]
    var capabilities: CapabilitySets

    /// The credentials of thread `thread`, or nil.
    static func of(thread: Int32) -> CallerCredentials? {
        guard let fields = ProcFiles.status(of: thread, ["Uid", "Gid", "Groups", "CapInh", "CapPrm", "CapEff"]),
            let uid = fields["Uid"]?.prefix(3).compactMap({ UInt32($0) }), uid.count == 3,
            let gid = fields["Gid"]?.prefix(3).compactMap({ UInt32($0) }), gid.count == 3,
            let groups = fields["Groups"]?.compactMap({ UInt32($0) }),
            let inheritable = fields["CapInh"]?.first.flatMap({ UInt64($0, radix: 16) }),
            let permitted = fields["CapPrm"]?.first.flatMap({ UInt64($0, radix: 16) }),
            let effective = fields["CapEff"]?.first.flatMap({ UInt64($0, radix: 16) })
        else { return nil }
        return CallerCredentials(uid: uid, gid: gid, groups: groups, capabilities: CapabilitySets(
            inheritable: inheritable, permitted: permitted, effective: effective))
    }

    /// lnp-run's own capabilities when it could do anything a caller could not (it is root or
    /// holds a capability): calls are then compared with them. nil otherwise: the caller is
    /// the same user (a program cannot change user without privilege, and no_new_privs keeps
    /// setuid programs from it), and lnp-run's own calls are the caller's.
    static func lnpRunPrivileges() -> CapabilitySets? {
        guard let own = CapabilitySets.of(thread: 0) else { return .unknown }
        return own.effective != 0 || own.permitted != 0 || geteuid() == 0 ? own : nil
    }

    /// Takes these credentials in the calling thread (a worker's, which ends after the call).
    func assume() -> Bool {
        guard groups.count <= Int(LNP_CREDENTIAL_GROUPS) else { return false }
        var raw = lnp_credentials()
        raw.uid = (uid[0], uid[1], uid[2])
        raw.gid = (gid[0], gid[1], gid[2])
        raw.group_count = Int32(groups.count)
        withUnsafeMutableBytes(of: &raw.groups) { bytes in
            for (index, group) in groups.enumerated() { bytes.storeBytes(of: group, toByteOffset: index * 4, as: UInt32.self) }
        }
        raw.inheritable = capabilities.inheritable
        raw.permitted = capabilities.permitted
        raw.effective = capabilities.effective
        return lnp_assume_credentials(&raw) == 0
    }
}

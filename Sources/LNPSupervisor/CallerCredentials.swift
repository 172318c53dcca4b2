import LNPSupervisorSys

/// A thread's credentials as /proc shows them: who lnp-run acts as when it makes a call for
/// it. lnp-run compares them with its own, and makes a call under the caller's only where
/// they differ (lnp-run run as root, a program that dropped its rights).
struct CallerCredentials: Equatable {
    var uid: [UInt32]
    var gid: [UInt32]
    var groups: [UInt32]
    var inheritable: UInt64
    var permitted: UInt64
    var effective: UInt64

    /// The credentials of thread `thread` (`self` for lnp-run's own), or nil.
    static func of(thread: Int32?) -> CallerCredentials? {
        guard let status = ProcFile.read(thread.map { "/proc/\($0)/status" } ?? "/proc/thread-self/status") else { return nil }
        var fields: [String: [Substring]] = [:]
        for line in String(decoding: status, as: UTF8.self).split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let key = String(line[..<colon])
            guard ["Uid", "Gid", "Groups", "CapInh", "CapPrm", "CapEff"].contains(key) else { continue }
            fields[key] = line[line.index(after: colon)...].split(whereSeparator: { $0 == " " || $0 == "\t" })
        }
        guard let uid = fields["Uid"]?.prefix(3).compactMap({ UInt32($0) }), uid.count == 3,
            let gid = fields["Gid"]?.prefix(3).compactMap({ UInt32($0) }), gid.count == 3,
            let groups = fields["Groups"]?.compactMap({ UInt32($0) }),
            let inheritable = fields["CapInh"]?.first.flatMap({ UInt64($0, radix: 16) }),
            let permitted = fields["CapPrm"]?.first.flatMap({ UInt64($0, radix: 16) }),
            let effective = fields["CapEff"]?.first.flatMap({ UInt64($0, radix: 16) })
        else { return nil }
        return CallerCredentials(uid: uid, gid: gid, groups: groups, inheritable: inheritable, permitted: permitted,
                                 effective: effective)
    }

    /// Whether lnp-run could do anything the caller could not: it is root or holds a
    /// capability. Otherwise the caller is the same user (a program cannot change user
    /// without privilege, and no_new_privs keeps setuid programs from it), and lnp-run's
    /// own calls are the caller's.
    var isPrivileged: Bool { effective != 0 || permitted != 0 || uid.contains(0) }

    /// Whether thread `thread`'s capabilities differ from these: the network's privileges
    /// are capabilities, so calls of a caller with the same ones are made as they are (one
    /// capget, not /proc's status, on the path of every notified call).
    func capabilitiesDiffer(from thread: Int32) -> Bool {
        var inheritable: UInt64 = 0, permitted: UInt64 = 0, effective: UInt64 = 0
        guard lnp_thread_capabilities(thread, &inheritable, &permitted, &effective) == 0 else { return true }
        return (inheritable, permitted, effective) != (self.inheritable, self.permitted, self.effective)
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
        raw.inheritable = inheritable
        raw.permitted = permitted
        raw.effective = effective
        return lnp_assume_credentials(&raw) == 0
    }
}

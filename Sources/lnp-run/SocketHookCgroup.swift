import LNPSupervisor
import LNPSupervisorSys
import LNPTools

#if canImport(Glibc)
import Glibc
#endif

/// The cgroup a `--strict` run's program starts in when lnp-run may attach the kernel's
/// socket-address hooks to it (`lnp_socket_hooks.h`): a child of lnp-run's own cgroup, named
/// for lnp-run's pid, removed once the tree has gone. It closes the race the supervisor
/// cannot: a Unix socket's call the kernel continues, with an IP socket put on its descriptor
/// meanwhile — the hooks see the socket and address the kernel uses, and refuse any call
/// lnp-run itself does not make.
final class SocketHookCgroup {
    /// lnp-run's own cgroup, the new one's parent (a directory descriptor: the hierarchy may
    /// be mounted nowhere lnp-run's mount namespace shows, `ip netns exec`'s among them).
    private let parent: Int32
    let name: String
    /// `cgroup.procs`, open for the program to write itself into.
    let procs: Int32

    private init(parent: Int32, name: String, procs: Int32) {
        self.parent = parent
        self.name = name
        self.procs = procs
    }

    /// The cgroup with the hooks attached, or why there is none.
    static func create() -> Result<SocketHookCgroup, Failure> {
        // The hooks name lnp-run by its pid as the first pid namespace numbers it.
        guard pidNamespace() == "pid:[4026531836]" else {
            return .failure(Failure("lnp-run runs in a pid namespace of its own"))
        }
        guard let own = ownCgroup() else { return .failure(Failure("lnp-run is in no cgroup v2 hierarchy")) }
        let parent: Int32
        switch openOwnCgroup(own) {
        case .success(let fd): parent = fd
        case .failure(let failure): return .failure(failure)
        }
        let name = "lnp-run.\(getpid())"
        guard mkdirat(parent, name, 0o755) == 0 else {
            defer { close(parent) }
            return .failure(Failure("cannot make the cgroup \(own)/\(name): \(ErrnoName.description(of: errno))"))
        }
        let directory = openat(parent, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        let procs = openat(parent, name + "/cgroup.procs", O_WRONLY | O_CLOEXEC)
        defer { if directory >= 0 { close(directory) } }
        var failure: Failure? = nil
        if directory < 0 || procs < 0 {
            failure = Failure("cannot open the cgroup \(own)/\(name): \(ErrnoName.description(of: errno))")
        } else if Self.attach(directory) != 0 {
            failure = Failure("the kernel refused the hooks: \(ErrnoName.description(of: errno))")
        }
        if let failure {
            if procs >= 0 { close(procs) }
            unlinkat(parent, name, AT_REMOVEDIR)
            close(parent)
            return .failure(failure)
        }
        return .success(SocketHookCgroup(parent: parent, name: name, procs: procs))
    }

    /// The hooks, with the IP-level options the supervisor decides (SOL_SOCKET ones — forced
    /// egress — are asked of the socket again at each send, and packet sockets take them too).
    private static func attach(_ directory: Int32) -> Int32 {
        let options = SeccompFilter.decidedIPOptions.flatMap { [$0.level, $0.name] }
        return options.withUnsafeBufferPointer { lnp_attach_socket_hooks(directory, getpid(), $0.baseAddress, Int32(options.count / 2)) }
    }

    /// Once the tree is gone (the cgroup empty): the cgroup, and the hooks with it.
    func remove() {
        close(procs)
        unlinkat(parent, name, AT_REMOVEDIR)
        close(parent)
    }

    /// lnp-run's cgroup directory: where the hierarchy is mounted, or else through a mount
    /// of lnp-run's own that is detached again at once (the directory stays open).
    private static func openOwnCgroup(_ own: String) -> Result<Int32, Failure> {
        if let mount = cgroup2Mount() {
            let fd = open(mount + own, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            return fd >= 0 ? .success(fd) : .failure(Failure("cannot open \(mount + own): \(ErrnoName.description(of: errno))"))
        }
        var template = Array("/tmp/lnp-run-cgroup.XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            return .failure(Failure("cannot make a directory to mount cgroup2 on: \(ErrnoName.description(of: errno))"))
        }
        let point = String(cString: made)
        defer { rmdir(point) }
        guard mount("cgroup2", point, "cgroup2", UInt(MS_NOSUID | MS_NODEV | MS_NOEXEC), nil) == 0 else {
            return .failure(Failure("cannot mount cgroup2: \(ErrnoName.description(of: errno))"))
        }
        let fd = open(point + own, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        let error = errno
        umount2(point, Int32(MNT_DETACH))
        return fd >= 0 ? .success(fd) : .failure(Failure("cannot open the cgroup \(own): \(ErrnoName.description(of: error))"))
    }

    /// Where the cgroup v2 hierarchy is mounted, from /proc/self/mountinfo: the fifth field
    /// of the line whose type (after ` - `) is cgroup2, with the hierarchy's root as its own.
    private static func cgroup2Mount() -> String? {
        guard let bytes = ProcFiles.read("/proc/self/mountinfo", limit: 1 << 20) else { return nil }
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            guard let separator = line.firstRange(of: " - "), line[separator.upperBound...].hasPrefix("cgroup2 ") else { continue }
            let fields = line[..<separator.lowerBound].split(separator: " ")
            if fields.count >= 5, fields[3] == "/" { return String(fields[4]) }
        }
        return nil
    }

    /// lnp-run's pid namespace (the first one: `pid:[4026531836]`).
    private static func pidNamespace() -> String? {
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = buffer.withUnsafeMutableBytes { readlink("/proc/self/ns/pid", $0.baseAddress!, $0.count) }
        return count > 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : nil
    }

    /// lnp-run's own cgroup in that hierarchy: the `0::PATH` line of /proc/self/cgroup.
    private static func ownCgroup() -> String? {
        guard let bytes = ProcFiles.read("/proc/self/cgroup") else { return nil }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix("0::") }
            .map { $0 == "0::/" ? "" : String($0.dropFirst(3)) }
    }
}

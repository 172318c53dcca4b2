import LNPSupervisorSys

#if canImport(Glibc)
import Glibc
#endif

/// What the supervisor may use of the running kernel. Each can be turned off to behave as on
/// the kernels people run (Debian 12's 6.1, Ubuntu 22.04's 5.15), so those paths are tested.
public struct KernelFeatures: Sendable {
    /// pidfd_open of any thread (PIDFD_THREAD, Linux 6.9).
    public var threadPidfds = true
    /// SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (Linux 6.6).
    public var synchronousWakeUp = true

    public init() {}

    /// CAP_SYS_ADMIN in lnp-run's effective set: it may install a filter without
    /// no_new_privs (which strips setuid programs of their privileges).
    public static func hasSystemAdministration() -> Bool {
        guard let status = ProcFile.read("/proc/self/status") else { return false }
        for line in status.split(separator: UInt8(ascii: "\n")) where line.starts(with: Array("CapEff:".utf8)) {
            let hex = String(decoding: line.dropFirst(7).filter { $0 != 0x20 && $0 != 0x09 }, as: UTF8.self)
            return (UInt64(hex, radix: 16) ?? 0) & (1 << 21) != 0
        }
        return false
    }

    /// As on a kernel older than 6.6: neither.
    public static var older: KernelFeatures { var features = KernelFeatures(); features.threadPidfds = false; features.synchronousWakeUp = false; return features }
}

/// The process a notification came from, reached through a pidfd: its memory read by the
/// thread's number, its descriptors taken with pidfd_getfd.
final class NotifiedProcess {
    /// The thread that made the call.
    let thread: Int32
    let pidfd: Int32
    /// Its thread group (the process's pid), read from /proc only when something needs it (a
    /// record, an ask): most allowed calls do not.
    private(set) lazy var pid: Int32 = Self.threadGroup(of: thread) ?? thread
    /// Whether the pidfd reaches the thread's own descriptor table: false for a thread that
    /// unshared it, reached through its process's pidfd (before Linux 6.9) — its calls cannot
    /// be read, and are denied.
    let reachesDescriptors: Bool

    private init(thread: Int32, pid: Int32?, pidfd: Int32, reachesDescriptors: Bool = true) {
        self.thread = thread
        self.pidfd = pidfd
        self.reachesDescriptors = reachesDescriptors
        if let pid { self.pid = pid }
    }

    deinit { Glibc.close(pidfd) }

    /// nil when the thread is gone. The caller checks the notification is still valid after
    /// this: until then, the numbers could name a process that reused them.
    static func open(thread: Int32, features: KernelFeatures) -> NotifiedProcess? {
        // The thread is its process's first: a plain pidfd, and its number is the pid.
        let leader = lnp_pidfd_open(thread, 0)
        if leader >= 0 { return NotifiedProcess(thread: thread, pid: thread, pidfd: leader) }
        // Another thread's own pidfd reaches its own descriptor table (a thread may have
        // unshared it); without PIDFD_THREAD (before Linux 6.9), the process's.
        if features.threadPidfds {
            let fd = lnp_pidfd_open(thread, 1)
            if fd >= 0 { return NotifiedProcess(thread: thread, pid: nil, pidfd: fd) }
        }
        guard let pid = threadGroup(of: thread) else { return nil }
        let fd = lnp_pidfd_open(pid, 0)
        guard fd >= 0 else { return nil }
        return NotifiedProcess(thread: thread, pid: pid, pidfd: fd, reachesDescriptors: lnp_shares_descriptors(pid, thread) == 1)
    }

    /// `count` bytes at `address` of the process, all of them, or nil (the kernel would fail
    /// the call with EFAULT).
    func read(_ address: UInt64, count: Int) -> [UInt8]? {
        guard count > 0 else { return [] }
        guard address != 0 else { return nil }
        var bytes = [UInt8](repeating: 0, count: count)
        let copied = bytes.withUnsafeMutableBytes { lnp_read_process_memory(thread, address, $0.baseAddress, count) }
        return copied == count ? bytes : nil
    }

    /// A value of type `T` at `address`.
    func read<T>(_ address: UInt64, as type: T.Type) -> T? {
        guard let bytes = read(address, count: MemoryLayout<T>.size) else { return nil }
        return bytes.withUnsafeBytes { $0.loadUnaligned(as: T.self) }
    }

    @discardableResult
    func write(_ bytes: [UInt8], to address: UInt64) -> Bool {
        bytes.withUnsafeBytes { lnp_write_process_memory(thread, address, $0.baseAddress, $0.count) } == bytes.count
    }

    /// Sends the notified thread a signal (through the pidfd: never another process).
    func signalThread(_ number: Int32) {
        _ = lnp_signal_thread(pid, thread, number)
    }

    /// lnp-run's copy of the process's descriptor `number`, or the errno (EBADF: none).
    func take(_ number: Int32) -> Result<Int32, CallFailure> {
        let fd = lnp_pidfd_getfd(pidfd, number)
        return fd >= 0 ? .success(fd) : .failure(CallFailure(errno: errno))
    }

    /// The thread group a thread belongs to, from /proc (`Tgid:`).
    static func threadGroup(of thread: Int32) -> Int32? {
        guard let status = ProcFile.read("/proc/\(thread)/status") else { return nil }
        for line in status.split(separator: UInt8(ascii: "\n")) where line.starts(with: Array("Tgid:".utf8)) {
            return Int32(String(decoding: line.dropFirst(5).filter { $0 != 0x20 && $0 != 0x09 }, as: UTF8.self))
        }
        return nil
    }
}

/// A failed call's errno.
struct CallFailure: Error {
    var errno: Int32
}

/// Small files of /proc, read whole.
enum ProcFile {
    static func read(_ path: String, limit: Int = 65_536) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { Glibc.close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < limit {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += chunk[0..<count]
        }
        return bytes
    }
}

import LNPSupervisorSys
import LNPTools

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
    /// SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (Linux 5.19): once read, a call's wait ends only
    /// with a fatal signal.
    public var killableWait = true

    public init() {}

    /// As on Debian 12's 6.1: no thread pidfds, no synchronous wake-up.
    public static var linux61: KernelFeatures {
        var features = KernelFeatures()
        features.threadPidfds = false
        features.synchronousWakeUp = false
        return features
    }

    /// As on Ubuntu 22.04's 5.15: nor the killable wait.
    public static var linux515: KernelFeatures {
        var features = linux61
        features.killableWait = false
        return features
    }
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

    /// Copies `count` bytes at `address` of the process into `into`: false unless all were
    /// (the kernel would fail the call with EFAULT).
    func read(_ address: UInt64, count: Int, into: UnsafeMutableRawPointer) -> Bool {
        guard count > 0 else { return true }
        return address != 0 && lnp_read_process_memory(thread, address, into, count) == count
    }

    /// Two buffers of lnp-run's own, read in one call; nil if either cannot be read.
    func read(_ first: UInt64, count firstCount: Int, _ second: UInt64, count secondCount: Int) -> (OwnedBytes, OwnedBytes)? {
        let one = OwnedBytes(count: firstCount), two = OwnedBytes(count: secondCount)
        guard firstCount > 0 && secondCount > 0 else {
            return read(first, count: firstCount, into: one.base) && read(second, count: secondCount, into: two.base) ? (one, two) : nil
        }
        guard first != 0, second != 0 else { return nil }
        let read = lnp_read_process_memory_pair(thread, first, one.base, firstCount, second, two.base, secondCount)
        return read == firstCount + secondCount ? (one, two) : nil
    }

    /// `count` bytes at `address`, in a buffer of lnp-run's own.
    func read(_ address: UInt64, count: Int) -> OwnedBytes? {
        let bytes = OwnedBytes(count: count)
        return read(address, count: count, into: bytes.base) ? bytes : nil
    }

    /// A value of type `T` at `address`.
    func read<T>(_ address: UInt64, as type: T.Type) -> T? {
        let value = UnsafeMutablePointer<T>.allocate(capacity: 1)
        defer { value.deallocate() }
        return read(address, count: MemoryLayout<T>.size, into: value) ? UnsafeRawPointer(value).loadUnaligned(as: T.self) : nil
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
        ProcFiles.status(of: thread, ["Tgid"])?["Tgid"]?.first.flatMap { Int32($0) }
    }
}

/// A failed call's errno.
struct CallFailure: Error {
    var errno: Int32
}

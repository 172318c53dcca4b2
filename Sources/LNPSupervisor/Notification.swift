import LNPSupervisorSys

#if canImport(Glibc)
import Glibc
#endif

/// One system call the kernel holds for the supervisor: which thread made it, which call,
/// with which arguments (registers only; what they point to is read separately, and may
/// change meanwhile).
public struct Notification: Sendable {
    public let id: UInt64
    /// The thread, as lnp-run's pid namespace numbers it.
    public let thread: Int32
    public let arch: UInt32
    public let number: UInt32
    public let arguments: [UInt64]

    init(_ raw: lnp_notification) {
        id = raw.id
        thread = raw.thread
        arch = raw.arch
        number = UInt32(bitPattern: raw.number)
        arguments = withUnsafeBytes(of: raw.arguments) { Array($0.bindMemory(to: UInt64.self)) }
    }

    func argument(_ index: Int) -> UInt64 { arguments[index] }
    /// An argument the kernel reads as an `int` (a descriptor, flags).
    func int32(_ index: Int) -> Int32 { Int32(truncatingIfNeeded: arguments[index]) }
}

/// The filter's listener, lnp-run's end of the notifications: a thin wrapper whose replies
/// may fail harmlessly (ENOENT: the thread stopped waiting — interrupted, or gone).
public struct NotificationListener: Sendable {
    public let fd: Int32

    public init(fd: Int32) { self.fd = fd }

    /// The next notification; nil when there is none after all (the thread left meanwhile).
    func receive() -> Notification? {
        var raw = lnp_notification()
        while lnp_notification_receive(fd, &raw) != 0 {
            if errno != EINTR { return nil }
        }
        return Notification(raw)
    }

    /// The call returns `value` (its errno when negative). Whether a thread still waited for it.
    @discardableResult
    func reply(_ id: UInt64, result value: Int) -> Bool {
        (value < 0 ? lnp_notification_reply(fd, id, 0, Int32(-value)) : lnp_notification_reply(fd, id, Int64(value), 0)) == 0
    }

    func fail(_ id: UInt64, errno error: Int32) { _ = lnp_notification_reply(fd, id, 0, error) }

    /// The kernel makes the call itself, reading its arguments again.
    func proceed(_ id: UInt64) { _ = lnp_notification_continue(fd, id) }

    /// Whether the thread still waits in the call: checked after anything that names the
    /// process by number (its pid could have been reused).
    func isValid(_ id: UInt64) -> Bool { lnp_notification_is_valid(fd, id) != 0 }

    /// Answers wake the program on the supervisor's CPU (Linux 6.6 and later): false when
    /// the kernel cannot.
    public func wakeSynchronously() -> Bool { lnp_notification_sync_wake_up(fd) == 0 }
}

#if canImport(Glibc)
import Glibc
#endif

/// The keeper's work on a thread made after the fork, its main thread only waiting for it.
///
/// The Swift runtime's locks on Linux are priority-inheritance futexes that hold their owner's
/// thread id, which the runtime reads once per thread and keeps in thread-local storage. A
/// forked child's main thread inherits its parent's copy, so every runtime lock it takes
/// names the parent as owner: when another thread of the child then waits for that lock
/// (two threads meeting at a `swift_once`, a type's metadata made for the first time), the
/// kernel hands the lock to the parent, the owner's unlock is refused (EPERM), and both
/// threads spin for ever. The keeper runs threads (the store's lookup, "last used", the
/// supervisor's blocking calls), so none of its Swift code may run on the forked main thread;
/// a thread made after the fork starts with nothing kept.
enum FreshThread {
    /// Runs `body` on a new thread (`BackgroundWork`, which runs it here if no thread can be
    /// made: then no other thread can be made either, and no lock is met by two).
    static func continueOn(_ body: @escaping () -> Never) -> Never {
        _ = BackgroundWork { body() }
        // Only waits: `body` ends the process.
        while true { pause() }
    }
}

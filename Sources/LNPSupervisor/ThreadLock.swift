#if canImport(Glibc)
import Glibc
#endif

/// A mutex for what lnp-run's loop and its worker threads share (the workers' count, the calls
/// in flight, the sends to resume).
final class ThreadLock: @unchecked Sendable {
    /// The mutex itself, for a condition variable to wait with.
    let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    func locked<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body()
    }
}

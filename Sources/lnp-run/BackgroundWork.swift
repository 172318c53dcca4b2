#if canImport(Glibc)
import Glibc
#endif

/// Work on a thread of its own while lnp-run goes on, waited for once. Started only in the
/// keeper, from its own thread (RunKeeper.split needs a process without threads, FreshThread
/// says why the keeper's work is not on its main thread); the thread inherits the keeper's
/// signal mask, so signals still reach the signalfd alone.
final class BackgroundWork: @unchecked Sendable {
    private let body: () -> Void
    private var thread = pthread_t()
    private var running = false

    /// Starts `body`; if no thread can be made, runs it here.
    init(_ body: @escaping () -> Void) {
        self.body = body
        let context = Unmanaged.passRetained(self).toOpaque()
        running = pthread_create(&thread, nil, { context in
            let work = Unmanaged<BackgroundWork>.fromOpaque(context!).takeRetainedValue()
            work.body()
            return nil
        }, context) == 0
        if !running {
            Unmanaged<BackgroundWork>.fromOpaque(context).release()
            body()
        }
    }

    /// Returns once `body` has returned.
    func wait() {
        guard running else { return }
        pthread_join(thread, nil)
        running = false
    }
}

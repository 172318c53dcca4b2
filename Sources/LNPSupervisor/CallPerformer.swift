#if canImport(Glibc)
import Glibc
#endif

/// An allowed call, ready to be made on lnp-run's copy of the socket with lnp-run's copies
/// of its arguments. `work` returns the call's result, or minus its errno; given `dontWait`,
/// it must not block (MSG_DONTWAIT).
struct PreparedCall: @unchecked Sendable {
    enum Blocking {
        /// Cannot block: made at once.
        case never
        /// May block (a blocking stream socket): made on a worker thread, so one slow peer
        /// holds up no other process's calls.
        case may
        /// A datagram on a blocking socket: tried at once without waiting, and only if the
        /// socket's buffer is full, again on a worker.
        case rarely
    }

    var blocking: Blocking
    var work: (_ dontWait: Bool) -> Int
    /// The caller's credentials, when they are not lnp-run's: the call is made on a worker
    /// thread that takes them first.
    var credentials: CallerCredentials? = nil
}

/// Makes prepared calls and answers the kernel with their results; closes the taken socket.
struct CallPerformer: Sendable {
    let listener: NotificationListener

    func perform(_ call: PreparedCall, id: UInt64, socket: Int32) {
        if let credentials = call.credentials {
            // Taken by a thread that ends with the call: lnp-run's own rights are never lent.
            return WorkerThread.start {
                finish(credentials.assume() ? call.work(false) : -Int(EPERM), id: id, socket: socket)
            }
        }
        switch call.blocking {
        case .never:
            finish(call.work(false), id: id, socket: socket)
        case .rarely:
            let result = call.work(true)
            if result == -Int(EAGAIN) || result == -Int(EWOULDBLOCK) {
                WorkerThread.start { finish(call.work(false), id: id, socket: socket) }
            } else {
                finish(result, id: id, socket: socket)
            }
        case .may:
            WorkerThread.start { finish(call.work(false), id: id, socket: socket) }
        }
    }

    private func finish(_ result: Int, id: UInt64, socket: Int32) {
        close(socket)
        listener.reply(id, result: result)
    }

    /// A system call's result as `work` returns it.
    static func result(_ value: Int) -> Int { value < 0 ? -Int(errno) : value }
}

/// A detached thread for one blocking call.
enum WorkerThread {
    private final class Job {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    static func start(_ body: @escaping () -> Void) {
        let job = Unmanaged.passRetained(Job(body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        pthread_attr_setstacksize(&attributes, 256 * 1024)
        var thread = pthread_t()
        let started = pthread_create(&thread, &attributes, { context in
            let job = Unmanaged<Job>.fromOpaque(context!).takeRetainedValue()
            job.body()
            return nil
        }, job)
        if started != 0 {
            // No thread to be had: made here, which holds up the others but loses nothing.
            let job = Unmanaged<Job>.fromOpaque(job).takeRetainedValue()
            job.body()
        }
    }
}

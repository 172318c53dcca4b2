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
        /// A datagram: tried at once without waiting, and only if the socket's buffer is full
        /// and the socket blocks, again on a worker.
        case rarely
    }

    var blocking: Blocking
    var work: (_ dontWait: Bool) -> Int
    /// The caller's credentials, when they are not lnp-run's: the call is made on a worker
    /// thread that takes them first.
    var credentials: CallerCredentials? = nil
    /// Raises SIGPIPE in the caller's thread, for a send on a broken stream without
    /// MSG_NOSIGNAL: before the answer, as the kernel raises it before the call returns.
    /// The wait is killable only (WAIT_KILLABLE_RECV), so the signal stays pending until the
    /// call returns; raised after the answer, it could interrupt the thread's next call
    /// while that waits to be read.
    var brokenPipe: (() -> Void)? = nil
    /// A stream send on a kernel without the killable wait: kept, if it is taken from lnp-run
    /// halfway, so that the same call made again resumes past what went (`ResumedSends`).
    var resumable: ResumedSends.Call? = nil

    init(blocking: Blocking, brokenPipe: (() -> Void)? = nil, work: @escaping (_ dontWait: Bool) -> Int) {
        self.blocking = blocking
        self.brokenPipe = brokenPipe
        self.work = work
    }
}

/// Makes prepared calls and answers the kernel with their results; closes the taken socket.
struct CallPerformer: Sendable {
    let listener: NotificationListener

    /// Makes `call` for `caller`'s waiting thread, and answers it.
    func perform(_ call: PreparedCall, id: UInt64, socket: Int32, caller: NotifiedProcess) {
        if let credentials = call.credentials {
            // Taken by a thread that ends with the call: lnp-run's own rights are never lent.
            return onWorker(call, id: id, socket: socket, caller: caller) {
                credentials.assume() ? call.work(false) : -Int(EPERM)
            }
        }
        switch call.blocking {
        case .never:
            // Without waiting, whatever the socket's flags say by now: lnp-run's loop never blocks.
            finish(call, call.work(true), id: id, socket: socket)
        case .rarely:
            let result = call.work(true)
            if result == -Int(EAGAIN) || result == -Int(EWOULDBLOCK), fcntl(socket, F_GETFL) & O_NONBLOCK == 0 {
                onWorker(call, id: id, socket: socket, caller: caller) { call.work(false) }
            } else {
                finish(call, result, id: id, socket: socket)
            }
        case .may:
            onWorker(call, id: id, socket: socket, caller: caller) { call.work(false) }
        }
    }

    private func onWorker(_ call: PreparedCall, id: UInt64, socket: Int32, caller: NotifiedProcess, _ work: @escaping () -> Int) {
        InterruptedCalls.shared.register(id, pid: caller.pid, thread: caller.thread)
        // Each worker holds a thread, a descriptor and the call's copies: bounded.
        guard WorkerThread.start({
            InterruptedCalls.shared.begin(id)
            let result = work()
            finish(call, InterruptedCalls.shared.answer(id, result: result), id: id, socket: socket)
            InterruptedCalls.shared.end(id)
        }) else {
            InterruptedCalls.shared.end(id)
            return finish(call, -Int(ENOBUFS), id: id, socket: socket)
        }
    }

    private func finish(_ call: PreparedCall, _ result: Int, id: UInt64, socket: Int32) {
        close(socket)
        if result == -Int(EPIPE) { call.brokenPipe?() }
        if !listener.reply(id, result: result), result > 0, let resumable = call.resumable {
            ResumedSends.shared.remember(resumable, bytes: result)
        }
    }

    /// A system call's result as `work` returns it.
    static func result(_ value: Int) -> Int { value < 0 ? -Int(errno) : value }
}

/// A detached thread for one blocking call; at most `limit` at once.
enum WorkerThread {
    static let limit = 128
    nonisolated(unsafe) private static var running = 0
    private static let lock = ThreadLock()

    private final class Job {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    /// Whether `by` changed the count within the limit.
    private static func count(_ by: Int) -> Bool {
        lock.locked {
            if by > 0 && running >= limit { return false }
            running += by
            return true
        }
    }

    /// false when `limit` workers are running already.
    static func start(_ body: @escaping () -> Void) -> Bool {
        guard count(1) else { return false }
        let job = Unmanaged.passRetained(Job { body(); _ = count(-1) }).toOpaque()
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
            Unmanaged<Job>.fromOpaque(job).release()
            _ = count(-1)
            return false
        }
        return true
    }
}

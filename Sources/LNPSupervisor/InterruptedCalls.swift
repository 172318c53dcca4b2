import LNPSupervisorSys
import LNPTools

#if canImport(Glibc)
import Glibc
#endif

/// The calls lnp-run makes on worker threads while the program's threads wait for them, and
/// their interruption. The program's wait ends only with a fatal signal (WAIT_KILLABLE_RECV),
/// so its thread would take any other signal only once the call was over: a connect timed
/// with `alarm()` would last as long as TCP's own timeout. So while such calls run, lnp-run
/// looks at each waiting thread's pending signals (/proc) every few milliseconds; a signal the
/// thread would take — not blocked, and its own, or the process's when it is the only thread
/// — interrupts the worker's call, which returns as the kernel returns an interrupted call:
/// ERESTARTSYS when nothing was done, so that the kernel restarts it after a handler with
/// SA_RESTART (notified again: a connect then waits on, as the kernel's own does) and fails it
/// with EINTR after one without; what was done, when something was (the bytes sent).
final class InterruptedCalls: @unchecked Sendable {
    static let shared = InterruptedCalls()
    /// The kernel's "restart unless the handler says otherwise", never seen by a program.
    static let restartUnlessHandled = 512  // ERESTARTSYS

    private struct Call {
        var pid: Int32
        var thread: Int32
        /// The worker making it, once it has started.
        var worker: pthread_t?
        var interrupted = false
    }

    private var calls: [UInt64: Call] = [:]
    /// When the main loop last looked (monotonic milliseconds); only it reads and writes this.
    private var lastLook: Int64 = 0
    private let lock = ThreadLock()
    /// Signalled as workers start and calls end (`settle`).
    private let ended: UnsafeMutablePointer<pthread_cond_t> = {
        let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
        pthread_cond_init(condition, nil)
        return condition
    }()

    private init() { _ = lnp_interrupt_install() }

    /// Before call `id` for thread `thread` of process `pid` goes to a worker (on the loop's
    /// thread: the loop then looks at signals until it ends).
    func register(_ id: UInt64, pid: Int32, thread: Int32) {
        locked { calls[id] = Call(pid: pid, thread: thread) }
    }

    /// On the worker, before it makes call `id`.
    func begin(_ id: UInt64) {
        lnp_interrupt_accept()
        locked {
            calls[id]?.worker = lnp_interrupt_self()
            pthread_cond_broadcast(ended)  // a `settle` waiting for it can interrupt it now
        }
    }

    /// On the worker, once the call returned `result`: what to answer with.
    func answer(_ id: UInt64, result: Int) -> Int {
        let interrupted = locked { calls[id]?.interrupted ?? false }
        return interrupted && result == -Int(EINTR) ? -Self.restartUnlessHandled : result
    }

    /// On the worker, once it has answered.
    func end(_ id: UInt64) {
        locked {
            calls[id] = nil
            pthread_cond_broadcast(ended)
        }
    }

    /// Before a new call of `thread` is made: a call still in flight for it is one its thread
    /// no longer waits for (a kernel without the killable wait let it go, and it makes the call
    /// again). It is interrupted, and waited for (at most a second), so that what it sent is
    /// known first (`ResumedSends`).
    func settle(thread: Int32) {
        locked {
            for _ in 0..<500 {
                guard let (id, call) = calls.first(where: { $0.value.thread == thread }) else { return }
                calls[id]?.interrupted = true
                // Again at each turn: a signal that came before the worker's call began was
                // taken by no call.
                if let worker = call.worker { _ = lnp_interrupt_thread(worker) }
                var turn = timespec()
                clock_gettime(CLOCK_REALTIME, &turn)
                turn.tv_nsec += 2_000_000
                if turn.tv_nsec >= 1_000_000_000 {
                    turn.tv_sec += 1
                    turn.tv_nsec -= 1_000_000_000
                }
                pthread_cond_timedwait(ended, lock.mutex, &turn)
            }
        }
    }

    var isEmpty: Bool { locked { calls.isEmpty } }

    /// Interrupts the calls whose waiting thread has a signal to take, and those no thread
    /// waits for any more (`isWaited` false: the program was killed, or on a kernel without
    /// the killable wait its thread took a signal and will make the call again): looked at
    /// most every few milliseconds (every 32 with 128 calls waiting), however busy the loop
    /// that asks.
    func interruptSignalled(isWaited: (UInt64) -> Bool) {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let milliseconds = Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
        // A look reads a /proc file per call: with many calls waiting, less often.
        guard milliseconds - lastLook >= max(4, Int64(locked { calls.count }) / 4) else { return }
        lastLook = milliseconds
        let running = locked { calls.filter { $0.value.worker != nil } }
        for (id, call) in running {
            // Interrupted already: again, in case the signal came before the worker's call began.
            guard call.interrupted || !isWaited(id) || Self.hasSignalToTake(pid: call.pid, thread: call.thread) else { continue }
            locked {
                guard calls[id] != nil, let worker = calls[id]?.worker else { return }
                calls[id]?.interrupted = true
                _ = lnp_interrupt_thread(worker)
            }
        }
    }

    /// Whether the thread would take a signal now: pending for it (or for its process, when it
    /// is the only thread) and not blocked.
    static func hasSignalToTake(pid: Int32, thread: Int32) -> Bool {
        guard let status = ProcFiles.status(ofThread: thread, in: pid, ["SigPnd", "ShdPnd", "SigBlk", "Threads"]),
            let own = mask(status["SigPnd"]), let shared = mask(status["ShdPnd"]), let blocked = mask(status["SigBlk"])
        else { return false }
        let alone = status["Threads"]?.first == "1"
        return (own | (alone ? shared : 0)) & ~blocked != 0
    }

    private static func mask(_ field: [Substring]?) -> UInt64? { field?.first.flatMap { UInt64($0, radix: 16) } }

    private func locked<T>(_ body: () -> T) -> T { lock.locked(body) }
}

#if canImport(Glibc)
import Glibc
#endif

/// Stream sends a kernel without the killable wait (5.15) took from lnp-run halfway. There a
/// signal ends the program's wait while lnp-run makes its send, and the kernel has the
/// thread make the same call again (the same registers) — or the program, told EINTR, makes
/// it again itself: the bytes lnp-run had sent would then go twice. So what such a send had
/// sent is kept, and the same call from the same thread resumes past it and answers with the
/// whole count. (With the killable wait no send is taken halfway, and nothing is kept.)
final class ResumedSends: @unchecked Sendable {
    static let shared = ResumedSends()

    /// A call as the kernel shows it again when it is made again.
    struct Call: Hashable {
        var pid: Int32
        var thread: Int32
        var number: UInt32
        var arguments: [UInt64]
    }

    private var sent: [Call: (bytes: Int, at: timespec)] = [:]
    private let lock = ThreadLock()

    /// A worker's send of `call` that went as far as `bytes` when no thread waited any more.
    func remember(_ call: Call, bytes: Int) {
        locked {
            if sent.count >= 256 { sent.removeAll() }  // (programs that were killed halfway)
            sent[call] = (bytes, Self.now())
        }
    }

    /// The bytes of `call` sent already, if the thread makes it again within ten seconds; 0.
    func take(_ call: Call) -> Int {
        locked {
            guard let kept = sent.removeValue(forKey: call), Self.now().tv_sec - kept.at.tv_sec <= 10 else { return 0 }
            return kept.bytes
        }
    }

    var isEmpty: Bool { locked { sent.isEmpty } }

    private static func now() -> timespec {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return now
    }

    private func locked<T>(_ body: () -> T) -> T { lock.locked(body) }
}

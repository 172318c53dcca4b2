import XCTest
@testable import lnp_run

#if canImport(Glibc)
import Glibc
#endif

/// A value made once, slowly: the thread that makes it holds the runtime's lock for it while
/// another thread waits for that lock.
private enum SlowlyMade {
    static let value: Int = {
        usleep(200_000)
        return 7
    }()
}

private final class ThreadBody {
    let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }
}

final class FreshThreadTests: XCTestCase {
    /// The keeper's case: a forked child whose threads meet at a value made once. On the
    /// forked main thread the runtime's lock names the parent as its owner, and the two
    /// threads spin for ever; on a thread made after the fork they do not.
    func testAForkedChildsThreadsMeetAtAValueMadeOnceAndEnd() throws {
        let child = fork()
        XCTAssertGreaterThanOrEqual(child, 0)
        if child == 0 {
            FreshThread.continueOn {
                var other = pthread_t()
                let body = Unmanaged.passRetained(ThreadBody { usleep(50_000); _ = SlowlyMade.value }).toOpaque()
                guard pthread_create(&other, nil, { context in
                    Unmanaged<ThreadBody>.fromOpaque(context!).takeRetainedValue().body()
                    return nil
                }, body) == 0 else { _exit(3) }
                let made = SlowlyMade.value  // held while the other thread waits for it
                pthread_join(other, nil)
                _exit(made == 7 ? 0 : 4)
            }
        }
        var status: Int32 = 0
        var waited = 0
        while waitpid(child, &status, WNOHANG) == 0 {
            if waited >= 100 {  // 10 s: it spins
                kill(child, SIGKILL)
                waitpid(child, &status, 0)
                XCTFail("the forked child's threads did not get past a value made once (spinning in the runtime's lock)")
                return
            }
            usleep(100_000)
            waited += 1
        }
        XCTAssertEqual(status, 0, "the child's wait status")
    }
}

import Testing
@testable import lnp_run

/// `programEnvironment` on text: the tests' environments are UTF-8.
private func handedOn(_ environment: [String]) -> (environment: [String], ownPIDEntries: [Int]) {
    let handed = ServiceHandOff(mainPID: 4242, passedDescriptors: [3, 4]).programEnvironment(environment.map { Array($0.utf8) })
    return (handed.environment.map { String(decoding: $0, as: UTF8.self) }, handed.ownPIDEntries)
}

@Suite("ServiceHandOff")
struct ServiceHandOffTests {

    /// The variables that name lnp-run name the program: the child writes its pid over the
    /// placeholder (spawn.c), which has room for any pid.
    @Test func variablesNamingLnpRunGetThePlaceholder() {
        let given = ["PATH=/usr/bin", "LISTEN_FDS=2", "LISTEN_PID=4242", "LISTEN_FDNAMES=web:control", "WATCHDOG_PID=4242",
                     "WATCHDOG_USEC=30000000"]
        let handed = handedOn(given)
        #expect(handed.environment == ["PATH=/usr/bin", "LISTEN_FDS=2", "LISTEN_PID=0000000000", "LISTEN_FDNAMES=web:control",
                                       "WATCHDOG_PID=0000000000", "WATCHDOG_USEC=30000000"])
        #expect(handed.ownPIDEntries == [2, 4])
        #expect(ServiceHandOff.pidPlaceholder.count >= String(Int32.max).count)
    }

    /// One that names another process, or is not a pid at all, is not lnp-run's to hand on.
    @Test func otherValuesStay() {
        for given in [["LISTEN_PID=1"], ["LISTEN_PID=42420"], ["LISTEN_PID= 4242"], ["WATCHDOG_PID=4242x"], ["LISTEN_PID4242"], []] {
            let handed = handedOn(given)
            #expect(handed.environment == given)
            #expect(handed.ownPIDEntries.isEmpty)
        }
    }

    /// Only the first entry of a variable given twice, the one getenv reads.
    @Test func theFirstOfTwoEntries() {
        let handed = handedOn(["LISTEN_PID=1", "LISTEN_PID=4242"])
        #expect(handed.environment == ["LISTEN_PID=1", "LISTEN_PID=4242"])
        let second = handedOn(["LISTEN_PID=4242", "LISTEN_PID=4242"])
        #expect(second.environment == ["LISTEN_PID=0000000000", "LISTEN_PID=4242"])
        #expect(second.ownPIDEntries == [0])
    }
}

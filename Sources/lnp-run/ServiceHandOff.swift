#if canImport(Glibc)
import Glibc
#endif

/// What a service manager (systemd, systemd-socket-activate, …) hands the process it starts,
/// handed on to the program. Under it lnp-run is that process (the main pid) and the program
/// its grandchild, but what it was given is the program's: the sockets at descriptors 3…
/// (`LISTEN_FDS`), and the variables that name the process they are for (`LISTEN_PID`,
/// `WATCHDOG_PID`), which libsystemd's `sd_listen_fds` and `sd_watchdog_enabled` compare with
/// their own pid. Such a variable that names lnp-run names the program instead; one that names
/// another process is left as it is (the program would not take what was not meant for it).
struct ServiceHandOff {
    /// The variables that name the process a service manager meant (sd-daemon(3)).
    static let pidVariables = ["LISTEN_PID", "WATCHDOG_PID"]
    /// The child writes its pid over this (spawn.c: room for its digits and a NUL).
    static let pidPlaceholder = "0000000000"

    /// The process the service manager started: lnp-run's first.
    let mainPID: pid_t
    /// The descriptors passed to it (`LISTEN_FDS` from 3, open when lnp-run started): the
    /// program's, which lnp-run's own processes close once it has them, so that a connection
    /// the program closes is closed (`Accept=yes`) and lnp-run holds none of its sockets.
    let passedDescriptors: [Int32]

    /// Read before lnp-run opens any descriptor of its own, which could take a number the
    /// manager said it passed but did not.
    static func atStart() -> ServiceHandOff {
        let mainPID = getpid()
        guard let named = getenv("LISTEN_PID"), String(cString: named) == String(mainPID),
              let text = getenv("LISTEN_FDS"), let count = Int64(String(cString: text)), count > 0, count <= Int64(Int32.max) else {
            return ServiceHandOff(mainPID: mainPID, passedDescriptors: [])
        }
        var limit = rlimit()
        let most = getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 ? Int64(limit.rlim_cur) : 1024
        var passed: [Int32] = []
        var fd: Int64 = 3
        while fd < 3 + count && fd < most {
            if fcntl(Int32(fd), F_GETFD) >= 0 { passed.append(Int32(fd)) }
            fd += 1
        }
        return ServiceHandOff(mainPID: mainPID, passedDescriptors: passed)
    }

    /// Lets go of the passed descriptors in this process of lnp-run's.
    func closePassedDescriptors() {
        for fd in passedDescriptors { close(fd) }
    }

    /// The program's environment: `environment` with each variable of `pidVariables` that
    /// names the main process given the placeholder the child fills in, and where those are
    /// (at most one entry for each variable: the first, which `getenv` reads).
    func programEnvironment(_ environment: [[UInt8]]) -> (environment: [[UInt8]], ownPIDEntries: [Int]) {
        var result = environment
        var entries: [Int] = []
        for variable in Self.pidVariables {
            let prefix = Array((variable + "=").utf8)
            guard let index = environment.firstIndex(where: { $0.starts(with: prefix) }),
                  environment[index] == prefix + Array(String(mainPID).utf8) else { continue }
            result[index] = prefix + Array(Self.pidPlaceholder.utf8)
            entries.append(index)
        }
        return (result, entries)
    }
}

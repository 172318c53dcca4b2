import CGNUExtensions
import LNPCoreHost

#if canImport(Glibc)
import Glibc
#endif

/// lnp-run in two processes, so that the program's tree stays supervised after the program
/// ends: the process the shell waits for ends with the program's status, and its child — the
/// keeper, which starts the program, answers its tree and supervises its calls — stays, an
/// ancestor of every process the program left (a subreaper: they are reparented to it), until
/// the last has exited. Only an ancestor may take a process's descriptors where Yama's
/// ptrace_scope is 1, and with no supervisor the tree's gated calls would fail (ENOSYS).
///
///     shell ─▶ lnp-run (waits, passes signals on) ─▶ keeper ─▶ program ─▶ …
enum RunKeeper {
    /// Forks, and never returns. The keeper runs `keeper` with the channel to send the
    /// program's status on, on a thread of its own, and exits when it returns (with lnp-run's
    /// status for an error it throws); the process the shell waits for exits as the program
    /// did (or as the keeper did, if it ended first — an error of lnp-run's own before the
    /// program ran). Call before any thread exists: the keeper continues the launch alone.
    /// The waiting process holds none of the descriptors a service manager passed (`handOff`).
    static func split(signals: SignalIntake, handOff: ServiceHandOff,
                      keeper: @escaping (StatusChannel) throws(Failure) -> Void) throws(Failure) -> Never {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw Failure("cannot start: pipe: \(String(cString: strerror(errno)))") }
        // Neither end may reach the program.
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        let pid = fork()
        guard pid >= 0 else { throw Failure("cannot start: fork: \(String(cString: strerror(errno)))") }
        if pid == 0 {
            close(ends[0])
            let channel = StatusChannel(fd: ends[1])
            FreshThread.continueOn {
                do throws(Failure) {
                    try keeper(channel)
                } catch {
                    Diagnostics.error(error.message)
                    exit(error.status)
                }
                exit(0)
            }
        }
        close(ends[1])
        // This process only waits: it holds none of the program's descriptors but its standard
        // error (as the keeper), so that a connection or pipe the program closes reaches its
        // end (a service manager's sockets, `StandardInput=socket`, a pipe the output goes to).
        handOff.closePassedDescriptors()
        ProgramStreams.letGo([0, 1])
        wait(for: pid, statusFrom: ends[0], signals: signals)
    }

    /// The waiting process: signals sent to it go to the keeper (which passes them on to the
    /// program); the program's status, when it comes, is its own.
    private static func wait(for keeper: pid_t, statusFrom channel: Int32, signals: SignalIntake) -> Never {
        while true {
            var fds = [pollfd(fd: signals.fd, events: Int16(POLLIN), revents: 0), pollfd(fd: channel, events: Int16(POLLIN), revents: 0)]
            if poll(&fds, 2, -1) < 0 && errno != EINTR { break }
            for info in signals.drain() where SignalOrigin.shouldForward(info) { kill(keeper, Int32(info.ssi_signo)) }
            guard fds[1].revents != 0 else { continue }
            var status: Int32 = 0
            let count = withUnsafeMutableBytes(of: &status) { read(channel, $0.baseAddress, 4) }
            if count < 0 && errno == EINTR { continue }
            if count == 4 { Spawn.exit(mirroring: status) }
            break  // the keeper ended before the program did: its own status
        }
        var status: Int32 = 0
        while waitpid(keeper, &status, 0) < 0 && errno == EINTR {}
        Spawn.exit(mirroring: status)
    }
}

/// The keeper's end: the program's wait status, sent once.
struct StatusChannel {
    let fd: Int32

    /// Sends the status; the keeper then lets go of the standard streams (a pipe reading
    /// lnp-run's output ends when the program's does), keeping only a terminal for its notes.
    func send(_ status: Int32) {
        var status = status
        _ = withUnsafeBytes(of: &status) { write(fd, $0.baseAddress, 4) }
        close(fd)
        ProgramStreams.letGo(isatty(2) == 1 ? [0, 1] : [0, 1, 2])
    }
}

/// The standard streams lnp-run was started with, which are the program's.
enum ProgramStreams {
    /// Puts /dev/null on `streams` in this process of lnp-run's, which then holds no copy of
    /// what they were: a pipe or socket the program closes reaches its end.
    static func letGo(_ streams: [Int32]) {
        let null = open("/dev/null", O_RDWR)
        guard null >= 0 else { return }
        for stream in streams { dup2(null, stream) }
        if null > 2 { close(null) }
    }
}

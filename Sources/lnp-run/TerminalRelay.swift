import CGNUExtensions

#if canImport(Glibc)
import Glibc
#endif

/// The program's own terminal while lnp-run may ask the person — sudo's `use_pty`. The
/// program runs in a session of its own on a pseudo-terminal lnp-run made, and lnp-run passes
/// keystrokes and output between that and the person's terminal. A process can type into its
/// own controlling terminal only (TIOCSTI; without CAP_SYS_ADMIN), so what a program types
/// reaches the program, never lnp-run's prompt, which reads the person's terminal.
final class TerminalRelay {
    /// The person's terminal (lnp-run's controlling terminal).
    let terminal: Int32
    let master: Int32
    /// The pty's other end, which becomes the program's controlling terminal and takes the
    /// place of its standard streams that were the person's terminal. lnp-run keeps it open,
    /// so the pty lives for the whole run.
    let slave: Int32
    let slavePath: String
    /// The person's terminal mode, given back whenever lnp-run lets go of the terminal.
    private let mode: termios
    private var toProgram: [UInt8] = []
    private var toTerminal: [UInt8] = []
    /// While the prompt is up, what is typed is the prompt's, and what the program writes
    /// waits (so that it cannot draw over the question).
    var paused = false {
        didSet { if !paused { Self.write(&toTerminal, to: terminal) } }
    }
    /// The person's terminal hung up: so has the program's.
    private(set) var hungUp = false
    private static let bound = 1 << 16

    private init(terminal: Int32, master: Int32, slave: Int32, slavePath: String, mode: termios) {
        self.terminal = terminal
        self.master = master
        self.slave = slave
        self.slavePath = slavePath
        self.mode = mode
    }

    /// A relay, when lnp-run runs in the foreground of a terminal; nil otherwise.
    static func start() -> TerminalRelay? {
        let terminal = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK)
        guard terminal >= 0 else { return nil }
        var mode = termios()
        guard tcgetpgrp(terminal) == getpgrp(), tcgetattr(terminal, &mode) == 0 else {
            close(terminal)
            return nil
        }
        let master = lnp_open_pty_master()
        let number = master >= 0 ? lnp_pty_number(master) : -1
        guard number >= 0 else {
            if master >= 0 { close(master) }
            close(terminal)
            return nil
        }
        let path = "/dev/pts/\(number)"
        let slave = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard slave >= 0 else {
            close(master)
            close(terminal)
            return nil
        }
        var programMode = mode
        tcsetattr(slave, TCSANOW, &programMode)
        _ = lnp_copy_window_size(terminal, master)
        let relay = TerminalRelay(terminal: terminal, master: master, slave: slave, slavePath: path, mode: mode)
        relay.takeTerminal()
        return relay
    }

    /// Whether `fd` of lnp-run is the person's terminal (the program gets the pty there):
    /// the kernel tells a terminal's process group only to a process it is the controlling
    /// terminal of — or through a pty's master, which has a pty number.
    func isTerminal(_ fd: Int32) -> Bool {
        isatty(fd) == 1 && tcgetpgrp(fd) >= 0 && lnp_pty_number(fd) < 0
    }

    var isForeground: Bool { tcgetpgrp(terminal) == getpgrp() }

    /// The descriptors to wait on, and for what.
    var pollFDs: [pollfd] {
        guard !hungUp else { return [] }
        var fds = [pollfd(fd: master, events: Int16(toTerminal.count < Self.bound ? POLLIN : 0)
                                              | Int16(toProgram.isEmpty ? 0 : POLLOUT), revents: 0)]
        let reads = !paused && toProgram.count < Self.bound && isForeground
        let writes = !paused && !toTerminal.isEmpty
        fds.append(pollfd(fd: terminal, events: Int16(reads ? POLLIN : 0) | Int16(writes ? POLLOUT : 0), revents: 0))
        return fds
    }

    /// Moves what can be moved without waiting, both ways.
    func pump() {
        guard !hungUp else { return }
        var check = pollfd(fd: terminal, events: 0, revents: 0)
        if poll(&check, 1, 0) > 0 && check.revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 { return hangUp() }
        if !paused && toProgram.count < Self.bound && isForeground {
            var typed: [UInt8] = []
            guard Self.read(terminal, into: &typed) else { return hangUp() }
            if let index = suspendIndex(in: typed) {
                toProgram += typed[..<index]
                Self.write(&toProgram, to: master)
                stopJob()
                toProgram += typed[(index + 1)...]
            } else {
                toProgram += typed
            }
        }
        Self.write(&toProgram, to: master)
        if toTerminal.count < Self.bound { _ = Self.read(master, into: &toTerminal) }
        if !paused { Self.write(&toTerminal, to: terminal) }
    }

    /// Typed bytes for the program (a Ctrl-C typed at the prompt, passed on).
    func type(_ bytes: [UInt8]) {
        guard !hungUp else { return }
        toProgram += bytes
        Self.write(&toProgram, to: master)
    }

    /// The person's terminal changed size: the program's follows (and hears SIGWINCH).
    func resize() {
        guard !hungUp else { return }
        _ = lnp_copy_window_size(terminal, master)
    }

    /// Ctrl-Z (the program's terminal's suspend character, when it makes signals): the
    /// program's job is stopped and so is lnp-run, so that the shell sees the job stop and can
    /// continue it. The pty cannot do it itself: the program's process group has no parent in
    /// its session, and the kernel ignores terminal stops for such a group. Where no shell
    /// can stop lnp-run (an orphaned process group), the program goes on at once.
    private func stopJob() {
        let group = lnp_foreground_group(master)
        if group > 0 { kill(-group, SIGSTOP) }
        giveTerminalBack()
        kill(getpid(), SIGTSTP)
        resumed()
    }

    /// Where the suspend character stands in `bytes`, if the program's terminal makes signals.
    private func suspendIndex(in bytes: [UInt8]) -> Int? {
        var mode = termios()
        guard tcgetattr(slave, &mode) == 0, mode.c_lflag & tcflag_t(ISIG) != 0 else { return nil }
        let suspend = withUnsafeBytes(of: mode.c_cc) { $0[Int(VSUSP)] }
        guard suspend != 0 else { return nil }  // _POSIX_VDISABLE
        return bytes.firstIndex(of: suspend)
    }

    /// lnp-run continued (`fg`, `bg`): take the terminal again if in the foreground, and
    /// continue the program's foreground job.
    func resumed() {
        guard !hungUp else { return }
        if isForeground {
            takeTerminal()
            resize()
        }
        let group = lnp_foreground_group(master)
        if group > 0 { kill(-group, SIGCONT) }
    }

    /// The program ended: its last output is shown, and the terminal is given back.
    func finish() {
        guard !hungUp else {
            close(terminal)
            return
        }
        _ = Self.read(master, into: &toTerminal)
        var waits = 0
        while !toTerminal.isEmpty && waits < 20 {
            Self.write(&toTerminal, to: terminal)
            if toTerminal.isEmpty { break }
            var poller = pollfd(fd: terminal, events: Int16(POLLOUT), revents: 0)
            _ = poll(&poller, 1, 100)
            waits += 1
        }
        giveTerminalBack()
        close(slave)
        close(master)
        close(terminal)
    }

    /// The person's keys go to lnp-run as they are typed: the pty's own line discipline gives
    /// the program its line editing, signals and echo.
    private func takeTerminal() {
        var raw = mode
        cfmakeraw(&raw)
        tcsetattr(terminal, TCSADRAIN, &raw)
    }

    private func giveTerminalBack() {
        var original = mode
        tcsetattr(terminal, TCSADRAIN, &original)
    }

    /// Closing the pty hangs it up: the program's session hears SIGHUP, as it would have from
    /// the person's terminal.
    private func hangUp() {
        hungUp = true
        giveTerminalBack()
        close(slave)
        close(master)
    }

    /// Reads what is there; false when `fd` is at its end (a terminal hung up).
    private static func read(_ fd: Int32, into buffer: inout [UInt8]) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while buffer.count < bound {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count > 0 {
                buffer += chunk[0..<count]
            } else {
                return count < 0 && (errno == EAGAIN || errno == EINTR)
            }
        }
        return true
    }

    private static func write(_ buffer: inout [UInt8], to fd: Int32) {
        while !buffer.isEmpty {
            let written = buffer.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            guard written > 0 else { return }
            buffer.removeFirst(written)
        }
    }
}

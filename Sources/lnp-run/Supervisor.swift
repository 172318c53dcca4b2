import CGNUExtensions
import LNPCoreHost

#if canImport(Glibc)
import Glibc
#endif

/// lnp-run as the program's parent: a subreaper (orphans of the program stay in its tree and
/// keep asking it), passing signals on, answering the preload's asks with one prompt, and
/// ending with the program's status.
final class Supervisor {
    /// What the prompt needs to know, and how an answer is remembered.
    struct Asking {
        var server: AskServer
        var program: String
        var usage: String
        var timeoutSeconds: Int
        /// Records the answer; returns what went wrong, if anything.
        var remember: (Bool) -> String?
        /// The one line for stderr when there is no terminal to ask on.
        var noTerminalMessage: String
    }

    private let child: pid_t
    private let signals: SignalIntake
    private let asking: Asking?
    private var state = AskingState()
    private var terminal: Terminal?
    private var reader = AnswerReader()
    private var deadline: Double = 0
    /// Connections whose ask has not arrived yet.
    private var arriving: [Int32] = []
    /// Askers waiting for the person's answer.
    private var holders: [Int32] = []

    init(child: pid_t, signals: SignalIntake, asking: Asking?) {
        self.child = child
        self.signals = signals
        self.asking = asking
    }

    /// Runs until the program ends; returns its wait status.
    func run() -> Int32 {
        while true {
            var fds = [pollfd(fd: signals.fd, events: Int16(POLLIN), revents: 0)]
            if let asking { fds.append(pollfd(fd: asking.server.fd, events: Int16(POLLIN), revents: 0)) }
            for client in arriving { fds.append(pollfd(fd: client, events: Int16(POLLIN), revents: 0)) }
            if let terminal { fds.append(pollfd(fd: terminal.fd, events: Int16(POLLIN), revents: 0)) }
            let ready = poll(&fds, nfds_t(fds.count), timeoutMilliseconds())
            if ready < 0 && errno != EINTR { break }
            let terminalEvents = terminal != nil ? fds[fds.count - 1].revents : 0

            if let status = handleSignals() {
                finishAsking()
                return status
            }
            if asking != nil {
                acceptAsks()
                readArrivingAsks()
                if terminalEvents != 0 { readAnswer() }
                checkDeadline()
            }
        }
        // poll failed: answer whoever waits, and wait for the program plainly.
        finishAsking()
        var status: Int32 = 0
        while waitpid(child, &status, 0) < 0 && errno == EINTR {}
        return status
    }

    // MARK: Signals and children

    /// The program's wait status once it has ended; orphans are reaped silently.
    private func handleSignals() -> Int32? {
        var ended: Int32? = nil
        for info in signals.drain() {
            let number = Int32(info.ssi_signo)
            if SignalOrigin.shouldForward(info) {
                kill(child, number)
            } else if number == SIGINT && info.ssi_code == SI_KERNEL && terminal != nil {
                // Ctrl-C at the prompt: nothing is decided, and the program gets its SIGINT.
                terminal?.say("\r\n(interrupted: nothing decided)\r\n")
                answerHolders(state.interrupted())
                closeTerminal()
            }
        }
        while true {
            var status: Int32 = 0
            let pid = waitpid(-1, &status, WNOHANG)
            if pid <= 0 { break }
            if pid == child { ended = status }
        }
        return ended
    }

    private func timeoutMilliseconds() -> Int32 {
        guard terminal != nil else { return -1 }
        return Int32(max(0, min(Double(Int32.max), (deadline - Self.now()) * 1000)))
    }

    // MARK: Asks

    private func acceptAsks() {
        guard let asking else { return }
        while let client = asking.server.accept() { arriving.append(client) }
    }

    private func readArrivingAsks() {
        var stillArriving: [Int32] = []
        for client in arriving {
            switch AskServer.readRequest(client) {
            case nil: stillArriving.append(client)
            case .failure: close(client)
            case .success(let request): handle(request, from: client)
            }
        }
        arriving = stillArriving
    }

    private func handle(_ request: AskRequestText, from client: Int32) {
        guard let asking else { return }
        if state.action(forAskHolding: request.holding) == .startPrompt {
            if let opened = Terminal.open() {
                terminal = opened
                reader = AnswerReader()
                deadline = Self.now() + Double(asking.timeoutSeconds)
                let usage = request.usage.isEmpty ? asking.usage : request.usage
                opened.discardTypeAhead()
                opened.say(PromptText(program: asking.program, request: request, usage: usage, timeoutSeconds: asking.timeoutSeconds).question)
                state.promptShown()
            } else {
                Diagnostics.note(asking.noTerminalMessage)
                state.refuse(.noTerminal)
            }
        }
        switch state.action(forAskHolding: request.holding) {
        case .hold: holders.append(client)
        case .reply(let reply): AskServer.reply(client, reply)
        case .startPrompt: AskServer.reply(client, AskingState.denied(.noTerminal))
        }
    }

    private func readAnswer() {
        guard let terminal, let asking else { return }
        let typed: [UInt8]
        switch terminal.read() {
        case .nothing: return
        case .typed(let bytes): typed = bytes
        case .gone:
            answerHolders(state.interrupted())
            closeTerminal()
            return
        }
        switch reader.feed(typed) {
        case .pending: return
        case .unclear: terminal.say(PromptText.reminder)
        case .allow: decide(allow: true, asking: asking, terminal: terminal)
        case .deny: decide(allow: false, asking: asking, terminal: terminal)
        }
    }

    private func decide(allow: Bool, asking: Asking, terminal: Terminal) {
        let verdict = allow ? "allowed" : "denied"
        if let problem = asking.remember(allow) {
            terminal.say("\r\nlnp: \(verdict) for this run only: \(problem)\r\n")
        } else {
            terminal.say("\r\nlnp: \(verdict) and remembered; to change it: lnp \(allow ? "deny" : "allow") \(asking.program)\r\n")
        }
        answerHolders(state.answered(allow: allow))
        closeTerminal()
    }

    private func checkDeadline() {
        guard let terminal, Self.now() >= deadline, let asking else { return }
        terminal.say("\r\nlnp: no answer in \(asking.timeoutSeconds) s; denied, and not remembered\r\n")
        answerHolders(state.timedOut())
        closeTerminal()
    }

    private func answerHolders(_ reply: Answer) {
        for client in holders { AskServer.reply(client, reply) }
        holders = []
    }

    private func closeTerminal() {
        terminal?.close()
        terminal = nil
    }

    /// The program ended: a prompt still up is withdrawn, and the socket removed.
    private func finishAsking() {
        if let terminal {
            terminal.say("\r\n(the program ended; nothing decided)\r\n")
            closeTerminal()
        }
        for client in holders + arriving { close(client) }
        asking?.server.stop()
    }

    private static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}

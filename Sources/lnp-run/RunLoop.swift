import CGNUExtensions
import LNPCoreHost
import LNPSupervisor

#if canImport(Glibc)
import Glibc
#endif

/// lnp-run as the program's parent: a subreaper (orphans of the program stay in its tree and
/// can still reach it), passing signals on, answering its tree's requests (`RunServer`) —
/// settings, and asks with one prompt — taking in its records (`RunRecords`), and ending with
/// the program's status.
final class RunLoop {
    /// The prompt, while the program is undetermined; and how an answer is remembered.
    struct Asking {
        var program: String
        var usage: String
        var timeoutSeconds: Int
        /// Records the answer; returns what went wrong, if anything.
        var remember: (Bool) -> String?

        /// How to decide when no answer was given here.
        var decideLater: String { "decide with 'lnp allow \(TerminalText.shown(program))' (or 'lnp deny')" }

        /// The one line for stderr when there is no terminal to ask on.
        var noTerminalMessage: String {
            "denied local-network access: \(TerminalText.shown(program)) is undetermined and there is no terminal to ask on; "
                + decideLater
        }
    }

    private let child: pid_t
    private let signals: SignalIntake
    private let server: RunServer
    let tree: ProcessTree
    let records: RunRecords
    let settings: LaunchSettings
    private let asking: Asking?
    /// The enclosing lnp-run, when what this run would allow is asked there too.
    let upstream: pid_t?
    /// The enclosing lnp-run, if this one is nested: it asks this run's settings for the
    /// calls of this tree its supervisor decides (`NestedRunPolicy`).
    private let enclosing: pid_t?
    /// The program's own terminal, when this run may ask (`TerminalRelay`).
    private var relay: TerminalRelay?
    /// Whether any process of the tree is left (lnp-run's children: the subreaper's orphans).
    private var childrenLeft = true
    private(set) var state = AskingState()
    private var terminal: Terminal?
    /// Reads the answer to the question up (a new one, with its code, for each question).
    private var reader = AnswerReader(code: "")
    /// The question on the terminal, while it is up.
    private var question: PromptText?
    private var deadline: Double = 0
    /// Connections whose request has not arrived yet.
    private var arriving: [(client: Int32, deadline: Double)] = []
    /// How long a connection may take to send its request, and how many may be waiting: a
    /// process that connects and says nothing must not hold lnp-run's descriptors.
    private static let arrivalSeconds = 2.0
    private static let arrivingAtMost = 256
    /// Asks held for the person's answer at most: past it, denied as while asking, so that a
    /// flood of asks cannot use up lnp-run's descriptors.
    private static let holdingAtMost = 256
    /// Who waits for an answer: a process's connection (the preload asks), or a call the
    /// kernel holds for the supervisor.
    enum Waiter {
        case connection(Int32)
        case call(CallSupervisor.HeldCall)
    }

    /// The supervisor of the tree's system calls, if this run has one (`SupervisedCalls`).
    var supervisor: CallSupervisor?
    /// No process is left under the filter (its listener hangs up).
    var treeGone = false
    /// Asks waiting for the person's answer, with what they ask and who asks.
    private var holders: [(client: Waiter, ask: ReceivedAsk, asker: Asker)] = []
    /// Asks passed up to the enclosing lnp-run: the connection there, and who waits here.
    private var passedUp: [(upward: Int32, client: Waiter)] = []
    /// The enclosing lnp-run's final answer, once its person has given it.
    private var upstreamAnswer: Answer? = nil

    init(child: pid_t, signals: SignalIntake, server: RunServer, tree: ProcessTree, records: RunRecords,
         settings: LaunchSettings, asking: Asking?, upstream: pid_t?, enclosing: pid_t?, relay: TerminalRelay?) {
        self.child = child
        self.signals = signals
        self.server = server
        self.tree = tree
        self.records = records
        self.settings = settings
        self.asking = asking
        self.upstream = upstream
        self.enclosing = enclosing
        self.relay = relay
    }

    /// After the program ended: whatever it left running is answered and supervised until
    /// the last process has exited. No one is asked any more (the shell has the terminal):
    /// an undetermined operation is denied, as with no terminal.
    func serveRemainingTree() {
        programEnded = true
        if asking != nil, state.phase == .undetermined || state.phase == .prompting { state.refuse(.noTerminal) }
        var status: Int32 = 0
        if waitpid(-1, &status, WNOHANG) < 0 && errno == ECHILD && (supervisor == nil || treeGone) { return }
        _ = run()
    }

    private var programEnded = false
    /// The program's wait status, when it ended while the question was up: the question stays
    /// until it is answered (for the program's next run), times out or is interrupted, and
    /// then the run ends with this status.
    private var endedWhileAsking: Int32? = nil
    /// Whether the program has been waited for (its pid is free for another process).
    private var reaped = false

    /// Runs until the program ends; returns its wait status.
    func run() -> Int32 {
        while true {
            if let status = endedWhileAsking, terminal == nil { return ended(status) }  // answered since
            var fds = [pollfd(fd: signals.fd, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: server.requests, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: server.records, events: Int16(POLLIN), revents: 0)]
            if let destination = records.destination, destination.waitsToWrite {
                fds.append(pollfd(fd: destination.fd, events: Int16(POLLOUT), revents: 0))
            }
            for pending in arriving { fds.append(pollfd(fd: pending.client, events: Int16(POLLIN), revents: 0)) }
            for pending in passedUp { fds.append(pollfd(fd: pending.upward, events: Int16(POLLIN), revents: 0)) }
            if let supervisor, !treeGone { fds.append(pollfd(fd: supervisor.listener.fd, events: Int16(POLLIN), revents: 0)) }
            let supervisorIndex = fds.count - 1
            fds += relay?.pollFDs ?? []
            if let terminal { fds.append(pollfd(fd: terminal.fd, events: Int16(POLLIN), revents: 0)) }
            let ready = poll(&fds, nfds_t(fds.count), timeoutMilliseconds())
            if ready < 0 && errno != EINTR { break }
            let terminalEvents = terminal != nil ? fds[fds.count - 1].revents : 0
            let supervised = supervisor != nil && !treeGone
            if supervised { supervisorEvents(fds[supervisorIndex].revents) }
            supervisor?.interruptSignalledCalls()
            // Only a notified call (not the tree's end): the next one may wait on this loop
            // already, and each look at a descriptor that has nothing would be a system call on
            // its path. Anything else looks at everything, the tree's children included.
            if ready == 1 && supervised && fds[supervisorIndex].revents == Int16(POLLIN) { continue }
            takeRecords()
            if records.destination?.waitsToWrite == true { records.flush() }
            relay?.pump()
            if let status = handleSignals() {
                takeRecords()  // those sent just before the program ended
                guard let terminal else { return ended(status) }
                endedWhileAsking = status
                terminal.say("\r\n(the program has ended; your answer is remembered for its next run)\r\n")
            }
            if programEnded && !childrenLeft && (supervisor == nil || treeGone) { return 0 }
            acceptRequests()
            readArrivingRequests()
            readUpstreamAnswers()
            if terminalEvents != 0 { readAnswer() }
            checkDeadline()
        }
        // poll failed: answer whoever waits, and wait for the program plainly.
        var status: Int32 = 0
        if let endedWhileAsking { status = endedWhileAsking } else {
            while waitpid(child, &status, 0) < 0 && errno == EINTR {}
        }
        return ended(status)
    }

    /// The program has ended (and any question after it): whoever waits is let go.
    private func ended(_ status: Int32) -> Int32 {
        endedWhileAsking = nil
        finishAsking()
        relay?.finish()
        relay = nil
        return status
    }

    // MARK: Signals and children

    /// The program's wait status once it has ended; orphans are reaped silently. On its own
    /// terminal (`TerminalRelay`), the program follows the person's terminal's size, and
    /// lnp-run continued continues it.
    private func handleSignals() -> Int32? {
        var ended: Int32? = nil
        for info in signals.drain() {
            let number = Int32(info.ssi_signo)
            // Once the program is reaped its pid may be another process's: nothing is passed on,
            // and a signal that would have ended it withdraws a question left up.
            if reaped {
                if Self.ending.contains(number) && SignalOrigin.shouldForward(info) { withdrawQuestion() }
                continue
            }
            if SignalOrigin.shouldForward(info) { kill(child, number) }
            if number == SIGWINCH { relay?.resize() }
            if number == SIGCONT { relay?.resumed() }
        }
        while true {
            var status: Int32 = 0
            let pid = waitpid(-1, &status, WNOHANG)
            if pid < 0 && errno == ECHILD { childrenLeft = false }
            if pid <= 0 { break }
            if pid == child {
                ended = status
                reaped = true
            }
        }
        return programEnded ? nil : ended
    }

    /// Until the prompt's deadline, or the first arriving connection's.
    /// While calls made on workers wait, every few milliseconds: their threads' signals.
    private func timeoutMilliseconds() -> Int32 {
        let deadlines = (terminal != nil ? [deadline] : []) + arriving.map(\.deadline)
        let inFlight: Int32? = supervisor?.hasCallsInFlight == true ? Self.signalLookMilliseconds : nil
        guard let next = deadlines.min() else { return inFlight ?? -1 }
        let untilDeadline = Int32(max(0, min(Double(Int32.max), (next - Self.now()) * 1000)))
        return min(untilDeadline, inFlight ?? Int32.max)
    }

    private static let signalLookMilliseconds: Int32 = 5

    private func takeRecords() {
        while let record = server.receive() { records.receive(record, from: tree) }
        records.refuseUnreadable(server.unreadable)
    }

    // MARK: Requests

    /// Connections of this run's tree (nested runs' trees included: their processes ask who
    /// vouches for their run), and the enclosing run's, are taken; any other process's is
    /// closed at once.
    private func acceptRequests() {
        while let client = server.accept() {
            let sender = RunServer.sender(of: client)
            guard ProcessTree.isDescendant(sender) || (enclosing != nil && sender == enclosing) else {
                close(client)
                continue
            }
            if arriving.count >= Self.arrivingAtMost { close(arriving.removeFirst().client) }
            arriving.append((client, Self.now() + Self.arrivalSeconds))
        }
    }

    private func readArrivingRequests() {
        var stillArriving: [(client: Int32, deadline: Double)] = []
        let now = Self.now()
        for pending in arriving {
            switch RunServer.readRequest(pending.client) {
            case nil where now < pending.deadline: stillArriving.append(pending)
            case nil, .failure: close(pending.client)
            case .success(let request): handle(request, from: pending.client)
            }
        }
        arriving = stillArriving
    }

    private func handle(_ request: RunRequest, from client: Int32) {
        let sender = RunServer.sender(of: client)
        switch request {
        case .settings:
            let answers = tree.owns(sender) || (enclosing != nil && sender == enclosing)
            RunServer.reply(client, answers ? currentSettings.reply : Array("elsewhere".utf8))
        case .nested:
            RunServer.reply(client, tree.registerNested(sender) ? currentSettings.reply : Array("elsewhere".utf8))
        case .services:
            let answers = tree.owns(sender) || tree.isNested(sender)
            RunServer.reply(client, answers ? settings.bonjour.reply : Array("elsewhere".utf8))
        case .vouch(let pid):
            RunServer.reply(client, Array((tree.isNested(pid) ? "yes" : "no").utf8))
        case .ask(let ask):
            guard let asker = asker(of: ask, sender: sender) else { return RunServer.reply(client, Answer.unreachable) }
            switch AskCheck.check(ask) {
            case .local(let reason): handle(ask, by: asker, reason: reason, from: .connection(client))
            case .refused(let because):
                Diagnostics.note("denied without asking: process \(asker.pid) (\(TerminalText.shown(asker.executable))) "
                    + "reports \(TerminalText.shown(ask.report)): \(because)")
                RunServer.reply(client, Answer(decision: .deny, basis: .notConfirmed, isFinal: false))
            }
        }
    }

    /// Who asks: a process of this run's tree, as the kernel names it — or, for an ask a
    /// nested lnp-run passes up, the process of its tree it names. nil for anyone else.
    private func asker(of ask: ReceivedAsk, sender: pid_t) -> Asker? {
        if let named = ask.onBehalfOf {
            guard tree.isNested(sender), ProcessTree.isDescendant(named, of: sender) else { return nil }
            return Asker(pid: named)
        }
        return tree.owns(sender) ? Asker(pid: sender) : nil
    }

    /// The settings as they stand now: once the person has answered (here, or in the
    /// enclosing run), a process that starts later need not ask.
    var currentSettings: LaunchSettings {
        var current = settings
        switch state.phase {
        case .decided(allow: false): current.decide(.deny, .answered)
        case .decided(allow: true) where upstream == nil: current.decide(.allow, .answered)
        case .refusing(let basis): current.decide(.deny, basis)
        default: break
        }
        // Allowed here: the enclosing run's final answer, once its person has given it.
        if let upstreamAnswer, current.decision != .deny { current.decide(upstreamAnswer.decision, upstreamAnswer.basis) }
        return current
    }

    func handle(_ ask: ReceivedAsk, by asker: Asker, reason: String, from client: Waiter) {
        guard let asking else {
            // Decided here: a denial stands; what this run allows, the enclosing run may not.
            if settings.decision == .deny { return reply(client, Answer(decision: .deny, basis: settings.basis, isFinal: true)) }
            if upstream == nil { return reply(client, Answer(decision: .allow, basis: settings.basis, isFinal: true)) }
            return passUp(ask, by: asker, from: client)
        }
        if state.action(forAskHolding: ask.holding) == .startPrompt {
            if let opened = Terminal.open(through: relay) {
                terminal = opened
                reader = AnswerReader(code: PromptText.drawCode())
                deadline = Self.now() + Double(asking.timeoutSeconds)
                question = PromptText(
                    program: asking.program, asker: asker, ask: ask, reason: reason,
                    usage: ask.usage.isEmpty ? asking.usage : ask.usage, timeoutSeconds: asking.timeoutSeconds,
                    code: reader.code, width: opened.columns)
                opened.discardTypeAhead()
                opened.say(question?.question ?? "")
                state.promptShown()
            } else {
                Diagnostics.note(asking.noTerminalMessage)
                state.refuse(.noTerminal)
            }
        }
        switch state.action(forAskHolding: ask.holding) {
        case .hold where holders.count >= Self.holdingAtMost: reply(client, AskingState.denied(.asking))
        case .hold: holders.append((client, ask, asker))
        case .reply(let reply): answer(client, ask, by: asker, reply)
        case .startPrompt: reply(client, AskingState.denied(.noTerminal))
        }
    }

    /// This run's answer to one ask: an allowance goes up to the enclosing run, if any.
    private func answer(_ client: Waiter, _ ask: ReceivedAsk, by asker: Asker, _ given: Answer) {
        if given.decision == .allow && upstream != nil { return passUp(ask, by: asker, from: client) }
        reply(client, given)
    }

    // MARK: The enclosing run

    private func passUp(_ ask: ReceivedAsk, by asker: Asker, from client: Waiter) {
        if let upstreamAnswer { return reply(client, upstreamAnswer) }
        guard let upstream, let upward = Self.connect(to: upstream) else {
            return reply(client, Answer.unreachable)
        }
        let text = ask.wire(onBehalfOf: asker.pid)
        guard text.withUnsafeBytes({ send(upward, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == text.count else {
            close(upward)
            return reply(client, Answer.unreachable)
        }
        passedUp.append((upward, client))
    }

    private func readUpstreamAnswers() {
        var waiting: [(upward: Int32, client: Waiter)] = []
        for pending in passedUp {
            var bytes = [UInt8](repeating: 0, count: 4)
            let count = bytes.withUnsafeMutableBytes { recv(pending.upward, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count < 0 && (errno == EAGAIN || errno == EINTR) {
                waiting.append(pending)
                continue
            }
            close(pending.upward)
            let answer = count > 0 ? bytes[0..<count].withUnsafeBytes { Answer.parse($0) } ?? .unreachable : .unreachable
            if answer.isFinal { upstreamAnswer = answer }
            reply(pending.client, answer)
        }
        passedUp = waiting
    }

    /// A connection to the enclosing lnp-run's request socket (checked to be that process).
    private static func connect(to pid: pid_t) -> Int32? {
        let fd = socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = [UInt8](repeating: 0, count: 112)
        let length = address.withUnsafeMutableBytes { RunChannel.address(of: Int32(pid), records: false, into: $0) }
        let connected = address.withUnsafeBytes {
            Glibc.connect(fd, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(length))
        }
        guard connected == 0, lnp_peer_pid(fd) == pid else {
            close(fd)
            return nil
        }
        return fd
    }

    // MARK: The prompt

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
        let outcome = reader.feed(typed)
        if !reader.echo.isEmpty { terminal.say(reader.echo) }
        switch outcome {
        case .pending: return
        case .unclear: terminal.say(question?.reminder() ?? "")
        case .interrupt:
            // Ctrl-C at the prompt: nothing is decided, and the program gets its Ctrl-C.
            let later = endedWhileAsking != nil ? "; \(asking.decideLater)" : ""
            terminal.say("\r\n(interrupted: nothing decided\(later))\r\n")
            answerHolders(state.interrupted())
            closeTerminal()
            relay?.type([0x03])
        case .allow: decide(allow: true, asking: asking, terminal: terminal)
        case .deny: decide(allow: false, asking: asking, terminal: terminal)
        }
    }

    private func decide(allow: Bool, asking: Asking, terminal: Terminal) {
        let verdict = allow ? "allowed" : "denied"
        if let problem = asking.remember(allow) {
            terminal.say("\r\nlnp: \(verdict) for this run only: \(problem)\r\n")
        } else {
            terminal.say("\r\nlnp: \(verdict) and remembered; to change it: lnp \(allow ? "deny" : "allow") \(TerminalText.shown(asking.program))\r\n")
        }
        answerHolders(state.answered(allow: allow))
        closeTerminal()
    }

    private func checkDeadline() {
        guard let terminal, Self.now() >= deadline, let asking else { return }
        let later = endedWhileAsking != nil ? "; \(asking.decideLater)" : ""
        terminal.say("\r\nlnp: no answer in \(asking.timeoutSeconds) s; denied, and not remembered\(later)\r\n")
        answerHolders(state.timedOut())
        closeTerminal()
    }

    /// Signals that end a program: after it ended, they withdraw the question instead.
    private static let ending: Set<Int32> = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]

    private func withdrawQuestion() {
        guard let terminal, let asking else { return }
        terminal.say("\r\n(interrupted: nothing decided; \(asking.decideLater))\r\n")
        answerHolders(state.interrupted())
        closeTerminal()
    }

    private func answerHolders(_ reply: Answer) {
        for holder in holders { answer(holder.client, holder.ask, by: holder.asker, reply) }
        holders = []
    }

    private func closeTerminal() {
        terminal?.close()
        terminal = nil
        question = nil
        relay?.paused = false
    }

    /// The program ended: a prompt still up is withdrawn, and whoever waits is let go.
    private func finishAsking() {
        if let terminal {
            terminal.say("\r\n(the program ended; nothing decided; \(asking?.decideLater ?? ""))\r\n")
            closeTerminal()
        }
        for client in arriving.map(\.client) { close(client) }
        for waiter in holders.map(\.client) + passedUp.map(\.client) { reply(waiter, nil) }
        for pending in passedUp { close(pending.upward) }
    }

    private static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}

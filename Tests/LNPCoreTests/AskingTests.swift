import Testing
@testable import LNPCoreHost
@testable import lnp_run

/// The ask between the preload and lnp-run: the request the core writes is the one lnp-run
/// reads, the reply lnp-run writes is the one the core reads, and lnp-run's one-prompt rules.
@Suite("Asking")
struct AskingTests {
    private func requestBytes(_ request: AskRequest) -> [UInt8] {
        writeBytes(capacity: AskRequest.capacity) { request.write(to: &$0) }.bytes
    }

    private func request(
        mode: AskMode = .holding, operation: LNPCoreHost.Operation = .connect, transport: Transport? = .tcp,
        endpoint: SocketEndpoint? = SocketEndpoint(address: v4(10, 77, 0, 2), port: 80), name: [UInt8] = [],
        reason: LocalReason = .onLink(prefix: v4(10, 77, 0, 0), length: 24, interface: interfaceName("eth1")),
        usage: [UInt8] = []
    ) -> AskRequestText? {
        name.withUnsafeBufferPointer { name in
            usage.withUnsafeBufferPointer { usage in
                AskRequestText.parse(requestBytes(AskRequest(
                    mode: mode, pid: 4242, operation: operation, transport: transport, endpoint: endpoint, name: name,
                    reason: reason, scopeName: InterfaceName(), usage: usage)))
            }
        }
    }

    @Test func lnpRunReadsWhatThePreloadAsks() throws {
        let read = try #require(request(usage: Array("Finds printers.".utf8)))
        #expect(read == AskRequestText(
            holding: true, pid: 4242, description: "connect tcp 10.77.0.2:80 — on-link 10.77.0.0/24 via eth1",
            usage: "Finds printers."))
        #expect(request(mode: .denyingWhileAsking)?.holding == false)
    }

    @Test func descriptionsOfOtherOperations() {
        let v6 = SocketEndpoint(address: IPAddress(v6High: 0xfe80_0000_0000_0000, low: 1), port: 5353)
        #expect(request(operation: .sendto, transport: .udp, endpoint: v6, reason: .linkLocal(scopeID: 0))?.description
            == "sendto udp [fe80::1]:5353 — link-local")
        #expect(request(operation: .resolve, transport: nil, endpoint: nil, name: Array("printer.local".utf8), reason: .localName)?
            .description == "resolve printer.local — .local name")
        #expect(request(operation: .join, transport: .udp, endpoint: SocketEndpoint(address: v4(224, 0, 0, 251), port: 0),
                        reason: .multicast)?.description == "join udp 224.0.0.251 — multicast")
    }

    /// A usage description cannot add lines to the request (or to the prompt).
    @Test func usageStaysOnOneLine() throws {
        let read = try #require(request(usage: Array("line one\nline two\u{7}".utf8)))
        #expect(read.usage == "line one line two ")
        let long = try #require(request(usage: Array(repeating: UInt8(ascii: "x"), count: 2000)))
        #expect(long.usage.count == AskRequest.usageBudget)
    }

    @Test func malformedRequestsAreRefused() {
        #expect(AskRequestText.parse([]) == nil)
        #expect(AskRequestText.parse(Array("hold\nconnect".utf8)) == nil)
        #expect(AskRequestText.parse(Array("wait 12\nconnect".utf8)) == nil)
        #expect(AskRequestText.parse(Array("hold x\nconnect".utf8)) == nil)
        #expect(AskRequestText.parse(Array("hold 12".utf8)) == nil)
    }

    @Test(arguments: [AskingState.answer(allow: true), AskingState.answer(allow: false), AskingState.denied(.asking),
                      AskingState.denied(.noTerminal), AskingState.denied(.unanswered)])
    func thePreloadReadsTheReply(answer: Answer) {
        #expect(withUnsafeBytes(of: answer.wire) { Answer.parse($0) } == answer)
    }

    @Test func malformedRepliesAreNotAnswers() {
        for bytes in [[], Array("a3".utf8), Array("x31".utf8), Array("a:1".utf8), Array("a311".utf8)] {
            #expect(bytes.withUnsafeBytes { Answer.parse($0) } == nil, "\(bytes)")
        }
    }

    @Test func onePromptForEveryAsker() {
        var state = AskingState()
        #expect(state.action(forAskHolding: true) == .startPrompt)
        state.promptShown()
        #expect(state.action(forAskHolding: true) == .hold)
        #expect(state.action(forAskHolding: false) == .reply(Answer(decision: .deny, basis: .asking, isFinal: false)))
        let reply = state.answered(allow: true)
        #expect(reply == Answer(decision: .allow, basis: .answered, isFinal: true))
        #expect(state.action(forAskHolding: true) == .reply(reply), "later asks get the answer at once")
    }

    @Test func noSecondPromptAfterATimeoutOrWithoutATerminal() {
        var state = AskingState()
        state.promptShown()
        #expect(state.timedOut() == Answer(decision: .deny, basis: .unanswered, isFinal: false))
        #expect(state.action(forAskHolding: true) == .reply(Answer(decision: .deny, basis: .unanswered, isFinal: false)))
        var headless = AskingState()
        headless.refuse(.noTerminal)
        #expect(headless.action(forAskHolding: true) == .reply(Answer(decision: .deny, basis: .noTerminal, isFinal: false)))
    }

    @Test func anInterruptedPromptAsksAgainLater() {
        var state = AskingState()
        state.promptShown()
        #expect(state.interrupted() == Answer(decision: .deny, basis: .unanswered, isFinal: false))
        #expect(state.action(forAskHolding: true) == .startPrompt)
    }

    @Test(arguments: [
        ("a\n", AnswerReader.Outcome.allow), ("Allow\n", .allow), ("yes\n", .allow), ("  d\n", .deny),
        ("don't\n", .deny), ("N", .deny), ("", .pending), ("x", .pending), ("?\n", .unclear), ("\n", .pending),
        // Only a line's first character answers: no other word decides by accident.
        ("cancel\n", .unclear), ("later\n", .unclear), ("whatever\n", .unclear), ("xyz\nd\n", .unclear),
    ])
    func answers(typed: String, outcome: AnswerReader.Outcome) {
        var reader = AnswerReader()
        #expect(reader.feed(Array(typed.utf8)) == outcome)
    }

    @Test func anAnswerMayComeInPieces() {
        var reader = AnswerReader()
        #expect(reader.feed(Array("  ".utf8)) == .pending)
        #expect(reader.feed(Array("d".utf8)) == .deny)
        var again = AnswerReader()
        #expect(again.feed(Array("cancel\n".utf8)) == .unclear)
        #expect(again.feed(Array("y\n".utf8)) == .allow, "a line after an unclear one answers")
    }

    @Test func theQuestionNamesProgramOperationAndUsage() {
        let request = AskRequestText(holding: true, pid: 7, description: "connect tcp 10.77.0.2:80 — on-link", usage: "")
        let text = PromptText(program: "/opt/tools/scan.py", request: request, usage: "Finds printers.", timeoutSeconds: 30)
            .question
        #expect(text.contains("\u{201C}scan.py\u{201D} would like to find and connect to devices on your local network."))
        #expect(text.contains("program   /opt/tools/scan.py"))
        #expect(text.contains("asked by  connect tcp 10.77.0.2:80 — on-link (pid 7)"))
        #expect(text.contains("why       Finds printers."))
        #expect(text.hasSuffix("Allow? a = Allow, d = Don't Allow (30 s): "))
        let silent = PromptText(program: "/bin/x", request: request, usage: "", timeoutSeconds: 5).question
        #expect(!silent.contains("why"))
    }
}

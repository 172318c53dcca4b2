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
        via: String = "eth1", usage: [UInt8] = []
    ) -> ReceivedAsk? {
        name.withUnsafeBufferPointer { name in
            usage.withUnsafeBufferPointer { usage in
                ReceivedAsk.parse(requestBytes(AskRequest(
                    mode: mode, operation: operation, transport: transport, endpoint: endpoint, name: name,
                    via: Array(via.utf8).withUnsafeBufferPointer { InterfaceName($0) }, usage: usage)))
            }
        }
    }

    @Test func lnpRunReadsWhatThePreloadAsks() throws {
        let read = try #require(request(usage: Array("Finds printers.".utf8)))
        #expect(read == ReceivedAsk(
            holding: true, onBehalfOf: nil, operation: .connect, transport: .tcp,
            endpoint: SocketEndpoint(address: v4(10, 77, 0, 2), port: 80), via: "eth1", name: nil, usage: "Finds printers."))
        #expect(read.report == "connect tcp 10.77.0.2:80")
        #expect(request(mode: .denyingWhileAsking)?.holding == false)
    }

    @Test func reportsOfOtherOperations() {
        let v6 = SocketEndpoint(address: IPAddress(v6High: 0xfe80_0000_0000_0000, low: 1), port: 5353)
        #expect(request(operation: .sendto, transport: .udp, endpoint: v6, via: "")?.report == "sendto udp [fe80::1]:5353")
        #expect(request(operation: .resolve, transport: nil, endpoint: nil, name: Array("printer.local".utf8), via: "")?
            .report == "resolve printer.local")
        #expect(request(operation: .join, transport: .udp, endpoint: SocketEndpoint(address: v4(224, 0, 0, 251), port: 0),
                        via: "")?.report == "join udp 224.0.0.251")
        #expect(request(operation: .connect, endpoint: SocketEndpoint(address: v4(10, 77, 0, 2), port: 514),
                        name: Array("fileserver".utf8))?.report == "connect tcp fileserver (10.77.0.2:514)")
        #expect(request(operation: .socket, transport: .packet, endpoint: nil, via: "")?.report == "socket packet")
        #expect(request(operation: .sendto, transport: .raw, endpoint: SocketEndpoint(address: v4(10, 77, 0, 2), port: 17))?
            .report == "sendto raw 10.77.0.2", "no port on a raw socket")
        let scoped = SocketEndpoint(address: IPAddress(v6High: 0xfe80_0000_0000_0000, low: 1), port: 80, scopeID: 1)
        #expect(request(endpoint: scoped, via: "")?.endpoint == scoped, "the scope travels as an index")
    }

    /// A usage description or a name cannot add lines to the request (or to the prompt).
    @Test func usageAndNameStayOnOneLine() throws {
        let read = try #require(request(usage: Array("line one\nline two\u{7}".utf8)))
        #expect(read.usage == "line one line two ")
        let long = try #require(request(usage: Array(repeating: UInt8(ascii: "x"), count: 2000)))
        #expect(long.usage.count == AskRequest.usageBudget)
        let named = try #require(request(operation: .resolve, transport: nil, endpoint: nil,
                                         name: Array("a\nb c.local".utf8), via: ""))
        #expect(named.name == "a b c.local")
    }

    /// What a nested lnp-run passes up reads back as the same ask, on behalf of its asker.
    @Test func aPassedUpAskReadsBack() throws {
        let read = try #require(request(usage: Array("Finds printers.".utf8)))
        var expected = read
        expected.onBehalfOf = 4242
        #expect(ReceivedAsk.parse(read.wire(onBehalfOf: 4242)) == expected)
        let named = try #require(request(operation: .resolve, transport: nil, endpoint: nil, name: Array("x y.local".utf8), via: ""))
        #expect(ReceivedAsk.parse(named.wire(onBehalfOf: 7))?.name == "x y.local")
    }

    @Test(arguments: [
        "", "hold", "hold\nconnect", "wait\nconnect tcp 10.0.0.1 80 - -", "hold x\nconnect tcp 10.0.0.1 80 - -",
        "hold 0\nconnect tcp 10.0.0.1 80 - -", "hold\nconnect tcp 10.0.0.1 80 -", "hold\nfly tcp 10.0.0.1 80 - -",
        "hold\nconnect tcpx 10.0.0.1 80 - -", "hold\nconnect tcp 10.0.0.300 80 - -", "hold\nconnect tcp 10.0.0.1 70000 - -",
        "hold\nconnect tcp 10.0.0.1 - - -", "hold\njoin udp 224.0.0.1 80 - -", "hold\nresolve - - 53 - x.local",
        "hold\nconnect tcp fe80::1%eth0 80 - -", "hold\nconnect tcp 10.0.0.1 80 eth/0 -",
        "hold\nconnect tcp 10.0.0.1 80 \u{1b}[2J -", "hold\nconnect tcp 10.0.0.1 80 a-very-long-interface-name -",
        "hold\nconnect tcp 10.0.0.1 80 - -\nusage\nmore",
    ])
    func malformedAsksAreRefused(text: String) {
        #expect(ReceivedAsk.parse(Array(text.utf8)) == nil)
    }

    /// lnp-run's own look: what a process reports is local only if lnp-run finds it so, and
    /// an operation's fields must fit together.
    @Test func lnpRunChecksWhatIsReported() {
        func ask(_ line: String) -> ReceivedAsk { ReceivedAsk.parse(Array("hold\n\(line)".utf8))! }
        #expect(AskCheck.check(ask("socket packet - - - -")) == .local(reason: "packet socket (it talks to the link directly)"))
        #expect(AskCheck.check(ask("resolve - - - - printer.local")) == .local(reason: ".local name"))
        #expect(AskCheck.check(ask("join udp 224.0.0.251 - - -")) == .local(reason: "multicast"))
        #expect(AskCheck.check(ask("sendto udp 224.0.0.251 5353 - -")) == .local(reason: "multicast"))
        #expect(AskCheck.check(ask("sendto udp 169.254.1.1 5353 - -")) == .local(reason: "link-local"))
        #expect(AskCheck.check(ask("connect tcp 127.0.0.1 80 - -")) == .refused(because: "not a local-network operation here (loopback)"))
        #expect(AskCheck.check(ask("resolve - - - - example.com")) == .refused(because: "not a local-network operation here (not a .local name)"))
        // Bonjour: an address's name asked of the mDNS daemon, and the daemon's own operations.
        let bonjour = "Bonjour, through the system's mDNS daemon"
        #expect(AskCheck.check(ask("resolve - - - - 10.79.0.2")) == .local(reason: bonjour))
        #expect(AskCheck.check(ask("resolve - - - - 2.0.79.10.in-addr.arpa")) == .local(reason: bonjour))
        #expect(AskCheck.check(ask("browse - - - - _ipp._tcp")) == .local(reason: bonjour))
        #expect(AskCheck.check(ask("register - - - - peer web._http._tcp")) == .local(reason: bonjour))
        #expect(AskCheck.check(ask("browse tcp 10.0.0.1 - - _ipp._tcp")) == .refused(because: "the ask does not describe an operation"))
        #expect(AskCheck.check(ask("bind udp 127.0.0.1 80 - -"))
            == .refused(because: "not a local-network operation here (bind to a unicast or wildcard address)"))
        for unfit in ["socket udp - - - -", "join udp 10.0.0.1 - - -", "resolve udp - - - -", "connect - 10.0.0.1 80 - -",
                      "connect tcp - - - -", "connect tcp 10.0.0.1 80 no-such-if0 -"] {
            #expect(AskCheck.check(ask(unfit)) == .refused(because: "the ask does not describe an operation"), "\(unfit)")
        }
    }

    @Test(arguments: [
        ("plain /usr/bin/tool", "plain /usr/bin/tool"), ("\u{1b}[2K\u{1b}[1A", "\\x1b[2K\\x1b[1A"), ("bell\u{7}", "bell\\x07"),
        ("csi\u{9b}2J", "csi\\x9b2J"), ("rlo\u{202e}txt.exe", "rlo\\u{202e}txt.exe"), ("back\\slash", "back\\\\slash"),
        ("line\u{2028}sep", "line\\u{2028}sep"), ("pad          which is", "pad which is"),
        ("fill\u{3164}er\u{fe0f}", "fill\\u{3164}er\\u{fe0f}"), ("braille\u{2800}blank", "braille\\u{2800}blank"),
        ("e\u{301}\u{302}\u{303}\u{304}", "e\u{301}\u{302}\\u{0303}\\u{0304}"), ("ring\u{20e0}", "ring\\u{20e0}"), ("del\u{7f}", "del\\x7f"), ("caf\u{e9} \u{201C}q\u{201D}", "caf\u{e9} \u{201C}q\u{201D}"),
    ])
    func terminalTextShowsNoControls(text: String, shown: String) {
        #expect(TerminalText.shown(text) == shown)
    }

    @Test func aLongFieldIsCut() {
        let shown = TerminalText.shown(String(repeating: "x", count: 1000))
        #expect(shown == String(repeating: "x", count: TerminalText.limit - 1) + "\u{2026}")
        // To the terminal's width, wide characters taking two columns: nothing wraps.
        #expect(TerminalText.shown(String(repeating: "x", count: 100), columns: 40) == String(repeating: "x", count: 39) + "\u{2026}")
        #expect(TerminalText.shown(String(repeating: "\u{6F22}", count: 100), columns: 40) == String(repeating: "\u{6F22}", count: 19) + "\u{2026}")
        #expect(TerminalText.shown("short", columns: 40) == "short")
    }

    /// A usage description padded to wrap at the terminal's edge cannot put a line of its own
    /// at the start of a line: every field ends before the edge.
    @Test func noFieldWraps() throws {
        let ask = try #require(ReceivedAsk.parse(Array("hold\nconnect tcp 10.77.0.2 80 eth1 -".utf8)))
        let usage = "Finds printers." + String(repeating: "\u{2800}", count: 53) + "lnp: verified: signed by your administrator"
        for width in [40, 80, 132] {
            let text = PromptText(program: "/opt/" + String(repeating: "p", count: 300), asker: Asker(pid: 7, executable: "/bin/x"),
                                  ask: ask, reason: "on-link", usage: usage, timeoutSeconds: 30, code: "47", width: width).question
            // The fields' lines: after the blank line, the reset and lnp's own first line.
            for line in text.components(separatedBy: "\r\n").dropFirst(3).dropLast() {
                #expect(line.unicodeScalars.count <= width, "\(width): \(line)")
            }
        }
    }

    @Test func otherRequestsAreRead() {
        #expect(RunRequest.parse(Array("settings".utf8)) == .settings)
        #expect(RunRequest.parse(Array("nested".utf8)) == .nested)
        #expect(RunRequest.parse(Array("vouch 4242".utf8)) == .vouch(4242))
        #expect(RunRequest.parse(Array("vouch x".utf8)) == nil)
        #expect(RunRequest.parse(Array("vouch".utf8)) == nil)
    }

    @Test(arguments: [AskingState.answer(allow: true), AskingState.answer(allow: false), AskingState.denied(.asking),
                      AskingState.denied(.noTerminal), AskingState.denied(.unanswered)])
    func thePreloadReadsTheReply(answer: Answer) {
        #expect(withUnsafeBytes(of: answer.wire) { Answer.parse($0) } == answer)
    }

    @Test func malformedRepliesAreNotAnswers() {
        for bytes in [[], Array("a3".utf8), Array("x31".utf8), Array("a31".utf8), Array("a311".utf8)] {
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
        ("47\r", AnswerReader.Outcome.allow), (" 47 \n", .allow), ("  d\n", .deny), ("don't\n", .deny), ("N", .deny),
        ("", .pending), ("x", .pending), ("?\n", .unclear), ("\n", .pending), ("47", .pending),
        // Only the code allows: no key a program can tell the person to type.
        ("a\n", .unclear), ("y\n", .unclear), ("Allow\n", .unclear), ("48\r", .unclear), ("4\r", .unclear),
        ("cancel\n", .unclear), ("xyz\nd\n", .unclear), ("447\r", .unclear),
    ])
    func answers(typed: String, outcome: AnswerReader.Outcome) {
        var reader = AnswerReader(code: "47")
        #expect(reader.feed(Array(typed.utf8)) == outcome)
    }

    @Test func anAnswerMayComeInPiecesAndBeCorrected() {
        var reader = AnswerReader(code: "47")
        #expect(reader.feed(Array("  ".utf8)) == .pending)
        #expect(reader.feed(Array("d".utf8)) == .deny)
        var again = AnswerReader(code: "47")
        #expect(again.feed(Array("cancel\n".utf8)) == .unclear)
        #expect(again.feed(Array("4".utf8)) == .pending)
        #expect(again.echo == "4", "what is typed is shown")
        #expect(again.feed(Array("8\u{7f}".utf8)) == .pending)
        #expect(again.echo == "8\u{8} \u{8}", "and taken back")
        #expect(again.feed(Array("7\r".utf8)) == .allow, "a line after an unclear one answers")
    }

    @Test func codesAreTwoDigitsAndVary() {
        let codes = Set((0..<200).map { _ in PromptText.drawCode() })
        #expect(codes.allSatisfy { $0.count == 2 && $0.allSatisfy(\.isNumber) })
        #expect(codes.count > 20)
    }

    @Test func theQuestionSaysWhoseWordEachLineIs() throws {
        let ask = try #require(ReceivedAsk.parse(Array("hold\nconnect tcp 10.77.0.2 80 eth1 -".utf8)))
        let text = PromptText(
            program: "/opt/tools/scan.py", asker: Asker(pid: 7, executable: "/usr/bin/python3"), ask: ask,
            reason: "on-link 10.77.0.0/24 via eth1", usage: "Finds printers.", timeoutSeconds: 30, code: "47"
        ).question
        #expect(text.contains("\u{201C}scan.py\u{201D} would like to find and connect to devices on your local network."))
        #expect(text.contains("program   /opt/tools/scan.py\r\n"))
        #expect(text.contains("process   7 /usr/bin/python3\r\n"))
        #expect(text.contains("reports   connect tcp 10.77.0.2:80\r\n"))
        #expect(text.contains("which is  on-link 10.77.0.0/24 via eth1\r\n"))
        #expect(text.contains("why       Finds printers."))
        #expect(text.hasSuffix("Allow? type 47 and Enter to Allow, d = Don't Allow (30 s): "))
        let silent = PromptText(program: "/bin/x", asker: Asker(pid: 7, executable: "/bin/x"), ask: ask, reason: "multicast",
                                usage: "", timeoutSeconds: 5, code: "47").question
        #expect(!silent.contains("why"))
    }

    /// Nothing a program chose — its path, its report, its usage — puts a control character
    /// on the terminal: only lnp-run's own line breaks are there, and its reset to plain text.
    @Test func theQuestionCarriesNoControlCharacterOfTheProgram() throws {
        let ask = try #require(ReceivedAsk.parse(Array("hold\nresolve - - - - \u{1b}[1Aevil\u{9b}.local\n\u{1b}[2Kwhy\u{7}".utf8)))
        let text = PromptText(
            program: "/tmp/\u{1b}]0;title\u{7}x", asker: Asker(pid: 7, executable: "/tmp/a\u{202e}b"), ask: ask,
            reason: ".local name", usage: ask.usage, timeoutSeconds: 30, code: "47"
        ).question
        #expect(text.hasPrefix("\r\n" + PromptText.reset))
        let controls = String(text.dropFirst(2 + PromptText.reset.count)).unicodeScalars.filter {
            ($0.value < 0x20 || (0x7f..<0xa0).contains($0.value) || $0.properties.generalCategory == .format)
                && $0 != "\r" && $0 != "\n"
        }
        #expect(controls.isEmpty, "\(controls.map(\.value))")
        #expect(text.contains("reports   resolve \\x1b[1Aevil\\x9b.local"))
    }
}

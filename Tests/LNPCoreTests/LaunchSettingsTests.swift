import Testing
@testable import LNPCoreHost
@testable import lnp_run

private func settings(records: RecordScope = .local) -> LaunchSettings {
    LaunchSettings(
        preload: "/opt/lnp/lib/lnp/liblnp.so", program: "/usr/bin/curl", decision: .deny, errno: 113, attribution: "app",
        records: records)
}

private func value(_ name: String, in environment: [String]) -> [String] {
    environment.filter { $0.hasPrefix(name + "=") }.map { String($0.dropFirst(name.count + 1)) }
}

/// The reply as the preload reads it (Settings.fromReply), the program copied out.
private func read(_ launch: LaunchSettings) throws -> (settings: Settings, program: String) {
    try launch.reply.withUnsafeBufferPointer { raw in
        let settings = try #require(Settings.fromReply(raw))
        return (settings, String(decoding: settings.program, as: UTF8.self))
    }
}

@Suite("LaunchSettings")
struct LaunchSettingsTests {
    /// The environment says which lnp-run to ask, and nothing else of lnp's.
    @Test func freshEnvironment() {
        let environment = settings().environment(from: ["PATH=/usr/bin:/bin", "HOME=/root"], runPID: 4242)
        #expect(environment == ["PATH=/usr/bin:/bin", "HOME=/root", "LD_PRELOAD=/opt/lnp/lib/lnp/liblnp.so", "LNP_RUN=4242"])
    }

    @Test func preloadComesFirstAndOthersAreKept() {
        let environment = settings().environment(from: ["LD_PRELOAD=/usr/lib/libfoo.so:/usr/lib/libbar.so"], runPID: 1)
        #expect(value("LD_PRELOAD", in: environment) == ["/opt/lnp/lib/lnp/liblnp.so:/usr/lib/libfoo.so:/usr/lib/libbar.so"])
    }

    @Test func spaceSeparatedPreloadsAreKeptToo() {
        let environment = settings().environment(from: ["LD_PRELOAD=/a/one.so /b/two.so::"], runPID: 1)
        #expect(value("LD_PRELOAD", in: environment) == ["/opt/lnp/lib/lnp/liblnp.so:/a/one.so:/b/two.so"])
    }

    @Test func anOlderLibLNPIsReplacedNotDuplicated() {
        let environment = settings().environment(from: [
            "LD_PRELOAD=/home/me/build/liblnp.so:/usr/lib/libfoo.so:liblnp.so:/opt/lnp/lib/lnp/liblnp.so",
        ], runPID: 1)
        #expect(value("LD_PRELOAD", in: environment) == ["/opt/lnp/lib/lnp/liblnp.so:/usr/lib/libfoo.so"])
    }

    @Test func lookalikesAreNotRemoved() {
        let environment = settings().environment(from: ["LD_PRELOAD=/x/notliblnp.so:/x/liblnp.so.1:/x/liblnp.so/y.so"], runPID: 1)
        #expect(value("LD_PRELOAD", in: environment) == ["/opt/lnp/lib/lnp/liblnp.so:/x/notliblnp.so:/x/liblnp.so.1:/x/liblnp.so/y.so"])
    }

    @Test func runningUnderItselfIsIdempotent() {
        let once = settings().environment(from: ["PATH=/bin", "LD_PRELOAD=/usr/lib/libfoo.so"], runPID: 7)
        let twice = settings().environment(from: once, runPID: 7)
        #expect(twice == once)
        #expect(twice.filter { $0.hasPrefix("LD_PRELOAD=") }.count == 1)
    }

    /// Whatever an earlier run or a program left in the environment is gone: a forged or
    /// stale policy cannot reach the preload that way.
    @Test func oldLNPVariablesAreRemoved() {
        let environment = settings().environment(from: [
            "LNP_POLICY=allow,1,app", "LNP_AUDIT=/old/audit", "LNP_PROGRAM=/old", "LNP_ASK=/old/ask", "LNP_RUN=99",
            "LNP_UNKNOWN=1", "TERM=xterm", "XLNP_MODE=keep",
        ], runPID: 4242)
        #expect(environment.filter { $0.hasPrefix("LNP_") } == ["LNP_RUN=4242"])
        #expect(value("TERM", in: environment) == ["xterm"])
        #expect(value("XLNP_MODE", in: environment) == ["keep"])
    }

    /// What lnp-run replies is what the preload reads (Settings.fromReply).
    @Test(arguments: [(LaunchPolicy.deny, Int32(113), "app"), (.allow, 1, "user"), (.deny, 4095, "user"), (.allow, 111, "app")])
    func thePreloadReadsThePolicyBack(decision: LaunchPolicy, errno: Int32, attribution: String) throws {
        let launch = LaunchSettings(
            preload: "/p/liblnp.so", program: "/bin/x y", decision: decision, errno: errno, attribution: attribution)
        let (read, program) = try read(launch)
        #expect(read.decision == (decision == .allow ? .allow : .deny))
        #expect(read.errno == errno)
        #expect(read.attribution == (attribution == "user" ? .user : .app))
        #expect(program == "/bin/x y")
    }

    /// A path may hold newlines: the program is the rest of the reply, whole.
    @Test func aProgramWithNewlinesIsReadWhole() throws {
        let launch = LaunchSettings(preload: "/p/liblnp.so", program: "/tmp/a\nallow\n", decision: .deny, errno: 113,
                                    attribution: "app")
        let (read, program) = try read(launch)
        #expect(program == "/tmp/a\nallow\n")
        #expect(read.decision == .deny)
    }

    @Test(arguments: [RecordScope.none, .local, .all])
    func thePreloadReadsWhatIsRecorded(scope: RecordScope) throws {
        #expect(try read(settings(records: scope)).settings.records == scope)
    }

    /// Asking: the mode and the basis reach the preload.
    @Test(arguments: [(LaunchPolicy.ask, AskMode.holding), (.askDeny, .denyingWhileAsking), (.allow, .never), (.deny, .never)])
    func thePreloadReadsTheAskMode(decision: LaunchPolicy, mode: AskMode) throws {
        var launch = settings()
        launch.decision = decision
        launch.basis = .remembered
        let read = try read(launch).settings
        #expect(read.asking == mode)
        #expect(read.decision == (decision == .allow ? .allow : .deny), "asking starts from deny: lnp fails closed")
        #expect(read.basis == .remembered)
    }

    @Test func aReplyThatIsNotOKIsNoSettings() {
        for reply in ["elsewhere", "", "ok\ndeny,113,app,run-option,local", "ok"] {
            #expect(Array(reply.utf8).withUnsafeBufferPointer { Settings.fromReply($0) } == nil, "\(reply)")
        }
    }

    @Test func everyBasisNameReadsBack() {
        var raw: UInt8 = 0
        while let basis = DecisionBasis(rawValue: raw) {
            let name = basis.name
            let read = UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
            #expect(DecisionBasis.named(read) == basis)
            raw += 1
        }
        #expect(raw == 12)
        #expect(Array("bogus".utf8).withUnsafeBufferPointer { DecisionBasis.named($0) } == nil)
    }

    @Test func defaultErrnoIsHostUnreachable() {
        #expect(LaunchSettings.defaultErrno == 113)
    }
}

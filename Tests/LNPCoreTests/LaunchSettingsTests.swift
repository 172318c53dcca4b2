import Testing
@testable import LNPCoreHost
@testable import lnp_run

private func settings(auditPath: String? = "/var/log/lnp.jsonl") -> LaunchSettings {
    LaunchSettings(
        preload: "/opt/lnp/lib/lnp/liblnp.so", program: "/usr/bin/curl", decision: .deny, errno: 113, attribution: "app",
        auditPath: auditPath)
}

private func value(_ name: String, in environment: [String]) -> [String] {
    environment.filter { $0.hasPrefix(name + "=") }.map { String($0.dropFirst(name.count + 1)) }
}

@Suite("LaunchSettings")
struct LaunchSettingsTests {
    @Test func freshEnvironment() {
        let environment = settings().environment(from: ["PATH=/usr/bin:/bin", "HOME=/root"])
        #expect(environment == [
            "PATH=/usr/bin:/bin", "HOME=/root", "LD_PRELOAD=/opt/lnp/lib/lnp/liblnp.so", "LNP_POLICY=deny,113,app,run-option,local",
            "LNP_PROGRAM=/usr/bin/curl", "LNP_AUDIT=/var/log/lnp.jsonl",
        ])
    }

    @Test func noAuditNoAuditVariable() {
        let environment = settings(auditPath: nil).environment(from: [])
        #expect(value("LNP_AUDIT", in: environment) == [])
        #expect(value("LNP_POLICY", in: environment) == ["deny,113,app,run-option,local"])
    }

    @Test func preloadComesFirstAndOthersAreKept() {
        let environment = settings().environment(from: ["LD_PRELOAD=/usr/lib/libfoo.so:/usr/lib/libbar.so"])
        #expect(value("LD_PRELOAD", in: environment) == ["/opt/lnp/lib/lnp/liblnp.so:/usr/lib/libfoo.so:/usr/lib/libbar.so"])
    }

    @Test func spaceSeparatedPreloadsAreKeptToo() {
        let environment = settings().environment(from: ["LD_PRELOAD=/a/one.so /b/two.so::"])
        #expect(value("LD_PRELOAD", in: environment) == ["/opt/lnp/lib/lnp/liblnp.so:/a/one.so:/b/two.so"])
    }

    @Test func anOlderLibLNPIsReplacedNotDuplicated() {
        let environment = settings().environment(from: [
            "LD_PRELOAD=/home/me/build/liblnp.so:/usr/lib/libfoo.so:liblnp.so:/opt/lnp/lib/lnp/liblnp.so",
        ])
        #expect(value("LD_PRELOAD", in: environment) == ["/opt/lnp/lib/lnp/liblnp.so:/usr/lib/libfoo.so"])
    }

    @Test func lookalikesAreNotRemoved() {
        let environment = settings().environment(from: ["LD_PRELOAD=/x/notliblnp.so:/x/liblnp.so.1:/x/liblnp.so/y.so"])
        #expect(value("LD_PRELOAD", in: environment) == ["/opt/lnp/lib/lnp/liblnp.so:/x/notliblnp.so:/x/liblnp.so.1:/x/liblnp.so/y.so"])
    }

    @Test func runningUnderItselfIsIdempotent() {
        let once = settings().environment(from: ["PATH=/bin", "LD_PRELOAD=/usr/lib/libfoo.so"])
        let twice = settings().environment(from: once)
        #expect(twice == once)
        #expect(twice.filter { $0.hasPrefix("LD_PRELOAD=") }.count == 1)
    }

    @Test func oldLNPVariablesAreReplaced() {
        let environment = LaunchSettings(
            preload: "/p/liblnp.so", program: "./app", decision: .allow, errno: 1, attribution: "user", auditPath: nil
        ).environment(from: [
            "LNP_POLICY=deny,113,app", "LNP_MODE=deny", "LNP_AUDIT=/old/audit", "LNP_PROGRAM=/old", "LNP_UNKNOWN=1",
            "TERM=xterm", "XLNP_MODE=keep",
        ])
        #expect(value("LNP_POLICY", in: environment) == ["allow,1,user,run-option,local"])
        #expect(value("LNP_PROGRAM", in: environment) == ["./app"])
        #expect(value("LNP_AUDIT", in: environment) == [], "the old audit file is not inherited")
        #expect(value("LNP_MODE", in: environment) == [])
        #expect(value("LNP_UNKNOWN", in: environment) == [])
        #expect(value("TERM", in: environment) == ["xterm"])
        #expect(value("XLNP_MODE", in: environment) == ["keep"])
        #expect(environment.filter { $0.hasPrefix("LNP_") } == ["LNP_POLICY=allow,1,user,run-option,local", "LNP_PROGRAM=./app"])
    }

    /// What lnp-run writes is what the preload reads (Settings.readPolicy).
    @Test(arguments: [(LaunchPolicy.deny, Int32(113), "app"), (.allow, 1, "user"), (.deny, 4095, "user"), (.allow, 111, "app")])
    func thePreloadReadsThePolicyBack(decision: LaunchPolicy, errno: Int32, attribution: String) throws {
        let environment = LaunchSettings(
            preload: "/p/liblnp.so", program: "/bin/x", decision: decision, errno: errno, attribution: attribution, auditPath: nil
        ).environment(from: [])
        let policy = try #require(value("LNP_POLICY", in: environment).first)
        var read = Settings()
        Array(policy.utf8).withUnsafeBufferPointer { read.readPolicy($0) }
        #expect(read.decision == (decision == .allow ? .allow : .deny))
        #expect(read.errno == errno)
        #expect(read.attribution == (attribution == "user" ? .user : .app))
    }

    /// --audit-all reaches the preload as the policy's scope; without it only local
    /// operations are recorded.
    @Test(arguments: [true, false])
    func thePreloadReadsTheAuditScope(all: Bool) throws {
        var launch = LaunchSettings(
            preload: "/p/liblnp.so", program: "/bin/x", decision: .allow, errno: 113, attribution: "app", auditPath: "syslog")
        launch.auditsAllActivity = all
        let environment = launch.environment(from: [])
        #expect(value("LNP_AUDIT", in: environment) == ["syslog"])
        let policy = try #require(value("LNP_POLICY", in: environment).first)
        var read = Settings()
        Array(policy.utf8).withUnsafeBufferPointer { read.readPolicy($0) }
        #expect(read.recordsAllActivity == all)
        #expect(read.decision == .allow)
    }

    /// Asking: the mode, the basis and the socket reach the preload.
    @Test(arguments: [(LaunchPolicy.ask, AskMode.holding), (.askDeny, .denyingWhileAsking), (.allow, .never), (.deny, .never)])
    func thePreloadReadsTheAskMode(decision: LaunchPolicy, mode: AskMode) throws {
        var launch = LaunchSettings(
            preload: "/p/liblnp.so", program: "/bin/x", decision: decision, errno: 113, attribution: "app", auditPath: nil)
        launch.basis = .remembered
        launch.askPath = "/run/user/0/lnp-run.abc/ask"
        let environment = launch.environment(from: [])
        #expect(value("LNP_ASK", in: environment) == ["/run/user/0/lnp-run.abc/ask"])
        let policy = try #require(value("LNP_POLICY", in: environment).first)
        var read = Settings()
        Array(policy.utf8).withUnsafeBufferPointer { read.readPolicy($0) }
        #expect(read.asking == mode)
        #expect(read.decision == (decision == .allow ? .allow : .deny), "asking starts from deny: lnp fails closed")
        #expect(read.basis == .remembered)
    }

    @Test func everyBasisNameReadsBack() {
        var raw: UInt8 = 0
        while let basis = DecisionBasis(rawValue: raw) {
            let name = basis.name
            let read = UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
            #expect(DecisionBasis.named(read) == basis)
            raw += 1
        }
        #expect(raw == 10)
        #expect(Array("bogus".utf8).withUnsafeBufferPointer { DecisionBasis.named($0) } == nil)
    }

    @Test func defaultErrnoIsHostUnreachable() {
        #expect(LaunchSettings.defaultErrno == 113)
    }
}

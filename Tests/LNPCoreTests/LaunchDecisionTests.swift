import Foundation
import LNPCoreHost
import LNPStore
import LNPTools
import Testing
@testable import lnp_run

/// Which decision lnp-run hands the preload: administrator, then option, then the person's
/// store, then asking; and failing closed when a file cannot be read.
@Suite("LaunchDecision")
struct LaunchDecisionTests {
    let directory: String
    let store: String
    let administrator: String
    let program = ProgramIdentity(path: "/opt/tools/scan", buildID: "abc123", isScript: false)

    init() throws {
        directory = try makeTemporaryDirectory()
        store = directory + "/state/lnp/decisions.sqlite"
        administrator = directory + "/decisions.conf"
    }

    private func make(option: Bool? = nil, denyWhileAsking: Bool = false, identity: ProgramIdentity? = nil) -> LaunchDecision {
        LaunchDecision.make(
            for: identity ?? program, option: option, storePath: store, denyWhileAsking: denyWhileAsking,
            administratorPath: administrator)
    }

    @Test func undeterminedAsks() {
        #expect(make() == LaunchDecision(policy: .ask, basis: .runOption, asks: true))
        #expect(make(denyWhileAsking: true).policy == .askDeny)
        #expect(!FileManager.default.fileExists(atPath: store), "looking up creates nothing")
    }

    @Test func aBinaryWithoutBuildIDIsWarnedAbout() {
        let bare = ProgramIdentity(path: "/opt/tools/old", buildID: nil, isScript: false)
        #expect(make(identity: bare).warnings.first?.contains("has no build-id") == true)
        let script = ProgramIdentity(path: "/opt/tools/tool.py", buildID: nil, isScript: true)
        #expect(make(identity: script).warnings.isEmpty)
    }

    @Test func theRememberedDecisionApplies() throws {
        #expect(LaunchDecision.remember(false, for: program, storePath: store) == nil)
        let launch = make()
        #expect((launch.policy, launch.basis, launch.asks, launch.remembered) == (.deny, .remembered, false, true))
        #expect(!launch.needsMarkingUsed, "answered at the prompt, and so used, a moment ago")
    }

    /// A decision made with `lnp allow` or `deny` is not a use; a run under it is, noted once.
    @Test func aRunUnderADecisionMadeBeforeIsNotedAsAUse() throws {
        try DecisionStore.open(path: store, create: true)?.record(.allowed, for: program)
        #expect(make().needsMarkingUsed)
        LaunchDecision.markUsed(program, storePath: store)
        #expect(!make().needsMarkingUsed, "used a moment ago")
    }

    @Test func anOptionAppliesForTheRunOnly() {
        #expect(LaunchDecision.remember(false, for: program, storePath: store) == nil)
        #expect(make(option: true) == LaunchDecision(policy: .allow, basis: .runOption))
        #expect(make().policy == .deny)
    }

    @Test func theAdministratorBeatsTheStoreAndOptions() throws {
        try "deny /opt/tools/scan\n".write(toFile: administrator, atomically: true, encoding: .utf8)
        #expect(LaunchDecision.remember(true, for: program, storePath: store) == nil)
        #expect(make().policy == .deny)
        #expect(make().basis == .administrator)
        let overridden = make(option: true)
        #expect((overridden.policy, overridden.basis) == (.deny, .administrator))
        #expect(overridden.warnings.first?.contains("--allow does not apply") == true)
        #expect(make(option: false).warnings.isEmpty, "agreeing with the administrator says nothing")
    }

    @Test func unreadableFilesDenyWithoutAsking() throws {
        try FileManager.default.createDirectory(atPath: directory + "/state/lnp", withIntermediateDirectories: true)
        try Data("not a database, not at all".utf8).write(to: URL(fileURLWithPath: store))
        let corrupt = make()
        #expect((corrupt.policy, corrupt.basis, corrupt.asks) == (.deny, .storeUnreadable, false))
        #expect(corrupt.warnings.first?.contains(store) == true)
        #expect(LaunchDecision.remember(true, for: program, storePath: store) != nil, "a corrupt store is not replaced")

        try "allow\n".write(toFile: administrator, atomically: true, encoding: .utf8)
        let malformed = make(option: true)
        #expect((malformed.policy, malformed.basis) == (.deny, .storeUnreadable))
    }
}

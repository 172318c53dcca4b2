import LNPCoreHost
import LNPStore
import LNPTools

/// What lnp-run hands the preload for this run, from its options, the administrator's file
/// and the person's store — in that order of strength, except that the administrator's word
/// beats an option too: a user's own choice cannot override it.
struct LaunchDecision: Equatable {
    var policy: LaunchPolicy
    /// Why (LNP_POLICY's last field, the audit's `because`).
    var basis: DecisionBasis
    /// Whether the program is undetermined, so lnp-run must answer asks.
    var asks = false
    /// Whether the decision is the person's remembered one (its "last used" is updated).
    var remembered = false
    var warnings: [String] = []
    /// When the remembered decision was last used, in seconds since 1970.
    var lastUsed: Double? = nil

    /// "Last used" is kept to the minute, in seconds: a program run again and again (a build,
    /// a loop) reads the store without writing to it each time.
    static let lastUsedResolution: Double = 60

    var needsMarkingUsed: Bool {
        remembered && (lastUsed.map { StoreClock.now() - $0 >= Self.lastUsedResolution } ?? true)
    }

    static func make(for identity: ProgramIdentity, option: Bool?, storePath: String, denyWhileAsking: Bool,
                     administratorPath: String = AdministratorDecisions.defaultPath) -> LaunchDecision {
        if let option {
            return withOption(option, for: identity, administratorPath: administratorPath)
        }
        return make(for: identity, found: DecisionLookup.lookup(identity.path, storePath: storePath, administratorPath: administratorPath),
                    denyWhileAsking: denyWhileAsking)
    }

    /// Without --allow or --deny: what `DecisionLookup.lookup` found for the program.
    static func make(for identity: ProgramIdentity, found: Lookup, denyWhileAsking: Bool) -> LaunchDecision {
        switch found {
        case .decided(let decision):
            let administrator = decision.source != .user
            return LaunchDecision(
                policy: decision.state == .allowed ? .allow : .deny, basis: administrator ? .administrator : .remembered,
                remembered: !administrator, lastUsed: decision.lastUsed)
        case .undetermined:
            var launch = LaunchDecision(policy: denyWhileAsking ? .askDeny : .ask, basis: .runOption, asks: true)
            if !identity.isScript && identity.buildID == nil {
                launch.warnings.append("\(identity.path) has no build-id; its answer will be remembered by path alone")
            }
            return launch
        case .unavailable(let message):
            return LaunchDecision(
                policy: .deny, basis: .storeUnreadable,
                warnings: ["\(message); denying local-network access, without asking or remembering"])
        }
    }

    private static func withOption(_ allow: Bool, for identity: ProgramIdentity, administratorPath: String) -> LaunchDecision {
        let option = allow ? "--allow" : "--deny"
        switch DecisionLookup.administrator(identity.path, administratorPath: administratorPath) {
        case .undetermined:
            return LaunchDecision(policy: allow ? .allow : .deny, basis: .runOption)
        case .decided(let decision):
            let allowed = decision.state == .allowed
            var launch = LaunchDecision(policy: allowed ? .allow : .deny, basis: .administrator)
            if allowed != allow, case .administrator(let file, let line) = decision.source {
                launch.warnings.append(
                    "the administrator has \(decision.state.rawValue) \(identity.path) (\(file):\(line)); \(option) does not apply")
            }
            return launch
        case .unavailable(let message):
            return LaunchDecision(
                policy: .deny, basis: .storeUnreadable,
                warnings: ["\(message); denying local-network access (\(option) cannot override the administrator's file)"])
        }
    }

    /// Records the person's answer, which the program uses as it is given ("last used" too,
    /// for `lnp list`); what went wrong, if anything.
    static func remember(_ allow: Bool, for identity: ProgramIdentity, storePath: String = DecisionStore.defaultPath()) -> String? {
        do {
            try DecisionStore.open(path: storePath, create: true)?.record(allow ? .allowed : .denied, for: identity, used: true)
            return nil
        } catch {
            return error.description
        }
    }

    /// Notes that the program ran under its remembered decision (for `lnp list`). A failure
    /// here changes nothing about the run, so it is not reported.
    static func markUsed(_ identity: ProgramIdentity, storePath: String = DecisionStore.defaultPath()) {
        try? DecisionStore.open(path: storePath, create: false)?.markUsed(identity.path)
    }
}

/// What lnp-run is asked to do: its options, and the program's command line as ArgumentParser
/// captures it (from PROGRAM on, or from a `--` before it). Read by `PlainArguments` when the
/// command line is in a plain form, by ArgumentParser otherwise (lnp-run-arguments,
/// Sources/lnp-run-arguments); the two must agree (Tests/LNPCoreTests/PlainArgumentsTests.swift).
public struct RunOptions: Equatable {
    public enum Policy: String, CaseIterable, Sendable {
        case allow, deny
    }

    public enum Attribution: String, CaseIterable, Sendable {
        case app, user
    }

    public static let defaultAttribution = Attribution.app
    public static let defaultPromptTimeout = 30

    public var policy: Policy? = nil
    public var errnoName: String? = nil
    public var audit: String? = nil
    public var auditAll = false
    public var summary = false
    public var attribution = defaultAttribution
    public var denyWhileAsking = false
    public var promptTimeout = defaultPromptTimeout
    public var preloadOnly = false
    public var strict = false
    public var usageDescription: String? = nil
    public var bonjourServices: String? = nil
    public var command: [String] = []

    public init(
        policy: Policy? = nil, errnoName: String? = nil, audit: String? = nil, auditAll: Bool = false, summary: Bool = false,
        attribution: Attribution = defaultAttribution, denyWhileAsking: Bool = false, promptTimeout: Int = defaultPromptTimeout,
        preloadOnly: Bool = false, strict: Bool = false, usageDescription: String? = nil, bonjourServices: String? = nil,
        command: [String] = []
    ) {
        self.policy = policy
        self.errnoName = errnoName
        self.audit = audit
        self.auditAll = auditAll
        self.summary = summary
        self.attribution = attribution
        self.denyWhileAsking = denyWhileAsking
        self.promptTimeout = promptTimeout
        self.preloadOnly = preloadOnly
        self.strict = strict
        self.usageDescription = usageDescription
        self.bonjourServices = bonjourServices
        self.command = command
    }
}

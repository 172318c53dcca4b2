/// What lnp-run is asked to do: its options, and the program's command line as ArgumentParser
/// captures it (from PROGRAM on, or from a `--` before it). Read by `PlainArguments` when the
/// command line is in a plain form, by ArgumentParser (`LNPRun`) otherwise; the two must
/// agree (Tests/LNPCoreTests/PlainArgumentsTests.swift).
struct RunOptions: Equatable {
    static let defaultAttribution = LNPRun.AttributionOption.app
    static let defaultPromptTimeout = 30

    var policy: LNPRun.Policy? = nil
    var errnoName: String? = nil
    var audit: String? = nil
    var auditAll = false
    var summary = false
    var attribution = defaultAttribution
    var denyWhileAsking = false
    var promptTimeout = defaultPromptTimeout
    var preloadOnly = false
    var strict = false
    var usageDescription: String? = nil
    var bonjourServices: String? = nil
    var command: [String] = []
}

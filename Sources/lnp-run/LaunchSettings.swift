import LNPCoreHost
import LNPTools

#if canImport(Glibc)
import Glibc
#endif

/// LNP_POLICY's first field: what the preload does at a local-network operation.
enum LaunchPolicy: String, Equatable {
    case allow, deny
    /// Hold the operation while asking lnp-run.
    case ask
    /// Deny while asking (--deny-while-asking).
    case askDeny = "ask-deny"
}

/// What lnp-run tells the processes of its tree: their settings, which each fetches at its
/// first need (Sources/LNPCore/Settings.swift reads the reply), and the environment the
/// program starts with — the preload first in LD_PRELOAD, and `LNP_RUN`, which lnp-run to ask.
/// Nothing else of lnp's is in the environment: a descendant could rewrite it.
struct LaunchSettings {
    static let defaultErrno = EHOSTUNREACH

    var preload: String
    var program: String
    var decision: LaunchPolicy
    var errno: Int32
    var attribution: String
    /// What the records cover (none without --audit or --summary).
    var records: RecordScope = .none
    /// Why the decision is what it is (the audit's `because`).
    var basis: DecisionBasis = .runOption
    /// The Bonjour service types the program declares (the reply to `services`).
    var bonjour: BonjourDeclaration = .undeclared

    /// Decided, for processes that start now (the person answered).
    mutating func decide(_ answer: Decision, _ why: DecisionBasis) {
        decision = answer == .allow ? .allow : .deny
        basis = why
    }

    /// `deny,113,app,remembered,local`.
    var policyLine: String { "\(decision.rawValue),\(errno),\(attribution),\(basis.name),\(records.name)" }

    /// The reply to a `settings` request.
    var reply: [UInt8] { Array("ok\n\(policyLine)\n\(program)".utf8) }

    /// `current` with the preload first in LD_PRELOAD (once, even if lnp-run runs under
    /// itself), lnp's variables removed, and `LNP_RUN` naming this lnp-run.
    func environment(from current: [String], runPID: pid_t) -> [String] {
        var result: [String] = []
        var existingPreload: String? = nil
        for entry in current {
            if entry.hasPrefix("LNP_") { continue }
            if entry.hasPrefix("LD_PRELOAD=") {
                existingPreload = String(entry.dropFirst("LD_PRELOAD=".count))
                continue
            }
            result.append(entry)
        }
        let others = (existingPreload ?? "")
            .split(whereSeparator: { $0 == ":" || $0 == " " })
            .map(String.init)
            .filter { !$0.hasSuffix("/" + PreloadLocator.fileName) && $0 != PreloadLocator.fileName }
        // (Joined by hand: `joined(separator:)`'s first use costs the start a search of the
        // binary's protocol conformances.)
        var preloads = "LD_PRELOAD=" + preload
        for other in others { preloads += ":" + other }
        result.append(preloads)
        result.append("LNP_RUN=\(runPID)")
        return result
    }
}

enum ProcessEnvironment {
    static func current() -> [String] {
        var entries: [String] = []
        var index = 0
        while let entry = environ[index] {
            entries.append(String(cString: entry))
            index += 1
        }
        return entries
    }
}

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
    /// itself), lnp's variables removed, and `LNP_RUN` naming this lnp-run. The entries are
    /// bytes: the rest of the environment reaches the program as lnp-run was given it, bytes
    /// that are not UTF-8 too.
    func environment(from current: [[UInt8]], runPID: pid_t) -> [[UInt8]] {
        let lnp = Array("LNP_".utf8), preloadPrefix = Array("LD_PRELOAD=".utf8)
        var result: [[UInt8]] = []
        var existingPreload: ArraySlice<UInt8> = []
        for entry in current {
            if entry.starts(with: lnp) { continue }
            if entry.starts(with: preloadPrefix) {
                existingPreload = entry[preloadPrefix.count...]
                continue
            }
            result.append(entry)
        }
        let own = Array(PreloadLocator.fileName.utf8)
        var preloads = preloadPrefix + Array(preload.utf8)
        for other in existingPreload.split(whereSeparator: { $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: " ") }) {
            let isOwn = other.elementsEqual(own)
                || (other.count > own.count && other.dropLast(own.count).last == UInt8(ascii: "/") && other.suffix(own.count).elementsEqual(own))
            if !isOwn { preloads += [UInt8(ascii: ":")] + other }
        }
        result.append(preloads)
        result.append(Array("LNP_RUN=\(runPID)".utf8))
        return result
    }

    /// The same on text, as the tests write environments.
    func environment(from current: [String], runPID: pid_t) -> [String] {
        environment(from: current.map { Array($0.utf8) }, runPID: runPID).map { String(decoding: $0, as: UTF8.self) }
    }
}

enum ProcessEnvironment {
    /// lnp-run's environment, byte for byte.
    static func current() -> [[UInt8]] {
        var entries: [[UInt8]] = []
        var index = 0
        while let entry = environ[index] {
            entries.append(Array(UnsafeRawBufferPointer(start: entry, count: strlen(entry))))
            index += 1
        }
        return entries
    }
}

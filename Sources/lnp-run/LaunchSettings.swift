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

/// What lnp-run hands to the preload, through the environment every child inherits.
/// The variables are read by Sources/LNPCore/Settings.swift.
struct LaunchSettings {
    static let defaultErrno = EHOSTUNREACH

    var preload: String
    var program: String
    var decision: LaunchPolicy
    var errno: Int32
    var attribution: String
    var auditPath: String?
    /// Why the decision is what it is (the audit's `because`).
    var basis: DecisionBasis = .runOption
    /// The socket lnp-run answers on while the program is undetermined.
    var askPath: String? = nil

    /// `current` with the preload first in LD_PRELOAD (once, even if lnp-run runs under
    /// itself) and lnp's variables replaced by this run's.
    func environment(from current: [String]) -> [String] {
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
        result.append("LD_PRELOAD=" + ([preload] + others).joined(separator: ":"))
        result.append("LNP_POLICY=\(decision.rawValue),\(errno),\(attribution),\(basis.name)")
        result.append("LNP_PROGRAM=\(program)")
        if let auditPath { result.append("LNP_AUDIT=\(auditPath)") }
        if let askPath { result.append("LNP_ASK=\(askPath)") }
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

/// The audit file: made absolute (the program may change directory), created if missing
/// (mode 0600), and checked writable now, so that a mistake is reported before the program
/// runs rather than lost afterwards.
enum AuditFile {
    static func prepare(_ path: String) throws(Failure) -> String {
        guard !path.isEmpty else { throw Failure("--audit needs a file") }
        let absolute = ProgramLocator.absolute(path)
        let fd = open(absolute, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0o600)
        guard fd >= 0 else {
            throw Failure("cannot write the audit file \(absolute): \(ErrnoName.description(of: errno))")
        }
        close(fd)
        return absolute
    }
}

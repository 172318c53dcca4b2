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
    /// An absolute path, or `syslog`.
    var auditPath: String?
    /// Whether the audit records all outgoing activity, not only local-network operations.
    var auditsAllActivity = false
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
        result.append("LNP_POLICY=\(decision.rawValue),\(errno),\(attribution),\(basis.name),\(auditsAllActivity ? "all" : "local")")
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
/// runs rather than lost afterwards. `syslog` names the system logger, checked the same way.
enum AuditFile {
    static let syslog = "syslog"

    static func prepare(_ path: String) throws(Failure) -> String {
        guard !path.isEmpty else { throw Failure("--audit needs a file") }
        if path == syslog {
            try SystemLogger.check()
            return syslog
        }
        let absolute = ProgramLocator.absolute(path)
        let fd = open(absolute, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0o600)
        guard fd >= 0 else {
            throw Failure("cannot write the audit file \(absolute): \(ErrnoName.description(of: errno))")
        }
        close(fd)
        return absolute
    }
}

/// The system logger's socket, as the preload sends to it (Sources/LNPCore/SyslogSink.swift).
enum SystemLogger {
    static let path = "/dev/log"

    /// Whether a datagram socket can reach /dev/log; nothing is sent.
    static func check() throws(Failure) {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure("cannot make a socket for the system logger: \(ErrnoName.description(of: errno))") }
        defer { close(fd) }
        let connected = UnixSocketAddress.with(path) { connect(fd, $0, $1) }
        guard connected == 0 else {
            throw Failure("--audit syslog: no system logger listens on \(path): \(ErrnoName.description(of: errno))")
        }
    }
}

import LNPCoreHost

#if canImport(Glibc)
import Glibc
#endif

/// The lnp-runs a process may run under, found from the kernel's process tree rather than
/// from its environment (which a program may have emptied or forged).
public enum RunAncestors {
    /// The processes to try, nearest first: the one `hint` (LNP_RUN) names, then each ancestor
    /// (`ancestors`, when the caller has them already).
    public static func candidates(hint: String?, ancestors: [pid_t] = ancestors()) -> [pid_t] {
        var candidates: [pid_t] = []
        if let hint, let pid = pid_t(hint), pid > 1 { candidates.append(pid) }
        for pid in ancestors where !candidates.contains(pid) { candidates.append(pid) }
        return candidates
    }

    /// This process's ancestors, nearest first, init left out.
    public static func ancestors() -> [pid_t] {
        var ancestors: [pid_t] = []
        var pid = getppid()
        // Deeper than any real process tree: a program cannot hide its lnp-run by starting
        // itself through many processes.
        for _ in 0..<ProcessAncestry.depth where pid > 1 {
            ancestors.append(pid)
            guard let parent = ProcessAncestry.parent(of: pid) else { break }
            pid = parent
        }
        return ancestors
    }

    /// The nearest ancestor that is an lnp-run, if any: one that answers on lnp-run's channel
    /// (Sources/LNPCore/RunChannel.swift, the listener checked to be that process), or whose
    /// executable is named lnp-run (one in another network namespace cannot be reached).
    public static func enclosing() -> pid_t? {
        candidates(hint: nil).first { answers($0) || executableName(of: $0) == "lnp-run" }
    }

    private static func answers(_ pid: pid_t) -> Bool {
        var reply = [UInt8](repeating: 0, count: 4200)
        let request = Array("settings".utf8)
        let count = request.withUnsafeBytes { message in
            reply.withUnsafeMutableBytes { RunChannel.request(message, to: Int32(pid), reply: $0) }
        }
        return count != nil
    }

    /// (A keeper is not dumpable, so its executable cannot be read without privilege: then its
    /// command name, which any process may take too — that only refuses more.)
    private static func executableName(of pid: pid_t) -> Substring? {
        if let executable = ProcFiles.executable(of: pid) {
            return String(decoding: executable, as: UTF8.self).split(separator: "/").last
        }
        return ProcFiles.commandName(of: pid).map { Substring($0) }
    }
}

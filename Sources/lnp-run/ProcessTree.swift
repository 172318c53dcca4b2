import LNPCoreHost
import LNPTools

#if canImport(Glibc)
import Glibc
#endif

/// lnp-run's tree, as /proc shows it: which processes lnp-run answers and records for. A
/// process is lnp-run's when it descends from it with no nested lnp-run between — a nested
/// one answers its own tree, within what this one allows it (`EnclosingRun`). Orphans stay
/// in the tree: lnp-run is their subreaper.
final class ProcessTree {
    let root: pid_t
    /// Nested lnp-runs that registered, with their start times.
    private var nested: [pid_t: UInt64] = [:]
    /// Processes found to be lnp-run's, with their start times (a reused process id is
    /// looked at again).
    private var known: [pid_t: UInt64] = [:]

    init(root: pid_t = getpid()) { self.root = root }

    /// Whether `pid` is one of lnp-run's own processes. A process is looked at while it lives:
    /// each registers (its request for settings) before it sends a record, so a record that
    /// arrives after its sender has ended is still known to be of this run — and a reused
    /// process id, alive, is looked at again.
    func owns(_ pid: pid_t) -> Bool {
        guard pid > 0, pid != root else { return false }
        guard let started = Self.startTime(of: pid) else { return known[pid] != nil }  // ended: known while it lived
        if known[pid] == started { return true }
        var current = pid
        for _ in 0..<ProcessAncestry.depth {
            if current != pid, isNested(current) { return false }
            guard let parent = Self.parent(of: current), parent > 0 else { return false }
            if parent == root {
                known[pid] = started
                return true
            }
            current = parent
        }
        return false
    }

    /// Whether `pid` is a nested lnp-run that registered (and still is that process).
    func isNested(_ pid: pid_t) -> Bool {
        guard let started = nested[pid] else { return false }
        return Self.startTime(of: pid) == started
    }

    /// Registers `pid` as a nested lnp-run: it must be one of this tree's processes and run
    /// the same lnp-run executable (so that it narrows, as lnp-run does, and can be trusted
    /// with its own tree's records).
    func registerNested(_ pid: pid_t) -> Bool {
        guard owns(pid), let started = Self.startTime(of: pid), Self.runsThisExecutable(pid) else { return false }
        nested[pid] = started
        known[pid] = nil
        return true
    }

    /// The nearest registered nested lnp-run above `pid` in this tree, whose policy its
    /// processes are held to as well; nil when none (most runs have none: no walk then).
    func nestedRun(governing pid: pid_t) -> pid_t? {
        guard !nested.isEmpty else { return nil }
        var current = pid
        for _ in 0..<ProcessAncestry.depth {
            guard let parent = Self.parent(of: current), parent > 1, parent != root else { return nil }
            if isNested(parent) { return parent }
            current = parent
        }
        return nil
    }

    /// Whether `pid` descends from lnp-run at all.
    static func isDescendant(_ pid: pid_t, of root: pid_t = getpid()) -> Bool {
        var current = pid
        for _ in 0..<ProcessAncestry.depth {
            guard current > 1, let parent = parent(of: current) else { return false }
            if parent == root { return true }
            current = parent
        }
        return false
    }

    static func parent(of pid: pid_t) -> pid_t? { ProcessAncestry.parent(of: pid) }

    /// The 22nd field of /proc/PID/stat: when the process started, in clock ticks since boot.
    static func startTime(of pid: pid_t) -> UInt64? { field(22, of: pid).flatMap { UInt64($0) } }

    /// Field `number` (from 1) of /proc/PID/stat: `pid (comm) state ppid …`, where comm may
    /// hold spaces and parentheses, so the last `)` ends it.
    private static func field(_ number: Int, of pid: pid_t) -> Substring? {
        let fd = open("/proc/\(pid)/stat", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 1024)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        let line = String(decoding: buffer[0..<count], as: UTF8.self)
        guard let close = line.lastIndex(of: ")") else { return nil }
        let fields = line[line.index(after: close)...].split(separator: " ")  // from the third
        return number >= 3 && number - 3 < fields.count ? fields[number - 3] : nil
    }

    private static func runsThisExecutable(_ pid: pid_t) -> Bool {
        var own = stat()
        var theirs = stat()
        return stat("/proc/self/exe", &own) == 0 && stat("/proc/\(pid)/exe", &theirs) == 0
            && own.st_dev == theirs.st_dev && own.st_ino == theirs.st_ino
    }
}

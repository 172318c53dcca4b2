import LNPCoreHost
import LNPTools

#if canImport(Glibc)
import Glibc
#endif

/// This run's records as they arrive from its processes (`RunServer`): checked to be theirs,
/// written to the audit destination, counted for `--summary`, and passed on to an enclosing
/// lnp-run, whose audit must see them too.
final class RunRecords {
    let destination: AuditDestination?
    let scope: RecordScope
    /// The enclosing lnp-run, if this one is nested and it records.
    let upstream: pid_t?
    /// The enclosing lnp-run, if this one is nested: its supervisor sends the records of its
    /// calls from this run's tree here too (`receiveSupervised(_:…:nestedRun:)`).
    let enclosing: pid_t?
    private(set) var lost = LostRecords()
    /// Records refused: sent by a process that is not of this run, about another process, or
    /// not in the form the preload writes (`RecordLine`).
    private(set) var refused = 0
    /// The local operations, counted for `--summary`.
    private(set) var summary: OperationsSummary? = nil

    /// Which of the socket calls the preload allows in a process without the gadget page a
    /// supervisor makes, and records, so that the preload's record of one would be a second
    /// (set once the program has started: the kernel may refuse the filter). --strict has no
    /// page; under MemoryDenyWriteExecute= it cannot be made.
    ///  - `.all` with a filter of this run's own: every one this run records;
    ///  - in a nested run below the enclosing run's filter (EBUSY), that run's supervisor: the
    ///    local ones, which it records for this run and sends here, and the others only when it
    ///    records all activity itself (`.all`), else `.local`;
    ///  - `.none` without a supervisor (--preload-only, no seccomp).
    var madeBySupervisor: RecordScope = .none

    /// Connected to the enclosing run's records once, before the program runs: what is passed
    /// up names no address, which that run's filter, under --strict, would notify its supervisor
    /// of — while it may be waiting on this run to answer for a call of this tree.
    private let upstreamConnection: Int32?

    init(
        destination: AuditDestination?, scope: RecordScope, summarising: Bool, upstream: pid_t?, enclosing: pid_t? = nil
    ) {
        self.destination = destination
        self.scope = scope
        self.upstream = upstream
        self.enclosing = enclosing
        upstreamConnection = upstream.flatMap { RunChannel.recordConnection(to: Int32($0)) }
        if summarising { summary = OperationsSummary() }
    }

    func receive(_ record: ReceivedRecord, from tree: ProcessTree) {
        // A process may report only its own operations; a nested lnp-run passes on its tree's,
        // and the enclosing one's supervisor sends those of its calls from this tree.
        let fromEnclosing = enclosing != nil && record.sender == enclosing
        let nested = tree.isNested(record.sender) || fromEnclosing
        guard nested || tree.owns(record.sender) else {
            refused += 1
            return
        }
        var line: [UInt8] = []
        var about = record.sender
        if !record.line.isEmpty {
            guard RecordDatagram.severities.contains(record.severity), let parsed = RecordLine(record.line),
                let pid = parsed.pid, nested || pid == record.sender, parsed.value(of: "exe") != nil,
                !fromEnclosing || tree.owns(pid)
            else {
                refused += 1
                return
            }
            about = pid
            if record.outsidePage && !record.bySupervisor && Self.isAllowedSocketCall(parsed, madeIn: madeBySupervisor) {
                lost.add(Int(record.lost), .notSent)
                return
            }
            // The executable as the kernel names it (a nested run has done so for its tree).
            line = nested ? parsed.bytes : ProcFiles.executable(of: pid).map { parsed.replacing("exe", with: Self.json($0)) } ?? parsed.bytes
        }
        lost.add(Int(record.lost), .notSent)
        guard !line.isEmpty else { return }
        // Which path decided: a run's word (the preload's own datagrams say nothing of it).
        let path: Path = nested && record.bySupervisor ? .supervisor : .preload
        // What the enclosing run sent is in its audit already.
        deliver(line, about: about, severity: record.severity, lost: record.lost, by: path, passingUp: !fromEnclosing,
                outsidePage: record.outsidePage)
    }

    /// An allowed operation of a socket call (not a name resolved, which the preload alone sees),
    /// of those `scope` holds.
    private static func isAllowedSocketCall(_ record: RecordLine, madeIn scope: RecordScope) -> Bool {
        switch scope {
        case .none: return false
        case .local: if let local = record.value(of: "local"), local.elementsEqual("false".utf8) { return false }
        case .all: break
        }
        guard let decision = record.value(of: "decision"), decision.elementsEqual("\"allow\"".utf8) else { return false }
        guard let op = record.value(of: "op"), op.count >= 2 else { return false }
        let word = String(decoding: op.dropFirst().dropLast(), as: UTF8.self)
        return LNPCoreHost.Operation(word: word)?.isSocketCall ?? false
    }

    /// A record of lnp-run's own supervisor (`CallSupervisor`): believed as it is. A call of
    /// a nested run's tree is that run's to record too.
    func receiveSupervised(_ line: [UInt8], severity: UInt8, about pid: pid_t, nestedRun: pid_t? = nil) {
        deliver(line, about: pid, severity: severity, lost: 0, by: .supervisor)
        if let nestedRun { forward(line, lost: 0, severity: severity, bySupervisor: true, to: nestedRun) }
    }

    /// Which path decided an operation: the audit's `by`.
    enum Path: String {
        case preload, supervisor
    }

    private func deliver(
        _ record: [UInt8], about: pid_t, severity: UInt8, lost count: UInt32, by path: Path, passingUp: Bool = true,
        outsidePage: Bool = false
    ) {
        var line = record
        if scope == .local && line.reversed().starts(with: "\"local\":false}".utf8.reversed()) { return }
        summary?.add(line)
        if let upstream, passingUp {
            forward(line, lost: count, severity: severity, bySupervisor: path == .supervisor, outsidePage: outsidePage, to: upstream)
        }
        guard let destination else { return }
        line = Self.adding("\"by\":\"\(path.rawValue)\"", to: line)
        let gap = lost.gap
        if let gap { line = Self.noting(gap, in: line) }
        if let reason = destination.write(line, severity: severity, sender: about) {
            lost.add(1, reason)
        } else if gap != nil {
            lost.gapNoted()
        }
    }

    /// `bytes` as a JSON string, escaped as the preload escapes what it writes (`ByteWriter`).
    static func json(_ bytes: [UInt8]) -> [UInt8] {
        var line = [UInt8](repeating: 0, count: bytes.count * 6 + 2)
        let count = line.withUnsafeMutableBytes { raw in
            var writer = ByteWriter(raw)
            bytes.withUnsafeBufferPointer { writer.appendJSONString($0, budget: raw.count) }
            return writer.count
        }
        return Array(line[0..<count])
    }

    /// Datagrams on the records socket that were not records at all (`RunServer`): refused
    /// too. `total` is the server's count so far.
    func refuseUnreadable(_ total: Int) {
        refused += total - unreadableSeen
        unreadableSeen = total
    }

    private var unreadableSeen = 0

    /// The reader took what was held, or left.
    func flush() {
        if let (count, reason) = destination?.flush() { lost.add(count, reason) }
    }

    /// At the end of the run: what is still held for a reader.
    func finish() {
        if let (count, reason) = destination?.finish() { lost.add(count, reason) }
    }

    /// The record with `"lost":{"count":N,"because":"…"}` before its closing brace.
    static func noting(_ gap: (count: Int, because: String), in line: [UInt8]) -> [UInt8] {
        adding("\"lost\":{\"count\":\(gap.count),\"because\":\"\(gap.because)\"}", to: line)
    }

    /// The record with a member (`"key":value`, already JSON) before its closing brace.
    static func adding(_ member: String, to line: [UInt8]) -> [UInt8] {
        guard line.last == UInt8(ascii: "}") else { return line }
        return Array(line.dropLast()) + Array(",\(member)}".utf8)
    }

    /// A record passed on, its header's flags as they came (an enclosing run decides by them as
    /// this one does).
    private func forward(
        _ line: [UInt8], lost count: UInt32, severity: UInt8, bySupervisor: Bool, outsidePage: Bool = false, to pid: pid_t
    ) {
        var datagram = [UInt8](repeating: 0, count: RecordDatagram.headerSize) + line
        datagram.withUnsafeMutableBytes { raw in
            RecordDatagram.writeHeader(lost: count, severity: severity, bySupervisor: bySupervisor, outsidePage: outsidePage,
                                       into: raw)
            let sent = if let upstreamConnection, pid == upstream {
                RunChannel.sendRecord(UnsafeRawBufferPointer(raw), onConnected: upstreamConnection)
            } else {
                RunChannel.sendRecord(UnsafeRawBufferPointer(raw), to: Int32(pid))
            }
            if !sent { lost.add(1, .notSent) }
        }
    }
}

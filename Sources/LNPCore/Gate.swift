import LNPSys

/// The classifier of a live process: the kernel's routes, the system's exemptions.
typealias LiveClassifier = Classifier<KernelRoutes, LiveExemptions>

extension Classifier where Routes == KernelRoutes, Exemptions == LiveExemptions {
    @inline(__always) static var live: LiveClassifier { LiveClassifier(routes: KernelRoutes(), exemptions: LiveExemptions()) }
}

/// The preload's gate (`CallGate`): what lnp does in the program's process with an operation
/// once it knows the operation is local — decide by the run's settings (asking lnp-run while
/// the program is undetermined), send lnp-run the record, and tell the hook whether to go on.
struct ProcessGate: CallGate {
    @inline(__always) func classifier(leaving outputInterface: UInt32) -> LiveClassifier {
        outputInterface == 0
            ? .live : LiveClassifier(routes: KernelRoutes(outputInterface: outputInterface), exemptions: LiveExemptions())
    }

    /// Asked only in a process that has forced one (`SocketFlags`).
    @inline(__always) var mayForceEgress: Bool { SocketFlags.has(SocketFlags.forcedEgress) }
    func noteForcedEgress() { SocketFlags.note(SocketFlags.forcedEgress) }
    @inline(__always) var mayWriteHeaders: Bool { SocketFlags.has(SocketFlags.rawSockets) }
    var recordsAllActivity: Bool { SettingsStore.current().recordsAllActivity }
    var passesEveryOperation: Bool { SettingsStore.passesEveryOperation() }

    /// Returns 0 to let the call through, or the errno it must fail with.
    @inline(never)
    func decide(
        _ operation: Operation, fd: Int32?, transport: Transport?, endpoint: SocketEndpoint?,
        name: UnsafeBufferPointer<UInt8>, reason: LocalReason
    ) -> Int32 {
        let decided = outcome(operation, fd: fd, transport: transport, endpoint: endpoint, name: name, reason: reason)
        return decided.answer.decision == .allow ? 0 : decided.errno
    }

    /// The answer for a local-network operation (asked and recorded), for a caller that
    /// fails it its own way.
    @inline(never)
    func answer(
        _ operation: Operation, fd: Int32?, transport: Transport?, endpoint: SocketEndpoint?,
        name: UnsafeBufferPointer<UInt8>, reason: LocalReason
    ) -> Answer {
        outcome(operation, fd: fd, transport: transport, endpoint: endpoint, name: name, reason: reason).answer
    }

    // Inlined into both: a call of its own on the path of every local operation costs more.
    @inline(__always)
    private func outcome(
        _ operation: Operation, fd: Int32?, transport: Transport?, endpoint: SocketEndpoint?,
        name: UnsafeBufferPointer<UInt8>, reason: LocalReason
    ) -> (answer: Answer, errno: Int32) {
        let settings = SettingsStore.current()
        let (attribution, domains) = Self.socketAttribution(fd, settings: settings)
        var answer = Answer(decision: settings.decision, basis: settings.basis, isFinal: true)
        if settings.asking != .never {
            answer = Answers.known()
                ?? Self.ask(settings, operation: operation, transport: transport, endpoint: endpoint, name: name, reason: reason)
        }
        if settings.records != .none {
            Self.record(
                operation, fd: fd, transport: transport, endpoint: endpoint, name: name, verdict: .local(reason),
                attribution: attribution, domains: domains, answer: answer, settings: settings)
        }
        return (answer, settings.errno)
    }

    /// Refuses a local-network operation without asking, for `basis` (a Bonjour type the
    /// program did not declare), and records it.
    @inline(never)
    func refuse(_ operation: Operation, name: UnsafeBufferPointer<UInt8>, reason: LocalReason, basis: DecisionBasis) {
        let settings = SettingsStore.current()
        guard settings.records != .none else { return }
        Self.record(
            operation, fd: nil, transport: nil, endpoint: nil, name: name, verdict: .local(reason),
            attribution: settings.attribution, domains: DomainReference(),
            answer: Answer(decision: .deny, basis: basis, isFinal: true), settings: settings)
    }

    /// Records an operation that does not reach the local network (see `NetworkActivity`).
    @inline(never)
    func recordActivity(_ operation: Operation, fd: Int32, transport: Transport, endpoint: SocketEndpoint, reason: NotLocalReason) {
        let settings = SettingsStore.current()
        guard settings.records == .all else { return }
        let (attribution, domains) = Self.socketAttribution(fd, settings: settings)
        Self.record(
            operation, fd: fd, transport: transport, endpoint: endpoint, name: UnsafeBufferPointer(start: nil, count: 0),
            verdict: .notLocal(reason), attribution: attribution, domains: domains,
            answer: Answer(decision: .allow, basis: .notLocal, isFinal: true), settings: settings)
    }

    /// The socket's own attribution and domains (ne_socket API), else the run's attribution.
    private static func socketAttribution(_ fd: Int32?, settings: Settings) -> (Attribution, DomainReference) {
        guard let fd, let tag = SocketTags.tag(of: fd) else { return (settings.attribution, DomainReference()) }
        return (tag.attribution ?? settings.attribution, tag.domains)
    }

    /// Asks lnp-run, and keeps a final answer for the rest of this process.
    @inline(never)
    private static func ask(
        _ settings: Settings, operation: Operation, transport: Transport?, endpoint: SocketEndpoint?,
        name: UnsafeBufferPointer<UInt8>, reason: LocalReason
    ) -> Answer {
        let request = AskRequest(
            mode: settings.asking, operation: operation, transport: transport, endpoint: endpoint, name: name,
            via: AskRequest.interface(of: reason), usage: AskRequest.usageDescription())
        let answer = request.send(to: settings.runPID)
        Answers.keep(answer)
        return answer
    }

    /// Records the operation, in a static buffer if one is free, else on the stack.
    @inline(never)
    private static func record(
        _ operation: Operation, fd: Int32?, transport: Transport?, endpoint: SocketEndpoint?,
        name: UnsafeBufferPointer<UInt8>, verdict: Verdict, attribution: Attribution, domains: DomainReference,
        answer: Answer, settings: Settings
    ) {
        var record = AuditRecord(
            time: Timestamp(seconds: 0, microseconds: 0), pid: Sys.getpid(), program: settings.program,
            executable: UnsafeBufferPointer(start: nil, count: 0), operation: operation, fd: fd, transport: transport,
            endpoint: endpoint, host: name, domains: UnsafeBufferPointer(start: nil, count: 0), verdict: verdict,
            scopeName: InterfaceName(), decision: answer.decision, basis: answer.basis, attribution: attribution)
        if let buffer = RecordBuffers.claim() {
            defer { RecordBuffers.release(buffer) }
            complete(&record, domains: domains, to: settings.runPID,
                     in: RecordBuffers.Regions(RecordBuffers.memory(buffer), budgets: .standard))
        } else {
            recordOnStack(&record, domains: domains, to: settings.runPID)
        }
    }

    @inline(never)
    private static func recordOnStack(_ record: inout AuditRecord, domains: DomainReference, to runPID: Int32) {
        var memory = InlineArray<1536, UInt8>(repeating: 0)
        withUnsafeMutableBytes(of: &memory) { raw in
            record.budgets = .small
            complete(&record, domains: domains, to: runPID, in: RecordBuffers.Regions(raw, budgets: .small))
        }
    }

    /// Fills in what takes reading (time, exe, domains, names) and sends the record.
    private static func complete(
        _ record: inout AuditRecord, domains: DomainReference, to runPID: Int32, in regions: RecordBuffers.Regions
    ) {
        record.time = Clock.now()
        if let count = ExecutablePath.copy(into: regions.executable) {
            record.executable = UnsafeBufferPointer(start: regions.executable.baseAddress!.assumingMemoryBound(to: UInt8.self), count: count)
        }
        let domainLength = DomainStore.load(domains, into: regions.domains)?.length ?? 0
        let domainList = UnsafeBufferPointer(start: regions.domains.baseAddress!.assumingMemoryBound(to: UInt8.self), count: domainLength)
        record.domains = domainList
        // The host: the name resolved, else the first domain the program gave, else the name
        // the program last resolved to this address.
        if record.host.isEmpty && domainLength > 0 {
            record.host = UnsafeBufferPointer(start: domainList.baseAddress, count: CString.length(domainList.baseAddress!, limit: domainLength))
        }
        if record.host.isEmpty, let endpoint = record.endpoint {
            let length = ResolvedNames.name(for: endpoint.address, into: regions.name)
            record.host = UnsafeBufferPointer(start: regions.name.baseAddress!.assumingMemoryBound(to: UInt8.self), count: length)
        }
        if case .local(.linkLocal(let scope)) = record.verdict, scope != 0 {
            record.scopeName = InterfaceLookup.name(of: scope)
        }
        withUnsafePointer(to: &record) { AuditLog.send($0, to: runPID, in: regions.line) }
    }
}

/// A socket as the kernel describes it: its family (SO_DOMAIN) and transport (SO_TYPE,
/// SO_PROTOCOL).
public struct SocketKind {
    public var domain: Int32
    public var transport: Transport
    /// SO_PROTOCOL (IPPROTO_RAW: a raw socket that writes its own IP header).
    public var protocolNumber: Int32 = 0

    /// nil when `fd` is not a socket: the caller then leaves the call to the kernel, which
    /// answers with its own ENOTSOCK or EBADF.
    public static func of(_ fd: Int32) -> SocketKind? {
        guard case .success(let type) = Sys.socketOption(fd, Int32(LNP_SO_TYPE)) else { return nil }
        let proto: Int32
        if case .success(let value) = Sys.socketOption(fd, Int32(LNP_SO_PROTOCOL)) { proto = value } else { proto = 0 }
        let domain: Int32
        if case .success(let value) = Sys.socketOption(fd, Int32(LNP_SO_DOMAIN)) { domain = value } else { domain = 0 }
        return SocketKind(domain: domain, transport: transport(type: type, protocol: proto), protocolNumber: proto)
    }

    static func transport(type: Int32, protocol proto: Int32) -> Transport {
        switch type {
        case Int32(LNP_SOCK_STREAM):
            if proto == Int32(LNP_IPPROTO_MPTCP) { return .mptcp }
            if proto == Int32(LNP_IPPROTO_SCTP) { return .sctp }
            return .tcp
        case Int32(LNP_SOCK_DGRAM):
            if proto == Int32(LNP_IPPROTO_UDPLITE) { return .udplite }
            if proto == Int32(LNP_IPPROTO_ICMP) || proto == Int32(LNP_IPPROTO_ICMPV6) { return .icmp }
            return .udp
        case Int32(LNP_SOCK_RAW): return .raw
        case Int32(LNP_SOCK_SEQPACKET): return proto == Int32(LNP_IPPROTO_SCTP) ? .sctp : .other
        default: return .other
        }
    }

    /// Whether the kernel will take a destination written in `sockaddrFamily` on this socket
    /// at all. When it will not, lnp stays out of the way so the program gets the kernel's
    /// own error (EAFNOSUPPORT, EINVAL), not a denial.
    public func accepts(_ sockaddrFamily: UInt16) -> Bool {
        switch (domain, Int32(sockaddrFamily)) {
        case (Int32(LNP_AF_INET), Int32(LNP_AF_INET)), (Int32(LNP_AF_INET6), Int32(LNP_AF_INET6)): return true
        // IPv4 destinations on a dual-stack UDP socket.
        case (Int32(LNP_AF_INET6), Int32(LNP_AF_INET)): return transport == .udp || transport == .udplite
        // AF_UNSPEC destinations come from `SocketEndpoint.parseUnspecified`, already checked.
        case (_, Int32(LNP_AF_UNSPEC)): return true
        default: return false
        }
    }
}

/// Interface names by index, for a link-local destination's scope.
public enum InterfaceLookup {
    public static func name(of index: UInt32) -> InterfaceName {
        guard case .success(let socket) = NetlinkSocket.open() else { return InterfaceName() }
        defer { Sys.close(socket) }
        return InterfaceFacts.read(index: index, through: socket)?.name ?? InterfaceName()
    }
}

import LNPSys

/// The classifier of a live process: the kernel's routes, the system's exemptions.
typealias LiveClassifier = Classifier<KernelRoutes, LiveExemptions>

extension Classifier where Routes == KernelRoutes, Exemptions == LiveExemptions {
    @inline(__always) static var live: LiveClassifier { LiveClassifier(routes: KernelRoutes(), exemptions: LiveExemptions()) }
}

/// What lnp does with an operation once it knows the operation is local: decide, record,
/// and tell the hook whether to go on.
enum Gate {
    /// Returns 0 to let the call through, or the errno it must fail with.
    @inline(never)
    static func decide(
        _ operation: Operation, fd: Int32?, transport: Transport?, endpoint: SocketEndpoint?,
        name: UnsafeBufferPointer<UInt8> = UnsafeBufferPointer(start: nil, count: 0), reason: LocalReason
    ) -> Int32 {
        let settings = SettingsStore.current()
        var attribution = settings.attribution
        var domains = DomainReference()
        if let fd, let tag = SocketTags.tag(of: fd) {
            if let explicit = tag.attribution { attribution = explicit }
            domains = tag.domains
        }
        if let path = settings.auditPath {
            record(
                operation, fd: fd, transport: transport, endpoint: endpoint, name: name, reason: reason,
                decision: settings.decision, attribution: attribution, domains: domains, settings: settings, path: path)
        }
        return settings.decision == .allow ? 0 : settings.errno
    }

    private static func record(
        _ operation: Operation, fd: Int32?, transport: Transport?, endpoint: SocketEndpoint?,
        name: UnsafeBufferPointer<UInt8>, reason: LocalReason, decision: Decision, attribution: Attribution,
        domains: DomainReference, settings: Settings, path: UnsafePointer<UInt8>
    ) {
        var seconds: Int64 = 0
        var microseconds: Int32 = 0
        lnp_sys_realtime(&seconds, &microseconds)
        var executable = InlineArray<1024, UInt8>(repeating: 0)
        var domainBytes = InlineArray<1008, UInt8>(repeating: 0)
        var resolved = InlineArray<256, UInt8>(repeating: 0)
        withUnsafeMutableBytes(of: &executable) { executableRaw in
            withUnsafeMutableBytes(of: &domainBytes) { domainRaw in
                withUnsafeMutableBytes(of: &resolved) { resolvedRaw in
                    let executableLength: Int
                    if case .success(let count) = Sys.readlink("/proc/self/exe", into: executableRaw) {
                        executableLength = count
                    } else {
                        executableLength = 0
                    }
                    let domainLength = DomainStore.load(domains, into: domainRaw)?.length ?? 0
                    let domainList = UnsafeBufferPointer(
                        start: domainRaw.baseAddress!.assumingMemoryBound(to: UInt8.self), count: domainLength)
                    // The host: the name resolved, else the first domain the program gave,
                    // else the name the program last resolved to this address.
                    var host = name
                    if host.isEmpty && domainLength > 0 {
                        host = UnsafeBufferPointer(start: domainList.baseAddress, count: CString.length(domainList.baseAddress!, limit: domainLength))
                    }
                    if host.isEmpty, let endpoint {
                        let length = ResolvedNames.name(for: endpoint.address, into: resolvedRaw)
                        host = UnsafeBufferPointer(start: resolvedRaw.baseAddress!.assumingMemoryBound(to: UInt8.self), count: length)
                    }
                    var scopeName = InterfaceName()
                    if case .linkLocal(let scope) = reason, scope != 0 {
                        scopeName = InterfaceLookup.name(of: scope)
                    }
                    let record = AuditRecord(
                        time: Timestamp(seconds: seconds, microseconds: microseconds), pid: Sys.getpid(),
                        program: settings.program,
                        executable: UnsafeBufferPointer(
                            start: executableRaw.baseAddress!.assumingMemoryBound(to: UInt8.self), count: executableLength),
                        operation: operation, fd: fd, transport: transport, endpoint: endpoint, host: host,
                        domains: domainList, reason: reason, scopeName: scopeName, decision: decision,
                        attribution: attribution)
                    AuditLog.append(record, to: path)
                }
            }
        }
    }
}

/// A socket's transport, asked of the kernel.
enum SocketKind {
    /// nil when `fd` is not a socket: the caller then leaves the call to the kernel, which
    /// answers with its own ENOTSOCK or EBADF.
    static func transport(of fd: Int32) -> Transport? {
        guard case .success(let type) = Sys.socketOption(fd, Int32(LNP_SO_TYPE)) else { return nil }
        let proto: Int32
        if case .success(let value) = Sys.socketOption(fd, Int32(LNP_SO_PROTOCOL)) { proto = value } else { proto = 0 }
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
}

/// Interface names by index, for a link-local destination's scope.
enum InterfaceLookup {
    static func name(of index: UInt32) -> InterfaceName {
        guard case .success(let opened) = Sys.call(
            Int(LNP_SYS_SOCKET), Int(LNP_AF_NETLINK), Int(LNP_SOCK_RAW | LNP_SOCK_CLOEXEC), Int(LNP_NETLINK_ROUTE))
        else { return InterfaceName() }
        let socket = Int32(truncatingIfNeeded: opened)
        defer { Sys.close(socket) }
        return InterfaceFacts.read(index: index, through: socket)?.name ?? InterfaceName()
    }
}

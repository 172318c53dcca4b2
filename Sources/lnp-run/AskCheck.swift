import LNPCoreHost
import LNPTools

#if canImport(Glibc)
import Glibc
#endif

/// lnp-run's own look at what an ask reports: whether it is a local-network operation here,
/// and why, in the audit's words — by the same classifier the preload uses, against the
/// kernel's routes now. An ask lnp-run does not find local (or whose fields do not fit
/// together) is denied without asking anyone: a process cannot get the person's answer for
/// the whole program by asking about something else.
enum AskCheck {
    enum Outcome: Equatable {
        /// Local, and why (`reason` in `lnp check`'s words).
        case local(reason: String)
        case refused(because: String)
    }

    static func check(_ ask: ReceivedAsk) -> Outcome {
        guard let verdict = verdict(of: ask) else { return .refused(because: "the ask does not describe an operation") }
        let scope = ask.endpoint.flatMap { $0.scopeID == 0 ? nil : VerdictText.interfaceName($0.scopeID) }
        let reason = VerdictText.reason(verdict, scopeName: scope)
        return verdict.isLocal ? .local(reason: reason) : .refused(because: "not a local-network operation here (\(reason))")
    }

    /// nil when the fields do not make an operation lnp gates.
    static func verdict(of ask: ReceivedAsk) -> Verdict? {
        var outputInterface: UInt32 = 0
        if let via = ask.via {
            outputInterface = if_nametoindex(via)
            guard outputInterface != 0 else { return nil }
        }
        let classifier = Classifier(routes: KernelRoutes(outputInterface: outputInterface), exemptions: NoExemptions())
        switch ask.operation {
        case .socket:
            guard ask.transport == .packet, ask.endpoint == nil, ask.name == nil else { return nil }
            return .local(.packetSocket)
        case .resolve:
            guard let name = ask.name else { return nil }
            if let server = ask.endpoint { return classifier.classify(server) }
            return Array(name.utf8).withUnsafeBufferPointer { bytes in
                if LocalName.isLocal(bytes) { return .local(.localName) }
                // An address's name, asked of the mDNS daemon (the C library looks no literal up).
                if IPAddress.parse(bytes) != nil || LocalName.isReverse(bytes) { return .local(.bonjour) }
                return .notLocal(.notLocalName)
            }
        case .join:
            guard let group = ask.endpoint, ask.transport != nil else { return nil }
            return group.address.isMulticast ? .local(.multicast) : nil
        case .bind:
            guard let endpoint = ask.endpoint, ask.transport != nil else { return nil }
            return classifier.classifyBind(endpoint)
        case .browse, .resolveService, .register:
            // Asked of the mDNS daemon through a library: each is a local-network operation.
            guard ask.name != nil, ask.endpoint == nil, ask.transport == nil else { return nil }
            return .local(.bonjour)
        case .connect, .sendto, .sendmsg, .sendmmsg:
            guard let endpoint = ask.endpoint, ask.transport != nil else { return nil }
            return classifier.classify(endpoint)
        }
    }
}

/// The process that asks, as the kernel knows it: the one at the other end of the
/// connection (SO_PEERCRED), and the executable its /proc entry links to.
struct Asker: Equatable {
    var pid: Int32
    var executable: String

    init(pid: Int32, executable: String) {
        self.pid = pid
        self.executable = executable
    }

    init(pid: Int32) {
        self.init(pid: pid, executable: Self.executable(of: pid) ?? "(gone)")
    }

    static func executable(of pid: Int32) -> String? {
        ProcFiles.executable(of: pid).map { String(decoding: $0, as: UTF8.self) }
    }
}

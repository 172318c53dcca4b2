import LNPSys

/// lnp-run's answer to "may this program use the local network?": the decision, why, and
/// whether it stands for the rest of the process's life (the person answered) or for this
/// operation only (denied while asking, no terminal, no answer in time). lnp-run writes it
/// (`wire`), the preload reads it (`parse`).
public struct Answer: Equatable, Sendable {
    public var decision: Decision
    public var basis: DecisionBasis
    public var isFinal: Bool

    public init(decision: Decision, basis: DecisionBasis, isFinal: Bool) {
        self.decision = decision
        self.basis = basis
        self.isFinal = isFinal
    }

    public static var unreachable: Answer { Answer(decision: .deny, basis: .noSupervisor, isFinal: false) }

    /// The three bytes of the reply: `a` or `d`, the basis's raw value as a letter (`A` is
    /// 0), `1` if final.
    public var wire: (UInt8, UInt8, UInt8) {
        (decision == .allow ? UInt8(ascii: "a") : UInt8(ascii: "d"), UInt8(ascii: "A") + basis.rawValue,
         isFinal ? UInt8(ascii: "1") : UInt8(ascii: "0"))
    }

    public static func parse(_ reply: UnsafeRawBufferPointer) -> Answer? {
        guard reply.count == 3, let basis = DecisionBasis(rawValue: reply[1] &- UInt8(ascii: "A")) else { return nil }
        let decision: Decision
        switch reply[0] {
        case UInt8(ascii: "a"): decision = .allow
        case UInt8(ascii: "d"): decision = .deny
        default: return nil
        }
        return Answer(decision: decision, basis: basis, isFinal: reply[2] == UInt8(ascii: "1"))
    }
}

/// The final answer this process has, in settings word 5 (0: none yet), so that it asks
/// once. A forked child inherits it, being the same program; an exec'd one asks again,
/// and lnp-run answers at once.
enum Answers {
    static func known() -> Answer? {
        let word = SharedWords(lnp_storage_settings()).load(5)
        guard word & 1 != 0, let decision = Decision(rawValue: UInt8(truncatingIfNeeded: word >> 8)),
            let basis = DecisionBasis(rawValue: UInt8(truncatingIfNeeded: word >> 16))
        else { return nil }
        return Answer(decision: decision, basis: basis, isFinal: true)
    }

    static func keep(_ answer: Answer) {
        guard answer.isFinal else { return }
        SharedWords(lnp_storage_settings()).store(5, 1 | UInt64(answer.decision.rawValue) << 8 | UInt64(answer.basis.rawValue) << 16)
    }
}

/// What the process asks lnp-run about, as fields lnp-run can check — it shows the
/// operation as this process's report, and works out for itself why it is local:
///
///     hold
///     connect tcp 10.77.0.2 80 eth1 -
///     The usage description, if the process has LNP_USAGE_DESCRIPTION set.
///
/// The first line is `hold` (wait for the answer) or `now` (deny while asking); lnp-run
/// knows who asks from the kernel. The second: the operation, the transport, the address
/// (`%` and the interface index when scoped), the port, the interface the route leaves by,
/// then the name (the rest of the line); `-` for each that does not apply.
public struct AskRequest {
    static let capacity = 1024
    /// The most bytes of a usage description and of a name an ask carries.
    public static let usageBudget = 400
    public static let nameBudget = 300

    var mode: AskMode
    var operation: Operation
    var transport: Transport?
    var endpoint: SocketEndpoint?
    var name: UnsafeBufferPointer<UInt8>
    /// The interface the operation leaves by, as the process's route named it: lnp-run asks
    /// for the route through the same one (a socket may force it).
    var via: InterfaceName
    var usage: UnsafeBufferPointer<UInt8>

    /// The interface a reason names, if any.
    static func interface(of reason: LocalReason) -> InterfaceName {
        switch reason {
        case .onLink(_, _, let interface), .subnetBroadcast(let interface): return interface
        default: return InterfaceName()
        }
    }

    /// Asks lnp-run `pid` (`RunChannel`): while holding, the reply comes when the person has
    /// answered; lnp-run gives up after its prompt timeout, and one that is gone closes the
    /// connection — both end the wait.
    func send(to pid: Int32) -> Answer {
        var memory = InlineArray<1024, UInt8>(repeating: 0)
        var reply = InlineArray<4, UInt8>(repeating: 0)
        return withUnsafeMutableBytes(of: &memory) { raw in
            var writer = ByteWriter(raw)
            write(to: &writer)
            let request = UnsafeRawBufferPointer(start: raw.baseAddress, count: writer.count)
            return withUnsafeMutableBytes(of: &reply) { bytes in
                guard let count = RunChannel.request(request, to: pid, reply: bytes, answeredAtOnce: false) else {
                    return .unreachable
                }
                return Answer.parse(UnsafeRawBufferPointer(rebasing: bytes[0..<count])) ?? .unreachable
            }
        }
    }

    func write(to w: inout ByteWriter) {
        w.append(mode == .denyingWhileAsking ? "now\n" : "hold\n")
        operation.write(to: &w)
        w.append(UInt8(ascii: " "))
        if let transport { transport.write(to: &w) } else { w.append(UInt8(ascii: "-")) }
        w.append(UInt8(ascii: " "))
        if let endpoint {
            endpoint.address.write(to: &w)
            if endpoint.scopeID != 0 {
                w.append(UInt8(ascii: "%"))
                w.appendDecimal(UInt64(endpoint.scopeID))
            }
            w.append(UInt8(ascii: " "))
            if operation.hasPort(on: transport) { w.appendDecimal(UInt64(endpoint.port)) } else { w.append(UInt8(ascii: "-")) }
        } else {
            w.append("- -")
        }
        w.append(UInt8(ascii: " "))
        if via.isEmpty { w.append(UInt8(ascii: "-")) } else { via.write(to: &w) }
        w.append(UInt8(ascii: " "))
        if name.isEmpty { w.append(UInt8(ascii: "-")) } else { appendLine(name, budget: AskRequest.nameBudget, to: &w) }
        w.append(UInt8(ascii: "\n"))
        appendLine(usage, budget: AskRequest.usageBudget, to: &w)
    }

    /// Bytes on one line: control characters (a newline among them) become spaces.
    private func appendLine(_ bytes: UnsafeBufferPointer<UInt8>, budget: Int, to w: inout ByteWriter) {
        for byte in bytes.prefix(budget) { w.append(byte < 0x20 || byte == 0x7f ? UInt8(ascii: " ") : byte) }
    }

    /// The process's own usage description, read from its environment now: a program may
    /// set it itself before its first local-network operation.
    static func usageDescription() -> UnsafeBufferPointer<UInt8> {
        var usage = UnsafeBufferPointer<UInt8>(start: nil, count: 0)
        Environment.forEachEntry { entry in
            if Environment.mayBeLNP(entry), let value = Environment.value(of: entry, ifNamed: "LNP_USAGE_DESCRIPTION") {
                usage = value
            }
        }
        return usage
    }
}

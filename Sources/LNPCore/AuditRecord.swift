/// The operations lnp gates, as the audit names them.
public enum Operation: UInt8, BitwiseCopyable {
    case connect, sendto, sendmsg, sendmmsg, join, bind, resolve
    /// Opening a packet socket, which talks to the link directly.
    case socket
    /// Bonjour through the system's mDNS daemon: browsing for services, resolving one,
    /// advertising one (`Bonjour.swift`).
    case browse, resolveService, register

    /// The audit's word for it (`op`), which asks use too.
    public var word: StaticString {
        switch self {
        case .connect: return "connect"
        case .sendto: return "sendto"
        case .sendmsg: return "sendmsg"
        case .sendmmsg: return "sendmmsg"
        case .join: return "join"
        case .bind: return "bind"
        case .resolve: return "resolve"
        case .socket: return "socket"
        case .browse: return "browse"
        case .resolveService: return "resolve-service"
        case .register: return "register"
        }
    }

    func write(to writer: inout ByteWriter) { writer.append(word) }

    /// Asked of the mDNS daemon, not of a socket: no descriptor, transport or address.
    public var isBonjour: Bool { self == .browse || self == .resolveService || self == .register }

    /// A system call on a socket, which the supervisor sees too (not a name resolved, nor a
    /// Bonjour operation, which only the preload sees).
    public var isSocketCall: Bool { self != .resolve && !isBonjour }

    /// Whether a destination's port means anything for this operation on this transport: not
    /// for a group joined, nor on raw and ICMP sockets, whose `sockaddr` port the kernel
    /// ignores (or reads as the protocol).
    public func hasPort(on transport: Transport?) -> Bool {
        self != .join && !isBonjour && transport != .raw && transport != .icmp
    }
}

/// A socket's transport, from SO_TYPE and SO_PROTOCOL.
public enum Transport: UInt8, BitwiseCopyable {
    case tcp, udp, udplite, mptcp, sctp, icmp, raw, packet, other

    public var isStream: Bool { self == .tcp || self == .mptcp }

    /// The audit's word for it (`transport`), which asks use too.
    public var word: StaticString {
        switch self {
        case .tcp: return "tcp"
        case .udp: return "udp"
        case .udplite: return "udplite"
        case .mptcp: return "mptcp"
        case .sctp: return "sctp"
        case .icmp: return "icmp"
        case .raw: return "raw"
        case .packet: return "packet"
        case .other: return "other"
        }
    }

    func write(to writer: inout ByteWriter) { writer.append(word) }
}

/// One gated operation, as one line of JSON in the audit file:
///
///     {"time":"…","pid":…,"program":"…","exe":"…","op":"connect","fd":3,"transport":"tcp",
///      "address":"10.77.0.2","port":80,"host":null,"domains":[],"reason":"on-link 10.77.0.0/24 via eth1",
///      "decision":"deny","because":"remembered","attribution":"app","local":true}
///
/// Fields that do not apply (a resolve has no socket) are null. Variable fields have budgets
/// that keep the whole line within its buffer, so it is always one valid JSON object.
public struct AuditRecord {
    /// How many bytes each variable field may take, JSON escapes included.
    public struct Budgets: Sendable {
        public var path: Int
        public var host: Int
        public var domains: Int

        /// Program and exe 1,024 each, host 300, domains 1,000: at most 3,800 bytes in all.
        public static var standard: Budgets { Budgets(path: 1024, host: 300, domains: 1000) }
        /// For the rare record made with a small buffer on the stack: at most 910 bytes.
        public static var small: Budgets { Budgets(path: 128, host: 64, domains: 128) }

        /// The longest line these budgets allow; what the fixed fields take comes first.
        public var lineCapacity: Int { 480 + 2 * path + host + domains }
    }

    public var time: Timestamp
    public var pid: Int32
    public var program: UnsafeBufferPointer<UInt8>
    public var executable: UnsafeBufferPointer<UInt8>
    public var operation: Operation
    public var fd: Int32?
    public var transport: Transport?
    public var endpoint: SocketEndpoint?
    public var host: UnsafeBufferPointer<UInt8>
    /// NUL-separated, as the domain store keeps them.
    public var domains: UnsafeBufferPointer<UInt8>
    /// Local, with why (most records), or not local (only when all activity is recorded).
    public var verdict: Verdict
    public var scopeName: InterfaceName
    public var decision: Decision
    public var basis: DecisionBasis
    public var attribution: Attribution
    public var budgets = Budgets.standard

    public init(
        time: Timestamp, pid: Int32, program: UnsafeBufferPointer<UInt8>, executable: UnsafeBufferPointer<UInt8>,
        operation: Operation, fd: Int32?, transport: Transport?, endpoint: SocketEndpoint?, host: UnsafeBufferPointer<UInt8>,
        domains: UnsafeBufferPointer<UInt8>, verdict: Verdict, scopeName: InterfaceName, decision: Decision,
        basis: DecisionBasis, attribution: Attribution
    ) {
        self.time = time
        self.pid = pid
        self.program = program
        self.executable = executable
        self.operation = operation
        self.fd = fd
        self.transport = transport
        self.endpoint = endpoint
        self.host = host
        self.domains = domains
        self.verdict = verdict
        self.scopeName = scopeName
        self.decision = decision
        self.basis = basis
        self.attribution = attribution
    }
}

import LNPSys

/// Where a socket call's local-network operation is decided and recorded. The rules —
/// which calls are operations, on which destination, through which interface (`Decisions`,
/// the classifier) — are the same wherever a call is seen; the gate is what differs: in the
/// program's own process (`ProcessGate`, the preload), or in lnp-run for a call the kernel
/// notified (the supervisor), which reaches the socket through its own copy of the
/// descriptor.
public protocol CallGate {
    associatedtype Exemptions: ExemptionSource

    /// The classifier for traffic forced out of `outputInterface` (0: wherever the route goes).
    func classifier(leaving outputInterface: UInt32) -> Classifier<KernelRoutes, Exemptions>
    /// Whether a socket may have its output interface forced (SO_BINDTODEVICE and the like),
    /// so that it is worth asking the socket.
    var mayForceEgress: Bool { get }
    /// A call forces a socket's output interface.
    func noteForcedEgress()
    /// The interface `fd` forces its traffic out of, or 0 (asked only when `mayForceEgress`).
    func forcedInterface(of fd: Int32) -> UInt32
    /// Whether a socket may write its own IP header (a raw socket), so that it is worth asking.
    var mayWriteHeaders: Bool { get }
    /// Whether every operation goes on, unasked and unrecorded (everything allowed, no
    /// audit): then nothing about a call is worth learning — not its route, nor its socket.
    var passesEveryOperation: Bool { get }

    /// Decides a local operation: 0 to go on, or the errno to fail with. Records it.
    func decide(
        _ operation: Operation, fd: Int32?, transport: Transport?, endpoint: SocketEndpoint?,
        name: UnsafeBufferPointer<UInt8>, reason: LocalReason) -> Int32
    /// Whether operations that are not local are recorded too (lnp-run --audit-all).
    var recordsAllActivity: Bool { get }
    /// Records an operation that does not reach the local network (`NetworkActivity`).
    func recordActivity(_ operation: Operation, fd: Int32, transport: Transport, endpoint: SocketEndpoint, reason: NotLocalReason)
}

extension CallGate {
    public var passesEveryOperation: Bool { false }

    /// For a call on `fd`: through the interface the message forces, else the one the socket
    /// forces, else wherever the route goes.
    @inline(__always)
    func classifier(on fd: Int32, messageInterface: UInt32 = 0) -> Classifier<KernelRoutes, Exemptions> {
        if messageInterface != 0 { return classifier(leaving: messageInterface) }
        guard mayForceEgress else { return classifier(leaving: 0) }
        return classifier(leaving: forcedInterface(of: fd))
    }

    func forcedInterface(of fd: Int32) -> UInt32 { SocketEgress.forcedInterface(fd) }

    @inline(__always)
    func decide(_ operation: Operation, fd: Int32?, transport: Transport?, endpoint: SocketEndpoint?, reason: LocalReason) -> Int32 {
        decide(operation, fd: fd, transport: transport, endpoint: endpoint, name: UnsafeBufferPointer(start: nil, count: 0), reason: reason)
    }
}

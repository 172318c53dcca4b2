import LNPSys

/// Each socket call's decision, on lnp's copy of what it points to: 0 to go on, or the errno
/// to fail with. The classifier is the one for the way the call leaves: through the interface
/// the message or the socket forces, if any (`CallGate.classifier(on:)`). The same rules
/// for the preload and the supervisor; `gate` is where each is decided and recorded.
public struct Decisions<Gate: CallGate> {
    public let gate: Gate
    typealias Classifying = Classifier<KernelRoutes, Gate.Exemptions>

    public init(gate: Gate) { self.gate = gate }

    public func connect(_ fd: Int32, _ address: UnsafeMutableRawPointer?, _ length: UInt32) -> Int32 {
        if gate.passesEveryOperation { return 0 }
        guard let endpoint = SocketEndpoint.parse(UnsafeRawPointer(address), length: Int(length)) else { return 0 }
        let copy = AddressCopy(bytes: address!, length: Int(length))
        let classifier = gate.classifier(on: fd)
        if gate.mayWriteHeaders, let socket = SocketKind.of(fd), SocketEgress.writesHeader(fd, socket) {
            guard socket.accepts(endpoint.sockaddrFamily) else { return copy.disarm() }
            return connectHeaderWriter(fd, socket, endpoint, classifier)
        }
        guard classifier.mayBeLocal(endpoint) else { return connectActivity(fd, endpoint, copy, classifier) }
        return connectLocal(fd, endpoint, copy, classifier)
    }

    /// A raw socket that writes its own IP headers, connected (or connected first and then
    /// writing headers): its `write`s and `send`s name no destination, and go where their
    /// headers say, which lnp does not see. So it is a local-network operation wherever it is
    /// connected to.
    @inline(never)
    func connectHeaderWriter(_ fd: Int32, _ socket: SocketKind, _ endpoint: SocketEndpoint, _ classifier: Classifying) -> Int32 {
        let verdict = classifier.classify(endpoint)
        let reason: LocalReason
        if case .local(let its) = verdict { reason = its } else { reason = .headerWriter }
        return gate.decide(.connect, fd: fd, transport: socket.transport, endpoint: endpoint, reason: reason)
    }

    /// `sendto`, `sendmsg` and each message of `sendmmsg`; `interface`: the one the message's
    /// control messages force; `firstHop`: the hop their source route sends to (decided
    /// first). A destination on a stream socket counts only with MSG_FASTOPEN (TCP Fast Open
    /// connects); otherwise the kernel ignores it.
    public func send(
        _ fd: Int32, _ address: UnsafeMutableRawPointer?, _ length: UInt32, _ flags: Int32, operation: Operation,
        interface: UInt32 = 0, firstHop hop: IPAddress? = nil
    ) -> Int32 {
        if gate.passesEveryOperation { return 0 }
        let classifier = gate.classifier(on: fd, messageInterface: interface)
        // (A stream socket's send takes no IP options of its own: TCP ignores them.)
        if let hop, !(SocketKind.of(fd)?.transport.isStream ?? false) {
            let denial = firstHop(fd, hop, operation: operation, classifier)
            if denial != 0 { return denial }
        }
        if let endpoint = SocketEndpoint.parse(UnsafeRawPointer(address), length: Int(length)) {
            let copy = AddressCopy(bytes: address!, length: Int(length))
            guard classifier.mayBeLocal(endpoint) else {
                return sendActivity(fd, endpoint, copy, flags, operation: operation, socket: nil, classifier)
            }
            return sendLocal(fd, endpoint, copy, flags, operation: operation, socket: nil, classifier)
        }
        guard let address else {
            // No destination: the socket's peer, whose connect was decided — unless this call
            // leaves through another interface than the route the connect was decided on.
            return classifier.routes.outputInterface != 0 ? sendToPeer(fd, flags, operation: operation, classifier) : 0
        }
        guard ProgramMemory.isPlausible(address), length >= 16, length <= UInt32(LNP_SOCKADDR_CAPACITY),
            address.loadUnaligned(as: UInt16.self) == UInt16(LNP_AF_UNSPEC)
        else { return 0 }
        return sendUnspecified(fd, AddressCopy(bytes: address, length: Int(length)), flags, operation: operation, classifier)
    }

    /// A destination in AF_UNSPEC, which UDP, UDP-Lite and raw IPv4 sockets read as IPv4 and
    /// raw IPv6 sockets as IPv6 (a zeroed sockaddr with only the address and port filled in is
    /// a common mistake, so it is gated too). What this socket reads is decided; the rest of
    /// the copy is zeroed, so that a socket that reads it otherwise, swapped in meanwhile,
    /// finds no destination there.
    func sendUnspecified(
        _ fd: Int32, _ copy: AddressCopy, _ flags: Int32, operation: Operation, _ classifier: Classifying
    ) -> Int32 {
        guard let socket = SocketKind.of(fd),
            let endpoint = SocketEndpoint.parseUnspecified(UnsafeRawPointer(copy.bytes), length: copy.length, socket: socket)
        else { return copy.disarm() }
        copy.keepOnly(endpoint.address.family)
        guard classifier.mayBeLocal(endpoint) else {
            return sendActivity(fd, endpoint, copy, flags, operation: operation, socket: socket, classifier)
        }
        return sendLocal(fd, endpoint, copy, flags, operation: operation, socket: socket, classifier)
    }

    /// A send without a destination, forced out of another interface than its connect's route.
    func sendToPeer(_ fd: Int32, _ flags: Int32, operation: Operation, _ classifier: Classifying) -> Int32 {
        guard let socket = SocketKind.of(fd), !socket.transport.isStream, let peer = SocketPeer.endpoint(fd, socket),
            case .local(let reason) = classifier.classify(peer)
        else { return 0 }
        return gate.decide(operation, fd: fd, transport: socket.transport, endpoint: peer, reason: reason)
    }

    @inline(never)
    func connectLocal(_ fd: Int32, _ endpoint: SocketEndpoint, _ copy: AddressCopy, _ classifier: Classifying)
        -> Int32
    {
        let verdict = classifier.classify(endpoint)
        guard case .local(let reason) = verdict else {
            return connectActivity(fd, endpoint, copy, classifier, verdict: verdict)
        }
        guard let socket = SocketKind.of(fd), socket.accepts(endpoint.sockaddrFamily) else { return copy.disarm() }
        if SocketPeer.isAlready(fd, socket, connectedTo: endpoint) { return 0 }
        return gate.decide(.connect, fd: fd, transport: socket.transport, endpoint: endpoint, reason: reason)
    }

    @inline(never)
    func sendLocal(
        _ fd: Int32, _ endpoint: SocketEndpoint, _ copy: AddressCopy, _ flags: Int32, operation: Operation,
        socket known: SocketKind?, _ classifier: Classifying
    ) -> Int32 {
        let verdict = classifier.classify(endpoint)
        guard case .local(let reason) = verdict else {
            return sendActivity(fd, endpoint, copy, flags, operation: operation, socket: known, classifier, verdict: verdict)
        }
        guard let socket = known ?? SocketKind.of(fd), socket.accepts(endpoint.sockaddrFamily) else { return copy.disarm() }
        if socket.transport.isStream && flags & Int32(LNP_MSG_FASTOPEN) == 0 { return copy.disarm() }
        return gate.decide(operation, fd: fd, transport: socket.transport, endpoint: endpoint, reason: reason)
    }

    /// bind: only to a multicast or broadcast address, which is how a socket receives that
    /// traffic (`Classifier.classifyBind`).
    public func bind(_ fd: Int32, _ address: UnsafeMutableRawPointer?, _ length: UInt32) -> Int32 {
        if gate.passesEveryOperation { return 0 }
        guard let endpoint = SocketEndpoint.parse(UnsafeRawPointer(address), length: Int(length)),
            case .local(let reason) = gate.classifier(leaving: 0).classifyBind(endpoint)
        else { return 0 }
        guard let socket = SocketKind.of(fd), socket.accepts(endpoint.sockaddrFamily) else {
            return AddressCopy(bytes: address!, length: Int(length)).disarm()
        }
        return gate.decide(.bind, fd: fd, transport: socket.transport, endpoint: endpoint, reason: reason)
    }

    /// setsockopt: joining a multicast group, in each of the forms it takes, and forcing the
    /// output interface. `value` is lnp's copy of the option's first `copied` bytes; for a
    /// join, `length` is lowered to what was copied (the kernel reads no more of these
    /// options than their structure), so the call can take the copy.
    public func socketOption(
        _ fd: Int32, _ level: Int32, _ name: Int32, _ value: UnsafeMutableRawPointer?, _ copied: UInt32, _ length: inout UInt32
    ) -> Int32 {
        if SocketEgress.forcesInterface(level: level, name: name) {
            return forceInterface(fd, name: name, value: UnsafeRawPointer(value), length: Int(copied))
        }
        if SocketEgress.writesHeaders(level: level, name: name) {
            // Writing headers from now on, on a socket already connected: decided as that connect.
            guard let value, SocketEgress.turnsOn(level: level, value: value, length: Int(copied)),
                let socket = SocketKind.of(fd), socket.transport == .raw
            else { return 0 }
            length = min(length, copied)
            switch RawSocketPeer.peer(fd, socket) {
            case .unconnected: return 0
            case .connected(let peer): return connectHeaderWriter(fd, socket, peer, gate.classifier(on: fd))
            case .unknown:
                // Its peer could not be learned: decided as a raw socket writing headers, fail closed.
                return gate.decide(.connect, fd: fd, transport: socket.transport, endpoint: nil, reason: .headerWriter)
            }
        }
        if SourceRoute.isRoute(level: level, name: name) {
            // The kernel reads the whole option: one longer than lnp's copy is not decided.
            guard copied == length else { return copied < length ? Int32(LNP_EINVAL) : 0 }
            guard let value, let hop = SourceRoute.firstHop(level: level, name: name, value: UnsafeRawBufferPointer(start: value, count: Int(copied)))
            else { return 0 }
            let stream = SocketKind.of(fd)?.transport.isStream ?? false
            return firstHop(fd, hop, operation: stream ? .connect : .sendto, gate.classifier(on: fd))
        }
        guard MulticastJoin.isJoin(level: level, name: name), copied > 0 else { return 0 }  // (unread: the kernel answers)
        length = min(length, copied)
        guard let group = MulticastJoin.group(level: level, name: name, value: UnsafeRawPointer(value), length: Int(copied)),
            group.address.isMulticast
        else { return 0 }
        guard let socket = SocketKind.of(fd) else {
            // No socket: the kernel answers EBADF or ENOTSOCK, from a copy that joins nothing.
            value!.initializeMemory(as: UInt8.self, repeating: 0, count: Int(copied))
            return 0
        }
        return gate.decide(.join, fd: fd, transport: socket.transport, endpoint: group, reason: .multicast)
    }

    /// The first hop of a source route, which the kernel sends to whatever the destination:
    /// decided as one.
    func firstHop(_ fd: Int32, _ hop: IPAddress, operation: Operation, _ classifier: Classifying) -> Int32 {
        let endpoint = SocketEndpoint(address: hop)
        guard case .local(let reason) = classifier.classify(endpoint), let socket = SocketKind.of(fd) else { return 0 }
        return gate.decide(operation, fd: fd, transport: socket.transport, endpoint: endpoint, reason: reason)
    }

    /// setsockopt forcing the output interface (SO_BINDTODEVICE, SO_BINDTOIFINDEX,
    /// IP(V6)_UNICAST_IF): noted, so that the process's calls are decided through it from now
    /// on; on a socket already associated with a peer, the option itself moves that
    /// association onto the interface, and is decided as a connect to the peer through it.
    func forceInterface(_ fd: Int32, name: Int32, value: UnsafeRawPointer?, length: Int) -> Int32 {
        gate.noteForcedEgress()
        guard let value, length > 0, let interface = SocketEgress.interface(forcedBy: name, value: value, length: length),
            let socket = SocketKind.of(fd), let peer = SocketPeer.endpoint(fd, socket),
            case .local(let reason) = gate.classifier(leaving: interface).classify(peer)
        else { return 0 }
        return gate.decide(.connect, fd: fd, transport: socket.transport, endpoint: peer, reason: reason)
    }
}

extension Decisions where Gate == ProcessGate {
    /// The preload's: decided in the program's own process.
    @inline(__always) static var process: Decisions<ProcessGate> { Decisions(gate: ProcessGate()) }
}

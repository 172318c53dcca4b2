import LNPSys

// Operations that do not reach the local network, recorded only when the audit covers all
// activity (lnp-run --audit-all): each connect, and the first datagram a socket sends to
// each destination. They are never gated, so each function returns 0: go on.
//
// Loopback and the unspecified address are not network activity and are never recorded;
// the hot path lets them through before it looks at the settings at all.
extension Decisions {
    /// `verdict` when the caller has one; otherwise it is worked out here. Never inlined:
    /// its frame would weigh on the local path's stack, which a signal handler on a small
    /// alternate stack may be running on.
    @inline(never)
    func connectActivity(
        _ fd: Int32, _ endpoint: SocketEndpoint, _ copy: AddressCopy, _ classifier: Classifying, verdict: Verdict? = nil
    ) -> Int32 {
        guard gate.recordsAllActivity else { return 0 }
        let verdict = verdict ?? classifier.classify(endpoint)
        // Local after all (its route changed a moment ago): gated like any local operation.
        if verdict.isLocal { return connectLocal(fd, endpoint, copy, classifier) }
        guard let reason = notLocalReason(verdict), let socket = SocketKind.of(fd), socket.accepts(endpoint.sockaddrFamily),
            !SocketPeer.isAlready(fd, socket, connectedTo: endpoint)
        else { return 0 }
        gate.recordActivity(.connect, fd: fd, transport: socket.transport, endpoint: endpoint, reason: reason)
        return 0
    }

    /// A datagram (or a TCP Fast Open connect) to `endpoint`.
    @inline(never)
    func sendActivity(
        _ fd: Int32, _ endpoint: SocketEndpoint, _ copy: AddressCopy, _ flags: Int32, operation: Operation,
        socket known: SocketKind?, _ classifier: Classifying, verdict: Verdict? = nil
    ) -> Int32 {
        guard gate.recordsAllActivity else { return 0 }
        let verdict = verdict ?? classifier.classify(endpoint)
        if verdict.isLocal {
            return sendLocal(fd, endpoint, copy, flags, operation: operation, socket: known, classifier)
        }
        guard let reason = notLocalReason(verdict), SentDestinations.isFirst(fd, to: endpoint),
            let socket = known ?? SocketKind.of(fd), socket.accepts(endpoint.sockaddrFamily)
        else { return 0 }
        // On a stream socket the kernel ignores the destination, unless it is a Fast Open connect.
        if socket.transport.isStream && flags & Int32(LNP_MSG_FASTOPEN) == 0 { return 0 }
        gate.recordActivity(operation, fd: fd, transport: socket.transport, endpoint: endpoint, reason: reason)
        return 0
    }

    /// Why the destination is not local; nil when it is not network activity at all
    /// (loopback, unspecified).
    private func notLocalReason(_ verdict: Verdict) -> NotLocalReason? {
        switch verdict {
        case .notLocal(.loopback), .notLocal(.unspecified), .local: return nil
        case .notLocal(let reason): return reason
        }
    }
}

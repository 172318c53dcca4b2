import LNPCoreHost
import LNPSys

#if canImport(Glibc)
import Glibc
#endif

/// Reads one notified call on an IP socket into lnp-run's own copies, decides it with the
/// core, and prepares the call to make with those copies. A failure carries the errno the
/// kernel would have given (or `SupervisorGate.waitsForAnswer`).
struct CallReader {
    let process: NotifiedProcess
    /// lnp-run's copy of the program's socket.
    let socket: Int32
    let kind: SocketKind
    let decisions: Decisions<SupervisorGate>
    /// The bytes of this send that went already, when it is made again (`ResumedSends`).
    var resumingAfter = 0

    private var isStream: Bool { kind.transport == .tcp || kind.transport == .mptcp || kind.transport == .sctp }
    private var isNonBlocking: Bool { fcntl(socket, F_GETFL) & O_NONBLOCK != 0 }

    private func blocking(flags: Int32 = 0) -> PreparedCall.Blocking {
        if flags & Int32(MSG_DONTWAIT) != 0 { return .never }
        // A datagram's socket is asked its flags only if the send would wait (`.rarely`).
        guard isStream else { return .rarely }
        return isNonBlocking ? .never : .may
    }

    private static func check(_ denial: Int32) -> Result<Void, CallFailure> {
        denial == 0 ? .success(()) : .failure(CallFailure(errno: denial))
    }

    // connect(fd, address, length)
    func connect(_ call: Notification) -> Result<PreparedCall, CallFailure> {
        NotifiedAddress.read(process, at: call.argument(1), length: call.argument(2)).flatMap { address in
            Self.check(decisions.connect(socket, address?.bytes.base, address?.length ?? 0)).map {
                let socket = self.socket
                // A stream connect goes to a worker whatever the socket's flags: another thread
                // of the program may clear O_NONBLOCK meanwhile, and lnp-run's loop must not wait.
                return PreparedCall(blocking: isStream ? .may : .never) { _ in
                    CallPerformer.result(Int(Glibc.connect(socket, address?.bytes.base.assumingMemoryBound(to: sockaddr.self), address?.length ?? 0)))
                }
            }
        }
    }

    // sendto(fd, data, length, flags, address, addressLength): notified only with an address.
    func sendto(_ call: Notification) -> Result<PreparedCall, CallFailure> {
        let flags = call.int32(3)
        let wanted = call.argument(2) > UInt64(CopyLimits.data) ? CopyLimits.data : Int(call.argument(2))
        let read = NotifiedAddress.read(process, at: call.argument(4), length: call.argument(5), data: call.argument(1), count: wanted)
        return read.flatMap { address, data in
            headerDestination(data, operation: .sendto).flatMap {
                Self.check(decisions.send(socket, address?.bytes.base, address?.length ?? 0, flags, operation: .sendto))
            }.map {
                let socket = self.socket
                let skip = min(resumingAfter, data.count)
                return PreparedCall(blocking: blocking(flags: flags), brokenPipe: brokenPipe(flags: flags)) { dontWait in
                    let result = Glibc.sendto(
                        socket, data.base + skip, data.count - skip, Self.ownFlags(flags, dontWait: dontWait),
                        address?.bytes.base.assumingMemoryBound(to: sockaddr.self), address?.length ?? 0)
                    return Self.resumed(CallPerformer.result(result), after: skip)
                }
            }
        }
    }

    // sendmsg(fd, message, flags)
    func sendmsg(_ call: Notification) -> Result<PreparedCall, CallFailure> {
        let flags = call.int32(2)
        return NotifiedMessage.read(process, at: call.argument(1)).flatMap { message in
            decide(message, flags: flags, operation: .sendmsg).map {
                let socket = self.socket
                let skip = min(resumingAfter, message.data.count)
                message.skip(skip)
                return PreparedCall(blocking: blocking(flags: flags), brokenPipe: brokenPipe(flags: flags)) { dontWait in
                    let result = Glibc.sendmsg(socket, message.header, Self.ownFlags(flags, dontWait: dontWait))
                    return Self.resumed(CallPerformer.result(result), after: skip)
                }
            }
        }
    }

    // sendmmsg(fd, messages, count, flags): each message decided; those before the first
    // denied one are sent, as the preload does.
    func sendmmsg(_ call: Notification) -> Result<PreparedCall, CallFailure> {
        let flags = call.int32(3)
        let vector = call.argument(1)
        let count = min(Int(UInt32(truncatingIfNeeded: call.argument(2))), CopyLimits.pieces)
        var messages: [NotifiedMessage] = []
        batch: for index in 0..<count {
            let entry = vector &+ UInt64(index * RawBatchEntry.size)
            let copied = process.read(entry, as: RawMessage.self).map { NotifiedMessage.read(process, $0) }
                ?? .failure(CallFailure(errno: EFAULT))
            switch copied.flatMap({ message in decide(message, flags: flags, operation: .sendmmsg).map { message } }) {
            case .success(let message): messages.append(message)
            // The first fails the call; a later one ends the batch before it.
            case .failure(let failure) where index == 0: return .failure(failure)
            case .failure: break batch
            }
        }
        let socket = self.socket
        return .success(PreparedCall(blocking: blocking(flags: flags), brokenPipe: brokenPipe(flags: flags)) { dontWait in
            var sent = 0
            for (index, message) in messages.enumerated() {
                let result = Glibc.sendmsg(socket, message.header, Self.ownFlags(flags, dontWait: dontWait))
                if result < 0 { return sent > 0 ? sent : -Int(errno) }
                let entry = vector &+ UInt64(index * RawBatchEntry.size + RawBatchEntry.sentLengthOffset)
                process.write(withUnsafeBytes(of: UInt32(truncatingIfNeeded: result)) { Array($0) }, to: entry)
                sent += 1
            }
            return sent
        })
    }

    // bind(fd, address, length)
    func bind(_ call: Notification) -> Result<PreparedCall, CallFailure> {
        NotifiedAddress.read(process, at: call.argument(1), length: call.argument(2)).flatMap { address in
            Self.check(decisions.bind(socket, address?.bytes.base, address?.length ?? 0)).map {
                let socket = self.socket
                return PreparedCall(blocking: .never) { _ in
                    CallPerformer.result(Int(Glibc.bind(socket, address?.bytes.base.assumingMemoryBound(to: sockaddr.self), address?.length ?? 0)))
                }
            }
        }
    }

    // setsockopt(fd, level, name, value, length): the joins, forced egress and source routes the filter notifies.
    func setsockopt(_ call: Notification) -> Result<PreparedCall, CallFailure> {
        let level = call.int32(1), name = call.int32(2)
        let requested = call.int32(4)
        guard requested >= 0 else { return .failure(CallFailure(errno: EINVAL)) }
        let copiedCount = min(Int(requested), CopyLimits.option)
        guard let value = process.read(call.argument(3), count: copiedCount) else { return .failure(CallFailure(errno: EFAULT)) }
        var length = UInt32(requested)
        return Self.check(decisions.socketOption(socket, level, name, copiedCount == 0 ? nil : value.base, UInt32(copiedCount), &length)).map {
            let socket = self.socket, length = min(length, UInt32(copiedCount))  // (the kernel reads no more of these)
            return PreparedCall(blocking: .never) { _ in
                CallPerformer.result(Int(Glibc.setsockopt(socket, level, name, value.base, length)))
            }
        }
    }

    /// A message's destinations: the IP header a raw socket writes itself, then its name
    /// through the interface its control messages force.
    private func decide(_ message: NotifiedMessage, flags: Int32, operation: Operation) -> Result<Void, CallFailure> {
        headerDestination(message.data, operation: operation).flatMap {
            Self.check(decisions.send(
                socket, message.name?.base, UInt32(message.name?.count ?? 0), flags, operation: operation,
                interface: lnp_control_interface(message.header), firstHop: SourceRoute.firstHop(of: message.header)))
        }
    }

    private func headerDestination(_ data: OwnedBytes, operation: Operation) -> Result<Void, CallFailure> {
        guard SocketEgress.writesHeader(socket, kind) else { return .success(()) }
        let header = UnsafeRawBufferPointer(start: data.base, count: min(data.count, Int(LNP_PACKET_HEADER_CAPACITY)))
        return Self.check(decisions.headerDestination(socket, kind, header: header, operation: operation))
    }

    /// A resumed send's answer: the bytes sent before, with this call's; only those, if this
    /// one failed (as a send that fails partway reports what it sent).
    private static func resumed(_ result: Int, after skipped: Int) -> Int {
        skipped == 0 ? result : result < 0 ? skipped : skipped + result
    }

    /// The flags lnp-run sends with: the program's, never raising SIGPIPE in lnp-run, and
    /// never MSG_ZEROCOPY (the kernel would read lnp-run's copy after it is freed).
    private static func ownFlags(_ flags: Int32, dontWait: Bool) -> Int32 {
        flags & ~Int32(MSG_ZEROCOPY) | Int32(MSG_NOSIGNAL) | (dontWait ? Int32(MSG_DONTWAIT) : 0)
    }

    /// A send on a broken stream raises SIGPIPE in the sending thread unless it said
    /// MSG_NOSIGNAL: the program's thread gets it, as from its own call.
    private func brokenPipe(flags: Int32) -> (() -> Void)? {
        guard flags & Int32(MSG_NOSIGNAL) == 0 else { return nil }
        let process = self.process
        return { process.signalThread(SIGPIPE) }
    }
}

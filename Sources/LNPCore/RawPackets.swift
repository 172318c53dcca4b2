import LNPSys

/// Raw sockets that write their own IP header (IPPROTO_RAW, IP_HDRINCL, IPV6_HDRINCL). The
/// kernel sends such a packet to the address in its header, so that address is decided too,
/// on lnp's copy of the header (`lnp_packet_copy`), and the call is made as a `sendmsg` that
/// hands the kernel that copy. Asked only in a process that opened a raw socket.
enum RawPackets {
    /// The socket, if `fd` is one that writes its own IP header.
    @inline(__always)
    static func headerWriter(_ fd: Int32) -> SocketKind? {
        guard ProcessGate().mayWriteHeaders, let socket = SocketKind.of(fd), SocketEgress.writesHeader(fd, socket)
        else { return nil }
        return socket
    }

    static func sendto(
        _ fd: Int32, _ socket: SocketKind, _ buffer: UnsafeRawPointer?, _ length: Int, _ flags: Int32,
        _ address: UnsafeMutableRawPointer?, _ addressLength: UInt32
    ) -> Int {
        var piece = iovec(iov_base: UnsafeMutableRawPointer(mutating: buffer), iov_len: length)
        return withUnsafeMutablePointer(to: &piece) { piece in
            var message = msghdr()
            message.msg_name = address
            message.msg_namelen = address == nil ? 0 : addressLength
            message.msg_iov = piece
            message.msg_iovlen = 1
            return withUnsafeMutablePointer(to: &message) { send(fd, socket, $0, flags, operation: .sendto) }
        }
    }

    static func sendmsg(_ fd: Int32, _ socket: SocketKind, _ message: UnsafeMutablePointer<msghdr>, _ flags: Int32) -> Int {
        send(fd, socket, message, flags, operation: .sendmsg)
    }

    /// Decides the header's destination and the message's, then sends the message with the
    /// header lnp read. A message whose data is in more buffers than the copy holds is decided
    /// on the header where it lies, and sent as it is.
    private static func send(
        _ fd: Int32, _ socket: SocketKind, _ message: UnsafeMutablePointer<msghdr>, _ flags: Int32, operation: Operation
    ) -> Int {
        var packet = lnp_packet_copy()
        return withUnsafeMutablePointer(to: &packet) { packet in
            let copied = lnp_copy_packet(packet, message) == 0
            let header = copied
                ? UnsafeRawBufferPointer(start: lnp_packet_header(packet), count: Int(packet.pointee.header_length))
                : firstPiece(message)
            guard let header else { return lnp_call_sendmsg(fd, message, flags) }  // unreadable data: the kernel answers
            var denial = Decisions.process.headerDestination(fd, socket, header: header, operation: operation)
            if denial == 0 {
                let name = MessageHeader(message)
                denial = name.map {
                    Decisions.process.send(fd, $0.name, $0.nameLength, flags, operation: operation, interface: $0.forcedInterface,
                        firstHop: $0.firstHop)
                } ?? 0
            }
            if denial != 0 { return lnp_fail(denial) }
            return lnp_call_sendmsg(fd, copied ? lnp_packet_message(packet) : message, flags)
        }
    }

    private static func firstPiece(_ message: UnsafeMutablePointer<msghdr>) -> UnsafeRawBufferPointer? {
        guard message.pointee.msg_iovlen > 0, let pieces = message.pointee.msg_iov, ProgramMemory.isPlausible(pieces),
            let base = pieces.pointee.iov_base, ProgramMemory.isPlausible(base)
        else { return nil }
        return UnsafeRawBufferPointer(start: base, count: min(pieces.pointee.iov_len, Int(LNP_PACKET_HEADER_CAPACITY)))
    }
}

extension Decisions {
    /// A packet's own IP header (a raw socket that writes it): its destination decided.
    public func headerDestination(_ fd: Int32, _ socket: SocketKind, header: UnsafeRawBufferPointer, operation: Operation) -> Int32 {
        guard let destination = SocketEgress.headerDestination(header) else { return 0 }
        let classifier = gate.classifier(on: fd)
        guard classifier.mayBeLocal(destination), case .local(let reason) = classifier.classify(destination) else { return 0 }
        return gate.decide(operation, fd: fd, transport: socket.transport, endpoint: destination, reason: reason)
    }
}

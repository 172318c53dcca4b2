import LNPSys

// The socket calls, for the hooks of CShim/hooks.
//
// The three hot calls, connect, sendto and sendmsg, come here whole. Their fast path makes
// no call before its last: it answers "certainly not local" from the address and the route
// cache (`HotPath`) and ends in a tail call of the next definition; anything else
// ends in a tail call of the slow path. So the program's arguments never leave their
// registers on the way through (docs/design.md). The slow path asks `Decisions`: the full
// "could this be local?" (reading the clock, asking the kernel on a cache miss), and only
// for a local call the classification, the socket's type and the gate.
//
// The other hooks ask a `lnp_gate_*` function (0: go on; otherwise the errno to fail with)
// and call the next definition themselves.

@_cdecl("lnp_core_start")
public func lnpCoreStart() {
    _ = SettingsStore.current()
}

@_cdecl("lnp_connect")
public func lnpConnect(_ fd: Int32, _ address: UnsafeRawPointer?, _ length: UInt32) -> Int {
    if HotPath.certainlyNotLocal(address, length) { return lnp_call_connect(fd, address, length) }
    return connectSlowPath(fd, address, length)
}

@_cdecl("lnp_sendto")
public func lnpSendto(
    _ fd: Int32, _ buffer: UnsafeRawPointer?, _ length: Int, _ flags: Int32, _ address: UnsafeRawPointer?,
    _ addressLength: UInt32
) -> Int {
    if HotPath.certainlyNotLocal(address, addressLength) {
        return lnp_call_sendto(fd, buffer, length, flags, address, addressLength)
    }
    return sendtoSlowPath(fd, buffer, length, flags, address, addressLength)
}

@_cdecl("lnp_sendmsg")
public func lnpSendmsg(_ fd: Int32, _ message: UnsafeRawPointer?, _ flags: Int32) -> Int {
    if let header = MessageHeader(message), !HotPath.certainlyNotLocal(header.name, header.nameLength) {
        return sendmsgSlowPath(fd, message, flags)
    }
    return lnp_call_sendmsg(fd, message, flags)
}

// The slow paths take exactly the C call's arguments and are free functions (a static one
// would take its type in a register the C ABI preserves), so the call to them is a tail call.

@inline(never)
func connectSlowPath(_ fd: Int32, _ address: UnsafeRawPointer?, _ length: UInt32) -> Int {
    let denial = Decisions.connect(fd, address, length)
    if denial != 0 { return lnp_fail(denial) }
    return lnp_call_connect(fd, address, length)
}

@inline(never)
func sendtoSlowPath(
    _ fd: Int32, _ buffer: UnsafeRawPointer?, _ length: Int, _ flags: Int32, _ address: UnsafeRawPointer?,
    _ addressLength: UInt32
) -> Int {
    let denial = Decisions.send(fd, address, addressLength, flags, operation: .sendto)
    if denial != 0 { return lnp_fail(denial) }
    return lnp_call_sendto(fd, buffer, length, flags, address, addressLength)
}

@inline(never)
func sendmsgSlowPath(_ fd: Int32, _ message: UnsafeRawPointer?, _ flags: Int32) -> Int {
    let denial = lnpGateSendmsg(fd, message, flags)
    if denial != 0 { return lnp_fail(denial) }
    return lnp_call_sendmsg(fd, message, flags)
}

/// The destination fields of a `struct msghdr` the program passed.
struct MessageHeader {
    var name: UnsafeRawPointer?
    var nameLength: UInt32

    /// nil for a NULL or implausible pointer: the kernel answers those (EFAULT).
    @inline(__always) init?(_ message: UnsafeRawPointer?) {
        guard let message, ProgramMemory.isPlausible(message) else { return nil }
        let header = message.assumingMemoryBound(to: msghdr.self)
        name = UnsafeRawPointer(header.pointee.msg_name)
        nameLength = header.pointee.msg_namelen
    }

}

/// Each call's decision: 0 to go on, or the errno to fail with.
enum Decisions {
    static func connect(_ fd: Int32, _ address: UnsafeRawPointer?, _ length: UInt32) -> Int32 {
        guard let endpoint = SocketEndpoint.parse(address, length: Int(length)) else { return 0 }
        guard LiveClassifier.live.mayBeLocal(endpoint) else { return NetworkActivity.connect(fd, endpoint) }
        return connectLocal(fd, endpoint)
    }

    /// `sendto`, `sendmsg` and each message of `sendmmsg`. A destination on a stream socket
    /// counts only with MSG_FASTOPEN (TCP Fast Open connects); otherwise the kernel ignores it.
    static func send(_ fd: Int32, _ address: UnsafeRawPointer?, _ length: UInt32, _ flags: Int32, operation: Operation)
        -> Int32
    {
        if let endpoint = SocketEndpoint.parse(address, length: Int(length)) {
            guard LiveClassifier.live.mayBeLocal(endpoint) else {
                return NetworkActivity.send(fd, endpoint, flags, operation: operation, socket: nil)
            }
            return sendLocal(fd, endpoint, flags, operation: operation, socket: nil)
        }
        // A destination in AF_UNSPEC, which some sockets take as their own family.
        guard let address, length >= 16, ProgramMemory.isPlausible(address), address.loadUnaligned(as: UInt16.self) == UInt16(LNP_AF_UNSPEC),
            let socket = SocketKind.of(fd),
            let endpoint = SocketEndpoint.parseUnspecified(address, length: Int(length), socket: socket)
        else { return 0 }
        guard LiveClassifier.live.mayBeLocal(endpoint) else {
            return NetworkActivity.send(fd, endpoint, flags, operation: operation, socket: socket)
        }
        return sendLocal(fd, endpoint, flags, operation: operation, socket: socket)
    }

    @inline(never)
    static func connectLocal(_ fd: Int32, _ endpoint: SocketEndpoint) -> Int32 {
        let verdict = LiveClassifier.live.classify(endpoint)
        guard case .local(let reason) = verdict else { return NetworkActivity.connect(fd, endpoint, verdict: verdict) }
        guard let socket = SocketKind.of(fd), socket.accepts(endpoint.sockaddrFamily),
            !SocketPeer.isAlready(fd, socket, connectedTo: endpoint)
        else { return 0 }
        return Gate.decide(.connect, fd: fd, transport: socket.transport, endpoint: endpoint, reason: reason)
    }

    @inline(never)
    static func sendLocal(
        _ fd: Int32, _ endpoint: SocketEndpoint, _ flags: Int32, operation: Operation, socket known: SocketKind?
    ) -> Int32 {
        let verdict = LiveClassifier.live.classify(endpoint)
        guard case .local(let reason) = verdict else {
            return NetworkActivity.send(fd, endpoint, flags, operation: operation, socket: known, verdict: verdict)
        }
        guard let socket = known ?? SocketKind.of(fd), socket.accepts(endpoint.sockaddrFamily) else { return 0 }
        if socket.transport.isStream && flags & Int32(LNP_MSG_FASTOPEN) == 0 { return 0 }
        return Gate.decide(operation, fd: fd, transport: socket.transport, endpoint: endpoint, reason: reason)
    }
}

// MARK: - Gates, for the hooks that call the next definition themselves

@_cdecl("lnp_gate_connect")
public func lnpGateConnect(_ fd: Int32, _ address: UnsafeRawPointer?, _ length: UInt32) -> Int32 {
    Decisions.connect(fd, address, length)
}

@_cdecl("lnp_gate_sendto")
public func lnpGateSendto(_ fd: Int32, _ address: UnsafeRawPointer?, _ length: UInt32, _ flags: Int32) -> Int32 {
    Decisions.send(fd, address, length, flags, operation: .sendto)
}

@_cdecl("lnp_gate_sendmsg")
public func lnpGateSendmsg(_ fd: Int32, _ message: UnsafeRawPointer?, _ flags: Int32) -> Int32 {
    guard let header = MessageHeader(message) else { return 0 }
    return Decisions.send(fd, header.name, header.nameLength, flags, operation: .sendmsg)
}

/// `sendmmsg`: returns how many leading messages may go, or minus the errno when the first
/// one is denied. Messages before the first denied one are sent. The kernel sends at most
/// UIO_MAXIOV (1024) messages a call, so "all" is at most 1024 here too.
@_cdecl("lnp_gate_sendmmsg")
public func lnpGateSendmmsg(_ fd: Int32, _ messages: UnsafeMutablePointer<lnp_mmsghdr>?, _ count: UInt32, _ flags: Int32)
    -> Int32
{
    let checked = Int(min(count, 1024))
    guard let messages, ProgramMemory.isPlausible(messages) else { return Int32(checked) }
    for index in 0..<checked {
        let header = messages[index].msg_hdr
        let denial = Decisions.send(fd, header.msg_name, header.msg_namelen, flags, operation: .sendmmsg)
        if denial != 0 { return index == 0 ? -denial : Int32(index) }
    }
    return Int32(checked)
}

@_cdecl("lnp_gate_bind")
public func lnpGateBind(_ fd: Int32, _ address: UnsafeRawPointer?, _ length: UInt32) -> Int32 {
    guard let endpoint = SocketEndpoint.parse(address, length: Int(length)),
        case .local(let reason) = LiveClassifier.live.classifyBind(endpoint),
        let socket = SocketKind.of(fd), socket.accepts(endpoint.sockaddrFamily)
    else { return 0 }
    return Gate.decide(.bind, fd: fd, transport: socket.transport, endpoint: endpoint, reason: reason)
}

/// Joining a multicast group, in each of the forms setsockopt accepts.
@_cdecl("lnp_gate_setsockopt")
public func lnpGateSetsockopt(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: UnsafeRawPointer?, _ length: UInt32)
    -> Int32
{
    guard let group = MulticastJoin.group(level: level, name: name, value: value, length: Int(length)),
        group.address.isMulticast, let socket = SocketKind.of(fd)
    else { return 0 }
    return Gate.decide(.join, fd: fd, transport: socket.transport, endpoint: group, reason: .multicast)
}

import LNPSys

// The socket calls, for the hooks of CShim/hooks.
//
// Every call arrives with lnp's private copy of what the program pointed to — the sockaddr,
// the message with its name and control messages, the option's value (CShim/sys/include/
// lnp_copy.h) — and passes that same copy on: the kernel acts on exactly what was decided,
// whatever another thread writes into the program's memory meanwhile.
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
public func lnpConnect(_ fd: Int32, _ address: UnsafeMutableRawPointer, _ length: UInt32) -> Int {
    if HotPath.certainlyNotLocal(copy: address, length) { return lnp_call_connect(fd, address, length) }
    return connectSlowPath(fd, address, length)
}

@_cdecl("lnp_sendto")
public func lnpSendto(
    _ fd: Int32, _ buffer: UnsafeRawPointer?, _ length: Int, _ flags: Int32, _ address: UnsafeMutableRawPointer,
    _ addressLength: UInt32
) -> Int {
    if HotPath.certainlyNotLocal(copy: address, addressLength) {
        return lnp_call_sendto(fd, buffer, length, flags, address, addressLength)
    }
    return sendtoSlowPath(fd, buffer, length, flags, address, addressLength)
}

@_cdecl("lnp_sendmsg")
public func lnpSendmsg(_ fd: Int32, _ message: UnsafeMutablePointer<msghdr>?, _ flags: Int32) -> Int {
    if let header = MessageHeader(message), !HotPath.certainlyNotLocal(UnsafeRawPointer(header.name), header.nameLength) {
        return sendmsgSlowPath(fd, message, flags)
    }
    return lnp_call_sendmsg(fd, message, flags)
}

// The slow paths take exactly the C call's arguments and are free functions (a static one
// would take its type in a register the C ABI preserves), so the call to them is a tail call.

@inline(never)
func connectSlowPath(_ fd: Int32, _ address: UnsafeMutableRawPointer?, _ length: UInt32) -> Int {
    let denial = Decisions.connect(fd, address, length)
    if denial != 0 { return lnp_fail(denial) }
    return lnp_call_connect(fd, address, length)
}

@inline(never)
func sendtoSlowPath(
    _ fd: Int32, _ buffer: UnsafeRawPointer?, _ length: Int, _ flags: Int32, _ address: UnsafeMutableRawPointer?,
    _ addressLength: UInt32
) -> Int {
    let denial = Decisions.send(fd, address, addressLength, flags, operation: .sendto)
    if denial != 0 { return lnp_fail(denial) }
    return lnp_call_sendto(fd, buffer, length, flags, address, addressLength)
}

@inline(never)
func sendmsgSlowPath(_ fd: Int32, _ message: UnsafeMutablePointer<msghdr>?, _ flags: Int32) -> Int {
    let denial = lnpGateSendmsg(fd, message, flags)
    if denial != 0 { return lnp_fail(denial) }
    return lnp_call_sendmsg(fd, message, flags)
}

/// The destination fields of a `struct msghdr` (lnp's copy), read as the kernel reads them:
/// at most 128 bytes of the name whatever `msg_namelen` says, and no name at all with a
/// length the kernel refuses (the top bit set: EINVAL).
struct MessageHeader {
    var name: UnsafeMutableRawPointer?
    var nameLength: UInt32

    /// nil for a NULL or implausible pointer: the kernel answers those (EFAULT).
    @inline(__always) init?(_ message: UnsafeMutablePointer<msghdr>?) {
        guard let message, ProgramMemory.isPlausible(message) else { return nil }
        let length = message.pointee.msg_namelen
        name = length < 0x8000_0000 ? message.pointee.msg_name : nil
        nameLength = min(length, UInt32(LNP_SOCKADDR_CAPACITY))
    }
}

/// Each call's decision: 0 to go on, or the errno to fail with. `address` is lnp's copy.
enum Decisions {
    static func connect(_ fd: Int32, _ address: UnsafeMutableRawPointer?, _ length: UInt32) -> Int32 {
        guard let endpoint = SocketEndpoint.parse(UnsafeRawPointer(address), length: Int(length)) else { return 0 }
        let copy = AddressCopy(bytes: address!, length: Int(length))
        guard LiveClassifier.live.mayBeLocal(endpoint) else { return NetworkActivity.connect(fd, endpoint, copy) }
        return connectLocal(fd, endpoint, copy)
    }

    /// `sendto`, `sendmsg` and each message of `sendmmsg`. A destination on a stream socket
    /// counts only with MSG_FASTOPEN (TCP Fast Open connects); otherwise the kernel ignores it.
    static func send(_ fd: Int32, _ address: UnsafeMutableRawPointer?, _ length: UInt32, _ flags: Int32, operation: Operation)
        -> Int32
    {
        if let endpoint = SocketEndpoint.parse(UnsafeRawPointer(address), length: Int(length)) {
            let copy = AddressCopy(bytes: address!, length: Int(length))
            guard LiveClassifier.live.mayBeLocal(endpoint) else {
                return NetworkActivity.send(fd, endpoint, copy, flags, operation: operation, socket: nil)
            }
            return sendLocal(fd, endpoint, copy, flags, operation: operation, socket: nil)
        }
        guard let address, ProgramMemory.isPlausible(address), length >= 16, length <= UInt32(LNP_SOCKADDR_CAPACITY),
            address.loadUnaligned(as: UInt16.self) == UInt16(LNP_AF_UNSPEC)
        else { return 0 }
        return sendUnspecified(fd, AddressCopy(bytes: address, length: Int(length)), flags, operation: operation)
    }

    /// A destination in AF_UNSPEC, which UDP, UDP-Lite and raw IPv4 sockets read as IPv4 and
    /// raw IPv6 sockets as IPv6 (a zeroed sockaddr with only the address and port filled in is
    /// a common mistake, so it is gated too). What this socket reads is decided; the rest of
    /// the copy is zeroed, so that a socket that reads it otherwise, swapped in meanwhile,
    /// finds no destination there.
    static func sendUnspecified(_ fd: Int32, _ copy: AddressCopy, _ flags: Int32, operation: Operation) -> Int32 {
        guard let socket = SocketKind.of(fd),
            let endpoint = SocketEndpoint.parseUnspecified(UnsafeRawPointer(copy.bytes), length: copy.length, socket: socket)
        else { return copy.disarm() }
        copy.keepOnly(endpoint.address.family)
        guard LiveClassifier.live.mayBeLocal(endpoint) else {
            return NetworkActivity.send(fd, endpoint, copy, flags, operation: operation, socket: socket)
        }
        return sendLocal(fd, endpoint, copy, flags, operation: operation, socket: socket)
    }

    @inline(never)
    static func connectLocal(_ fd: Int32, _ endpoint: SocketEndpoint, _ copy: AddressCopy) -> Int32 {
        let verdict = LiveClassifier.live.classify(endpoint)
        guard case .local(let reason) = verdict else { return NetworkActivity.connect(fd, endpoint, copy, verdict: verdict) }
        guard let socket = SocketKind.of(fd), socket.accepts(endpoint.sockaddrFamily) else { return copy.disarm() }
        if SocketPeer.isAlready(fd, socket, connectedTo: endpoint) { return 0 }
        return Gate.decide(.connect, fd: fd, transport: socket.transport, endpoint: endpoint, reason: reason)
    }

    @inline(never)
    static func sendLocal(
        _ fd: Int32, _ endpoint: SocketEndpoint, _ copy: AddressCopy, _ flags: Int32, operation: Operation,
        socket known: SocketKind?
    ) -> Int32 {
        let verdict = LiveClassifier.live.classify(endpoint)
        guard case .local(let reason) = verdict else {
            return NetworkActivity.send(fd, endpoint, copy, flags, operation: operation, socket: known, verdict: verdict)
        }
        guard let socket = known ?? SocketKind.of(fd), socket.accepts(endpoint.sockaddrFamily) else { return copy.disarm() }
        if socket.transport.isStream && flags & Int32(LNP_MSG_FASTOPEN) == 0 { return copy.disarm() }
        return Gate.decide(operation, fd: fd, transport: socket.transport, endpoint: endpoint, reason: reason)
    }
}

// MARK: - Gates, for the hooks that call the next definition themselves

@_cdecl("lnp_gate_connect")
public func lnpGateConnect(_ fd: Int32, _ address: UnsafeMutableRawPointer?, _ length: UInt32) -> Int32 {
    Decisions.connect(fd, address, length)
}

@_cdecl("lnp_gate_sendto")
public func lnpGateSendto(_ fd: Int32, _ address: UnsafeMutableRawPointer?, _ length: UInt32, _ flags: Int32) -> Int32 {
    Decisions.send(fd, address, length, flags, operation: .sendto)
}

@_cdecl("lnp_gate_sendmsg")
public func lnpGateSendmsg(_ fd: Int32, _ message: UnsafeMutablePointer<msghdr>?, _ flags: Int32) -> Int32 {
    guard let header = MessageHeader(message) else { return 0 }
    return Decisions.send(fd, header.name, header.nameLength, flags, operation: .sendmsg)
}

/// A run of `sendmmsg`'s messages (lnp's copy, at most LNP_MESSAGE_BATCH): returns how many
/// leading messages may go, or minus the errno when the first one is denied. The hook sends
/// those, and the next run if all went.
@_cdecl("lnp_gate_sendmmsg")
public func lnpGateSendmmsg(_ fd: Int32, _ messages: UnsafeMutablePointer<lnp_mmsghdr>?, _ count: UInt32, _ flags: Int32)
    -> Int32
{
    guard let messages else { return Int32(count) }
    for index in 0..<Int(count) {
        let header = MessageHeader(UnsafeMutableRawPointer(messages + index).assumingMemoryBound(to: msghdr.self))
        let denial = header.map { Decisions.send(fd, $0.name, $0.nameLength, flags, operation: .sendmmsg) } ?? 0
        if denial != 0 { return index == 0 ? -denial : Int32(index) }
    }
    return Int32(count)
}

@_cdecl("lnp_gate_bind")
public func lnpGateBind(_ fd: Int32, _ address: UnsafeMutableRawPointer?, _ length: UInt32) -> Int32 {
    guard let endpoint = SocketEndpoint.parse(UnsafeRawPointer(address), length: Int(length)),
        case .local(let reason) = LiveClassifier.live.classifyBind(endpoint)
    else { return 0 }
    guard let socket = SocketKind.of(fd), socket.accepts(endpoint.sockaddrFamily) else {
        return AddressCopy(bytes: address!, length: Int(length)).disarm()
    }
    return Gate.decide(.bind, fd: fd, transport: socket.transport, endpoint: endpoint, reason: reason)
}

/// Joining a multicast group, in each of the forms setsockopt accepts. `value` is lnp's copy
/// of the option's first `copied` bytes; for a join, `length` is lowered to what was copied
/// (the kernel reads no more of these options than their structure), so the call can take
/// the copy.
@_cdecl("lnp_gate_setsockopt")
public func lnpGateSetsockopt(
    _ fd: Int32, _ level: Int32, _ name: Int32, _ value: UnsafeMutableRawPointer?, _ copied: UInt32,
    _ length: UnsafeMutablePointer<UInt32>
) -> Int32 {
    guard MulticastJoin.isJoin(level: level, name: name), copied > 0 else { return 0 }  // (unread: the kernel answers)
    length.pointee = min(length.pointee, copied)
    guard let group = MulticastJoin.group(level: level, name: name, value: UnsafeRawPointer(value), length: Int(copied)),
        group.address.isMulticast
    else { return 0 }
    guard let socket = SocketKind.of(fd) else {
        // No socket: the kernel answers EBADF or ENOTSOCK, from a copy that joins nothing.
        value!.initializeMemory(as: UInt8.self, repeating: 0, count: Int(copied))
        return 0
    }
    return Gate.decide(.join, fd: fd, transport: socket.transport, endpoint: group, reason: .multicast)
}

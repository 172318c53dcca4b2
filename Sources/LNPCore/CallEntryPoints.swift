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
    SettingsStore.readEnvironment()
}

@_cdecl("lnp_core_finish")
public func lnpCoreFinish() {
    AuditLog.reportLost()
}

/// socket: a packet socket (AF_PACKET, AF_XDP, or the old SOCK_PACKET) talks to the link
/// directly, so opening one is the operation; a raw IP socket is noted (it may write its own
/// IP header). Every other kind passes at once.
@_cdecl("lnp_socket")
public func lnpSocket(_ domain: Int32, _ type: Int32, _ proto: Int32) -> Int {
    let kind = type & Int32(LNP_SOCK_TYPE_MASK)
    if domain != Int32(LNP_AF_PACKET) && domain != Int32(LNP_AF_XDP) && kind != Int32(LNP_SOCK_RAW)
        && kind != Int32(LNP_SOCK_PACKET)
    {
        return lnp_call_socket(domain, type, proto)
    }
    return socketSlowPath(domain, type, proto)
}

@inline(never)
func socketSlowPath(_ domain: Int32, _ type: Int32, _ proto: Int32) -> Int {
    let kind = type & Int32(LNP_SOCK_TYPE_MASK)
    if domain == Int32(LNP_AF_PACKET) || domain == Int32(LNP_AF_XDP)
        || (domain == Int32(LNP_AF_INET) && kind == Int32(LNP_SOCK_PACKET))
    {
        let denial = ProcessGate().decide(.socket, fd: nil, transport: .packet, endpoint: nil, reason: .packetSocket)
        if denial != 0 { return lnp_fail(denial) }
    } else if kind == Int32(LNP_SOCK_RAW) && (domain == Int32(LNP_AF_INET) || domain == Int32(LNP_AF_INET6)) {
        SocketFlags.note(SocketFlags.rawSockets)
    }
    return lnp_call_socket(domain, type, proto)
}

@_cdecl("lnp_connect")
public func lnpConnect(_ fd: Int32, _ address: UnsafeMutableRawPointer, _ length: UInt32) -> Int {
    if length >= 2 && address.loadUnaligned(as: UInt16.self) == UInt16(LNP_AF_UNIX) { return unixConnect(fd, address, length) }
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
    if let header = MessageHeader(message),
        header.forcedInterface != 0 || header.firstHop != nil
            || !HotPath.certainlyNotLocal(UnsafeRawPointer(header.name), header.nameLength)
    {
        return sendmsgSlowPath(fd, message, flags)
    }
    return lnp_call_sendmsg(fd, message, flags)
}

// The bytes of a stream: gated only on a stream to the system bus (`BusStreamGate`), so
// while the process has none they pass with one load.

@_cdecl("lnp_write")
public func lnpWrite(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ length: Int) -> Int {
    if BusStreamGate.isIdle { return lnp_call_write(fd, buffer, length) }
    return writeSlowPath(fd, buffer, length)
}

@_cdecl("lnp_writev")
public func lnpWritev(_ fd: Int32, _ pieces: UnsafeRawPointer?, _ count: Int32) -> Int {
    if BusStreamGate.isIdle { return lnp_call_writev(fd, pieces, count) }
    return writevSlowPath(fd, pieces, count)
}

@_cdecl("lnp_send")
public func lnpSend(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ length: Int, _ flags: Int32) -> Int {
    if BusStreamGate.isIdle { return lnp_call_send(fd, buffer, length, flags) }
    return sendSlowPath(fd, buffer, length, flags)
}

@inline(never)
func writeSlowPath(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ length: Int) -> Int {
    guard let slot = BusStreamGate.watched(fd) else { return lnp_call_write(fd, buffer, length) }
    if length < 0 {  // above SSIZE_MAX: past any user range
        slot.unlock()
        return lnp_fail(Int32(LNP_EFAULT))
    }
    return BusStreamGate.write(slot, fd, buffer, length, flags: 0)
}

@inline(never)
func writevSlowPath(_ fd: Int32, _ pieces: UnsafeRawPointer?, _ count: Int32) -> Int {
    guard let slot = BusStreamGate.watched(fd) else { return lnp_call_writev(fd, pieces, count) }
    return BusStreamGate.write(slot, fd, pieces: pieces, count: Int(count), message: nil, flags: 0)
}

@inline(never)
func sendSlowPath(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ length: Int, _ flags: Int32) -> Int {
    guard let slot = BusStreamGate.watched(fd) else { return lnp_call_send(fd, buffer, length, flags) }
    if length < 0 {
        slot.unlock()
        return lnp_fail(Int32(LNP_EFAULT))
    }
    return BusStreamGate.write(slot, fd, buffer, length, flags: flags)
}

/// sendmsg in a process that may watch a stream to the system bus (the hook checks first; the
/// syscall() hook and sendmmsg's one-by-one path come here always): such a stream's bytes
/// are read, any other socket's call is `lnp_sendmsg`'s.
@_cdecl("lnp_sendmsg_watching")
public func lnpSendmsgWatching(_ fd: Int32, _ message: UnsafeMutablePointer<msghdr>?, _ flags: Int32) -> Int {
    if !BusStreamGate.isIdle, let sent = sendmsgToBus(fd, message, flags) { return sent }
    return lnpSendmsg(fd, message, flags)
}

/// sendmsg on a stream to the system bus, or nil for any other socket.
@inline(never)
func sendmsgToBus(_ fd: Int32, _ message: UnsafeMutablePointer<msghdr>?, _ flags: Int32) -> Int? {
    // An address the kernel refuses on a connected stream (EISCONN): it answers. No name, or
    // one of length 0, is none.
    guard let message, ProgramMemory.isPlausible(message), message.pointee.msg_name == nil || message.pointee.msg_namelen == 0,
        let slot = BusStreamGate.watched(fd)
    else { return nil }
    let count = message.pointee.msg_iovlen
    return BusStreamGate.write(
        slot, fd, pieces: UnsafeRawPointer(message.pointee.msg_iov), count: Int(min(count, Int.max / 2)),
        message: message, flags: flags, tooMany: Int32(LNP_EMSGSIZE))
}

/// connect of an AF_UNIX socket: one to the system bus is watched once connected.
@inline(never)
func unixConnect(_ fd: Int32, _ address: UnsafeMutableRawPointer, _ length: UInt32) -> Int {
    let result = lnp_call_connect(fd, address, length)
    guard result == 0 else { return result }
    let refusal = BusStreamGate.connected(fd)
    return refusal == 0 ? 0 : lnp_fail(refusal)
}

// The slow paths take exactly the C call's arguments and are free functions (a static one
// would take its type in a register the C ABI preserves), so the call to them is a tail call.
// Every decision first asks whether every operation passes (`lnp-run --allow` unrecorded):
// then the route cache, which the hot path reads, is never filled, and a call not local
// takes the slow path every time. The slow paths that do more than ask `Decisions` (a raw
// socket's header, a batch of messages) ask before that work.

/// Whether the process's settings let every operation go, unasked and unrecorded.
@inline(__always)
var everyOperationPasses: Bool { Decisions.process.gate.passesEveryOperation }

@inline(never)
func connectSlowPath(_ fd: Int32, _ address: UnsafeMutableRawPointer?, _ length: UInt32) -> Int {
    let denial = Decisions.process.connect(fd, address, length)
    if denial != 0 { return lnp_fail(denial) }
    return lnp_call_connect(fd, address, length)
}

@inline(never)
func sendtoSlowPath(
    _ fd: Int32, _ buffer: UnsafeRawPointer?, _ length: Int, _ flags: Int32, _ address: UnsafeMutableRawPointer?,
    _ addressLength: UInt32
) -> Int {
    if everyOperationPasses { return lnp_call_sendto(fd, buffer, length, flags, address, addressLength) }
    if let socket = RawPackets.headerWriter(fd) {
        return RawPackets.sendto(fd, socket, buffer, length, flags, address, addressLength)
    }
    let denial = Decisions.process.send(fd, address, addressLength, flags, operation: .sendto)
    if denial != 0 { return lnp_fail(denial) }
    return lnp_call_sendto(fd, buffer, length, flags, address, addressLength)
}

@inline(never)
func sendmsgSlowPath(_ fd: Int32, _ message: UnsafeMutablePointer<msghdr>?, _ flags: Int32) -> Int {
    if everyOperationPasses { return lnp_call_sendmsg(fd, message, flags) }
    if let message, let socket = RawPackets.headerWriter(fd) { return RawPackets.sendmsg(fd, socket, message, flags) }
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
    /// The output interface its control messages force (IP_PKTINFO, IPV6_PKTINFO), or 0.
    var forcedInterface: UInt32 = 0
    /// The first hop of the source route its control messages give (IP_RETOPTS), if any.
    var firstHop: IPAddress? = nil

    /// nil for a NULL or implausible pointer: the kernel answers those (EFAULT).
    @inline(__always) init?(_ message: UnsafeMutablePointer<msghdr>?) {
        guard let message, ProgramMemory.isPlausible(message) else { return nil }
        let length = message.pointee.msg_namelen
        name = length < 0x8000_0000 ? message.pointee.msg_name : nil
        nameLength = min(length, UInt32(LNP_SOCKADDR_CAPACITY))
        if message.pointee.msg_controllen > 0 {
            forcedInterface = lnp_control_interface(message)
            firstHop = SourceRoute.firstHop(of: message)
        }
    }
}

// MARK: - Gates, for the hooks that call the next definition themselves

/// sendmsg's decision (0, or the errno), for its slow path.
func lnpGateSendmsg(_ fd: Int32, _ message: UnsafeMutablePointer<msghdr>?, _ flags: Int32) -> Int32 {
    guard let header = MessageHeader(message) else { return 0 }
    return Decisions.process.send(fd, header.name, header.nameLength, flags, operation: .sendmsg, interface: header.forcedInterface,
        firstHop: header.firstHop)
}

/// Whether `sendmmsg` sends `fd`'s messages one by one through `lnp_sendmsg`: a raw socket
/// that writes its own IP header (each header is copied and decided), or a stream to the
/// system bus (its bytes are).
@_cdecl("lnp_send_one_by_one")
public func lnpSendOneByOne(_ fd: Int32) -> Int32 {
    if RawPackets.headerWriter(fd) != nil { return 1 }
    guard !BusStreamGate.isIdle, let slot = BusStreamGate.watched(fd) else { return 0 }
    slot.unlock()
    return 1
}

/// A run of `sendmmsg`'s messages (lnp's copy, at most LNP_MESSAGE_BATCH): returns how many
/// leading messages may go, or minus the errno when the first one is denied. The hook sends
/// those, and the next run if all went.
@_cdecl("lnp_gate_sendmmsg")
public func lnpGateSendmmsg(_ fd: Int32, _ messages: UnsafeMutablePointer<lnp_mmsghdr>?, _ count: UInt32, _ flags: Int32)
    -> Int32
{
    guard let messages, !everyOperationPasses else { return Int32(count) }
    var passed: UnsafeRawPointer? = nil  // the message before's IPv4 name, when it left on the hot path
    for index in 0..<Int(count) {
        // Each message first on the hot path: a destination certainly not local, and no
        // control messages (which may force an interface or a source route). Only a name the
        // hook copied is read here — a plausible pointer with a length the kernel takes — so
        // a bad one is left to the slow path and the kernel's own errno. A batch usually goes
        // to one destination: a name the same as the one before, which passed, passes.
        let message = UnsafeMutableRawPointer(messages + index).assumingMemoryBound(to: msghdr.self).pointee
        if message.msg_controllen == 0, Int32(bitPattern: message.msg_namelen) > 0, let name = message.msg_name,
            ProgramMemory.isPlausible(name)
        {
            let length = min(message.msg_namelen, UInt32(LNP_SOCKADDR_CAPACITY))
            if length == 16, let passed, HotPath.sameIPv4Name(UnsafeRawPointer(name), passed) { continue }
            if HotPath.certainlyNotLocal(copy: name, length) {
                passed = length == 16 ? UnsafeRawPointer(name) : nil
                continue
            }
        }
        passed = nil
        let header = MessageHeader(UnsafeMutableRawPointer(messages + index).assumingMemoryBound(to: msghdr.self))
        let denial = header.map {
            Decisions.process.send(
                fd, $0.name, $0.nameLength, flags, operation: .sendmmsg, interface: $0.forcedInterface, firstHop: $0.firstHop)
        } ?? 0
        if denial != 0 { return index == 0 ? -denial : Int32(index) }
    }
    return Int32(count)
}

/// bind, whole like the hot calls: a bind that is certainly no local-network operation ends
/// in a tail call of the next definition.
@_cdecl("lnp_bind")
public func lnpBind(_ fd: Int32, _ address: UnsafeMutableRawPointer?, _ length: UInt32) -> Int {
    if HotPath.bindCertainlyNotLocal(copy: address, length) { return lnp_call_bind(fd, address, length) }
    return bindSlowPath(fd, address, length)
}

/// bind's decision alone (0, or the errno), for syscall(SYS_bind): the hook makes the system
/// call itself rather than calling the next bind(), which may be a later preload's made of
/// syscall(SYS_bind).
@_cdecl("lnp_gate_bind")
public func lnpGateBind(_ fd: Int32, _ address: UnsafeMutableRawPointer?, _ length: UInt32) -> Int32 {
    if HotPath.bindCertainlyNotLocal(copy: address, length) { return 0 }
    return Decisions.process.bind(fd, address, length)
}

@inline(never)
func bindSlowPath(_ fd: Int32, _ address: UnsafeMutableRawPointer?, _ length: UInt32) -> Int {
    let denial = Decisions.process.bind(fd, address, length)
    if denial != 0 { return lnp_fail(denial) }
    return lnp_call_bind(fd, address, length)
}

/// setsockopt: joining a multicast group, in each of the forms it takes, and forcing the
/// output interface (`Decisions.socketOption`).
@_cdecl("lnp_gate_setsockopt")
public func lnpGateSetsockopt(
    _ fd: Int32, _ level: Int32, _ name: Int32, _ value: UnsafeMutableRawPointer?, _ copied: UInt32,
    _ length: UnsafeMutablePointer<UInt32>
) -> Int32 {
    Decisions.process.socketOption(fd, level, name, value, copied, &length.pointee)
}

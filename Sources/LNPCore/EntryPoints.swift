import LNPSys

// The functions the C hooks call (declared in CShim/hooks/lnp_core.h). Each one reads the
// call's arguments, asks the classifier, and for a local operation asks the gate.
// The `lnp_gate_*` functions return 0 to let the call through, or the errno to fail with.

@_cdecl("lnp_core_start")
public func lnpCoreStart() {
    _ = SettingsStore.current()
}

@_cdecl("lnp_gate_connect")
public func lnpGateConnect(_ fd: Int32, _ address: UnsafeRawPointer?, _ length: UInt32) -> Int32 {
    guard let endpoint = SocketEndpoint.parse(address, length: Int(length)) else { return 0 }
    guard case .local(let reason) = LiveClassifier.live.classify(endpoint) else { return 0 }
    guard let transport = SocketKind.transport(of: fd) else { return 0 }
    return Gate.decide(.connect, fd: fd, transport: transport, endpoint: endpoint, reason: reason)
}

/// `sendto` and `sendmsg` (with `msg_name`). A destination on a stream socket counts only
/// with MSG_FASTOPEN (TCP Fast Open connects); otherwise the kernel ignores it.
@_cdecl("lnp_gate_send")
public func lnpGateSend(_ fd: Int32, _ address: UnsafeRawPointer?, _ length: UInt32, _ flags: Int32, _ isMessage: Int32)
    -> Int32
{
    guard let endpoint = SocketEndpoint.parse(address, length: Int(length)) else { return 0 }
    guard case .local(let reason) = LiveClassifier.live.classify(endpoint) else { return 0 }
    guard let transport = SocketKind.transport(of: fd) else { return 0 }
    if transport.isStream && flags & Int32(LNP_MSG_FASTOPEN) == 0 { return 0 }
    return Gate.decide(isMessage != 0 ? .sendmsg : .sendto, fd: fd, transport: transport, endpoint: endpoint, reason: reason)
}

/// `sendmmsg`: returns how many leading messages may go (`count` when all may), or minus
/// the errno when the first one is denied. Messages before the first denied one are sent.
@_cdecl("lnp_gate_sendmmsg")
public func lnpGateSendmmsg(_ fd: Int32, _ messages: UnsafeMutablePointer<lnp_mmsghdr>?, _ count: UInt32, _ flags: Int32)
    -> Int32
{
    guard let messages, UInt(bitPattern: messages) >= 4096 else { return Int32(bitPattern: count) }
    let checked = Int(min(count, 1024))  // the kernel sends at most UIO_MAXIOV messages
    var transport: Transport? = nil
    for index in 0..<checked {
        let header = messages[index].msg_hdr
        guard let endpoint = SocketEndpoint.parse(header.msg_name, length: Int(header.msg_namelen)) else { continue }
        guard case .local(let reason) = LiveClassifier.live.classify(endpoint) else { continue }
        if transport == nil { transport = SocketKind.transport(of: fd) }
        guard let kind = transport else { return Int32(bitPattern: count) }
        if kind.isStream && flags & Int32(LNP_MSG_FASTOPEN) == 0 { continue }
        let denial = Gate.decide(.sendmmsg, fd: fd, transport: kind, endpoint: endpoint, reason: reason)
        if denial != 0 { return index == 0 ? -denial : Int32(index) }
    }
    return Int32(bitPattern: count)
}

@_cdecl("lnp_gate_bind")
public func lnpGateBind(_ fd: Int32, _ address: UnsafeRawPointer?, _ length: UInt32) -> Int32 {
    guard let endpoint = SocketEndpoint.parse(address, length: Int(length)) else { return 0 }
    guard case .local(let reason) = LiveClassifier.live.classifyBind(endpoint) else { return 0 }
    guard let transport = SocketKind.transport(of: fd) else { return 0 }
    return Gate.decide(.bind, fd: fd, transport: transport, endpoint: endpoint, reason: reason)
}

/// Joining a multicast group, in each of the forms setsockopt accepts.
@_cdecl("lnp_gate_setsockopt")
public func lnpGateSetsockopt(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: UnsafeRawPointer?, _ length: UInt32)
    -> Int32
{
    guard let group = MulticastJoin.group(level: level, name: name, value: value, length: Int(length)),
        group.address.isMulticast
    else { return 0 }
    guard let transport = SocketKind.transport(of: fd) else { return 0 }
    return Gate.decide(.join, fd: fd, transport: transport, endpoint: group, reason: .multicast)
}

/// Name resolution: returns nonzero when the name is a `.local` name that is denied.
@_cdecl("lnp_gate_resolve")
public func lnpGateResolve(_ name: UnsafePointer<CChar>?) -> Int32 {
    guard let name else { return 0 }
    let bytes = CString.bytes(name, limit: 1025)
    guard LocalName.isLocal(bytes) else { return 0 }
    return Gate.decide(.resolve, fd: nil, transport: nil, endpoint: nil, name: bytes, reason: .localName)
}

/// After a successful getaddrinfo: remember which name each address came from.
@_cdecl("lnp_note_addrinfo")
public func lnpNoteAddrinfo(_ name: UnsafePointer<CChar>?, _ results: UnsafePointer<addrinfo>?) {
    guard let name else { return }
    var addresses = InlineArray<8, IPAddress>(repeating: IPAddress(v4: 0))
    var count = 0
    var entry = results
    while let current = entry, count < 8 {
        if let endpoint = SocketEndpoint.parse(UnsafeRawPointer(current.pointee.ai_addr), length: Int(current.pointee.ai_addrlen)),
            !contains(addresses, count, endpoint.address)
        {
            addresses[count] = endpoint.address
            count += 1
        }
        entry = UnsafePointer(current.pointee.ai_next)
    }
    NameNotes.remember(CString.bytes(name, limit: 1025), addresses: addresses, count: count)
}

/// After a successful gethostbyname*: the same, from a hostent.
@_cdecl("lnp_note_hostent")
public func lnpNoteHostent(_ name: UnsafePointer<CChar>?, _ host: UnsafePointer<hostent>?) {
    guard let name, let host, let list = host.pointee.h_addr_list else { return }
    let family = host.pointee.h_addrtype
    var addresses = InlineArray<8, IPAddress>(repeating: IPAddress(v4: 0))
    var count = 0
    while count < 8, let raw = list[count] {
        if family == Int32(LNP_AF_INET) && host.pointee.h_length == 4 {
            addresses[count] = IPAddress(v4Bytes: UnsafeRawPointer(raw))
        } else if family == Int32(LNP_AF_INET6) && host.pointee.h_length == 16 {
            addresses[count] = IPAddress(v6Bytes: UnsafeRawPointer(raw)).unmapped
        } else {
            break
        }
        count += 1
    }
    NameNotes.remember(CString.bytes(name, limit: 1025), addresses: addresses, count: count)
}

private func contains(_ addresses: InlineArray<8, IPAddress>, _ count: Int, _ address: IPAddress) -> Bool {
    for i in 0..<count where addresses[i] == address { return true }
    return false
}

enum NameNotes {
    static func remember(_ name: UnsafeBufferPointer<UInt8>, addresses: InlineArray<8, IPAddress>, count: Int) {
        guard count > 0, IPAddress.parse(name) == nil else { return }  // a literal names nothing
        for i in 0..<count { ResolvedNames.remember(name, for: addresses[i]) }
        ProxyAddresses.learn(name: name, addresses: addresses, count: count)
    }
}

// MARK: - The ne_socket API: 0 or an errno value

@_cdecl("lnp_api_set_attribution")
public func lnpApiSetAttribution(_ fd: Int32, _ value: Int32) -> Int32 {
    guard fd >= 0, value >= 0, value <= 255, let attribution = Attribution(rawValue: UInt8(value)) else {
        return Int32(LNP_EINVAL)
    }
    return SocketTags.update(fd) { $0.attribution = attribution }
}

@_cdecl("lnp_api_set_domains")
public func lnpApiSetDomains(_ fd: Int32, _ names: UnsafePointer<UnsafePointer<CChar>?>?, _ count: Int32) -> Int32 {
    guard fd >= 0, count >= 0, count == 0 || names != nil else { return Int32(LNP_EINVAL) }
    var joined = InlineArray<1008, UInt8>(repeating: 0)
    return withUnsafeMutableBytes(of: &joined) { raw -> Int32 in
        var writer = ByteWriter(raw)
        for index in 0..<Int(count) {
            guard let name = names![index] else { return Int32(LNP_EINVAL) }
            let bytes = CString.bytes(name, limit: 256)
            guard DomainName.isValid(bytes) else { return Int32(LNP_EINVAL) }
            if index > 0 { writer.append(0) }
            writer.append(bytes: bytes)
        }
        if writer.truncated { return Int32(LNP_ENAMETOOLONG) }
        return setDomains(fd, writer.written, count: Int(count), attribution: nil)
    }
}

@_cdecl("lnp_api_set_website_attribution")
public func lnpApiSetWebsiteAttribution(_ fd: Int32, _ hostname: UnsafePointer<CChar>?) -> Int32 {
    guard fd >= 0 else { return Int32(LNP_EINVAL) }
    guard let hostname else { return SocketTags.update(fd) { $0.attribution = .user } }
    let bytes = CString.bytes(hostname, limit: 256)
    guard DomainName.isValid(bytes) else { return Int32(LNP_EINVAL) }
    return setDomains(fd, bytes, count: 1, attribution: .user)
}

private func setDomains(_ fd: Int32, _ joined: UnsafeBufferPointer<UInt8>, count: Int, attribution: Attribution?) -> Int32 {
    if case .failure(let error) = SocketTags.cookie(of: fd) { return error.rawValue }
    var reference = DomainReference()
    if count > 0 {
        guard let stored = DomainStore.store(joined, count: count) else { return Int32(LNP_ENOMEM) }
        reference = stored
    }
    return SocketTags.update(fd) { tag in
        tag.domains = reference
        if let attribution { tag.attribution = attribution }
    }
}

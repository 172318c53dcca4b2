import LNPSys

// Name resolution, for the hooks of CShim/hooks/resolve.c.

/// Name resolution: returns nonzero when the name is a `.local` name that is denied.
@_cdecl("lnp_gate_resolve")
public func lnpGateResolve(_ name: UnsafePointer<CChar>?) -> Int32 {
    guard let name else { return 0 }
    let bytes = CString.bytes(name, limit: 1025)
    guard LocalName.isLocal(bytes) else { return 0 }
    return ProcessGate().decide(.resolve, fd: nil, transport: nil, endpoint: nil, name: bytes, reason: .localName)
}

/// After a successful getaddrinfo: remember which name each address came from (not for
/// loopback or the unspecified address, which nothing records nor exempts).
@_cdecl("lnp_note_addrinfo")
public func lnpNoteAddrinfo(_ name: UnsafePointer<CChar>?, _ results: UnsafePointer<addrinfo>?) {
    guard let name, mayHoldNotedAddress(results) else { return }
    noteAddrinfo(name, results)
}

/// The notes themselves, out of line: the frame their list of addresses needs is not paid by
/// a list that holds none (`localhost`).
@inline(never)
private func noteAddrinfo(_ name: UnsafePointer<CChar>, _ results: UnsafePointer<addrinfo>?) {
    var addresses = InlineArray<8, IPAddress>(repeating: IPAddress(v4: 0))
    var count = 0
    var entry = results
    var steps = 0
    while let current = entry, count < 8, steps < 64 {  // (a list that loops ends too)
        steps += 1
        if let endpoint = SocketEndpoint.parse(UnsafeRawPointer(current.pointee.ai_addr), length: Int(current.pointee.ai_addrlen)),
            !endpoint.address.isNeverLocal, !contains(addresses, count, endpoint.address)
        {
            addresses[count] = endpoint.address
            count += 1
        }
        entry = UnsafePointer(current.pointee.ai_next)
    }
    guard count > 0 else { return }
    NameNotes.remember(CString.bytes(name, limit: 1025), addresses: addresses, count: count)
}

/// Whether a getaddrinfo list may hold an address worth a note: false only when every entry
/// is plainly a loopback or unspecified IPv4 or IPv6 address (`IPAddress.isNeverLocal`),
/// read from the raw sockaddr, as `localhost` resolves; anything else is read properly.
@inline(__always)
private func mayHoldNotedAddress(_ results: UnsafePointer<addrinfo>?) -> Bool {
    var entry = results
    var steps = 0
    while let current = entry, steps < 64 {
        steps += 1
        guard let address = current.pointee.ai_addr, ProgramMemory.isPlausible(address) else { return true }
        let family = UnsafeRawPointer(address).loadUnaligned(as: UInt16.self)
        if family == UInt16(LNP_AF_INET) && current.pointee.ai_addrlen >= 16 {
            let v4 = UInt32(bigEndian: UnsafeRawPointer(address).loadUnaligned(fromByteOffset: 4, as: UInt32.self))
            if v4 >> 24 != 127 && v4 != 0 { return true }
        } else if family == UInt16(LNP_AF_INET6) && current.pointee.ai_addrlen >= 24 {
            let high = UnsafeRawPointer(address).loadUnaligned(fromByteOffset: 8, as: UInt64.self)
            let low = UInt64(bigEndian: UnsafeRawPointer(address).loadUnaligned(fromByteOffset: 16, as: UInt64.self))
            if high != 0 || low > 1 { return true }
        } else {
            return true
        }
        entry = UnsafePointer(current.pointee.ai_next)
    }
    return entry != nil
}

/// After a successful gethostbyname*: the same, from a hostent.
@_cdecl("lnp_note_hostent")
public func lnpNoteHostent(_ name: UnsafePointer<CChar>?, _ host: UnsafePointer<hostent>?) {
    guard let name, let host, let list = host.pointee.h_addr_list else { return }
    let family = host.pointee.h_addrtype
    var addresses = InlineArray<8, IPAddress>(repeating: IPAddress(v4: 0))
    var count = 0
    var index = 0
    while index < 8, let raw = list[index] {
        index += 1
        let address: IPAddress
        if family == Int32(LNP_AF_INET) && host.pointee.h_length == 4 {
            address = IPAddress(v4Bytes: UnsafeRawPointer(raw))
        } else if family == Int32(LNP_AF_INET6) && host.pointee.h_length == 16 {
            address = IPAddress(v6Bytes: UnsafeRawPointer(raw)).unmapped
        } else {
            break
        }
        if !address.isNeverLocal {
            addresses[count] = address
            count += 1
        }
    }
    guard count > 0 else { return }
    NameNotes.remember(CString.bytes(name, limit: 1025), addresses: addresses, count: count)
}

private func contains(_ addresses: InlineArray<8, IPAddress>, _ count: Int, _ address: IPAddress) -> Bool {
    for i in 0..<count where addresses[i] == address { return true }
    return false
}

enum NameNotes {
    static func remember(_ name: UnsafeBufferPointer<UInt8>, addresses: InlineArray<8, IPAddress>, count: Int) {
        guard count > 0, !isLiteral(name) else { return }  // a literal names nothing
        for i in 0..<count { ResolvedNames.remember(name, for: addresses[i]) }
        ProxyAddresses.learn(name: name, addresses: addresses, count: count)
    }

    /// An address written out, with or without an IPv6 scope (`fe80::1%eth0`, `fe80::1%2`).
    static func isLiteral(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        var end = name.count
        for i in 0..<name.count where name[i] == UInt8(ascii: "%") {
            end = i
            break
        }
        return IPAddress.parse(UnsafeBufferPointer(rebasing: name[0..<end])) != nil
    }
}

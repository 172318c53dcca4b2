import LNPSys

// Apple's ne_socket API (CShim/hooks/ne_socket.c). Each returns 0 or an errno value.

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
    // Not a socket: answer before taking an entry of the domain store.
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

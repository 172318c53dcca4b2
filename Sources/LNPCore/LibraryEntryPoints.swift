import LNPSys

// Operations the C library performs itself for a program, through calls no preload sees,
// decided before it performs them (CShim/hooks/resolver.c, CShim/hooks/remote_command.c).

/// A DNS query of `name` to the servers a resolver state will ask. Each server on the local
/// network is a destination of the program's, decided as a `resolve` of that name there
/// (resolv.conf's servers stay exempt for DNS, as everywhere). 0 to go on, or the errno of
/// the first denied.
@_cdecl("lnp_gate_name_servers")
public func lnpGateNameServers(_ servers: UnsafePointer<lnp_name_servers>?, _ name: UnsafePointer<CChar>?) -> Int32 {
    guard let servers else { return 0 }
    let host = LibraryCall.name(name)
    for index in 0..<min(UInt32(servers.pointee.count), UInt32(LNP_NAME_SERVER_CAPACITY)) {
        let length = Int(lnp_name_server_length(servers, index))
        guard let endpoint = SocketEndpoint.parse(lnp_name_server(servers, index), length: length),
            case .local(let reason) = LiveClassifier.live.classify(endpoint)
        else { continue }
        let denial = ProcessGate().decide(.resolve, fd: nil, transport: .udp, endpoint: endpoint, name: host, reason: reason)
        if denial != 0 { return denial }
    }
    return 0
}

/// rcmd's or rexec's connection to one address of `host` (the sockaddr carries the port).
@_cdecl("lnp_gate_remote_command")
public func lnpGateRemoteCommand(_ address: UnsafeRawPointer?, _ length: UInt32, _ host: UnsafePointer<CChar>?) -> Int32 {
    guard let endpoint = SocketEndpoint.parse(address, length: Int(length)),
        case .local(let reason) = LiveClassifier.live.classify(endpoint)
    else { return 0 }
    return ProcessGate().decide(.connect, fd: nil, transport: .tcp, endpoint: endpoint, name: LibraryCall.name(host), reason: reason)
}

@_cdecl("lnp_dns_question_name")
public func lnpDNSQuestionName(
    _ message: UnsafePointer<UInt8>?, _ length: Int32, _ name: UnsafeMutablePointer<CChar>?, _ capacity: Int32
) -> Int32 {
    guard let message, let name, length > 0, capacity > 0, ProgramMemory.isPlausible(message) else { return -1 }
    let found = DNSMessage.questionName(
        UnsafeRawBufferPointer(start: message, count: Int(length)),
        into: UnsafeMutableRawBufferPointer(start: name, count: Int(capacity)))
    return found.map { Int32($0) } ?? -1
}

enum LibraryCall {
    /// A name the program passed, as bytes (empty for NULL or a pointer that cannot be read).
    static func name(_ pointer: UnsafePointer<CChar>?) -> UnsafeBufferPointer<UInt8> {
        guard let pointer, ProgramMemory.isPlausible(pointer) else { return UnsafeBufferPointer(start: nil, count: 0) }
        return CString.bytes(pointer, limit: 1025)
    }
}

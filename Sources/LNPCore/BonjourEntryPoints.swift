import LNPSys

// Bonjour through the system's mDNS daemon, for the hooks of CShim/hooks/dnssd.c (Apple's
// dns_sd.h API) and CShim/hooks/bus_calls.c (D-Bus method calls to the daemons).

/// A dns_sd.h call (`lnp_bonjour_call`): `name` and `type` as the program gave them (either
/// may be NULL). Returns an `lnp_bonjour_outcome`.
@_cdecl("lnp_gate_bonjour")
public func lnpGateBonjour(_ call: Int32, _ name: UnsafePointer<CChar>?, _ type: UnsafePointer<CChar>?) -> Int32 {
    let nameBytes = name.map { CString.bytes($0, limit: 256) } ?? UnsafeBufferPointer(start: nil, count: 0)
    let typeBytes = type.map { CString.bytes($0, limit: 256) } ?? UnsafeBufferPointer(start: nil, count: 0)
    let operation: Operation
    var subject: StaticString = ""
    switch call {
    case Int32(LNP_BONJOUR_BROWSE.rawValue): operation = .browse
    case Int32(LNP_BONJOUR_RESOLVE_SERVICE.rawValue): operation = .resolveService
    case Int32(LNP_BONJOUR_REGISTER.rawValue): operation = .register
    case Int32(LNP_BONJOUR_DOMAINS.rawValue):
        operation = .browse
        subject = "(domains)"
    default:
        // A query of a name: multicast DNS only for a name in `.local`.
        guard LocalName.isLocal(nameBytes) else { return Int32(LNP_BONJOUR_ALLOWED.rawValue) }
        operation = .resolve
    }
    return Int32(BonjourGate.decide(operation, name: nameBytes, type: typeBytes, subject: subject).rawValue)
}

/// Nonzero when a D-Bus method call about to be sent is one lnp gates (`BusMethod`), whose
/// arguments `lnp_gate_bus_call` then wants. `interface` may be NULL (a call may leave it out).
@_cdecl("lnp_bus_method_is_gated")
public func lnpBusMethodIsGated(_ interface: UnsafePointer<CChar>?, _ member: UnsafePointer<CChar>?, _ signature: UnsafePointer<CChar>?) -> Int32 {
    guard let member, let signature else { return 0 }
    return BusMethod.find(
        interface: interface.map { CString.bytes($0, limit: 256) }, member: CString.bytes(member, limit: 256),
        signature: CString.bytes(signature, limit: 256)) != nil ? 1 : 0
}

/// A gated D-Bus method call (`lnp_bus_method_is_gated`), with its
/// first arguments: `arguments[i]` the i-th one's text, NULL where it is not a string.
/// Returns an `lnp_bonjour_outcome`.
@_cdecl("lnp_gate_bus_call")
public func lnpGateBusCall(
    _ interface: UnsafePointer<CChar>?, _ member: UnsafePointer<CChar>?, _ signature: UnsafePointer<CChar>?,
    _ arguments: UnsafePointer<UnsafePointer<CChar>?>?, _ count: Int32
) -> Int32 {
    guard let member, let signature,
        let method = BusMethod.find(
            interface: interface.map { CString.bytes($0, limit: 256) }, member: CString.bytes(member, limit: 256),
            signature: CString.bytes(signature, limit: 256))
    else { return Int32(LNP_BONJOUR_ALLOWED.rawValue) }
    func argument(_ index: Int8) -> UnsafeBufferPointer<UInt8> {
        guard index >= 0, Int32(index) < count, let arguments, let text = arguments[Int(index)] else {
            return UnsafeBufferPointer(start: nil, count: 0)
        }
        return CString.bytes(text, limit: 256)
    }
    if method.localArgument >= 0 && !LocalName.isLocal(argument(method.localArgument)) {
        return Int32(LNP_BONJOUR_ALLOWED.rawValue)
    }
    return Int32(BonjourGate.decide(
        method.operation, name: argument(method.nameArgument), type: argument(method.typeArgument), subject: method.subject
    ).rawValue)
}

/// Bonjour operations in the program's process: undeclared types are refused without
/// asking; the rest are decided as every local-network operation is (`ProcessGate`), with
/// what they browse, resolve or advertise as the record's host.
enum BonjourGate {
    static func decide(
        _ operation: Operation, name: UnsafeBufferPointer<UInt8>, type: UnsafeBufferPointer<UInt8>, subject: StaticString
    ) -> lnp_bonjour_outcome {
        var memory = InlineArray<520, UInt8>(repeating: 0)
        return withUnsafeMutableBytes(of: &memory) { raw in
            var writer = ByteWriter(raw)
            BonjourSubject.write(name: name, type: type, subject: subject, to: &writer)
            let host = UnsafeBufferPointer(start: raw.baseAddress!.assumingMemoryBound(to: UInt8.self), count: writer.count)
            let checksType = operation == .browse || operation == .register
            if checksType && !type.isEmpty && !DeclaredServices.declares(type) {
                ProcessGate().refuse(operation, name: host, reason: .bonjour, basis: .undeclared)
                return LNP_BONJOUR_UNDECLARED
            }
            let error = ProcessGate().decide(operation, fd: nil, transport: nil, endpoint: nil, name: host, reason: .bonjour)
            return error == 0 ? LNP_BONJOUR_ALLOWED : LNP_BONJOUR_DENIED
        }
    }
}

/// What the record names for a Bonjour operation: `instance._type._tcp` for a service, the
/// type when browsing, the name for a name, or what a call without either is about.
public enum BonjourSubject {
    public static func write(name: UnsafeBufferPointer<UInt8>, type: UnsafeBufferPointer<UInt8>, subject: StaticString,
                             to writer: inout ByteWriter) {
        writer.append(bytes: UnsafeBufferPointer(rebasing: name.prefix(250)))
        if !name.isEmpty && !type.isEmpty { writer.append(UInt8(ascii: ".")) }
        writer.append(bytes: UnsafeBufferPointer(rebasing: type.prefix(250)))
        if name.isEmpty && type.isEmpty { writer.append(subject) }
    }
}

/// The types the program declared, as lnp-run holds them (`services` request): asked at each
/// Bonjour operation that names a type — these are rare, and each takes the daemon a round
/// trip of its own.
enum DeclaredServices {
    static func declares(_ type: UnsafeBufferPointer<UInt8>) -> Bool {
        let settings = SettingsStore.current()
        var memory = InlineArray<1024, UInt8>(repeating: 0)
        return withUnsafeMutableBytes(of: &memory) { raw in
            let request: StaticString = "services"
            guard let count = RunChannel.request(
                UnsafeRawBufferPointer(start: request.utf8Start, count: request.utf8CodeUnitCount), to: settings.runPID, reply: raw)
            else { return true }  // no lnp-run: the settings deny it anyway
            let reply = UnsafeBufferPointer(start: raw.baseAddress!.assumingMemoryBound(to: UInt8.self), count: count)
            guard count >= 3, Bytes.equal(UnsafeBufferPointer(rebasing: reply[0..<3]), "ok\n") else { return true }
            return BonjourServices.declares(UnsafeBufferPointer(rebasing: reply[3...]), type)
        }
    }
}

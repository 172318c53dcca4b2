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
        // A query of a name's records: by multicast DNS for a name in `.local`, and for the
        // reverse names of addresses (which the daemon asks the link about).
        guard LocalName.isLocal(nameBytes) || LocalName.isReverse(nameBytes) else { return Int32(LNP_BONJOUR_ALLOWED.rawValue) }
        operation = .resolve
        return Int32(BonjourGate.decide(operation, name: nameBytes, type: typeBytes, subject: subject, namesARecord: true).rawValue)
    }
    // Apple's browse does not fail while the person is asked: it finds nothing.
    let waits = call == Int32(LNP_BONJOUR_BROWSE.rawValue)
    return Int32(BonjourGate.decide(operation, name: nameBytes, type: typeBytes, subject: subject, waitsWhileAsking: waits).rawValue)
}

/// Nonzero when a D-Bus method call about to be sent is one lnp gates (`BusMethod`), whose
/// arguments `lnp_gate_bus_call` then wants. `interface` may be NULL (a call may leave it out).
@_cdecl("lnp_bus_method_is_gated")
public func lnpBusMethodIsGated(_ interface: UnsafePointer<CChar>?, _ member: UnsafePointer<CChar>?, _ signature: UnsafePointer<CChar>?) -> Int32 {
    busMethod(interface, member, signature) != nil ? 1 : 0
}

/// A gated D-Bus method call (`lnp_bus_method_is_gated`), with its
/// first arguments: `arguments[i]` the i-th one's text, NULL where it is not a string.
/// Returns an `lnp_bonjour_outcome`.
@_cdecl("lnp_gate_bus_call")
public func lnpGateBusCall(
    _ interface: UnsafePointer<CChar>?, _ member: UnsafePointer<CChar>?, _ signature: UnsafePointer<CChar>?,
    _ arguments: UnsafePointer<UnsafePointer<CChar>?>?, _ count: Int32
) -> Int32 {
    guard let method = busMethod(interface, member, signature) else { return Int32(LNP_BONJOUR_ALLOWED.rawValue) }
    return Int32(BusCallGate.decide(method) { index in
        guard index >= 0, Int32(index) < count, let arguments, let text = arguments[Int(index)] else {
            return UnsafeBufferPointer(start: nil, count: 0)
        }
        return CString.bytes(text, limit: 256)
    }.rawValue)
}

/// libdbus decides the calls on its connection `fd` itself (bus_calls.c): the gate on the
/// stream (`BusStreamGate`) lets it be.
@_cdecl("lnp_bus_stream_claim")
public func lnpBusStreamClaim(_ fd: Int32) { BusStreamGate.claim(fd) }

/// A gated D-Bus method call, however it was read: by libdbus's accessors or from the stream.
enum BusCallGate {
    /// `argument(i)`: the text of the body's i-th argument, empty where it is none.
    static func decide(_ method: BusMethod, argument: (Int8) -> UnsafeBufferPointer<UInt8>) -> lnp_bonjour_outcome {
        guard method.asksTheLink(argument(method.localArgument)) else { return LNP_BONJOUR_ALLOWED }
        return BonjourGate.decide(
            method.operation, name: argument(method.nameArgument), type: argument(method.typeArgument), subject: method.subject,
            namesARecord: method.namesARecord)
    }

    /// A call read from the stream: `bytes` its start (`BusStream.readLimit` at most). If its
    /// arguments are not all there (a body longer than that), it is decided as a call about
    /// the link whose type is none declared.
    static func decide(_ method: BusMethod, call: BusMessage, in bytes: UnsafeRawBufferPointer) -> lnp_bonjour_outcome {
        var found = InlineArray<8, Range<Int>?>(repeating: nil)
        let readable = call.arguments(in: bytes, into: &found) != nil
        let words = UnsafeBufferPointer(start: bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), count: bytes.count)
        let unknown: StaticString = "?"
        let local: StaticString = "local"
        return decide(method) { index in
            guard index >= 0, index < 8 else { return UnsafeBufferPointer(start: nil, count: 0) }
            if let range = found[Int(index)] { return UnsafeBufferPointer(rebasing: words[range]) }
            guard !readable else { return UnsafeBufferPointer(start: nil, count: 0) }
            let text = index == method.localArgument ? local : unknown
            return UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)
        }
    }
}

private func busMethod(
    _ interface: UnsafePointer<CChar>?, _ member: UnsafePointer<CChar>?, _ signature: UnsafePointer<CChar>?
) -> BusMethod? {
    guard let member, let signature else { return nil }
    return BusMethod.find(
        interface: interface.map { CString.bytes($0, limit: 256) }, member: CString.bytes(member, limit: 256),
        signature: CString.bytes(signature, limit: 256))
}

/// Bonjour operations in the program's process: undeclared types are refused without
/// asking; the rest are decided as every local-network operation is (`ProcessGate`), with
/// what they browse, resolve or advertise as the record's host.
enum BonjourGate {
    /// `namesARecord`: `name` is a DNS record's, whose service type (`ServiceName`) decides
    /// what the operation is — a query of a type's PTR records browses for it.
    /// `waitsWhileAsking`: denied while the person is asked (--deny-while-asking), the
    /// operation is `LNP_BONJOUR_WAITING` — it finds nothing — rather than failing.
    static func decide(
        _ operation: Operation, name: UnsafeBufferPointer<UInt8>, type: UnsafeBufferPointer<UInt8>, subject: StaticString,
        namesARecord: Bool = false, waitsWhileAsking: Bool = false
    ) -> lnp_bonjour_outcome {
        var memory = InlineArray<520, UInt8>(repeating: 0)
        return withUnsafeMutableBytes(of: &memory) { raw in
            var writer = ByteWriter(raw)
            BonjourSubject.write(name: name, type: type, subject: subject, to: &writer)
            let host = UnsafeBufferPointer(start: raw.baseAddress!.assumingMemoryBound(to: UInt8.self), count: writer.count)
            var operation = operation
            var type = type
            if namesARecord, let service = ServiceName.type(in: name) {
                type = service.type
                if operation == .resolve { operation = service.hasInstance ? .resolveService : .browse }
            }
            let checksType = operation == .browse || operation == .register
            if checksType && !type.isEmpty && !DeclaredServices.declares(type) {
                ProcessGate().refuse(operation, name: host, reason: .bonjour, basis: .undeclared)
                return LNP_BONJOUR_UNDECLARED
            }
            let answer = ProcessGate().answer(operation, fd: nil, transport: nil, endpoint: nil, name: host, reason: .bonjour)
            if answer.decision == .allow { return LNP_BONJOUR_ALLOWED }
            return waitsWhileAsking && answer.basis == .asking ? LNP_BONJOUR_WAITING : LNP_BONJOUR_DENIED
        }
    }
}

/// DNS-SD's names (RFC 6763): `_http._tcp.local` names a service type (its PTR records list
/// the instances), `_printer._sub._http._tcp.local` a subtype of it, `peer web._http._tcp.local`
/// an instance.
public enum ServiceName {
    /// The service type in `name` (`_http._tcp`), and whether an instance comes before it;
    /// nil when the name holds none. The last `_tcp` or `_udp` label, after a label that
    /// starts with an underscore, ends the type.
    public static func type(in name: UnsafeBufferPointer<UInt8>) -> (type: UnsafeBufferPointer<UInt8>, hasInstance: Bool)? {
        var found: (type: Range<Int>, labelsBefore: Int)? = nil
        var previous: Range<Int>? = nil
        var second = 0..<0  // a subtype's `_sub`, if the type comes third
        var number = 0
        var start = 0
        for index in 0...name.count where index == name.count || name[index] == UInt8(ascii: ".") {
            let label = start..<index
            start = index + 1
            if number == 1 { second = label }
            if let service = previous, !service.isEmpty, name[service.lowerBound] == UInt8(ascii: "_"),
                isProtocol(UnsafeBufferPointer(rebasing: name[label]))
            {
                found = (service.lowerBound..<label.upperBound, number - 1)
            }
            previous = label
            number += 1
        }
        guard let found else { return nil }
        // Before the type: nothing, or a subtype (`_printer._sub`) — else an instance.
        let isSubtype = found.labelsBefore == 2 && Bytes.equalIgnoringCase(UnsafeBufferPointer(rebasing: name[second]), "_sub")
        return (UnsafeBufferPointer(rebasing: name[found.type]), found.labelsBefore > 0 && !isSubtype)
    }

    /// `_tcp` or `_udp`, in any case.
    static func isProtocol(_ label: UnsafeBufferPointer<UInt8>) -> Bool {
        Bytes.equalIgnoringCase(label, "_tcp") || Bytes.equalIgnoringCase(label, "_udp")
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

/// The D-Bus methods by which a program has an mDNS daemon browse, resolve or advertise for
/// it — Avahi's (`org.freedesktop.Avahi`) and systemd-resolved's (`org.freedesktop.resolve1`)
/// — as data: the one list the hooks on D-Bus libraries (CShim/hooks/bus_calls.c) and any
/// other reader of method calls consult.
///
/// A method is known by its member and the signature of its arguments — for Avahi, which reads
/// the arguments it expects and ignores any after them, the signature's start; the interface,
/// which a method call may leave out (the daemon dispatches it all the same), must be the
/// method's when present. Argument numbers count the body's arguments from 0.
public struct BusMethod {
    public enum Service: UInt8, BitwiseCopyable {
        case avahiServer, avahiEntryGroup, resolved
    }

    public var service: Service
    public var operation: Operation
    /// The argument that names what is browsed, resolved or advertised, if any.
    public var nameArgument: Int8 = -1
    /// The argument that holds a service type, if any.
    public var typeArgument: Int8 = -1
    /// For what has neither: what the record names instead.
    public var subject: StaticString = ""
    /// systemd-resolved resolves unicast DNS too: the call asks the link only when this
    /// argument is a name in `.local`, or the domain itself (mDNS), or, for a name, a single
    /// label (LLMNR). -1: always.
    public var localArgument: Int8 = -1
    /// Whether the name is a DNS record's (`ServiceName`): a type's PTR records are a browse for
    /// it, or advertise it.
    public var namesARecord = false
    /// Whether the call goes to multicast DNS, given its `localArgument`'s text.
    public func asksTheLink(_ argument: UnsafeBufferPointer<UInt8>) -> Bool {
        localArgument < 0 || LocalName.isLocalDomain(argument)
            || operation == .resolve && LocalName.isSingleLabel(argument)
            // resolved reads escapes (`peer.loca\108` is peer.local): such a name is taken as local.
            || argument.contains(UInt8(ascii: "\\"))
    }

    /// The gated method with this interface (nil when the call names none), member and
    /// argument signature, if it is one.
    public static func find(
        interface: UnsafeBufferPointer<UInt8>?, member: UnsafeBufferPointer<UInt8>, signature: UnsafeBufferPointer<UInt8>
    ) -> BusMethod? {
        guard let method = byMember(member, signature: signature) else { return nil }
        guard let interface else { return method }
        switch method.service {
        case .avahiServer:
            return Bytes.equal(interface, "org.freedesktop.Avahi.Server") || Bytes.equal(interface, "org.freedesktop.Avahi.Server2")
                ? method : nil
        case .avahiEntryGroup: return Bytes.equal(interface, "org.freedesktop.Avahi.EntryGroup") ? method : nil
        case .resolved: return Bytes.equal(interface, "org.freedesktop.resolve1.Manager") ? method : nil
        }
    }

    private static func byMember(_ member: UnsafeBufferPointer<UInt8>, signature: UnsafeBufferPointer<UInt8>) -> BusMethod? {
        func named(_ first: StaticString, _ second: StaticString = "", _ third: StaticString = "") -> Bool {
            Bytes.equal(member, first) || second.utf8CodeUnitCount > 0 && Bytes.equal(member, second)
                || third.utf8CodeUnitCount > 0 && Bytes.equal(member, third)
        }
        // Avahi's arguments as it reads them (dbus_message_get_args ignores what follows).
        func signed(_ text: StaticString) -> Bool {
            signature.count >= text.utf8CodeUnitCount
                && Bytes.equal(UnsafeBufferPointer(rebasing: signature[0..<text.utf8CodeUnitCount]), text)
        }
        // sd-bus refuses arguments it does not expect.
        func signedExactly(_ text: StaticString) -> Bool { Bytes.equal(signature, text) }
        // Avahi 0.8, org.freedesktop.Avahi.Server(2): the `…New` methods make an object whose
        // signals bring the results; `…Prepare` (Server2) makes one that starts on Start.
        if named("ServiceBrowserNew", "ServiceBrowserPrepare") && signed("iissu") {
            return BusMethod(service: .avahiServer, operation: .browse, typeArgument: 2)
        }
        if named("ServiceTypeBrowserNew", "ServiceTypeBrowserPrepare") && signed("iisu") {
            return BusMethod(service: .avahiServer, operation: .browse, subject: "(service types)")
        }
        if named("DomainBrowserNew", "DomainBrowserPrepare") && signed("iisiu") {
            return BusMethod(service: .avahiServer, operation: .browse, subject: "(domains)")
        }
        if named("RecordBrowserNew", "RecordBrowserPrepare") && signed("iisqqu") {
            return BusMethod(service: .avahiServer, operation: .resolve, nameArgument: 2, namesARecord: true)
        }
        if named("ServiceResolverNew", "ServiceResolverPrepare", "ResolveService") && signed("iisssiu") {
            return BusMethod(service: .avahiServer, operation: .resolveService, nameArgument: 2, typeArgument: 3)
        }
        if named("HostNameResolverNew", "HostNameResolverPrepare", "ResolveHostName") && signed("iisiu") {
            return BusMethod(service: .avahiServer, operation: .resolve, nameArgument: 2)
        }
        if named("AddressResolverNew", "AddressResolverPrepare", "ResolveAddress") && signed("iisu") {
            return BusMethod(service: .avahiServer, operation: .resolve, nameArgument: 2)
        }
        // An entry group (EntryGroupNew takes nothing) is gated where it is given something
        // to advertise.
        if named("AddService") && signed("iiussssqaay") || named("AddServiceSubtype") && signed("iiussss")
            || named("UpdateServiceTxt") && signed("iiusssaay")
        {
            return BusMethod(service: .avahiEntryGroup, operation: .register, nameArgument: 3, typeArgument: 4)
        }
        if named("AddAddress") && signed("iiuss") {
            return BusMethod(service: .avahiEntryGroup, operation: .register, nameArgument: 3)
        }
        if named("AddRecord") && signed("iiusqquay") {
            return BusMethod(service: .avahiEntryGroup, operation: .register, nameArgument: 3, namesARecord: true)
        }
        // systemd-resolved, org.freedesktop.resolve1.Manager.
        if named("ResolveHostname") && signedExactly("isit") {
            return BusMethod(service: .resolved, operation: .resolve, nameArgument: 1, localArgument: 1)
        }
        if named("ResolveRecord") && signedExactly("isqqt") {
            return BusMethod(service: .resolved, operation: .resolve, nameArgument: 1, localArgument: 1, namesARecord: true)
        }
        if named("ResolveService") && signedExactly("isssit") {
            return BusMethod(service: .resolved, operation: .resolveService, nameArgument: 1, typeArgument: 2, localArgument: 3)
        }
        if named("RegisterService") && signedExactly("sssqqqaa{say}") {
            return BusMethod(service: .resolved, operation: .register, nameArgument: 1, typeArgument: 2)
        }
        return nil
    }
}

import LNPCoreHost
import LNPTools

/// One ask as it arrives (Sources/LNPCore/Asking.swift writes it): what the asking process
/// reports it is about to do, field by field, each checked. Nothing here is believed beyond
/// its form: who asks comes from the kernel, and why the operation is local from lnp-run's
/// own look at it (`AskCheck`).
struct ReceivedAsk: Equatable {
    var holding: Bool
    /// The asker, as a nested lnp-run passing an ask up names it (it knows it from the
    /// kernel); nil from any other process, and believed only from a nested lnp-run.
    var onBehalfOf: Int32?
    var operation: LNPCoreHost.Operation
    var transport: Transport?
    var endpoint: SocketEndpoint?
    /// The interface the process's route left by.
    var via: String?
    var name: String?
    var usage: String

    static func parse(_ bytes: [UInt8]) -> ReceivedAsk? {
        let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        guard lines.count == 2 || lines.count == 3 else { return nil }
        let head = lines[0].split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false).map(text)
        guard (1...2).contains(head.count), head[0] == "hold" || head[0] == "now" else { return nil }
        var onBehalfOf: Int32? = nil
        if head.count == 2 {
            guard let pid = Int32(head[1]), pid > 0 else { return nil }
            onBehalfOf = pid
        }
        let fields = lines[1].split(separator: UInt8(ascii: " "), maxSplits: 5, omittingEmptySubsequences: false)
        guard fields.count == 6, let operation = LNPCoreHost.Operation(word: text(fields[0])),
            let transport = optional(fields[1], { Transport(word: text($0)) }), let endpoint = optional(fields[2], endpoint(_:)),
            let port = optional(fields[3], { UInt16(text($0)) }), let via = optional(fields[4], interfaceName(_:)),
            let name = optional(fields[5], name(_:))
        else { return nil }
        // A port where, and only where, the operation has one.
        guard (port != nil) == (endpoint != nil && operation.hasPort(on: transport)) else { return nil }
        let usage = lines.count == 3 ? lines[2] : []
        guard usage.count <= AskRequest.usageBudget else { return nil }
        var ask = ReceivedAsk(
            holding: head[0] == "hold", onBehalfOf: onBehalfOf, operation: operation, transport: transport,
            endpoint: endpoint, via: via, name: name, usage: text(usage))
        if let port { ask.endpoint?.port = port }
        return ask
    }

    /// The ask as a nested lnp-run passes it up: on behalf of `pid`, the asker it knows.
    func wire(onBehalfOf pid: Int32) -> [UInt8] {
        var fields = [operation.wordText, transport?.wordText ?? "-"]
        if let endpoint {
            fields.append(AddressText.string(endpoint.address) + (endpoint.scopeID == 0 ? "" : "%\(endpoint.scopeID)"))
            fields.append(operation.hasPort(on: transport) ? String(endpoint.port) : "-")
        } else {
            fields += ["-", "-"]
        }
        fields += [via ?? "-", name ?? "-"]
        return Array("\(holding ? "hold" : "now") \(pid)\n\(fields.joined(separator: " "))\n\(usage)".utf8)
    }

    /// What the process reports it is doing, in the audit's words:
    /// `connect tcp 10.77.0.2:80`, `resolve printer.local`, `connect tcp fileserver (10.77.0.2:514)`.
    var report: String {
        var words = [operation.wordText]
        if let transport { words.append(transport.wordText) }
        let destination = endpoint.map(destinationText)
        if let name {
            words.append(destination.map { "\(name) (\($0))" } ?? name)
        } else if let destination {
            words.append(destination)
        }
        return words.joined(separator: " ")
    }

    private func destinationText(_ endpoint: SocketEndpoint) -> String {
        var address = AddressText.string(endpoint.address)
        if endpoint.scopeID != 0 { address += "%" + (VerdictText.interfaceName(endpoint.scopeID) ?? String(endpoint.scopeID)) }
        guard operation.hasPort(on: transport), endpoint.port != 0 else { return address }
        return endpoint.address.family == .v6 ? "[\(address)]:\(endpoint.port)" : "\(address):\(endpoint.port)"
    }

    // MARK: Fields

    private static func text(_ bytes: ArraySlice<UInt8>) -> String { String(decoding: bytes, as: UTF8.self) }

    /// A field that may be `-` (absent): `.some(nil)` then; otherwise `.some(value)` if it
    /// reads, and nil (the ask is malformed) if it does not.
    private static func optional<T>(_ field: ArraySlice<UInt8>, _ read: (ArraySlice<UInt8>) -> T?) -> T?? {
        if field.elementsEqual([UInt8(ascii: "-")]) { return .some(nil) }
        guard let value = read(field) else { return nil }
        return .some(value)
    }

    /// An address with an optional `%` and interface index.
    private static func endpoint(_ field: ArraySlice<UInt8>) -> SocketEndpoint? {
        let parts = field.split(separator: UInt8(ascii: "%"), maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = Array(parts[0]).withUnsafeBufferPointer({ IPAddress.parse($0) }) else { return nil }
        var scopeID: UInt32 = 0
        if parts.count == 2 {
            guard let number = UInt32(text(parts[1])), number > 0 else { return nil }
            scopeID = number
        }
        return SocketEndpoint(address: address.unmapped, scopeID: scopeID)
    }

    /// An interface name as the kernel allows them: 1 to 15 bytes, no `/`, no space; and, in
    /// an ask, nothing unprintable.
    private static func interfaceName(_ field: ArraySlice<UInt8>) -> String? {
        guard (1...15).contains(field.count), field.allSatisfy({ $0 > 0x20 && $0 < 0x7f && $0 != UInt8(ascii: "/") })
        else { return nil }
        return text(field)
    }

    private static func name(_ field: ArraySlice<UInt8>) -> String? {
        (1...AskRequest.nameBudget).contains(field.count) ? text(field) : nil
    }
}

/// The audit's words for an enumeration of the core (`op`, `transport`), read back.
protocol AuditWord: RawRepresentable where RawValue == UInt8 {
    var word: StaticString { get }
}

extension AuditWord {
    init?(word: String) {
        var raw: UInt8 = 0
        while let candidate = Self(rawValue: raw) {
            if candidate.wordText == word {
                self = candidate
                return
            }
            raw += 1
        }
        return nil
    }

    var wordText: String { word.description }
}

extension LNPCoreHost.Operation: AuditWord {}
extension Transport: AuditWord {}

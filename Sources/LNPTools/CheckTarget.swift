import LNPCoreHost

#if canImport(Glibc)
import Glibc
#endif

/// What `lnp check` is asked about: an address (with an optional `%scope` and brackets)
/// or a `.local` name.
public enum CheckTarget: Equatable {
    case address(SocketEndpoint, text: String)
    case localName(String)

    public enum Failure: Error, Equatable, CustomStringConvertible {
        case notAnAddress(String)
        case unknownScope(String)

        public var description: String {
            switch self {
            case .notAnAddress(let text): return "'\(text)' is not an IP address or a .local name"
            case .unknownScope(let text): return "'\(text)' names no interface here"
            }
        }
    }

    public static func parse(_ text: String) -> Result<CheckTarget, Failure> {
        var body = Substring(text)
        if body.hasPrefix("[") && body.hasSuffix("]") { body = body.dropFirst().dropLast() }
        var scopeID: UInt32 = 0
        if let percent = body.firstIndex(of: "%") {
            let scope = String(body[body.index(after: percent)...])
            body = body[..<percent]
            if let number = UInt32(scope) {
                scopeID = number
            } else {
                scopeID = if_nametoindex(scope)
                if scopeID == 0 { return .failure(.unknownScope(scope)) }
            }
        }
        let bytes = Array(body.utf8)
        let address = bytes.withUnsafeBufferPointer { IPAddress.parse($0) }
        if let address {
            return .success(.address(SocketEndpoint(address: address.unmapped, scopeID: scopeID), text: text))
        }
        if scopeID == 0 && bytes.withUnsafeBufferPointer({ LocalName.isLocal($0) }) { return .success(.localName(text)) }
        return .failure(.notAnAddress(text))
    }
}

/// Verdicts and reasons as text, with the same words as the audit's `reason`.
public enum VerdictText {
    public static func reason(_ verdict: Verdict, scopeName: String? = nil) -> String {
        var storage = [UInt8](repeating: 0, count: 512)
        return storage.withUnsafeMutableBytes { raw in
            var writer = ByteWriter(raw)
            switch verdict {
            case .local(let reason):
                let name = Array((scopeName ?? "").utf8).withUnsafeBufferPointer { InterfaceName($0) }
                reason.write(to: &writer, scopeName: name)
            case .notLocal(let reason):
                reason.write(to: &writer)
            }
            return String(decoding: writer.written, as: UTF8.self)
        }
    }

    public static func interfaceName(_ index: UInt32) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(IF_NAMESIZE) + 1)
        guard if_indextoname(index, &buffer) != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Addresses in their canonical text form (the audit's).
public enum AddressText {
    public static func string(_ address: IPAddress) -> String {
        var storage = [UInt8](repeating: 0, count: 64)
        return storage.withUnsafeMutableBytes { raw in
            var writer = ByteWriter(raw)
            address.write(to: &writer)
            return String(decoding: writer.written, as: UTF8.self)
        }
    }
}

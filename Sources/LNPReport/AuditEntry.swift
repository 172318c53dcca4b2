import Foundation
import LNPTools

/// One record of an audit file, as `lnp report` and `lnp-run --summary` read it (the
/// preload writes it: Sources/LNPCore/AuditRecord.swift).
///
/// What a report needs is required: `time`, `program`, `op`, `decision`, `attribution`, and a
/// `host` or an `address`. The other fields are checked when present, so that a reader of
/// this version keeps working on records with fields added or left out.
public struct AuditEntry: Equatable, Sendable {
    public enum Decision: String, Sendable { case allow, deny }
    public enum Attribution: String, Sendable { case app, user }

    public var time: AuditTime
    public var pid: Int?
    public var program: String
    public var exe: String?
    /// `connect`, `sendto`, `sendmsg`, `sendmmsg`, `join`, `bind`, `resolve` or `socket`; kept as
    /// written, so that an operation added later is reported rather than refused.
    public var op: String
    public var fd: Int?
    public var transport: String?
    public var address: String?
    public var port: Int?
    /// The name, when known: the name resolved, or a domain the program declared.
    public var host: String?
    public var domains: [String]
    public var reason: String?
    public var decision: Decision
    public var because: String?
    public var attribution: Attribution
    /// False for ordinary network activity (recorded only when all activity is); records
    /// written before the field existed were all local.
    public var isLocal: Bool
    /// Which layer decided, as lnp-run notes it: `preload` or `supervisor`.
    public var by: String?
    /// Records of the run lost before this one (lnp-run notes it on the first record it writes
    /// after a loss).
    public var lost: Lost?

    /// `"lost":{"count":N,"because":"…"}`.
    public struct Lost: Equatable, Sendable {
        public var count: Int
        public var because: String

        public init(count: Int, because: String) {
            self.count = count
            self.because = because
        }
    }

    public init(
        time: AuditTime, pid: Int? = nil, program: String, exe: String? = nil, op: String, fd: Int? = nil,
        transport: String? = nil, address: String? = nil, port: Int? = nil, host: String? = nil,
        domains: [String] = [], reason: String? = nil, decision: Decision, because: String? = nil,
        attribution: Attribution, isLocal: Bool = true, by: String? = nil, lost: Lost? = nil
    ) {
        self.time = time
        self.pid = pid
        self.program = program
        self.exe = exe
        self.op = op
        self.fd = fd
        self.transport = transport
        self.address = address
        self.port = port
        self.host = host
        self.domains = domains
        self.reason = reason
        self.decision = decision
        self.because = because
        self.attribution = attribution
        self.isLocal = isLocal
        self.by = by
        self.lost = lost
    }

    /// What the operation reached, or tried to: the name when known, else the address; for
    /// opening a socket that has none (a packet socket), the kind of socket.
    public var domain: String { host ?? address ?? "\(transport ?? "other") socket" }

    /// Reads one line of an audit file.
    public static func parse(line: some DataProtocol) throws(AuditLineError) -> AuditEntry {
        try parse(line: line, using: JSONDecoder())
    }

    /// The same, with a decoder made once for a whole file.
    static func parse(line: some DataProtocol, using decoder: JSONDecoder) throws(AuditLineError) -> AuditEntry {
        let quick = line.withContiguousStorageIfAvailable { AuditLineScanner.entry($0) }
            ?? Array(line).withUnsafeBufferPointer { AuditLineScanner.entry($0) }
        if let quick { return quick }
        return try decoded(line: Data(line), using: decoder)
    }

    /// The same, for a line in a reader's buffer.
    static func parse(bytes: UnsafeBufferPointer<UInt8>, using decoder: JSONDecoder) throws(AuditLineError) -> AuditEntry {
        if let quick = AuditLineScanner.entry(bytes) { return quick }
        return try decoded(line: Data(buffer: bytes), using: decoder)
    }

    /// A line read by Foundation's decoder: the lines the scanner leaves, which it reads or
    /// says what is wrong with.
    static func decoded(line: Data, using decoder: JSONDecoder) throws(AuditLineError) -> AuditEntry {
        let entry: AuditEntry
        do {
            entry = try decoder.decode(AuditEntry.self, from: line)
        } catch let error as DecodingError {
            throw AuditLineError(error)
        } catch {
            throw AuditLineError(message: "not JSON")
        }
        // The decoder reads a field given twice at its first value: which one was meant?
        if let key = line.withUnsafeBytes({ AuditLineScanner.repeatedKey($0.bindMemory(to: UInt8.self)) }) {
            throw AuditLineError(message: "field \(AuditLineError.quoted(key)) given twice")
        }
        return entry
    }
}

/// Why a line is not a record, in words that name the field.
public struct AuditLineError: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String

    public init(message: String) { self.message = message }

    public var description: String { message }

    init(_ error: DecodingError) {
        switch error {
        case .keyNotFound(let key, let context):
            message = "missing field \"\(Self.path(context.codingPath + [key]))\""
        case .valueNotFound(let type, let context):
            message = "\(Self.field(context)) is null, expected \(Self.kind(type))"
        case .typeMismatch(let type, let context):
            message = context.codingPath.isEmpty
                ? "not a JSON object" : "\(Self.field(context)) is not \(Self.kind(type))"
        case .dataCorrupted(let context):
            message = context.codingPath.isEmpty ? "not JSON" : "\(Self.field(context)): \(context.debugDescription)"
        @unknown default:
            message = "not a record"
        }
    }

    /// A value from the line, for a message on a terminal: quoted, escaped as in JSON, with
    /// no control or formatting character left, and cut short.
    static func quoted(_ text: String) -> String {
        UntrustedText.visible(text.count <= 40 ? JSONText.string(text) : JSONText.string(String(text.prefix(40))) + "…")
    }

    private static func field(_ context: DecodingError.Context) -> String {
        "field \"\(path(context.codingPath))\""
    }

    /// `domains[2]` rather than `domains.Index 2`; `lost.count`.
    private static func path(_ keys: [any CodingKey]) -> String {
        var path = ""
        for key in keys {
            if let index = key.intValue { path += "[\(index)]" } else { path += (path.isEmpty ? "" : ".") + key.stringValue }
        }
        return path
    }

    private static func kind(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Int.Type, is Double.Type: return "a whole number"  // Double: see wholeNumber
        case is Bool.Type: return "true or false"
        case is [String].Type: return "a list"
        case is AuditEntry.Lost.Type, is [String: Any].Type: return "an object"
        default: return "a \(type)"
        }
    }
}

extension AuditEntry: Decodable {
    private enum Field: String, CodingKey {
        case time, pid, program, exe, op, fd, transport, address, port, host, domains, reason, decision, because,
            attribution, local, by, lost
    }

    public init(from decoder: any Decoder) throws {
        let record = try decoder.container(keyedBy: Field.self)
        let timeText = try record.decode(String.self, forKey: .time)
        guard let time = AuditTime(rfc3339: timeText) else {
            throw DecodingError.dataCorruptedError(
                forKey: .time, in: record, debugDescription: "not an RFC 3339 time: \(AuditLineError.quoted(timeText))")
        }
        self.time = time
        pid = try Self.wholeNumber(.pid, in: record)
        program = try record.decode(String.self, forKey: .program)
        exe = try record.decodeIfPresent(String.self, forKey: .exe)
        op = try record.decode(String.self, forKey: .op)
        fd = try Self.wholeNumber(.fd, in: record)
        transport = try record.decodeIfPresent(String.self, forKey: .transport)
        address = try record.decodeIfPresent(String.self, forKey: .address)
        port = try Self.wholeNumber(.port, in: record)
        host = try record.decodeIfPresent(String.self, forKey: .host)
        domains = try record.decodeIfPresent([String].self, forKey: .domains) ?? []
        reason = try record.decodeIfPresent(String.self, forKey: .reason)
        decision = try Self.word(Decision.self, .decision, in: record)
        because = try record.decodeIfPresent(String.self, forKey: .because)
        attribution = try Self.word(Attribution.self, .attribution, in: record)
        isLocal = try record.decodeIfPresent(Bool.self, forKey: .local) ?? true
        by = try record.decodeIfPresent(String.self, forKey: .by)
        lost = try record.decodeIfPresent(Lost.self, forKey: .lost)
        if program.isEmpty {
            throw DecodingError.dataCorruptedError(forKey: .program, in: record, debugDescription: "empty")
        }
        if host == nil && address == nil && op != "socket" {
            throw DecodingError.dataCorruptedError(
                forKey: op == "resolve" ? .host : .address, in: record,
                debugDescription: "null, and the record has no other destination")
        }
    }

    /// A whole number, read as a Double first: this JSONDecoder calls 80.5 for an Int
    /// "not valid JSON", without naming the field.
    fileprivate static func wholeNumber<Key: CodingKey>(_ field: Key, in record: KeyedDecodingContainer<Key>) throws -> Int? {
        guard let number = try record.decodeIfPresent(Double.self, forKey: field) else { return nil }
        guard number.rounded() == number, abs(number) < 1e15 else {
            throw DecodingError.typeMismatch(
                Int.self, DecodingError.Context(codingPath: record.codingPath + [field], debugDescription: "\(number)"))
        }
        return Int(number)
    }

    /// One of a fixed set of words, with the ones allowed in the error.
    private static func word<Word: RawRepresentable & CaseIterable>(
        _: Word.Type, _ field: Field, in record: KeyedDecodingContainer<Field>
    ) throws -> Word where Word.RawValue == String {
        let text = try record.decode(String.self, forKey: field)
        guard let word = Word(rawValue: text) else {
            let allowed = Word.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: " or ")
            throw DecodingError.dataCorruptedError(
                forKey: field, in: record, debugDescription: "expected \(allowed), found \(AuditLineError.quoted(text))")
        }
        return word
    }
}

extension AuditEntry.Lost: Decodable {
    private enum Field: String, CodingKey { case count, because }

    public init(from decoder: any Decoder) throws {
        let lost = try decoder.container(keyedBy: Field.self)
        guard lost.contains(.count) else {
            throw DecodingError.keyNotFound(Field.count, DecodingError.Context(codingPath: lost.codingPath, debugDescription: ""))
        }
        guard let count = try AuditEntry.wholeNumber(.count, in: lost) else {
            throw DecodingError.valueNotFound(
                Int.self, DecodingError.Context(codingPath: lost.codingPath + [Field.count], debugDescription: "null"))
        }
        self.count = count
        because = try lost.decode(String.self, forKey: .because)
    }
}

extension AuditEntry.Decision: CaseIterable {}
extension AuditEntry.Attribution: CaseIterable {}

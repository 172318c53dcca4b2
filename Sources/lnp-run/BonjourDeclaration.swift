import LNPCoreHost

/// The Bonjour service types the program declares it browses for and advertises — Apple's
/// `NSBonjourServices`: `--bonjour-services _ipp._tcp,_http._tcp`, else the program's
/// `LNP_BONJOUR_SERVICES`. A process of the tree asks for it (`services`) at each Bonjour
/// operation that names a type (BonjourEntryPoints.swift); an undeclared type fails with
/// NoAuth, even when allowed. No declaration: any type.
struct BonjourDeclaration: Equatable {
    /// nil: the program declared nothing.
    var types: [String]?

    static let undeclared = BonjourDeclaration(types: nil)

    /// `text` from `source` (the option's or the variable's name, for the message): types
    /// separated by commas; an empty text declares none.
    static func parse(_ text: String, from source: String) throws(Failure) -> BonjourDeclaration {
        let entries = text.split(separator: ",", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: " ") }
        if entries == [""] { return BonjourDeclaration(types: []) }
        for entry in entries where !Array(entry.utf8).withUnsafeBufferPointer({ BonjourServices.isServiceType($0) }) {
            throw Failure("\(source): '\(TerminalText.shown(entry))' is not a Bonjour service type such as _ipp._tcp or _http._tcp")
        }
        let declaration = BonjourDeclaration(types: entries)
        guard declaration.wire.utf8.count <= longest else {
            throw Failure("\(source): the list is \(declaration.wire.utf8.count) bytes long; at most \(longest)")
        }
        return declaration
    }

    /// The longest list a process of the tree reads whole (the `services` reply's buffer,
    /// BonjourEntryPoints.swift, less the reply's first line).
    static let longest = 1000

    /// What the reply to `services` carries: the types, or `*` for any.
    var wire: String { types?.joined(separator: ",") ?? BonjourServices.anyType.description }

    init(types: [String]?) { self.types = types }

    /// From a `services` reply's second line.
    init(wire: String) {
        types = wire == BonjourServices.anyType.description ? nil : wire.split(separator: ",").map(String.init)
    }

    /// The reply to `services`.
    var reply: [UInt8] { Array("ok\n\(wire)".utf8) }

    /// A nested run may use what both it and the enclosing run declare.
    func narrowed(by enclosing: BonjourDeclaration) -> BonjourDeclaration {
        guard let outer = enclosing.types else { return self }
        guard let own = types else { return enclosing }
        return BonjourDeclaration(types: own.filter { type in
            outer.contains { Array($0.utf8).withUnsafeBufferPointer { list in
                Array(type.utf8).withUnsafeBufferPointer { BonjourServices.declares(list, $0) } } }
        })
    }
}

private extension Substring {
    func trimmingCharacters(in characters: String) -> String {
        String(drop { characters.contains($0) }.reversed().drop { characters.contains($0) }.reversed())
    }
}

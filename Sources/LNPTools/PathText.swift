/// Paths cut and joined as text, for the paths lnp-run makes on its way to the program (its
/// own directory, the store's): a fraction of what FilePath's first use costs a start.
public enum PathText {
    /// What precedes the last `/` of `path`, trailing slashes aside (none: ""; the root's
    /// entries: "/").
    public static func directory(of path: String) -> String {
        var characters = path.utf8[...]
        while characters.count > 1 && characters.last == UInt8(ascii: "/") { characters = characters.dropLast() }
        guard let slash = characters.lastIndex(of: UInt8(ascii: "/")) else { return "" }
        var end = slash
        while end > characters.startIndex && characters[characters.index(before: end)] == UInt8(ascii: "/") {
            end = characters.index(before: end)
        }
        return end == characters.startIndex ? "/" : String(Substring(characters[..<end]))
    }

    /// The parts with one `/` between each two (none added after a part that ends with one).
    public static func join(_ parts: String...) -> String {
        var result = ""
        for part in parts {
            if result.isEmpty || result.hasSuffix("/") { result += part } else { result += "/" + part }
        }
        return result
    }
}

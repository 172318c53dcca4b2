/// A command-line parser's message as one line of lnp's: `lnp: unknown option '--bogus'`. Its
/// first line alone (what follows is usage and help, which `--help` gives), and a first
/// capital lowered, as lnp's own messages start, unless the word is all capitals (`IP`).
public enum OneLine {
    public static func of(_ message: String) -> String {
        let first = message.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        let trimmed = first.trimmingTrailingDot
        guard let head = trimmed.first, head.isUppercase,
              let second = trimmed.dropFirst().first, second.isLowercase else { return trimmed }
        return head.lowercased() + trimmed.dropFirst()
    }
}

private extension String {
    /// "Unknown option '--bogus'." reads as lnp's other messages, which end without one.
    var trimmingTrailingDot: String { hasSuffix(".") && !hasSuffix("..") ? String(dropLast()) : self }
}

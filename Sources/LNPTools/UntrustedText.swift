/// Text from the records (program paths, names) comes from the programs, untrusted: control
/// and formatting characters are shown escaped, so that none can move the cursor, recolour
/// the terminal or reorder what is shown. Shared by `lnp report` (Sources/LNPReport),
/// `lnp-run --summary` (Sources/lnp-run/OperationsSummary.swift), lnp's tables and lines
/// (`Output.table`) and the words for a path that is no program (`ProgramPathProblem`), which
/// must show a name alike.
public enum UntrustedText {
    public static func visible(_ text: String) -> String {
        // Printable ASCII, as most names are, is shown as it is.
        if text.utf8.allSatisfy({ (0x20...0x7e).contains($0) }) { return text }
        var shown = ""
        for scalar in text.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator:
                shown += "\\u{" + String(scalar.value, radix: 16) + "}"
            default:
                shown.unicodeScalars.append(scalar)
            }
        }
        return shown
    }
}

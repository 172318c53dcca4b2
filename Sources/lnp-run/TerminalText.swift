/// Text from elsewhere — a program's path, what a process reports, its usage description —
/// made safe to put on a terminal: nothing in it can move the cursor, erase, ring, switch
/// character sets or reorder what is shown. Control characters (C0, DEL, C1) are shown as
/// `\xNN`; Unicode format characters (bidirectional overrides, zero-width joiners) and line
/// and paragraph separators as `\u{NNNN}`; a backslash as `\\`, so that what is shown reads
/// back one way.
///
/// So that a field cannot pass for one of lnp-run's own lines either, a run of spaces counts
/// as one, characters that show nothing or change the one before (enclosing marks, variation
/// selectors, fillers) are escaped too, and a field is cut at `limit` characters.
enum TerminalText {
    static let limit = 200

    static func shown(_ text: String) -> String {
        var shown = ""
        shown.reserveCapacity(min(text.utf8.count, limit * 4))
        var count = 0
        var lastWasSpace = false
        for scalar in text.unicodeScalars {
            if count >= limit {
                shown += "\u{2026}"
                break
            }
            let isSpace = scalar.properties.generalCategory == .spaceSeparator
            if isSpace && lastWasSpace { continue }
            lastWasSpace = isSpace
            count += 1
            switch scalar.value {
            case 0x5c: shown += "\\\\"
            case 0..<0x20, 0x7f..<0xa0: shown += "\\x" + hex(scalar.value, digits: 2)
            case 0x115f, 0x1160, 0x3164, 0xffa0, 0xfe00...0xfe0f, 0xe0100...0xe01ef:  // fillers, variation selectors
                shown += "\\u{" + hex(scalar.value, digits: 4) + "}"
            default:
                switch scalar.properties.generalCategory {
                case .format, .lineSeparator, .paragraphSeparator, .control, .privateUse, .unassigned, .surrogate,
                    .enclosingMark:
                    shown += "\\u{" + hex(scalar.value, digits: 4) + "}"
                default: shown.unicodeScalars.append(scalar)
                }
            }
        }
        return shown
    }

    private static func hex(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}

/// Text from elsewhere — a program's path, what a process reports, its usage description —
/// made safe to put on a terminal: nothing in it can move the cursor, erase, ring, switch
/// character sets or reorder what is shown. Control characters (C0, DEL, C1) are shown as
/// `\xNN`; Unicode format characters (bidirectional overrides, zero-width joiners) and line
/// and paragraph separators as `\u{NNNN}`; a backslash as `\\`, so that what is shown reads
/// back one way.
enum TerminalText {
    static func shown(_ text: String) -> String {
        var shown = ""
        shown.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x5c: shown += "\\\\"
            case 0..<0x20, 0x7f..<0xa0: shown += "\\x" + hex(scalar.value, digits: 2)
            default:
                switch scalar.properties.generalCategory {
                case .format, .lineSeparator, .paragraphSeparator, .control, .privateUse, .unassigned, .surrogate:
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

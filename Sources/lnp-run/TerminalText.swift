/// Text from elsewhere — a program's path, what a process reports, its usage description —
/// made safe to put on a terminal: nothing in it can move the cursor, erase, ring, switch
/// character sets or reorder what is shown. Control characters (C0, DEL, C1) are shown as
/// `\xNN`; Unicode format characters (bidirectional overrides, zero-width joiners) and line
/// and paragraph separators as `\u{NNNN}`; a backslash as `\\`, so that what is shown reads
/// back one way.
///
/// So that a field cannot pass for one of lnp-run's own lines either, a run of spaces counts
/// as one, characters that show nothing or change the one before (enclosing marks, variation
/// selectors, fillers, the blank Braille pattern, a third combining mark in a row) are
/// escaped too, and a field is cut to `columns` terminal columns (wide characters taking
/// two), so that it never wraps into a line of its own.
enum TerminalText {
    static let limit = 200

    static func shown(_ text: String, columns: Int = limit) -> String {
        var shown = ""
        shown.reserveCapacity(min(text.utf8.count, columns * 4))
        var used = 0
        var lastWasSpace = false
        var marksInARow = 0
        for scalar in text.unicodeScalars {
            let isSpace = scalar.properties.generalCategory == .spaceSeparator
            if isSpace && lastWasSpace { continue }
            lastWasSpace = isSpace
            let isMark = scalar.properties.generalCategory == .nonspacingMark
            marksInARow = isMark ? marksInARow + 1 : 0
            let piece: String
            switch scalar.value {
            case 0x5c: piece = "\\\\"
            case 0..<0x20, 0x7f..<0xa0: piece = "\\x" + hex(scalar.value, digits: 2)
            case 0x115f, 0x1160, 0x3164, 0xffa0, 0x2800, 0xfe00...0xfe0f, 0xe0100...0xe01ef:  // blanks, selectors
                piece = "\\u{" + hex(scalar.value, digits: 4) + "}"
            default:
                switch scalar.properties.generalCategory {
                case .format, .lineSeparator, .paragraphSeparator, .control, .privateUse, .unassigned, .surrogate,
                    .enclosingMark:
                    piece = "\\u{" + hex(scalar.value, digits: 4) + "}"
                case .nonspacingMark where marksInARow > 2:
                    piece = "\\u{" + hex(scalar.value, digits: 4) + "}"
                default: piece = String(scalar)
                }
            }
            let width = piece.unicodeScalars.count == 1 ? (isMark ? 0 : Self.columns(of: scalar)) : piece.unicodeScalars.count
            if used + width > columns - 1 {
                shown += "\u{2026}"
                break
            }
            used += width
            shown += piece
        }
        return shown
    }

    /// Two for the wide characters of East Asian scripts and emoji, one otherwise.
    static func columns(of scalar: Unicode.Scalar) -> Int {
        switch scalar.value {
        case 0x1100...0x115f, 0x2e80...0xa4cf, 0xac00...0xd7a3, 0xf900...0xfaff, 0xfe30...0xfe4f, 0xff00...0xff60,
            0xffe0...0xffe6, 0x1f300...0x1f64f, 0x1f900...0x1f9ff, 0x20000...0x3fffd:
            return 2
        default: return 1
        }
    }

    private static func hex(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}

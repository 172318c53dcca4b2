import LNPTools

/// Text for HTML, in elements and in quoted attributes alike. Control and formatting
/// characters are first shown escaped, as on a terminal.
enum HTMLText {
    /// `text` for HTML, cut to `limit` Unicode scalars (after control characters are made
    /// visible), each at most 6 bytes once escaped. Scalars, not characters: a character is a
    /// letter with any number of marks joined to it, and a mark may follow `<` or `"` too.
    static func escape(_ text: String, limit: Int = .max) -> String {
        // Making a scalar visible never makes fewer: what follows the cut need not be looked at.
        let head = limit == .max ? text : String(text.unicodeScalars.prefix(limit + 1))
        let shown = UntrustedText.visible(head).unicodeScalars
        let cut = shown.count > limit
        var html = ""
        for scalar in cut ? shown.prefix(max(limit - 1, 0)) : shown[...] {
            switch scalar {
            case "&": html += "&amp;"
            case "<": html += "&lt;"
            case ">": html += "&gt;"
            case "\"": html += "&quot;"
            case "'": html += "&#39;"
            default: html.unicodeScalars.append(scalar)
            }
        }
        return cut ? html + "…" : html
    }

    /// `escape(text, limit:)` that a browser may break after `:` `.` `/` `%`: a long
    /// address, name or path wraps between its parts in a narrow column (`<wbr>`), rather
    /// than making the table wider than the window or being cut.
    static func escapeBreakable(_ text: String, limit: Int) -> String {
        var html = ""
        for scalar in escape(text, limit: limit).unicodeScalars {
            html.unicodeScalars.append(scalar)
            switch scalar {
            case ":", ".", "/", "%": html += "<wbr>"
            default: break
            }
        }
        return html
    }
}

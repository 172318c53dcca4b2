import LNPTools

/// Names beside a chart's rows (destinations, programs), in a monospace font: the column is as
/// wide as the longest name needs, up to `maxCells`, and a longer name is cut in its middle,
/// so that both ends stay readable: the start of a long IPv6 address and its port, the
/// interface of a scoped one (`fe80::1%eth0`), the file name at the end of a path.
enum ChartLabel {
    /// Pixels per character cell at the labels' 12 px (monospace fonts are 0.6 em wide; a
    /// little more, so that a wider font still fits).
    static let cellWidth = 7.5
    /// The widest a label column grows, in cells, and the narrowest it is.
    static let maxCells = 56
    static let minCells = 12

    /// `text` as shown (control characters made visible), cut in the middle to `cells`.
    static func fitted(_ text: String, cells: Int = maxCells) -> String {
        let shown = UntrustedText.visible(text)
        // Marks take no room, but bytes: a letter may carry thousands.
        let most = 2 * cells
        guard width(shown) > cells || shown.unicodeScalars.count > most else { return shown }
        // Keep as much of the end as of the start (the end says most: port, transport, file name).
        let scalars = Array(shown.unicodeScalars)
        let room = cells - 1
        var head = 0, tail = 0, used = 0
        var takeTail = true
        while head + tail < min(scalars.count, most) {
            let index = takeTail ? scalars.count - 1 - tail : head
            let cost = Self.cells(scalars[index])
            if used + cost > room { break }
            used += cost
            if takeTail { tail += 1 } else { head += 1 }
            takeTail.toggle()
        }
        // Marks that join a letter go with it: none starts a part.
        while tail > 0, Self.cells(scalars[scalars.count - tail]) == 0 { tail -= 1 }
        var fitted = String.UnicodeScalarView()
        fitted.append(contentsOf: scalars[..<head])
        fitted.append("…")
        fitted.append(contentsOf: scalars[(scalars.count - tail)...])
        return String(fitted)
    }

    /// The cells `text` takes in a monospace font: 2 for wide (East Asian, emoji), 0 for a mark.
    static func width(_ text: String) -> Int {
        text.utf8.allSatisfy({ $0 < 0x80 }) ? text.utf8.count : text.unicodeScalars.reduce(0) { $0 + cells($1) }
    }

    /// The width in pixels of a column for `labels` (each as `fitted` shows it), with `gap` after.
    static func columnWidth(_ labels: [String], gap: Double = 12) -> Double {
        let cells = labels.map { min(width(UntrustedText.visible($0)), maxCells) }.max() ?? 0
        return Double(max(cells, minCells)) * cellWidth + gap
    }

    private static func cells(_ scalar: Unicode.Scalar) -> Int {
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark: return 0
        default: break
        }
        switch scalar.value {
        case 0x1100...0x115F, 0x2E80...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60,
            0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x3FFFD:
            return 2
        default:
            return 1
        }
    }
}

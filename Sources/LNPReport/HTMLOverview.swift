/// The top of the page: what every program did, at a glance — its allowed, denied and
/// not-local operations as a bar and in numbers, and what denied it — then the busiest
/// destinations of all programs together, and what each cause of a denial means.
///
/// It stays within `PageLimits.overviewBytes` whatever the records hold: at most
/// `PageLimits.sections` programs and `PageLimits.chartRows` destinations have a row, names
/// are cut (`ChartLabel`), and the words of unknown causes are few (`DenialCounts.words`).
struct HTMLOverview {
    /// All the programs, busiest first.
    let programs: [ProgramReport]
    /// The programs with a section on the page, and its number (`#program-N`).
    let sections: [String: Int]

    /// The id of program `index`'s section.
    static func anchor(_ index: Int) -> String { "program-\(index)" }

    static let pattern = "denied-overview"

    var html: String {
        var html = "<section class=\"overview\">\n<h2 class=\"plain\">Overview</h2>\n"
        // The hatching the bars below share, in a chart of no size.
        html += "<svg class=\"defs\" width=\"0\" height=\"0\" aria-hidden=\"true\">\(SVGCharts.hatch(id: Self.pattern))</svg>\n"
        html += programTable() + destinationTable() + causeTable()
        return html + "</section>\n"
    }

    // MARK: Programs

    private func programTable() -> String {
        let shown = programs.prefix(PageLimits.sections)
        let rest = programs.dropFirst(shown.count)
        var local = Tally(), nonLocal = Tally(), denials = DenialCounts()
        for program in rest {
            local.allowed += program.local.allowed
            local.denied += program.local.denied
            nonLocal.allowed += program.nonLocal.allowed
            nonLocal.denied += program.nonLocal.denied
            denials.add(program.denials)
        }
        let most = max(programs.first?.operations ?? 0, local.total + nonLocal.total)
        var html = "<h3>Programs, busiest first</h3>\n<table class=\"overview\">\n<thead><tr>"
        for name in ["PROGRAM", "OPERATIONS", "ALLOWED", "DENIED", "NOT LOCAL", "DENIED BECAUSE"] {
            html += "<th>\(name)</th>"
        }
        html += "</tr></thead>\n<tbody>\n"
        for program in shown {
            let name = HTMLText.escape(ChartLabel.fitted(program.program))
            let title = HTMLText.escape(program.program, limit: PageLimits.recordText)
            let cell = sections[program.program].map { "<a href=\"#\(Self.anchor($0))\" title=\"\(title)\">\(name)</a>" }
                ?? "<span title=\"\(title)\">\(name)</span>"
            html += row(cell, local: program.local, nonLocal: program.nonLocal, most: most,
                        causes: Self.causes(program.denials))
        }
        if !rest.isEmpty {
            html += row("\(rest.count) other programs, listed at the end", path: false, local: local, nonLocal: nonLocal,
                        most: most, causes: Self.causes(denials))
        }
        return html + "</tbody>\n</table>\n"
    }

    /// `name`: a program's (a path), or words for the programs counted together.
    private func row(_ name: String, path: Bool = true, local: Tally, nonLocal: Tally, most: Int, causes: String) -> String {
        var html = local.denied > 0 ? "<tr class=\"denied\">" : "<tr>"
        html += (path ? "<td class=\"name\">" : "<td>") + name + "</td>"
        html += "<td>\(Self.bar(local: local, nonLocal: nonLocal, most: most))</td>"
        for count in [local.allowed, local.denied + nonLocal.denied, nonLocal.total] {
            html += "<td class=\"count\">\(count)</td>"
        }
        return html + "<td class=\"wrap\">\(causes)</td></tr>\n"
    }

    /// `your decision: 60, no terminal: 40, 2 more`: the three commonest causes.
    static func causes(_ denials: DenialCounts, most: Int = 3) -> String {
        let all = denials.byCount
        var words = all.prefix(most).map { "\(HTMLText.escape($0.cause.short, limit: 40)): \($0.count)" }
        if all.count > most { words.append("\(all.count - most) more") }
        return words.joined(separator: ", ")
    }

    /// A bar in a table's cell: allowed (solid), denied (hatched), not local (grey), scaled
    /// to `most` operations.
    static func bar(local: Tally, nonLocal: Tally, most: Int) -> String {
        let width = 160.0, scale = width / Double(max(most, 1))
        var svg = "<svg class=\"spark\" width=\"\(width)\" height=\"12\" viewBox=\"0 0 \(width) 12\" aria-hidden=\"true\">"
        var x = 0.0
        let parts = [("bar allowed local", local.allowed), ("bar denied", local.denied + nonLocal.denied),
                     ("bar allowed nonlocal", nonLocal.allowed)]
        for (kind, count) in parts where count > 0 {
            let length = max(Double(count) * scale, 1)
            let fill = kind == "bar denied" ? " fill=\"url(#\(pattern))\"" : ""
            svg += "<rect class=\"\(kind)\" x=\"\(rounded(x))\" y=\"1\" width=\"\(rounded(length))\" height=\"10\"\(fill)/>"
            x += length
        }
        return svg + "</svg>"
    }

    private static func rounded(_ value: Double) -> String {
        let tenths = (value * 10).rounded() / 10
        return tenths == tenths.rounded() ? String(Int(tenths)) : String(tenths)
    }

    // MARK: Destinations

    /// One destination of all programs together.
    private struct Shared {
        var destination: Destination
        var tally = Tally()
        var programs = 0
        var causes = DenialCauseSet()

        mutating func add(_ report: DestinationReport) {
            tally.allowed += report.tally.allowed
            tally.denied += report.tally.denied
            programs += 1
            causes.formUnion(report.deniedBecause)
        }
    }

    private func destinationTable() -> String {
        var byDestination: [Destination: Shared] = [:]
        for program in programs {
            for report in program.destinations {
                byDestination[report.destination, default: Shared(destination: report.destination)].add(report)
            }
        }
        let busiest = byDestination.values.sorted {
            $0.tally.total != $1.tally.total ? $0.tally.total > $1.tally.total : $0.destination < $1.destination
        }.prefix(PageLimits.chartRows)
        guard let most = busiest.first?.tally.total else { return "" }
        var html = "<h3>Busiest destinations, all programs together</h3>\n<table class=\"overview\">\n<thead><tr>"
        for name in ["DESTINATION", "OPERATIONS", "ALLOWED", "DENIED", "PROGRAMS", "DENIED BECAUSE"] {
            html += "<th>\(name)</th>"
        }
        html += "</tr></thead>\n<tbody>\n"
        for shared in busiest {
            let label = SVGCharts.label(shared.destination)
            let local = shared.destination.isLocal ? shared.tally : Tally()
            let nonLocal = shared.destination.isLocal ? Tally() : shared.tally
            html += shared.tally.denied > 0 ? "<tr class=\"denied\">" : "<tr>"
            html += "<td class=\"name\" title=\"\(HTMLText.escape(label, limit: PageLimits.recordText))\">"
                + "\(HTMLText.escape(ChartLabel.fitted(label)))</td>"
                + "<td>\(Self.bar(local: local, nonLocal: nonLocal, most: most))</td>"
            for count in [shared.tally.allowed, shared.tally.denied, shared.programs] {
                html += "<td class=\"count\">\(count)</td>"
            }
            html += "<td class=\"wrap\">\(Self.causes(shared.causes))</td></tr>\n"
        }
        return html + "</tbody>\n</table>\n"
    }

    /// `your decision, no terminal`
    static func causes(_ set: DenialCauseSet) -> String {
        set.causes.map { HTMLText.escape($0.short) }.joined(separator: ", ")
    }

    // MARK: Causes

    private func causeTable() -> String {
        var all = DenialCounts()
        for program in programs { all.add(program.denials) }
        // Words past the few counted each are counted together, for the programs too.
        var programsFor: [DenialCause: Int] = [:]
        for program in programs {
            let causes = Set(program.denials.counts.keys.map { all.counts[$0] == nil ? .otherWords : $0 })
            for cause in causes { programsFor[cause, default: 0] += 1 }
        }
        guard all.total > 0 else { return "<p>No operation was denied.</p>\n" }
        var html = "<h3>Why operations were denied</h3>\n<table class=\"overview causes\">\n<thead><tr>"
        for name in ["DENIED BECAUSE", "DENIED", "PROGRAMS", "WHAT IT MEANS", "RECORDED AS"] { html += "<th>\(name)</th>" }
        html += "</tr></thead>\n<tbody>\n"
        for (cause, count) in all.byCount {
            html += "<tr><td>\(HTMLText.escape(cause.short, limit: 40))</td><td class=\"count\">\(count)</td>"
                + "<td class=\"count\">\(programsFor[cause].map(String.init) ?? "")</td>"
                + "<td class=\"meaning\">\(HTMLText.escape(cause.meaning, limit: 200))</td>"
                + "<td class=\"word\">\(HTMLText.escape(cause.because, limit: 40))</td></tr>\n"
        }
        return html + "</tbody>\n</table>\n"
    }
}

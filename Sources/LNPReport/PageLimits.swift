/// What keeps the HTML page within 2 MB, whatever the audit files hold — so that it opens
/// quickly in a browser — while a small report is shown whole, as it always was.
///
/// A section is at most about 270 kB: its heading (a program path cut to `programName`
/// Unicode scalars, 6 bytes each at worst once escaped), a timeline whose marks take at most
/// `timelineBytes` on `chartRows` lanes, as many bars, and a table of `tableRows` rows
/// of cells cut to `recordText` scalars. Sections are added, busiest
/// program first, while they fit in what `bytes` leaves after the page's fixed parts, its
/// overview (at most `overviewBytes`) and the room kept for the table of the other programs.
enum PageLimits {
    /// The whole page, in bytes.
    static let bytes = 2_000_000
    /// Programs that may have a section of their own: the busiest.
    static let sections = 40
    /// Rows of a program's table: past it, the least busy destinations share the last row.
    static let tableRows = 25
    /// Lanes of a program's timeline, and bars of its chart of destinations.
    static let chartRows = 12
    /// Rows of the table of programs without a section.
    static let otherPrograms = 100
    /// Unicode scalars of text from the records in a cell, a label or a tooltip.
    static let recordText = 160
    /// Unicode scalars of a program's path in its heading: the preload records up to 1,024 bytes.
    static let programName = 1100
    /// The marks of all the timelines, shared among the sections, and at most for one.
    static let markBytes = 1_200_000
    static let timelineBytes = 150_000
    /// What a mark with its tooltip takes on the page, about; and one of a dense timeline.
    static let titledMarkBytes = 180
    static let denseMarkBytes = 10

    /// How many of `count` destinations have a row of their own when at most `rows` are
    /// shown: all, or all but one, the last row counting the rest together.
    static func ownRows(of count: Int, rows: Int) -> Int { count > rows ? rows - 1 : count }

    /// What the marks of one of `count` timelines may take.
    static func markBytes(sharedBy count: Int) -> Int { min(markBytes / max(count, 1), timelineBytes) }
    /// Room kept for the paragraph that sums the records up under the page's heading.
    static let summaryBytes = 4096
    /// The most the overview (`HTMLOverview`) takes, whatever the records hold: a row for each
    /// of up to `sections` programs and `chartRows` destinations, and one per cause of denial.
    static let overviewBytes = 200_000
    /// Room kept for the table of the other programs: its rows at their longest (rows that
    /// would not fit are counted instead).
    static let othersBytes = (otherPrograms + 2) * (recordText * 6 + 400) + 2048
}

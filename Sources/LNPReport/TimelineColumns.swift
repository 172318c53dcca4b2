/// Which pixel columns of each of a timeline's rows have an operation: all a dense timeline
/// draws (a mark per column of 1, 2, 4… pixels), kept as one bit per row and pixel, so that a
/// timeline takes the same memory however many operations it counts.
struct TimelineColumns: Sendable {
    /// Pixel columns across the chart.
    let count: Int
    private let wordsPerRow: Int
    private var bits: [UInt64]
    /// Columns set, over all rows.
    private(set) var marks = 0

    init(rows: Int, columns: Int) {
        count = columns
        wordsPerRow = (columns + 63) / 64
        bits = [UInt64](repeating: 0, count: rows * wordsPerRow)
    }

    /// Sets `column` of `row`; whether it was not set before.
    @discardableResult
    mutating func insert(row: Int, column: Int) -> Bool {
        let word = row * wordsPerRow + column / 64, bit = UInt64(1) << UInt64(column % 64)
        guard bits[word] & bit == 0 else { return false }
        bits[word] |= bit
        marks += 1
        return true
    }

    /// The groups of `width` columns of `row` with a column set, first to last: group g holds
    /// columns g × width up to (g + 1) × width.
    func groups(row: Int, width: Int, _ body: (Int) -> Void) {
        var last = -1
        for word in 0..<wordsPerRow {
            var remaining = bits[row * wordsPerRow + word]
            while remaining != 0 {
                let group = (word * 64 + remaining.trailingZeroBitCount) / width
                if group != last { body(group) }
                last = group
                remaining &= remaining - 1
            }
        }
    }

    /// How many marks `rows` rows draw in groups of `width` columns.
    func marks(rows: Int, width: Int) -> Int {
        var total = 0
        for row in 0..<rows { groups(row: row, width: width) { _ in total += 1 } }
        return total
    }
}

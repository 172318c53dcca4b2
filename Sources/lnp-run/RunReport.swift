import LNPTools

/// What lnp-run says on stderr when the program has ended: with `--summary`, the run's
/// local-network operations (counted as they arrived, so a record that could not be written
/// is still counted); and always, the records of the run that were lost, and why — an audit
/// that silently missed records would be trusted wrongly.
struct RunReport {
    var records: RunRecords
    var program: String
    var observability: Observability
    var summary: Bool

    var lines: [String] {
        var lines: [String] = []
        if summary, let operations = records.summary {
            lines += operations.lines(whereAll: SummaryHint.of(records.destination))
            if !observability.isObservable {
                lines.append("lnp: \(program) itself was not observed (\(observability.summary)); only what its children did is counted")
            }
        }
        lines += records.lost.lines.map { "lnp-run: \($0)" }
        if records.refused > 0 {
            lines.append("lnp-run: \(records.refused) record(s) refused: sent by a process that is not of this run, about another process, or not in the form lnp writes")
        }
        return lines
    }
}

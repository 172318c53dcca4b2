/// The form of a record line as the preload writes it (Sources/LNPCore/AuditRecord.swift),
/// checked before lnp-run writes it anywhere: one JSON object on one line — no control
/// byte, so no second line can ride in it — whose keys are written plainly (no escapes)
/// and each once, so that what lnp-run checks (`"pid"`) is what every reader of the audit
/// reads.
enum RecordLine {
    static func isWellFormed(_ line: ArraySlice<UInt8>) -> Bool {
        let opening = Array("{\"time\":\"".utf8)
        guard line.starts(with: opening), line.last == UInt8(ascii: "}") else { return false }
        var keys = Set<ArraySlice<UInt8>>()
        var depth = 0
        var inString = false
        var escaped = false
        var stringStart = line.startIndex
        var expectsKey = false
        var index = line.startIndex
        while index < line.endIndex {
            let byte = line[index]
            if byte < 0x20 { return false }
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                    let next = line.index(after: index)
                    if depth == 1 && next < line.endIndex && line[next] == UInt8(ascii: ":") {
                        guard expectsKey else { return false }
                        let key = line[line.index(after: stringStart)..<index]
                        guard !key.contains(UInt8(ascii: "\\")), keys.insert(key).inserted else { return false }
                        expectsKey = false
                    }
                }
            } else {
                switch byte {
                case UInt8(ascii: "\""):
                    inString = true
                    stringStart = index
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth += 1
                    if depth == 1 { expectsKey = true }
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth < 0 || (depth == 0 && index != line.index(before: line.endIndex)) { return false }
                case UInt8(ascii: ","):
                    if depth == 1 { expectsKey = true }
                default: break
                }
            }
            index = line.index(after: index)
        }
        return depth == 0 && !inString && keys.contains(Array("pid".utf8)[...])
    }
}

/// The record's line of JSON (the format is in AuditRecord's comment; the corpus test keeps it
/// byte for byte).
extension AuditRecord {
    /// Writes the record as one JSON object, without the newline.
    public func write(to w: inout ByteWriter) {
        withUnsafePointer(to: self) { Self.write($0, to: &w) }
    }

    /// Writes the record at `record`, reading each field where it is. A method on the value
    /// made the compiler copy all of it first (232 bytes, a tenth of what composing the line
    /// cost): the writer stores through pointers, which might point into the record.
    static func write(_ record: UnsafePointer<AuditRecord>, to w: inout ByteWriter) {
        // The text after a field and the next key are one literal: a copy fewer per field (a
        // piece cut by the buffer's end is cut the same either way).
        w.append("{\"time\":\"")
        record.pointee.time.write(to: &w)
        w.append("\",\"pid\":")
        w.appendDecimal(Int64(record.pointee.pid))
        w.append(",\"program\":")
        w.appendJSONString(record.pointee.program, budget: record.pointee.budgets.path)
        w.append(",\"exe\":")
        w.appendJSONString(record.pointee.executable, budget: record.pointee.budgets.path)
        w.append(",\"op\":\"")
        let operation = record.pointee.operation
        operation.write(to: &w)
        if let fd = record.pointee.fd {
            w.append("\",\"fd\":")
            w.appendDecimal(Int64(fd))
            w.append(",\"transport\":")
        } else {
            w.append("\",\"fd\":null,\"transport\":")
        }
        let transport = record.pointee.transport
        if let transport {
            w.append(UInt8(ascii: "\""))
            transport.write(to: &w)
            w.append("\",\"address\":")
        } else {
            w.append("null,\"address\":")
        }
        if let endpoint = record.pointee.endpoint {
            w.append(UInt8(ascii: "\""))
            endpoint.address.write(to: &w)
            if operation.hasPort(on: transport) {
                w.append("\",\"port\":")
                w.appendDecimal(UInt64(endpoint.port))
                w.append(",\"host\":")
            } else {
                w.append("\",\"port\":null,\"host\":")
            }
        } else {
            w.append("null,\"port\":null,\"host\":")
        }
        if record.pointee.host.isEmpty {
            w.append("null,\"domains\":[")
        } else {
            w.appendJSONString(record.pointee.host, budget: record.pointee.budgets.host)
            w.append(",\"domains\":[")
        }
        if !record.pointee.domains.isEmpty {  // most records have none
            writeDomains(record.pointee.domains, budgets: record.pointee.budgets, to: &w)
        }
        w.append("],\"reason\":\"")
        let verdict = record.pointee.verdict
        switch verdict {
        case .local(let reason): reason.write(to: &w, scopeName: record.pointee.scopeName)
        case .notLocal(let reason): reason.write(to: &w)
        }
        if record.pointee.decision == .allow {
            w.append("\",\"decision\":\"allow\",\"because\":\"")
        } else {
            w.append("\",\"decision\":\"deny\",\"because\":\"")
        }
        w.append(record.pointee.basis.name)
        switch (record.pointee.attribution == .user, verdict.isLocal) {
        case (true, true): w.append("\",\"attribution\":\"user\",\"local\":true}")
        case (true, false): w.append("\",\"attribution\":\"user\",\"local\":false}")
        case (false, true): w.append("\",\"attribution\":\"app\",\"local\":true}")
        case (false, false): w.append("\",\"attribution\":\"app\",\"local\":false}")
        }
    }

    /// The domains, within their budget; past it, one last element `"..."` says more were cut.
    private static func writeDomains(_ domains: UnsafeBufferPointer<UInt8>, budgets: Budgets, to w: inout ByteWriter) {
        let end = w.count + budgets.domains
        var start = 0
        var first = true
        for i in 0...domains.count where i == domains.count || domains[i] == 0 {
            if i > start {
                if end - w.count < 16 {
                    w.append(first ? "\"...\"" : ",\"...\"")
                    return
                }
                if !first { w.append(UInt8(ascii: ",")) }
                w.appendJSONString(UnsafeBufferPointer(rebasing: domains[start..<i]), budget: min(budgets.host, end - w.count - 8))
                first = false
            }
            start = i + 1
        }
    }
}

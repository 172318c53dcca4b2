import LNPCoreHost

extension AuditEntry {
    /// The record as one line of JSON (`lnp report --format json`), without its newline: every
    /// field of the audit record, in the audit's order, written as the preload and lnp-run
    /// write them (`ByteWriter`: the same escapes, so a record lnp-run wrote comes out as it
    /// was). What a record left out is null (`domains` an empty list, `local` true, as the
    /// reader takes them); `lost` appears only on a record that has it, as in the audit.
    /// Strings are escaped whatever they hold: control characters (C0, DEL, C1) as `\u00XX`,
    /// so that the line is valid JSON and safe on a terminal.
    public var jsonLine: [UInt8] {
        var room = 420 + 6 * (program.utf8.count + (exe?.utf8.count ?? 0) + op.utf8.count + (transport?.utf8.count ?? 0)
            + (address?.utf8.count ?? 0) + (host?.utf8.count ?? 0) + (reason?.utf8.count ?? 0)
            + (because?.utf8.count ?? 0) + (by?.utf8.count ?? 0) + (lost?.because.utf8.count ?? 0))
        for domain in domains { room += 3 + 6 * domain.utf8.count }
        return [UInt8](unsafeUninitializedCapacity: room) { buffer, count in
            var w = ByteWriter(UnsafeMutableRawBufferPointer(buffer))
            w.append("{\"time\":\"")
            Timestamp(seconds: time.seconds, microseconds: time.microseconds).write(to: &w)
            w.append("\",\"pid\":")
            Self.write(pid, to: &w)
            w.append(",\"program\":")
            Self.write(program, to: &w)
            w.append(",\"exe\":")
            Self.write(exe, to: &w)
            w.append(",\"op\":")
            Self.write(op, to: &w)
            w.append(",\"fd\":")
            Self.write(fd, to: &w)
            w.append(",\"transport\":")
            Self.write(transport, to: &w)
            w.append(",\"address\":")
            Self.write(address, to: &w)
            w.append(",\"port\":")
            Self.write(port, to: &w)
            w.append(",\"host\":")
            Self.write(host, to: &w)
            w.append(",\"domains\":[")
            for (index, domain) in domains.enumerated() {
                if index > 0 { w.append(UInt8(ascii: ",")) }
                Self.write(domain, to: &w)
            }
            w.append("],\"reason\":")
            Self.write(reason, to: &w)
            w.append(decision == .allow ? ",\"decision\":\"allow\",\"because\":" : ",\"decision\":\"deny\",\"because\":")
            Self.write(because, to: &w)
            w.append(attribution == .app ? ",\"attribution\":\"app\",\"local\":" : ",\"attribution\":\"user\",\"local\":")
            w.append(isLocal ? "true,\"by\":" : "false,\"by\":")
            Self.write(by, to: &w)
            if let lost {
                w.append(",\"lost\":{\"count\":")
                w.appendDecimal(Int64(lost.count))
                w.append(",\"because\":")
                Self.write(lost.because, to: &w)
                w.append(UInt8(ascii: "}"))
            }
            w.append(UInt8(ascii: "}"))
            precondition(!w.truncated, "the room for a record's line is counted short")
            count = w.count
        }
    }

    private static func write(_ text: String?, to w: inout ByteWriter) {
        guard var text else { return w.append("null") }
        text.withUTF8 { w.appendJSONString($0, budget: 6 * $0.count + 2) }
    }

    private static func write(_ number: Int?, to w: inout ByteWriter) {
        guard let number else { return w.append("null") }
        w.appendDecimal(Int64(number))
    }
}

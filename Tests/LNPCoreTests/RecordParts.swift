import Foundation
import Testing
@testable import LNPCoreHost

/// The parts of a record, as arrays, so the test owns the bytes the record points to.
struct RecordParts {
    var time = Timestamp(seconds: 1_700_000_000, microseconds: 123_456)
    var pid: Int32 = 4242
    var program = Array("/usr/bin/curl".utf8)
    var executable = Array("/usr/lib/curl/curl-bin".utf8)
    var operation: LNPCoreHost.Operation = .connect
    var fd: Int32? = 3
    var transport: Transport? = .tcp
    var endpoint: SocketEndpoint? = SocketEndpoint(address: v4(10, 77, 0, 2), port: 80)
    var host: [UInt8] = []
    var domains: [UInt8] = []
    var verdict: Verdict = .local(.onLink(prefix: v4(10, 77, 0, 0), length: 24, interface: interfaceName("eth1")))
    var scopeName = InterfaceName()
    var decision: Decision = .deny
    var basis: DecisionBasis = .remembered
    var attribution: Attribution = .app

    /// The record as the audit writes it: at most 4095 bytes, as in AuditLog (the 4096th
    /// is the newline).
    var budgets = AuditRecord.Budgets.standard

    func line(capacity: Int = 4095) -> (bytes: [UInt8], truncated: Bool) {
        program.withUnsafeBufferPointer { program in
            executable.withUnsafeBufferPointer { executable in
                host.withUnsafeBufferPointer { host in
                    domains.withUnsafeBufferPointer { domains in
                        var record = AuditRecord(
                            time: time, pid: pid, program: program, executable: executable, operation: operation, fd: fd,
                            transport: transport, endpoint: endpoint, host: host, domains: domains, verdict: verdict,
                            scopeName: scopeName, decision: decision, basis: basis, attribution: attribution)
                        record.budgets = budgets
                        return writeBytes(capacity: capacity) { record.write(to: &$0) }
                    }
                }
            }
        }
    }

    func object() throws -> [String: Any] {
        let bytes = line().bytes
        return try #require(parseJSON(bytes) as? [String: Any], "\(String(decoding: bytes, as: UTF8.self))")
    }
}

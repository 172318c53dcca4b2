import Foundation
import Testing
@testable import LNPCoreHost

private let allKeys = [
    "time", "pid", "program", "exe", "op", "fd", "transport", "address", "port", "host", "domains", "reason", "decision", "because",
    "attribution", "local",
]

@Suite("AuditRecord")
struct AuditRecordTests {
    @Test func connectRecord() throws {
        var parts = RecordParts()
        parts.domains = Array("printer.local\u{0}example.com".utf8)
        let object = try parts.object()
        #expect(Set(object.keys) == Set(allKeys))
        #expect(object["time"] as? String == "2023-11-14T22:13:20.123456Z")
        #expect(object["pid"] as? Int == 4242)
        #expect(object["program"] as? String == "/usr/bin/curl")
        #expect(object["exe"] as? String == "/usr/lib/curl/curl-bin")
        #expect(object["op"] as? String == "connect")
        #expect(object["fd"] as? Int == 3)
        #expect(object["transport"] as? String == "tcp")
        #expect(object["address"] as? String == "10.77.0.2")
        #expect(object["port"] as? Int == 80)
        #expect(object["host"] is NSNull, "an empty host is null")
        #expect(object["domains"] as? [String] == ["printer.local", "example.com"])
        #expect(object["reason"] as? String == "on-link 10.77.0.0/24 via eth1")
        #expect(object["decision"] as? String == "deny")
        #expect(object["because"] as? String == "remembered")
        #expect(object["attribution"] as? String == "app")
    }

    @Test func fieldsComeInTheDocumentedOrder() {
        let text = String(decoding: RecordParts().line().bytes, as: UTF8.self)
        #expect(text.hasPrefix("{\"time\":\""))
        #expect(text.hasSuffix(",\"local\":true}"))
        let positions = allKeys.map { text.range(of: "\"\($0)\":")?.lowerBound }
        #expect(positions.allSatisfy { $0 != nil })
        #expect(positions.compactMap { $0 } == positions.compactMap { $0 }.sorted())
        #expect(!text.contains("\n"), "one record, one line")
    }

    @Test func resolveRecordHasNoSocketFields() throws {
        var parts = RecordParts()
        parts.operation = .resolve
        parts.fd = nil
        parts.transport = nil
        parts.endpoint = nil
        parts.host = Array("printer.local".utf8)
        parts.verdict = .local(.localName)
        parts.decision = .allow
        parts.attribution = .user
        let object = try parts.object()
        #expect(Set(object.keys) == Set(allKeys))
        #expect(object["op"] as? String == "resolve")
        for key in ["fd", "transport", "address", "port"] {
            #expect(object[key] is NSNull, "\(key)")
        }
        #expect(object["host"] as? String == "printer.local")
        #expect(object["domains"] as? [String] == [])
        #expect(object["reason"] as? String == ".local name")
        #expect(object["decision"] as? String == "allow")
        #expect(object["attribution"] as? String == "user")
    }

    @Test func operationAndTransportNames() throws {
        let operations: [(LNPCoreHost.Operation, String)] = [
            (.connect, "connect"), (.sendto, "sendto"), (.sendmsg, "sendmsg"), (.sendmmsg, "sendmmsg"), (.join, "join"),
            (.bind, "bind"), (.resolve, "resolve"),
        ]
        for (operation, name) in operations {
            var parts = RecordParts()
            parts.operation = operation
            #expect(try parts.object()["op"] as? String == name)
        }
        let transports: [(Transport, String)] = [
            (.tcp, "tcp"), (.udp, "udp"), (.udplite, "udplite"), (.mptcp, "mptcp"), (.sctp, "sctp"), (.icmp, "icmp"),
            (.raw, "raw"), (.other, "other"),
        ]
        for (transport, name) in transports {
            var parts = RecordParts()
            parts.transport = transport
            #expect(try parts.object()["transport"] as? String == name)
        }
        #expect(Transport.tcp.isStream && Transport.mptcp.isStream)
        #expect(!Transport.udp.isStream && !Transport.sctp.isStream && !Transport.raw.isStream)
    }

    @Test func reasons() throws {
        let eth0 = interfaceName("eth0")
        let cases: [(LocalReason, InterfaceName, String)] = [
            (.multicast, InterfaceName(), "multicast"),
            (.limitedBroadcast, InterfaceName(), "broadcast"),
            (.linkLocal(scopeID: 2), eth0, "link-local via eth0"),
            (.linkLocal(scopeID: 0), InterfaceName(), "link-local"),
            (.subnetBroadcast(interface: eth0), InterfaceName(), "subnet broadcast via eth0"),
            (.localName, InterfaceName(), ".local name"),
            (.onLink(prefix: v6(0x2001, 0xdb8, 1, 0, 0, 0, 0, 0), length: 64, interface: eth0), InterfaceName(),
             "on-link 2001:db8:1::/64 via eth0"),
        ]
        for (reason, scope, text) in cases {
            var parts = RecordParts()
            parts.verdict = .local(reason)
            parts.scopeName = scope
            #expect(try parts.object()["reason"] as? String == text)
        }
    }

    /// The buffers a record is made in hold what their budgets allow, syslog header included:
    /// the static ones, and the 1,536 bytes `Gate.recordOnStack` takes on the stack.
    @Test func recordBuffersHoldTheirBudgets() {
        #expect(RecordBuffers.Regions.size(for: .standard) <= RecordBuffers.size)
        #expect(RecordBuffers.Regions.size(for: .small) <= 1536)
    }

    @Test func notLocalRecord() throws {
        var parts = RecordParts()
        parts.verdict = .notLocal(.viaGateway(prefix: v4(0, 0, 0, 0), length: 0, interface: interfaceName("eth0")))
        parts.decision = .allow
        parts.basis = .notLocal
        let object = try parts.object()
        #expect(object["reason"] as? String == "through a gateway (route 0.0.0.0/0 on eth0)")
        #expect(object["local"] as? Bool == false)
        #expect(object["decision"] as? String == "allow" && object["because"] as? String == "not-local")
    }

    @Test func addressesAndPorts() throws {
        var parts = RecordParts()
        parts.endpoint = SocketEndpoint(address: v6(0xfe80, 0, 0, 0, 0, 0, 0, 0xab), port: 65535, scopeID: 4)
        parts.fd = 0
        var object = try parts.object()
        #expect(object["address"] as? String == "fe80::ab")
        #expect(object["port"] as? Int == 65535)
        #expect(object["fd"] as? Int == 0)
        parts.endpoint = SocketEndpoint(address: v4(224, 0, 0, 251), port: 0)
        parts.pid = 1
        object = try parts.object()
        #expect(object["address"] as? String == "224.0.0.251")
        #expect(object["port"] as? Int == 0)
        #expect(object["pid"] as? Int == 1)
    }

    @Test func hostileStringsStayInsideTheirFields() throws {
        var parts = RecordParts()
        parts.program = Array("/tmp/a\"b\\c\nd".utf8)
        parts.executable = [0x2f, 0x78, 0xff, 0xc0, 0x80, 0x00, 0x79]
        parts.host = Array("evil\",\"decision\":\"allow".utf8)
        parts.domains = Array("a\"b\u{0}c\\d".utf8)
        let object = try parts.object()
        #expect(object["program"] as? String == "/tmp/a\"b\\c\nd")
        #expect(object["exe"] as? String == "/x\u{FFFD}\u{FFFD}\u{FFFD}\u{0}y")
        #expect(object["host"] as? String == "evil\",\"decision\":\"allow")
        #expect(object["domains"] as? [String] == ["a\"b", "c\\d"])
        #expect(object["decision"] as? String == "deny")
    }

    @Test func emptyDomainSegmentsAreSkipped() throws {
        var parts = RecordParts()
        parts.domains = [0] + Array("a".utf8) + [0, 0] + Array("b".utf8) + [0]
        #expect(try parts.object()["domains"] as? [String] == ["a", "b"])
        parts.domains = [0, 0, 0]
        #expect(try parts.object()["domains"] as? [String] == [])
    }

    @Test func longStringsAreCutWithinTheirBudgets() throws {
        var parts = RecordParts()
        parts.program = Array(("/" + String(repeating: "p", count: 3000)).utf8)
        parts.executable = Array(("/" + String(repeating: "e", count: 3000)).utf8)
        parts.host = Array(String(repeating: "h", count: 500).utf8)
        parts.domains = Array(String(repeating: "d", count: 400).utf8)
        let object = try parts.object()
        let program = try #require(object["program"] as? String)
        #expect(program.utf8.count <= 1022 && program.hasSuffix("...") && program.hasPrefix("/ppp"))
        let executable = try #require(object["exe"] as? String)
        #expect(executable.utf8.count <= 1022 && executable.hasSuffix("..."))
        let host = try #require(object["host"] as? String)
        #expect(host.utf8.count <= 298 && host.hasSuffix("..."))
        let domains = try #require(object["domains"] as? [String])
        #expect(domains.count == 1 && domains[0].utf8.count <= 298 && domains[0].hasSuffix("..."))
    }

    /// Every field at the size the preload allows: LNP_PROGRAM and /proc/self/exe (each cut
    /// at a budget of 1024 bytes), and the 1008 bytes of domain names `ne_socket_set_domains`
    /// accepts, the first of which is also the host (as Gate.record does). The line must
    /// still be one complete JSON object.
    @Test func aRecordAtEveryLimitStillFitsTheAuditLine() throws {
        var parts = RecordParts()
        parts.program = Array(("/" + String(repeating: "p", count: 1100)).utf8)
        parts.executable = Array(("/" + String(repeating: "e", count: 1023)).utf8)
        parts.host = Array("a".utf8)
        // 504 one-letter names joined with NULs: 1007 bytes, within DomainStore's 1008.
        parts.domains = Array(Array(repeating: "a", count: 504).joined(separator: "\u{0}").utf8)
        #expect(parts.domains.count <= 1008)
        let line = parts.line()
        let needed = parts.line(capacity: 16_384).bytes.count
        #expect(needed <= 4095, "the record needs \(needed) bytes; the audit line holds 4095")
        let object = parseJSON(line.bytes) as? [String: Any]
        #expect(object != nil, "the line written is not valid JSON")
        #expect(object?["decision"] as? String == "deny")
    }

    /// The worst each field can be — escapes that take six bytes per byte, the longest
    /// address and reason, every domain a quote — still fits each budget's line, whole and
    /// valid JSON.
    @Test(arguments: [AuditRecord.Budgets.standard, AuditRecord.Budgets.small])
    func everyBudgetHoldsItsWorstRecord(budgets: AuditRecord.Budgets) throws {
        var parts = RecordParts()
        parts.budgets = budgets
        parts.program = [UInt8](repeating: 0x01, count: 2000)
        parts.executable = [UInt8](repeating: 0x1f, count: 2000)
        parts.host = [UInt8](repeating: UInt8(ascii: "\\"), count: 253)
        parts.domains = Array(Array(repeating: String(repeating: "\"", count: 253), count: 4).joined(separator: "\u{0}").utf8)
        let widest = IPAddress(v6High: 0xffff_ffff_ffff_ffff, low: 0xffff_ffff_ffff_fffe)
        parts.endpoint = SocketEndpoint(address: widest, port: 65535, scopeID: 0)
        parts.pid = Int32.max
        parts.fd = Int32.min
        let interface = interfaceName("abcdefghijklmno")
        for verdict: Verdict in [
            .local(.onLink(prefix: widest, length: 128, interface: interface)),
            .notLocal(.viaGateway(prefix: widest, length: 128, interface: interface)),
            .notLocal(.notBroadcastCapable(interface: interface)),
        ] {
            parts.verdict = verdict
            let needed = parts.line(capacity: 65_536).bytes.count
            #expect(needed <= budgets.lineCapacity, "needs \(needed) bytes, the line holds \(budgets.lineCapacity)")
            let object = parseJSON(parts.line(capacity: budgets.lineCapacity).bytes) as? [String: Any]
            #expect(object?["local"] as? Bool == verdict.isLocal, "the line is not whole, valid JSON")
        }
    }
}

import Foundation
import Testing
@testable import LNPCoreHost

/// Records drawn at random from every kind of field (all operations, reasons, bases; IPv4,
/// IPv6 and mapped addresses; strings with escapes, invalid UTF-8 and past their budgets;
/// numbers at their extremes; buffers too small for the line), compared byte for byte with
/// `Tests/fixtures/audit-records.golden`, which the record writer made before its fast paths
/// (issue 12): the format must not move by a byte. Drawn with `next()` alone, not the
/// standard library's `random(in:)`, so the draws do not depend on the toolchain.
/// `LNP_WRITE_AUDIT_CORPUS=1` writes the file anew (only when the format is meant to change).
@Suite("AuditRecord corpus")
struct AuditRecordCorpusTests {
    static let corpusURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("fixtures/audit-records.golden")
    static let recordCount = 400

    @Test func recordsAreByteForByteTheCorpus() throws {
        let made = CorpusRecords.lines(count: Self.recordCount)
        if ProcessInfo.processInfo.environment["LNP_WRITE_AUDIT_CORPUS"] == "1" {
            try Data(made.joined(separator: [0x0a]) + [0x0a]).write(to: Self.corpusURL)
        }
        let stored = try Data(contentsOf: Self.corpusURL)
        let lines = stored.split(separator: 0x0a, omittingEmptySubsequences: false).dropLast().map { Array($0) }
        try #require(lines.count == made.count, "the corpus holds \(lines.count) records, \(made.count) were made")
        var differing: [Int] = []
        for index in made.indices where made[index] != lines[index] { differing.append(index) }
        #expect(differing.isEmpty, "records differ from the corpus: \(differing.prefix(10)); first: \(differing.first.map { String(decoding: made[$0], as: UTF8.self) } ?? "")")
    }
}

/// The corpus's records, drawn from a fixed seed.
enum CorpusRecords {
    struct Draw {
        var random: SeededRandom
        mutating func below(_ bound: UInt64) -> UInt64 { random.next() % bound }
        mutating func int(_ range: ClosedRange<Int>) -> Int { range.lowerBound + Int(below(UInt64(range.upperBound - range.lowerBound + 1))) }
        mutating func chance(_ percent: UInt64) -> Bool { below(100) < percent }

        /// Bytes rich in what JSON escapes and UTF-8 pieces (never a newline: the corpus is
        /// one record per line, and a record's strings escape it anyway).
        mutating func bytes(maxLength: Int) -> [UInt8] {
            let interesting: [UInt8] = [0x22, 0x5c, 0x09, 0x00, 0x1f, 0x7f, 0xc2, 0x80, 0x9f, 0xa0, 0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xed, 0xf0, 0x9f,
                                        0x98, 0xff, 0x2f, 0x2e]
            let length = chance(8) ? int(0...maxLength) : int(0...min(40, maxLength))
            let plain = chance(60)
            return (0..<length).map { _ in
                if plain { return UInt8(truncatingIfNeeded: 0x20 + below(0x5f)) }
                return chance(50) ? interesting[Int(below(UInt64(interesting.count)))] : UInt8(truncatingIfNeeded: below(256))
            }
        }

        mutating func number() -> UInt64 {
            switch below(6) {
            case 0: return below(10)
            case 1: return below(1000)
            case 2: return [0, 9, 10, 99, 100, 999, 1000, 9999, 10000, 65535, UInt64(Int32.max), UInt64(UInt32.max), UInt64.max][Int(below(13))]
            default: return random.next() >> below(64)
            }
        }

        mutating func address() -> IPAddress {
            switch below(5) {
            case 0, 1: return IPAddress(v4: UInt32(truncatingIfNeeded: chance(50) ? random.next() : UInt64(v4Octets())))
            case 2: return IPAddress(v6High: 0, low: 0xffff_0000_0000 | UInt64(UInt32(truncatingIfNeeded: random.next())))
            default:
                // Groups often zero, so that runs of zeros (`::`) of every length and place occur.
                var high: UInt64 = 0
                var low: UInt64 = 0
                for _ in 0..<4 { high = high << 16 | (chance(45) ? 0 : below(0x1_0000) >> below(16)) }
                for _ in 0..<4 { low = low << 16 | (chance(45) ? 0 : below(0x1_0000) >> below(16)) }
                return IPAddress(v6High: high, low: low)
            }
        }

        /// Octets of every width: 0, 9, 10, 99, 100, 255 and others.
        mutating func v4Octets() -> UInt32 {
            var value: UInt32 = 0
            for _ in 0..<4 {
                let octet: UInt32 = chance(40) ? [0, 9, 10, 99, 100, 199, 200, 255][Int(below(8))] : UInt32(below(256))
                value = value << 8 | octet
            }
            return value
        }

        mutating func interface() -> InterfaceName {
            if chance(10) { return InterfaceName() }
            // Any byte but NUL (which ends a name) and the newline (see `bytes`).
            let name = (0..<int(1...15)).map { _ -> UInt8 in
                if chance(80) { return UInt8(truncatingIfNeeded: 0x21 + below(0x5e)) }
                let byte = UInt8(truncatingIfNeeded: 1 + below(255))
                return byte == 0x0a ? 0x0b : byte
            }
            return name.withUnsafeBufferPointer { InterfaceName($0) }
        }

        mutating func localReason() -> LocalReason {
            switch below(11) {
            case 0: return .multicast
            case 1: return .limitedBroadcast
            case 2: return .linkLocal(scopeID: UInt32(below(5)))
            case 3, 4: return .onLink(prefix: address(), length: UInt8(truncatingIfNeeded: below(129)), interface: interface())
            case 5: return .subnetBroadcast(interface: interface())
            case 6: return .localName
            case 7: return .routeUnknown(chance(30) ? nil : Errno(Int32(truncatingIfNeeded: below(140)) - (chance(10) ? 200 : 0)))
            case 8: return .packetSocket
            case 9: return .headerWriter
            default: return .bonjour
            }
        }

        mutating func notLocalReason() -> NotLocalReason {
            switch below(13) {
            case 0: return .loopback
            case 1: return .unspecified
            case 2: return .ownAddress
            case 3: return .viaGateway(prefix: address(), length: UInt8(truncatingIfNeeded: below(129)), interface: interface())
            case 4: return .pointToPoint(interface: interface())
            case 5: return .loopbackInterface(interface: interface())
            case 6: return .notBroadcastCapable(interface: interface())
            case 7: return .interfaceDown(interface: interface())
            case 8: return .noRoute
            case 9: return .dnsServer
            case 10: return .proxy
            case 11: return .notLocalName
            default: return .unicastBind
            }
        }

        mutating func time() -> Timestamp {
            let seconds: Int64
            switch below(6) {
            case 0: seconds = Int64(bitPattern: random.next()) >> Int64(below(40) + 24)  // far past and future
            case 5: seconds = (chance(50) ? 1 : -1) * (253_402_300_800 + Int64(below(1_000_000_000_000)))  // years of five digits, and before 0
            case 1: seconds = 1_798_761_600 + Int64(below(200)) - 100  // around a new year
            case 2: seconds = Int64(below(86_400 * 3)) - 86_400  // around the epoch
            default: seconds = 1_600_000_000 + Int64(below(400_000_000))
            }
            let micro = chance(10) ? Int32(truncatingIfNeeded: Int64(bitPattern: random.next())) : Int32(below(1_000_000))
            return Timestamp(seconds: seconds, microseconds: micro)
        }
    }

    static let operations: [LNPCoreHost.Operation] = [.connect, .sendto, .sendmsg, .sendmmsg, .join, .bind, .resolve, .socket, .browse,
                                                      .resolveService, .register]
    static let transports: [Transport] = [.tcp, .udp, .udplite, .mptcp, .sctp, .icmp, .raw, .packet, .other]

    static func lines(count: Int) -> [[UInt8]] {
        var draw = Draw(random: SeededRandom(seed: 0x12_AD17))
        return (0..<count).map { _ in line(&draw) }
    }

    static func line(_ draw: inout Draw) -> [UInt8] {
        let time = draw.time()
        let pid = Int32(truncatingIfNeeded: draw.chance(90) ? draw.below(4_194_304) : draw.random.next())
        let program = draw.bytes(maxLength: 1100)
        let executable = draw.bytes(maxLength: 1100)
        let operation = operations[Int(draw.below(UInt64(operations.count)))]
        let fd: Int32? = draw.chance(20) ? nil : Int32(truncatingIfNeeded: draw.number())
        let transport: Transport? = draw.chance(20) ? nil : transports[Int(draw.below(UInt64(transports.count)))]
        let endpoint: SocketEndpoint? = draw.chance(15) ? nil : SocketEndpoint(address: draw.address(), port: UInt16(truncatingIfNeeded: draw.number()))
        let host = draw.chance(60) ? [] : draw.bytes(maxLength: 400)
        var domains: [UInt8] = []
        if draw.chance(40) {
            for index in 0..<draw.int(1...(draw.chance(10) ? 60 : 4)) {
                if index > 0 { domains.append(0) }
                domains += draw.bytes(maxLength: 80)
            }
        }
        let verdict: Verdict = draw.chance(75) ? .local(draw.localReason()) : .notLocal(draw.notLocalReason())
        let scopeName = draw.chance(50) ? draw.interface() : InterfaceName()
        let decision: Decision = draw.chance(50) ? .allow : .deny
        let basis = DecisionBasis(rawValue: UInt8(draw.below(12)))!
        let attribution: Attribution = draw.chance(50) ? .app : .user
        let budgets: AuditRecord.Budgets = draw.chance(80) ? .standard : .small
        let capacity = draw.chance(85) ? budgets.lineCapacity : draw.int(1...600)
        let parts = RecordParts(
            time: time, pid: pid, program: program, executable: executable, operation: operation, fd: fd, transport: transport,
            endpoint: endpoint, host: host, domains: domains, verdict: verdict, scopeName: scopeName, decision: decision,
            basis: basis, attribution: attribution, budgets: budgets)
        return parts.line(capacity: capacity).bytes
    }
}

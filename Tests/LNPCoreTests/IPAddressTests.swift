import Testing
@testable import LNPCoreHost

#if canImport(Glibc)
import Glibc
#endif

/// glibc's inet_pton, the reference the parser promises to follow, with the parser's own
/// choice of family (a colon means IPv6).
private func referenceParse(_ text: String) -> IPAddress? {
    if text.contains(":") {
        var address = in6_addr()
        guard inet_pton(AF_INET6, text, &address) == 1 else { return nil }
        return withUnsafeBytes(of: &address) { IPAddress(v6Bytes: $0.baseAddress!) }
    }
    var address = in_addr()
    guard inet_pton(AF_INET, text, &address) == 1 else { return nil }
    return withUnsafeBytes(of: &address) { IPAddress(v4Bytes: $0.baseAddress!) }
}

/// glibc's inet_ntop for IPv6, which follows RFC 5952 too (lower case, longest zero run,
/// leftmost on a tie, never a single group).
private func referenceText(_ address: IPAddress) -> String {
    var bytes = [UInt8](repeating: 0, count: 16)
    bytes.withUnsafeMutableBytes { _ = address.storeBytes(to: $0.baseAddress!) }
    var output = [CChar](repeating: 0, count: 64)
    _ = inet_ntop(AF_INET6, bytes, &output, 64)
    return String(decoding: output.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

@Suite("IPAddress parsing")
struct IPAddressParseTests {
    @Test(arguments: [
        ("0.0.0.0", UInt32(0)), ("255.255.255.255", 0xffff_ffff), ("10.77.0.2", 0x0A4D_0002),
        ("1.2.3.4", 0x0102_0304), ("192.168.100.200", 0xC0A8_64C8), ("0.0.0.10", 10),
    ])
    func validIPv4(text: String, value: UInt32) throws {
        let address = try #require(parseAddress(text))
        #expect(address.family == .v4)
        #expect(address.v4 == value)
        #expect(address.high == 0)
        #expect(address.low == UInt64(value))
    }

    @Test(arguments: [
        "01.2.3.4", "1.2.3.04", "00.0.0.0", "1.2.00.4",  // leading zeros, as inet_pton
        "256.1.1.1", "1.2.3.300", "1.2.3.1000", "999.0.0.0",  // parts above 255
        "1.2.3", "1", "1.2", "1.2.3.4.5", "1.2.3.4.5.6",  // too few or too many parts
        "", ".", "...", ".1.2.3", "1.2.3.4.", "1..2.3", "1.2..3.4",
        "1.2.3.a", " 1.2.3.4", "1.2.3.4 ", "-1.2.3.4", "+1.2.3.4", "0x1.2.3.4", "1.2.3.4/24", "1.2.3.4%eth0",
    ])
    func invalidIPv4(text: String) {
        #expect(parseAddress(text) == nil, "\(text) must be rejected")
    }

    @Test(arguments: [
        ("::", [0, 0, 0, 0, 0, 0, 0, 0] as [UInt16]),
        ("::1", [0, 0, 0, 0, 0, 0, 0, 1]),
        ("1::", [1, 0, 0, 0, 0, 0, 0, 0]),
        ("fe80::1", [0xfe80, 0, 0, 0, 0, 0, 0, 1]),
        ("FF02::FB", [0xff02, 0, 0, 0, 0, 0, 0, 0xfb]),
        ("2001:db8::8:800:200c:417a", [0x2001, 0xdb8, 0, 0, 8, 0x800, 0x200c, 0x417a]),
        ("1:2:3:4:5:6:7:8", [1, 2, 3, 4, 5, 6, 7, 8]),
        ("1:2:3:4:5:6:7::", [1, 2, 3, 4, 5, 6, 7, 0]),
        ("::2:3:4:5:6:7:8", [0, 2, 3, 4, 5, 6, 7, 8]),
        ("1:2::7:8", [1, 2, 0, 0, 0, 0, 7, 8]),
        ("0:0:0:0:0:0:0:0", [0, 0, 0, 0, 0, 0, 0, 0]),
        ("0001:00ab::ffff", [1, 0xab, 0, 0, 0, 0, 0, 0xffff]),
        ("::ffff:192.0.2.1", [0, 0, 0, 0, 0, 0xffff, 0xc000, 0x0201]),
        ("64:ff9b::192.0.2.33", [0x64, 0xff9b, 0, 0, 0, 0, 0xc000, 0x0221]),
        ("1:2:3:4:5:6:1.2.3.4", [1, 2, 3, 4, 5, 6, 0x0102, 0x0304]),
        ("::1.2.3.4", [0, 0, 0, 0, 0, 0, 0x0102, 0x0304]),
        ("::0.0.0.0", [0, 0, 0, 0, 0, 0, 0, 0]),
    ])
    func validIPv6(text: String, groups: [UInt16]) throws {
        let address = try #require(parseAddress(text))
        #expect(address.family == .v6)
        for i in 0..<8 {
            #expect(address.group(i) == groups[i], "group \(i) of \(text)")
        }
    }

    @Test(arguments: [
        ":::", "1::2::3", "::1::", "1:::2",  // more than one "::", or three colons
        "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7:8::", "::1:2:3:4:5:6:7:8", "1:2:3:4::5:6:7:8",  // nine groups
        "12345::", "::12345", "1:00000::",  // a group of five digits
        "1:2:3:4:5:6:7:", "1:", "::1:", "1::2:",  // a single trailing colon
        ":1::", ":", ":1:2:3:4:5:6:7:8",  // a single leading colon
        "1:2:3:4:5:6:7", "1",  // too few groups without "::"
        "1:2:3:4:5:6:7:1.2.3.4", "::1.2.3", "::1.2.3.4.5", "::256.0.0.1", "::01.2.3.4", "1.2.3.4::", "::1.2.3.4:5",
        "::g", "g::", "fe80::1%eth0", "[::1]", ":: ", " ::", "::-1", "1:2:3:4:5:6:7:8%1",
    ])
    func invalidIPv6(text: String) {
        #expect(parseAddress(text) == nil, "\(text) must be rejected")
    }

    /// The parser against glibc's inet_pton on random strings over the address alphabet and
    /// on valid texts with one character changed: any disagreement is a bug in one or the other.
    @Test func agreesWithInetPton() {
        var random = SeededRandom(seed: 0x1D_CAFE)
        let alphabet = Array("0123456789abcdefABCDEF::::....g ")
        var disagreements: [String] = []
        var accepted = 0
        for round in 0..<30_000 {
            var text: String
            if round % 2 == 0 {
                let length = Int.random(in: 0...24, using: &random)
                text = String((0..<length).map { _ in alphabet.randomElement(using: &random)! })
            } else {
                let address = randomAddress(&random)
                text = address.family == .v6 ? referenceText(address) : String(decoding: writeBytes { address.write(to: &$0) }.bytes, as: UTF8.self)
                var characters = Array(text)
                let position = Int.random(in: 0...characters.count, using: &random)
                switch Int.random(in: 0..<4, using: &random) {
                case 0 where position < characters.count: characters.remove(at: position)
                case 1: characters.insert(alphabet.randomElement(using: &random)!, at: position)
                case 2 where position < characters.count: characters[position] = alphabet.randomElement(using: &random)!
                default: break
                }
                text = String(characters)
            }
            let ours = parseAddress(text)
            if ours != nil { accepted += 1 }
            if ours != referenceParse(text) { disagreements.append(text) }
        }
        #expect(disagreements.isEmpty, "disagreements with inet_pton: \(disagreements.prefix(20))")
        #expect(accepted > 5_000, "the generator should produce many valid addresses")
    }

    @Test func unmappedGivesTheCarriedIPv4Address() throws {
        let mapped = try #require(parseAddress("::ffff:10.0.0.1"))
        #expect(mapped.family == .v6)
        #expect(mapped.unmapped == v4(10, 0, 0, 1))
        #expect(mapped.unmapped.family == .v4)
        #expect(try #require(parseAddress("::ffff:0:0")).unmapped == v4(0, 0, 0, 0))
        #expect(try #require(parseAddress("::ffff:127.0.0.1")).unmapped.isLoopback)
    }

    @Test(arguments: [
        "::10.0.0.1", "::1", "::", "0:0:0:0:1:ffff:a00:1", "64:ff9b::10.0.0.1", "ffff::a00:1", "::fffe:a00:1",
        // The mapped pattern in the low half only: the high half must be zero too.
        "1::ffff:10.0.0.1", "fe80::ffff:10.0.0.1", "8000::ffff:a00:1",
    ])
    func unmappedLeavesOtherAddressesAlone(text: String) throws {
        let address = try #require(parseAddress(text))
        #expect(address.unmapped == address)
        #expect(address.unmapped.family == .v6)
    }

    @Test func unmappedLeavesIPv4Alone() {
        #expect(v4(10, 0, 0, 1).unmapped == v4(10, 0, 0, 1))
    }
}

@Suite("IPAddress predicates")
struct IPAddressPredicateTests {
    struct Expectation: CustomStringConvertible, Sendable {
        var text: String
        var loopback = false
        var unspecified = false
        var multicast = false
        var linkLocal = false
        var limitedBroadcast = false
        var description: String { text }
    }

    @Test(arguments: [
        Expectation(text: "127.0.0.1", loopback: true),
        Expectation(text: "127.0.0.0", loopback: true),
        Expectation(text: "127.255.255.255", loopback: true),
        Expectation(text: "126.255.255.255"),
        Expectation(text: "128.0.0.1"),
        Expectation(text: "0.0.0.0", unspecified: true),
        Expectation(text: "0.0.0.1"),
        Expectation(text: "224.0.0.0", multicast: true),
        Expectation(text: "224.0.0.251", multicast: true),
        Expectation(text: "239.255.255.255", multicast: true),
        Expectation(text: "223.255.255.255"),
        Expectation(text: "240.0.0.0"),
        Expectation(text: "169.254.0.0", linkLocal: true),
        Expectation(text: "169.254.255.255", linkLocal: true),
        Expectation(text: "169.253.255.255"),
        Expectation(text: "169.255.0.0"),
        Expectation(text: "255.255.255.255", limitedBroadcast: true),
        Expectation(text: "255.255.255.254"),
        Expectation(text: "10.77.0.2"),
        Expectation(text: "::1", loopback: true),
        Expectation(text: "::2"),
        Expectation(text: "1::1"),
        Expectation(text: "::", unspecified: true),
        Expectation(text: "ff00::", multicast: true),
        Expectation(text: "ff02::fb", multicast: true),
        Expectation(text: "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", multicast: true),
        Expectation(text: "feff::"),
        Expectation(text: "fe80::", linkLocal: true),
        Expectation(text: "fe80::1", linkLocal: true),
        Expectation(text: "febf:ffff::1", linkLocal: true),
        Expectation(text: "fec0::1"),
        Expectation(text: "fe7f:ffff::1"),
        Expectation(text: "2001:db8::1"),
        // A mapped address is judged only once unmapped: as IPv6 it is none of these.
        Expectation(text: "::ffff:127.0.0.1"),
        Expectation(text: "::ffff:255.255.255.255"),
        Expectation(text: "::ffff:224.0.0.1"),
    ])
    func predicates(_ expected: Expectation) throws {
        let address = try #require(parseAddress(expected.text))
        #expect(address.isLoopback == expected.loopback)
        #expect(address.isUnspecified == expected.unspecified)
        #expect(address.isMulticast == expected.multicast)
        #expect(address.isLinkLocal == expected.linkLocal)
        #expect(address.isLimitedBroadcast == expected.limitedBroadcast)
    }

    /// The fast check is exactly "loopback or unspecified".
    @Test func neverLocalIsLoopbackOrUnspecified() throws {
        for text in ["127.0.0.1", "127.255.0.9", "0.0.0.0", "::1", "::"] {
            #expect(try #require(parseAddress(text)).isNeverLocal, "\(text)")
        }
        for text in ["128.0.0.0", "126.0.0.1", "0.0.0.1", "::2", "::ffff:127.0.0.1", "1::", "::1:0:0:0:0", "10.0.0.1"] {
            #expect(!(try #require(parseAddress(text)).isNeverLocal), "\(text)")
        }
        var random = SeededRandom(seed: 17)
        for _ in 0..<20_000 {
            var address = randomAddress(&random)
            if Int.random(in: 0..<4, using: &random) == 0 {
                // Near the special values, so that the boundaries are tried.
                address = address.family == .v4
                    ? IPAddress(v4: UInt32.random(in: 0...2, using: &random) | (Bool.random(using: &random) ? 0x7f00_0000 : 0))
                    : IPAddress(v6High: UInt64.random(in: 0...1, using: &random), low: UInt64.random(in: 0...3, using: &random))
            }
            #expect(address.isNeverLocal == (address.isLoopback || address.isUnspecified), "\(text(of: address))")
        }
    }

    @Test func bitWidthFollowsFamily() {
        #expect(v4(1, 2, 3, 4).bitWidth == 32)
        #expect(v6(0, 0, 0, 0, 0, 0, 0, 1).bitWidth == 128)
    }
}

@Suite("IPAddress text")
struct IPAddressTextTests {
    @Test(arguments: [
        ("10.0.0.1", "10.0.0.1"), ("0.0.0.0", "0.0.0.0"), ("255.255.255.255", "255.255.255.255"),
        ("::", "::"), ("::1", "::1"), ("1::", "1::"), ("0:0:0:0:0:0:0:1", "::1"), ("1:0:0:0:0:0:0:0", "1::"),
        ("2001:0db8:0000:0000:0000:0000:0000:0001", "2001:db8::1"),
        // The longest run of zero groups is compressed; the leftmost one on a tie.
        ("2001:0:0:1:0:0:0:1", "2001:0:0:1::1"),
        ("2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"),
        ("1:0:0:2:0:0:0:3", "1:0:0:2::3"),
        ("0:0:1:0:0:1:0:0", "::1:0:0:1:0:0"),
        // A single zero group is never compressed.
        ("2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"),
        ("1:2:3:4:5:6:7:0", "1:2:3:4:5:6:7:0"),
        ("0:1:2:3:4:5:6:7", "0:1:2:3:4:5:6:7"),
        ("1:0:2:0:3:0:4:0", "1:0:2:0:3:0:4:0"),
        // Lower case, no leading zeros.
        ("FE80::ABCD", "fe80::abcd"), ("fe80:0000::00ab", "fe80::ab"), ("FFFF:FFFF:FFFF:FFFF:FFFF:FFFF:FFFF:FFFF", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"),
        // Mapped IPv4 is written dotted.
        ("::ffff:1.2.3.4", "::ffff:1.2.3.4"), ("::FFFF:0102:0304", "::ffff:1.2.3.4"), ("::ffff:0.0.0.0", "::ffff:0.0.0.0"),
        ("1::ffff:1.2.3.4", "1::ffff:102:304"), ("fe80::ffff:a00:1", "fe80::ffff:a00:1"),  // not mapped: hex
    ])
    func canonicalText(input: String, expected: String) throws {
        let address = try #require(parseAddress(input))
        #expect(text(of: address) == expected)
    }

    /// RFC 5952 keeps the dotted form for mapped addresses only; an IPv4-compatible one
    /// (deprecated) is plain hex.
    @Test func compatibleAddressIsWrittenInHex() {
        #expect(text(of: v6(0, 0, 0, 0, 0, 0, 0x0102, 0x0304)) == "::102:304")
    }

    /// The writer against glibc's inet_ntop on random addresses rich in zero groups.
    @Test func agreesWithInetNtop() {
        var random = SeededRandom(seed: 7)
        var mismatches: [String] = []
        for _ in 0..<20_000 {
            var groups = [UInt16](repeating: 0, count: 8)
            for i in 0..<8 where Bool.random(using: &random) {
                groups[i] = [1, 0xffff, 0xab, UInt16.random(in: 1...UInt16.max, using: &random)].randomElement(using: &random)!
            }
            let address = v6(groups[0], groups[1], groups[2], groups[3], groups[4], groups[5], groups[6], groups[7])
            // glibc writes IPv4-compatible addresses (::a.b.c.d) dotted; RFC 5952 does not ask for it.
            if address.high == 0 && address.low >> 32 == 0 && groups[6] != 0 { continue }
            let ours = text(of: address)
            if ours != referenceText(address) { mismatches.append("\(ours) vs \(referenceText(address))") }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(10))")
    }

    @Test(arguments: [
        "0.0.0.0", "1.2.3.4", "10.77.0.255", "255.255.255.255", "::", "::1", "fe80::1", "2001:db8::8:800:200c:417a",
        "ff02::1:ff00:1", "::ffff:192.168.1.1", "1:2:3:4:5:6:7:8", "1::8", "abcd:ef01:2345:6789:abcd:ef01:2345:6789",
    ])
    func roundTrip(text input: String) throws {
        let address = try #require(parseAddress(input))
        let written = text(of: address)
        #expect(written == input, "already canonical, so written back unchanged")
        #expect(parseAddress(written) == address)
    }

    @Test func randomRoundTrip() throws {
        var random = SeededRandom(seed: 99)
        for _ in 0..<10_000 {
            let address = randomAddress(&random)
            let written = text(of: address)
            #expect(parseAddress(written) == address, "\(written)")
        }
    }

    @Test func bytesRoundTrip() {
        var bytes = [UInt8](repeating: 0xee, count: 16)
        let a = v4(192, 168, 1, 20)
        let count = bytes.withUnsafeMutableBytes { a.storeBytes(to: $0.baseAddress!) }
        #expect(count == 4)
        #expect(bytes[0..<4] == [192, 168, 1, 20])
        #expect(bytes[4] == 0xee, "nothing written past the four bytes")
        #expect(bytes.withUnsafeBytes { IPAddress(v4Bytes: $0.baseAddress!) } == a)

        let b = v6(0x2001, 0xdb8, 0, 0, 0, 0, 0x1234, 0x5678)
        let count6 = bytes.withUnsafeMutableBytes { b.storeBytes(to: $0.baseAddress!) }
        #expect(count6 == 16)
        #expect(bytes == [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0x12, 0x34, 0x56, 0x78])
        #expect(bytes.withUnsafeBytes { IPAddress(v6Bytes: $0.baseAddress!) } == b)
    }
}

/// A random address of either family, with plenty of zero groups and special values.
func randomAddress(_ random: inout SeededRandom) -> IPAddress {
    if Bool.random(using: &random) {
        return IPAddress(v4: UInt32.random(in: 0...UInt32.max, using: &random))
    }
    var groups = [UInt16](repeating: 0, count: 8)
    for i in 0..<8 where Int.random(in: 0..<3, using: &random) != 0 {
        groups[i] = UInt16.random(in: 0...UInt16.max, using: &random)
    }
    if Int.random(in: 0..<8, using: &random) == 0 { groups[0..<5] = [0, 0, 0, 0, 0]; groups[5] = 0xffff }
    return v6(groups[0], groups[1], groups[2], groups[3], groups[4], groups[5], groups[6], groups[7])
}

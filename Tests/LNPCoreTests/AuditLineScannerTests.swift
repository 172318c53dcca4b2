import Foundation
import Testing

@testable import LNPReport

/// The scanner's record of `line`, or nil when it leaves the line to the decoder.
private func scanned(_ line: String) -> AuditEntry? {
    Array(line.utf8).withUnsafeBufferPointer { AuditLineScanner.entry($0) }
}

/// Foundation's decoder on `line`: the record, or its error message.
private func decoded(_ line: String) -> Result<AuditEntry, AuditLineError> {
    do {
        return .success(try AuditEntry.decoded(line: Data(line.utf8), using: JSONDecoder()))
    } catch {
        return .failure(error)
    }
}

/// A line the scanner reads must be read the same by the decoder.
private func agrees(_ line: String) -> Bool {
    guard let quick = scanned(line) else { return true }
    return (try? decoded(line).get()) == quick
}

/// lnp-run's lines: the preload's record and what lnp-run adds.
private let written = [
    auditLine(),
    String(auditLine().dropLast()) + #","by":"preload"}"#,
    String(auditLine().dropLast()) + #","by":"supervisor","lost":{"count":3,"because":"reader-full"}}"#,
    auditLine(["op": #""resolve""#, "fd": "null", "transport": "null", "address": "null", "port": "null"]),
    auditLine(["host": "null", "address": #""fd77::2""#, "local": "false", "because": #""not-local""#]),
    auditLine(["program": #""/tmp/odd \"name\"\\ \t é\u0001 \ud83d\ude00""#, "domains": #"["a.example","b\/c"]"#]),
    auditLine(["op": #""socket""#, "address": "null", "host": "null", "port": "null", "transport": #""packet""#]),
    auditLine(["pid": "-0", "fd": "0", "port": "999999999999999", "time": #""2026-11-21T11:00:00.5+01:00""#]),
    auditLine(removing: ["pid", "exe", "fd", "transport", "port", "domains", "reason", "because", "local"]),
    " \t" + auditLine() + " \r",
]

/// Lines the decoder reads its own way, or refuses.
private let unsure: [String] = {
    let open = String(auditLine().dropLast())
    var lines: [String] = [
        open + #","pid":7}"#,  // a field twice: not a record, as the decoder's reading says
        open + #","by":1,"by":2}"#,
        open + #","future":01}"#,  // the decoder lets this pass
        open + #","future":[1,]}"#,
        open + ",}",
    ]
    lines += [auditLine(["port": "80.0"]), auditLine(["port": "8e1"]), auditLine(["port": "0080"])]
    lines += [auditLine(["program": #""\ud800""#]), auditLine(["program": "\"a\tb\""])]
    // lnp-run's note of lost records in any other form than its own
    lines += [#"{}"#, #"{"count":1}"#, #"{"count":1.0,"because":"x"}"#, #"{"count":1,"because":"x","more":1}"#,
              #"{"count":1,"count":2,"because":"x"}"#, #"{"count":1,"because":"x",}"#, "3", #""x""#]
        .map { auditLine(["lost": $0]) }
    lines += [auditLine() + "x", "\u{feff}" + auditLine()]
    lines.append(auditLine().replacingOccurrences(of: "\"time\"", with: "\"ti\\u006de\""))
    lines += ["{}", "[]", "", "null"]
    return lines
}()

@Suite("Audit line scanner")
struct AuditLineScannerTests {
    @Test(arguments: written)
    func readsWhatLnpRunWritesAsTheDecoderDoes(line: String) throws {
        let quick = try #require(scanned(line), "the scanner reads lnp-run's lines itself")
        #expect(try decoded(line).get() == quick)
    }

    @Test func lnpRunsNotesAreReadAsTheDecoderReadsThem() throws {
        let line = String(auditLine().dropLast()) + #","lost": { "because" : "x\"y" , "count" : 0 },"by":null}"#
        let quick = try #require(scanned(line))
        #expect(quick.lost == AuditEntry.Lost(count: 0, because: "x\"y") && quick.by == nil)
        #expect(try decoded(line).get() == quick)
        #expect(scanned(written[1])?.by == "preload")
    }

    @Test func fieldsInAnotherOrderAreTheSameRecord() throws {
        let reversed = "{" + auditLine().dropFirst().dropLast().split(separator: ",").reversed().joined(separator: ",") + "}"
        let entry = try #require(scanned(reversed))
        #expect(entry == scanned(auditLine()))
    }

    /// Each of these the decoder reads its own way, or refuses: the scanner leaves them to it.
    @Test(arguments: unsure)
    func leavesWhatItIsUnsureOfToTheDecoder(line: String) {
        #expect(scanned(line) == nil)
    }

    @Test func invalidUTF8AnywhereIsLeftToTheDecoder() {
        var bytes = Array(auditLine().utf8)
        bytes.insert(0xff, at: bytes.count - 2)
        #expect(bytes.withUnsafeBufferPointer { AuditLineScanner.entry($0) } == nil)
        let line = String(auditLine().dropLast()) + ",\"by\":\"x"
        var other = Array(line.utf8) + [0xc3] + Array("\"}".utf8)
        #expect(other.withUnsafeBufferPointer { AuditLineScanner.entry($0) } == nil)
        other[other.count - 3] = 0x41
        #expect(other.withUnsafeBufferPointer { AuditLineScanner.entry($0) } != nil)
    }

    /// Lines broken at random — bytes dropped, doubled or replaced with JSON's punctuation —
    /// never make the two disagree.
    @Test func randomlyBrokenLinesNeverMakeTheTwoDisagree() {
        var random = SeededRandom(seed: 0x5ca_77e5)
        let pieces = Array(#"{}[],:"\ 0123456789-.eEtrufalsn\u00"#).map(String.init) + ["null", "true", "\"x\""]
        var read = 0
        for round in 0..<4000 {
            var line = Array(written[round % written.count])
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let at = Int.random(in: 0..<line.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: line.remove(at: at)
                case 1: line.insert(contentsOf: Array(pieces.randomElement(using: &random)!), at: at)
                default: line[at] = Character(pieces.randomElement(using: &random)!.prefix(1).description)
                }
            }
            let text = String(line)
            #expect(agrees(text), "\(text)")
            if scanned(text) != nil { read += 1 }
        }
        #expect(read > 100, "some broken lines are still records, and were read")
    }

    @Test func aReaderTakesTheScannersRecordAndTheDecodersErrors() throws {
        #expect(try AuditEntry.parse(line: Array(written[2].utf8)) == scanned(written[2]))
        #expect(throws: AuditLineError(message: "field \"pid\" is not a whole number")) {
            try AuditEntry.parse(line: Array(auditLine(["pid": "1.5"]).utf8))
        }
    }
}

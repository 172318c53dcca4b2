import Foundation
import Testing
@testable import LNPTools

#if canImport(Glibc)
import Glibc
#endif

private let truePath = "/bin/true"

private func contents(_ path: String) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
}

/// The outcome of parsing, as a value that can be compared and printed.
private func outcome(_ bytes: [UInt8]) -> Result<ELFFile, ELFFile.Failure> {
    Result { () throws(ELFFile.Failure) -> ELFFile in try ELFFile.parse(bytes) }
}

private func isTruncated(_ failure: ELFFile.Failure) -> Bool {
    if case .truncated = failure { return true }
    return false
}

private func storeLittleEndian(_ value: UInt64, size: Int, into bytes: inout [UInt8], at offset: Int) {
    for i in 0..<size { bytes[offset + i] = UInt8(truncatingIfNeeded: value >> UInt64(8 * i)) }
}

@Suite("ELFFile: binaries on this machine")
struct ELFFileSystemTests {
    @Test func dynamicProgram() throws {
        let file = try ELFFile.read(path: truePath)
        #expect(file.is64Bit == (MemoryLayout<Int>.size == 8))
        #expect(file.isLittleEndian)
        #expect(file.type == 2 || file.type == 3, "ET_EXEC or ET_DYN")
        #if arch(x86_64)
        #expect(file.machine == 62)
        #elseif arch(arm64)
        #expect(file.machine == 183)
        #endif
        let interpreter = try #require(file.interpreter)
        #expect(interpreter.hasPrefix("/") && interpreter.contains("ld-"))
        #expect(!file.isStatic)
        #expect(file.hasDynamicSegment)
        #expect(!file.isGo)
        #expect(file.sectionNames.contains(".text") && file.sectionNames.contains(".interp") && file.sectionNames.contains(".dynamic"))
        let buildID = try #require(file.buildID)
        #expect(buildID.count == 40 && buildID.allSatisfy { "0123456789abcdef".contains($0) })
    }

    @Test func buildIDAgreesWithReadelf() throws {
        let file = try ELFFile.read(path: truePath)
        let readelf = try run("/usr/bin/env", ["readelf", "-n", truePath])
        try #require(readelf.status == 0, "readelf (binutils) is needed for this test")
        let line = try #require(readelf.output.split(separator: "\n").first { $0.contains("Build ID:") })
        let expected = String(try #require(line.split(separator: " ").last))
        #expect(file.buildID == expected)
    }

    @Test func readingAFileEqualsParsingItsBytes() throws {
        #expect(try ELFFile.read(path: truePath) == ELFFile.parse(try contents(truePath)))
    }

    @Test func staticProgram() throws {
        let path = try staticBinary.get()
        let file = try ELFFile.read(path: path)
        #expect(file.isStatic)
        #expect(file.interpreter == nil)
        #expect(!file.isGo)
        #expect(file.buildID?.count == 40)
    }

    @Test func unreadableFiles() throws {
        #expect {
            try ELFFile.read(path: "/nonexistent/lnp-test")
        } throws: { error in
            guard case .unreadable(let errno) = error as? ELFFile.Failure else { return false }
            return errno.rawValue == ENOENT
        }
        #expect {
            try ELFFile.read(path: "/")
        } throws: { error in
            guard case .unreadable(let errno) = error as? ELFFile.Failure else { return false }
            return errno.rawValue == EISDIR
        }
    }

    @Test func truncatedFileOnDisk() throws {
        let directory = try makeTemporaryDirectory()
        let path = directory + "/short"
        try writeFile(path, Array(try contents(truePath).prefix(1000)))
        #expect {
            try ELFFile.read(path: path)
        } throws: { error in
            guard let failure = error as? ELFFile.Failure else { return false }
            return isTruncated(failure)
        }
    }

    /// Every prefix of /bin/true that stops before the end of its section headers is
    /// reported as truncated, and never crashes the reader.
    @Test func truncatedCopies() throws {
        let bytes = try contents(truePath)
        let sectionOffset = bytes[40..<48].reversed().reduce(0) { $0 << 8 | Int($1) }
        let entrySize = Int(bytes[58]) | Int(bytes[59]) << 8
        let entryCount = Int(bytes[60]) | Int(bytes[61]) << 8
        let tableEnd = sectionOffset + entrySize * entryCount
        try #require(sectionOffset > 0 && tableEnd <= bytes.count)
        var lengths = Array(0..<min(256, tableEnd)) + Array(stride(from: 256, to: tableEnd, by: 11))
        lengths += Array(max(0, tableEnd - 256)..<tableEnd)
        var wrong: [String] = []
        for length in lengths {
            switch outcome(Array(bytes.prefix(length))) {
            case .success: wrong.append("\(length): parsed")
            case .failure(let failure) where !isTruncated(failure): wrong.append("\(length): \(failure)")
            case .failure: break
            }
        }
        #expect(wrong.isEmpty, "\(wrong.prefix(10))")
        #expect(throws: Never.self) { try ELFFile.parse(Array(bytes.prefix(tableEnd))) }
    }

    @Test func garbageIsNotELF() {
        var random = SeededRandom(seed: 8)
        for _ in 0..<500 {
            var bytes = (0..<Int.random(in: 16...4096, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            if bytes[0] == 0x7f { bytes[0] = 0 }
            #expect(throws: ELFFile.Failure.notELF) { try ELFFile.parse(bytes) }
        }
        #expect(throws: ELFFile.Failure.notELF) { try ELFFile.parse(Array("#!/bin/sh\necho hello world\n".utf8)) }
        #expect(throws: ELFFile.Failure.notELF) { try ELFFile.parse(Array("\u{7f}ELX".utf8) + [UInt8](repeating: 0, count: 60)) }
    }

    @Test func hostileHeaderFields() throws {
        let original = try contents(truePath)
        // (offset, size, value): e_shnum, e_phnum, e_shoff, e_phoff, e_shentsize, e_phentsize.
        let edits: [(Int, Int, UInt64)] = [
            (60, 2, 0xffff), (60, 2, 0xfffe), (56, 2, 0xfffe), (40, 8, UInt64.max - 10), (40, 8, 0x7fff_ffff_ffff_fff0),
            (32, 8, UInt64.max - 100), (32, 8, 0xffff_ffff_ffff_0000), (32, 8, UInt64(original.count - 8)), (58, 2, 8),
            (54, 2, 4), (58, 2, 0xffff), (54, 2, 0xffff), (4, 1, 3), (5, 1, 0),
        ]
        for (offset, size, value) in edits {
            var bytes = original
            storeLittleEndian(value, size: size, into: &bytes, at: offset)
            #expect(throws: ELFFile.Failure.self, "field at \(offset) = \(value)") { try ELFFile.parse(bytes) }
        }
    }

    /// Random damage to /bin/true's first 64 KiB, concentrated on the headers, never crashes
    /// the reader; and reading the file from disk agrees with parsing it from memory.
    @Test func mutationFuzz() throws {
        let original = Array(try contents(truePath).prefix(65_536))
        let sectionOffset = original[40..<48].reversed().reduce(0) { $0 << 8 | Int($1) }
        let programOffset = original[32..<40].reversed().reduce(0) { $0 << 8 | Int($1) }
        let directory = try makeTemporaryDirectory()
        var random = SeededRandom(seed: 0xE1F)
        var parsed = 0
        var disagreements: [Int] = []
        for round in 0..<3_000 {
            var bytes = original
            for _ in 0..<Int.random(in: 1...6, using: &random) {
                let region = Int.random(in: 0..<4, using: &random)
                let position: Int
                switch region {
                case 0: position = Int.random(in: 0..<64, using: &random)
                case 1: position = min(bytes.count - 1, programOffset + Int.random(in: 0..<(56 * 13), using: &random))
                case 2: position = min(bytes.count - 1, sectionOffset + Int.random(in: 0..<(64 * 31), using: &random))
                default: position = Int.random(in: 0..<bytes.count, using: &random)
                }
                bytes[position] = Bool.random(using: &random) ? UInt8.random(in: 0...255, using: &random) : [0, 0xff, 0x7f, 0x80].randomElement(using: &random)!
            }
            if Int.random(in: 0..<10, using: &random) == 0 {
                bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &random)))
            }
            let fromMemory = outcome(bytes)
            if case .success = fromMemory { parsed += 1 }
            if round % 15 == 0 {
                let path = directory + "/mutant"
                try writeFile(path, bytes)
                let fromDisk = Result { () throws(ELFFile.Failure) -> ELFFile in try ELFFile.read(path: path) }
                switch (fromMemory, fromDisk) {
                case (.success(let a), .success(let b)) where a == b: break
                case (.failure, .failure): break
                default: disagreements.append(round)
                }
            }
        }
        #expect(parsed > 300, "many mutants should still parse")
        #expect(disagreements.isEmpty, "file and memory readers disagree in rounds \(disagreements.prefix(10))")
    }
}

@Suite("ELFFile: built by hand")
struct ELFFileBuiltTests {
    @Test func elf32LittleEndianWithInterpreter() throws {
        var builder = ELFBuilder()
        builder.wide = false
        builder.type = 2
        builder.machine = 3
        builder.programs = [(3, Array("/lib/ld-linux.so.2".utf8) + [0]), (2, [UInt8](repeating: 0, count: 16))]
        let file = try ELFFile.parse(builder.build())
        #expect(!file.is64Bit && file.isLittleEndian)
        #expect(file.type == 2 && file.machine == 3)
        #expect(file.interpreter == "/lib/ld-linux.so.2")
        #expect(file.hasDynamicSegment)
        #expect(!file.isStatic)
        #expect(file.sectionNames == ["", ".shstrtab"])
    }

    @Test func elf64BigEndianWithBuildIDNote() throws {
        var builder = ELFBuilder()
        builder.little = false
        builder.machine = 43
        builder.programs = [(4, ELFBuilder.note(owner: "GNU", type: 3, description: [0xde, 0xad, 0xbe, 0xef, 0x00, 0x0f], little: false))]
        let file = try ELFFile.parse(builder.build())
        #expect(file.is64Bit && !file.isLittleEndian)
        #expect(file.machine == 43)
        #expect(file.buildID == "deadbeef000f")
        #expect(file.isStatic)
    }

    @Test func elf32BigEndianSections() throws {
        var builder = ELFBuilder()
        builder.wide = false
        builder.little = false
        builder.sections = [(".note.gnu.build-id", 7, ELFBuilder.note(owner: "GNU", type: 3, description: [1, 2, 3], little: false))]
        let file = try ELFFile.parse(builder.build())
        #expect(file.buildID == "010203")
        #expect(file.sectionNames == ["", ".note.gnu.build-id", ".shstrtab"])
    }

    @Test func notesOfOtherOwnersOrTypesAreIgnored() throws {
        var builder = ELFBuilder()
        builder.programs = [
            (4, ELFBuilder.note(owner: "GNU", type: 1, description: [0, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0])  // ABI tag
                + ELFBuilder.note(owner: "GNU", type: 3, description: [0xab, 0xcd])
                + ELFBuilder.note(owner: "XYZ", type: 3, description: [9, 9])
                + ELFBuilder.note(owner: "Go", type: 3, description: [8, 8]))
        ]
        let file = try ELFFile.parse(builder.build())
        #expect(file.buildID == "abcd")
        #expect(!file.hasGoBuildID)
    }

    @Test func noteSizesPastTheSegmentStopTheNotes() throws {
        var note = ELFBuilder.note(owner: "GNU", type: 3, description: [1, 2, 3, 4])
        note[4] = 0xff  // a description size far past the segment
        var builder = ELFBuilder()
        builder.programs = [(4, note + ELFBuilder.note(owner: "GNU", type: 3, description: [5]))]
        let file = try ELFFile.parse(builder.build())
        #expect(file.buildID == nil)
    }

    @Test(arguments: [
        (".note.go.buildid", UInt32(7), true), (".gopclntab", 1, false), (".go.buildinfo", 1, false),
    ])
    func goPrograms(section: String, type: UInt32, note: Bool) throws {
        var builder = ELFBuilder()
        builder.programs = [(3, Array("/lib64/ld-linux-x86-64.so.2".utf8) + [0])]
        builder.sections = [(section, type, note ? ELFBuilder.note(owner: "Go", type: 4, description: Array("abc/def".utf8)) : [1, 2, 3])]
        let file = try ELFFile.parse(builder.build())
        #expect(file.isGo)
        #expect(file.hasGoBuildID == note)
        #expect(!file.isStatic)
    }

    @Test func goBuildIDNoteInASegment() throws {
        var builder = ELFBuilder()
        builder.withSectionTable = false
        builder.programs = [(4, ELFBuilder.note(owner: "Go", type: 4, description: Array("xyz".utf8)))]
        let file = try ELFFile.parse(builder.build())
        #expect(file.hasGoBuildID && file.isGo)
        #expect(file.sectionNames.isEmpty)
    }

    @Test func notGo() throws {
        var builder = ELFBuilder()
        builder.sections = [(".text", 1, [0x90]), (".gopclntabx", 1, [0])]
        #expect(!(try ELFFile.parse(builder.build())).isGo)
    }

    @Test func extendedNumbering() throws {
        var builder = ELFBuilder()
        builder.extendedNumbering = true
        builder.programs = [(3, Array("/lib/ld.so".utf8) + [0])]
        builder.sections = [(".text", 1, [0x90]), (".data", 1, [1])]
        let file = try ELFFile.parse(builder.build())
        #expect(file.sectionNames == ["", ".text", ".data", ".shstrtab"])
        #expect(file.interpreter == "/lib/ld.so")
    }

    @Test func minimalFileWithoutTables() throws {
        var builder = ELFBuilder()
        builder.withSectionTable = false
        let file = try ELFFile.parse(builder.build())
        #expect(file.isStatic && !file.hasDynamicSegment && file.buildID == nil && file.sectionNames.isEmpty && !file.isGo)
    }

    @Test func malformedHeaders() {
        var builder = ELFBuilder()
        builder.programs = [(3, [])]  // an empty interpreter path
        #expect(throws: ELFFile.Failure.malformed("interpreter of 0 bytes")) { try ELFFile.parse(builder.build()) }
        builder.programs = [(3, [UInt8](repeating: 0x41, count: 5000))]
        #expect(throws: ELFFile.Failure.malformed("interpreter of 5000 bytes")) { try ELFFile.parse(builder.build()) }
        builder.programs = [(3, Array("/no/terminator".utf8))]
        #expect((try? ELFFile.parse(builder.build()))?.interpreter == "", "an unterminated path reads as empty")

        var bytes = ELFBuilder().build()
        bytes[4] = 3
        #expect(throws: ELFFile.Failure.malformed("class 3")) { try ELFFile.parse(bytes) }
        bytes[4] = 2
        bytes[5] = 0
        #expect(throws: ELFFile.Failure.malformed("byte order 0")) { try ELFFile.parse(bytes) }

        #expect(throws: ELFFile.Failure.truncated("the identification")) { try ELFFile.parse([]) }
        #expect(throws: ELFFile.Failure.truncated("the identification")) { try ELFFile.parse([0x7f, 0x45, 0x4c, 0x46]) }
        #expect(throws: ELFFile.Failure.truncated("the file header")) { try ELFFile.parse(Array(ELFBuilder().build().prefix(40))) }
    }

    @Test func failureDescriptions() {
        #expect(ELFFile.Failure.notELF.description == "not an ELF file")
        #expect(ELFFile.Failure.truncated("x").description.contains("x lies past the end"))
        #expect(ELFFile.Failure.malformed("y").description.contains("(y)"))
    }
}

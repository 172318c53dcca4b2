import Foundation
import Testing
@testable import LNPTools

#if canImport(Glibc)
import Glibc
#endif

private func contents(_ path: String) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
}

/// Dynamic programs and libraries of this machine, to compare with binutils.
private let realFiles: [String] = ["/bin/true", "/usr/bin/python3", "/usr/bin/curl", "/lib/x86_64-linux-gnu/libc.so.6",
    "/lib/aarch64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"]
    .filter { access($0, R_OK) == 0 }

/// A 64-bit little-endian ELF file's bytes without its section headers, as a stripped or
/// hostile file may come: the reader must then go through PT_DYNAMIC.
private func withoutSectionHeaders(_ bytes: [UInt8]) -> [UInt8] {
    var copy = bytes
    for offset in [40..<48, 58..<64] { copy.replaceSubrange(offset, with: [UInt8](repeating: 0, count: offset.count)) }
    return copy
}

private func dynamicProgram(_ dynamic: ELFBuilder.Dynamic, wide: Bool = true, little: Bool = true) -> ELFBuilder {
    var builder = ELFBuilder()
    builder.wide = wide
    builder.little = little
    builder.programs = [(3, Array("/lib/ld.so".utf8) + [0])]
    builder.dynamic = dynamic
    return builder
}

private func failure(_ bytes: [UInt8]) -> ELFFile.Failure? {
    do {
        _ = try ELFFile.parse(bytes, imports: true)
        return nil
    } catch {
        return error
    }
}

@Suite("ELFFile: imports and needed libraries")
struct ELFImportsTests {
    @Test func agreesWithBinutils() throws {
        try #require(!realFiles.isEmpty)
        for path in realFiles {
            let file = try ELFFile.read(path: path, imports: true)
            let nm = try run("/usr/bin/env", ["nm", "-D", "--undefined-only", path])
            try #require(nm.status == 0, "nm (binutils) is needed for this test")
            let expected = Set(nm.output.split(separator: "\n").compactMap { line in
                line.split(separator: " ").last.map { String($0.prefix { $0 != "@" }) }
            })
            #expect(Set(file.importedSymbols) == expected, "\(path)")
            #expect(file.importedSymbols.count == expected.count, "\(path): each name once")

            let readelf = try run("/usr/bin/env", ["readelf", "-dW", path])
            let needed = readelf.output.split(separator: "\n").filter { $0.contains("(NEEDED)") }.compactMap { line in
                line.split(separator: "[").last.map { String($0.dropLast()) }
            }
            #expect(file.neededLibraries == needed, "\(path)")
        }
    }

    /// Without section headers the table is found as the loader finds it, and counted by its
    /// GNU hash table (libraries have hashed symbols; /bin/true may have none).
    @Test func withoutSectionHeadersTheSameIsRead() throws {
        for path in realFiles {
            let bytes = try contents(path)
            let withSections = try ELFFile.parse(bytes, imports: true)
            let stripped = try ELFFile.parse(withoutSectionHeaders(bytes), imports: true)
            #expect(stripped.sectionNames.isEmpty)
            #expect(stripped.importedSymbols == withSections.importedSymbols, "\(path)")
            #expect(stripped.neededLibraries == withSections.neededLibraries, "\(path)")
            #expect(!stripped.importedSymbols.isEmpty && !stripped.neededLibraries.isEmpty, "\(path)")
        }
    }

    @Test func readOnlyWhenAsked() throws {
        let file = try ELFFile.read(path: "/bin/true")
        #expect(file.importedSymbols.isEmpty && file.neededLibraries.isEmpty)
        #expect(try ELFFile.read(path: "/bin/true", imports: true).neededLibraries == ["libc.so.6"])
    }

    @Test func staticProgramImportsNothing() throws {
        let file = try ELFFile.read(path: try staticBinary.get(), imports: true)
        #expect(file.importedSymbols.isEmpty && file.neededLibraries.isEmpty)
    }

    @Test(arguments: [
        (true, true), (true, false), (false, true), (false, false),
    ])
    func builtInEveryClassAndOrder(wide: Bool, little: Bool) throws {
        for hash in [ELFBuilder.Dynamic.Hash.gnu, .sysv, .none] {
            for sections in [true, false] {
                let dynamic = ELFBuilder.Dynamic(
                    needed: ["libfoo.so.1", "libc.so.6"], imports: ["connect", "sendto@GLIBC_2.2.5", "syscall", "connect"],
                    exports: ["exported_one", "exported_two", "exported_three"], hash: hash, sections: sections)
                let file = try ELFFile.parse(dynamicProgram(dynamic, wide: wide, little: little).build(), imports: true)
                let label = "\(wide ? 64 : 32)-bit \(little ? "LE" : "BE") \(hash) sections: \(sections)"
                #expect(file.importedSymbols == ["connect", "sendto", "syscall"], "\(label)")
                #expect(file.neededLibraries == ["libfoo.so.1", "libc.so.6"], "\(label)")
                #expect(file.interpreter == "/lib/ld.so")
            }
        }
    }

    /// The GNU hash walk counts the hashed symbols after the imports: an import placed after
    /// them would be missed by a count that stopped at the first bucket.
    @Test func gnuHashCountsEveryChain() throws {
        let exports = (0..<40).map { "function_\($0)" }
        var dynamic = ELFBuilder.Dynamic(imports: ["bind"], exports: exports, hash: .gnu, sections: false)
        let file = try ELFFile.parse(dynamicProgram(dynamic).build(), imports: true)
        #expect(file.importedSymbols == ["bind"])
        dynamic.exports = []
        #expect(try ELFFile.parse(dynamicProgram(dynamic).build(), imports: true).importedSymbols == ["bind"])
    }

    @Test func noDynamicSectionMeansNoImports() throws {
        var builder = ELFBuilder()
        builder.programs = [(3, Array("/lib/ld.so".utf8) + [0])]
        let file = try ELFFile.parse(builder.build(), imports: true)
        #expect(file.importedSymbols.isEmpty && file.neededLibraries.isEmpty)
    }

    // Hostile values: each is reported as a failure, not a crash or a huge allocation.

    /// Overwrites the value of the first dynamic entry with `tag` in a section-less file.
    private func editingEntry(_ tag: UInt64, to value: UInt64, _ dynamic: ELFBuilder.Dynamic) throws -> [UInt8] {
        var bytes = dynamicProgram(dynamic).build()
        let entries = try #require(findDynamic(bytes))
        for index in 0..<(entries.size / 16) {
            let at = entries.offset + index * 16
            if read64(bytes, at) == tag {
                for i in 0..<8 { bytes[at + 8 + i] = UInt8(truncatingIfNeeded: value >> UInt64(8 * i)) }
                return bytes
            }
        }
        Issue.record("no dynamic entry \(tag)")
        return bytes
    }

    private func read64(_ bytes: [UInt8], _ at: Int) -> UInt64 {
        (0..<8).reduce(0) { $0 | UInt64(bytes[at + $1]) << UInt64(8 * $1) }
    }

    /// PT_DYNAMIC's offset and size (64-bit little-endian).
    private func findDynamic(_ bytes: [UInt8]) -> (offset: Int, size: Int)? {
        let programs = Int(read64(bytes, 32)), count = Int(bytes[56])
        for index in 0..<count where bytes[programs + index * 56] == 2 {
            let entry = programs + index * 56
            return (Int(read64(bytes, entry + 8)), Int(read64(bytes, entry + 32)))
        }
        return nil
    }

    @Test func hostileDynamicEntries() throws {
        let plain = ELFBuilder.Dynamic(needed: ["libc.so.6"], imports: ["connect"], hash: .sysv, sections: false)
        let gnu = ELFBuilder.Dynamic(needed: ["libc.so.6"], imports: ["connect"], exports: ["x"], hash: .gnu, sections: false)
        let cases: [(String, [UInt8])] = [
            ("DT_NEEDED past the strings", try editingEntry(1, to: 1 << 40, plain)),
            ("DT_STRTAB unmapped", try editingEntry(5, to: 0x10, plain)),
            ("DT_STRSZ huge", try editingEntry(10, to: UInt64.max, plain)),
            ("DT_SYMTAB unmapped", try editingEntry(6, to: UInt64.max - 3, plain)),
            ("DT_SYMENT tiny", try editingEntry(11, to: 3, plain)),
            ("DT_HASH unmapped", try editingEntry(4, to: 8, plain)),
            ("DT_GNU_HASH unmapped", try editingEntry(0x6fff_fef5, to: 1, gnu)),
        ]
        for (label, bytes) in cases {
            #expect(failure(bytes) != nil, "\(label)")
        }
    }

    @Test func hostileHashTables() throws {
        let sysv = ELFBuilder.Dynamic(imports: ["connect"], hash: .sysv, sections: false)
        var bytes = dynamicProgram(sysv).build()
        let hashAt = try hashTableOffset(bytes, tag: 4)
        bytes.replaceSubrange((hashAt + 4)..<(hashAt + 8), with: [0xff, 0xff, 0xff, 0xff])  // nchain
        #expect(failure(bytes) == .malformed("4294967295 dynamic symbols"))

        let gnu = ELFBuilder.Dynamic(imports: ["connect"], exports: ["a", "b"], hash: .gnu, sections: false)
        let original = dynamicProgram(gnu).build()
        let gnuAt = try hashTableOffset(original, tag: 0x6fff_fef5)
        // Words: buckets, first hashed symbol, bloom words, (shift), bloom (8 bytes), 2 buckets.
        let edits: [[(Int, UInt32)]] = [
            [(0, .max)], [(8, .max)], [(4, .max)], [(24, 1), (28, 1)], [(24, .max)], [(0, 1 << 21)],
        ]
        for edit in edits {
            var bytes = original
            for (field, value) in edit {
                for i in 0..<4 { bytes[gnuAt + field + i] = UInt8(truncatingIfNeeded: value >> UInt32(8 * i)) }
            }
            #expect(failure(bytes) != nil, "GNU hash words \(edit)")
        }
    }

    /// The chain walk, on tables made by hand: it stops at the word with the low bit set, and
    /// a chain that never ends is cut by the end of the file.
    @Test func gnuHashChainWalk() throws {
        func table(_ chains: [UInt32]) -> [UInt8] {
            let words: [UInt32] = [1, 1, 1, 6, 0xffff_ffff, 0xffff_ffff, 1] + chains  // 1 bucket, first 1, 1 bloom word
            return words.flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> UInt32(8 * $0)) } }
        }
        func count(_ bytes: [UInt8]) throws(ELFFile.Failure) -> UInt64 {
            let reader = DynamicReader(
                source: MemoryBytes(bytes: bytes), order: ByteOrder(little: true), wide: true, sections: [],
                loads: [ELFFile.Segment(address: 0x1000, offset: 0, size: UInt64(bytes.count))])
            return try reader.gnuHashCount(at: 0x1000)
        }
        #expect(try count(table([2, 4, 7, 8])) == 4)
        #expect(try count(table([3])) == 2)
        #expect(throws: ELFFile.Failure.truncated("the GNU hash chains")) { try count(table([2, 4, 6])) }
        #expect(throws: ELFFile.Failure.truncated("the GNU hash chains")) { try count(table([]) + [1, 0]) }
        // 300 words without an end: more than one chunk is read.
        var long = table([UInt32](repeating: 2, count: 300))
        long += [1, 0, 0, 0]
        #expect(try count(long) == 302)
    }

    private func hashTableOffset(_ bytes: [UInt8], tag: UInt64) throws -> Int {
        let entries = try #require(findDynamic(bytes))
        for index in 0..<(entries.size / 16) where read64(bytes, entries.offset + index * 16) == tag {
            return Int(read64(bytes, entries.offset + index * 16 + 8)) - ELFBuilder.loadAddress
        }
        throw POSIXError(.ENOENT)
    }

    @Test func hostileSections() throws {
        let dynamic = ELFBuilder.Dynamic(imports: ["connect"], hash: .gnu, sections: true)
        let original = dynamicProgram(dynamic).build()
        let table = Int(read64(original, 40)), entrySize = 64
        // Sections: 0 null, 1 .dynstr, 2 .dynsym, 3 .dynamic, 4 .shstrtab.
        let edits: [(String, Int, UInt64)] = [
            ("dynsym links to itself", 2 * entrySize + 40, 2), ("dynsym links past the table", 2 * entrySize + 40, 99),
            ("dynsym entry size 1", 2 * entrySize + 56, 1), ("dynsym of 2^40 bytes", 2 * entrySize + 32, 1 << 40),
            ("dynstr of 2^30 bytes", 1 * entrySize + 32, 1 << 30), ("dynstr past the end", 1 * entrySize + 24, 1 << 32),
        ]
        for (label, field, value) in edits {
            var bytes = original
            let at = table + field
            let width = field % entrySize == 40 ? 4 : 8
            for i in 0..<width { bytes[at + i] = UInt8(truncatingIfNeeded: value >> UInt64(8 * i)) }
            #expect(failure(bytes) != nil, "\(label)")
        }
        // A symbol name outside its string table.
        var bytes = original
        let dynsym = Int(read64(original, table + 2 * entrySize + 24))
        bytes.replaceSubrange((dynsym + 24)..<(dynsym + 28), with: [0xff, 0xff, 0, 0])
        #expect(failure(bytes) == .malformed("the name of dynamic symbol 1 outside the string table"))
    }
}

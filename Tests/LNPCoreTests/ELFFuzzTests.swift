import Foundation
import Testing
@testable import LNPTools

#if canImport(Glibc)
import Glibc
#endif

/// Files to damage: real ones of this machine, liblnp.so when the build has made it, and
/// hand-built ones for the classes and byte orders this machine has none of.
private func seeds() throws -> [(name: String, bytes: [UInt8])] {
    var seeds: [(String, [UInt8])] = []
    for path in ["/bin/true", preloadPath()].compactMap({ $0 }) where access(path, R_OK) == 0 {
        seeds.append((path, [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))))
    }
    let dynamic = ELFBuilder.Dynamic(
        needed: ["libc.so.6", "libm.so.6"], imports: ["connect", "sendto", "syscall", "getaddrinfo"],
        exports: ["one", "two", "three", "four"])
    for (wide, little, hash, sections) in [
        (false, true, ELFBuilder.Dynamic.Hash.gnu, true), (true, false, .gnu, false), (false, false, .sysv, false),
        (true, true, .none, false),
    ] {
        var builder = ELFBuilder()
        builder.wide = wide
        builder.little = little
        builder.programs = [
            (3, Array("/lib/ld.so".utf8) + [0]), (4, ELFBuilder.note(owner: "GNU", type: 3, description: [1, 2, 3, 4], little: little)),
        ]
        builder.dynamic = dynamic
        builder.dynamic?.hash = hash
        builder.dynamic?.sections = sections
        seeds.append(("built \(wide ? 64 : 32)-bit \(little ? "LE" : "BE") \(hash)", builder.build()))
    }
    return seeds
}

/// liblnp.so beside the test bundle, where `swift build` puts the package's products.
private func preloadPath() -> String? {
    guard let executable = realpath("/proc/self/exe", nil) else { return nil }
    defer { free(executable) }
    var directory = String(cString: executable)
    for _ in 0..<4 {
        directory = (directory as NSString).deletingLastPathComponent
        if access(directory + "/liblnp.so", R_OK) == 0 { return directory + "/liblnp.so" }
    }
    return nil
}

/// Parses with imports; true if it parsed. Anything but a return or a thrown Failure (a
/// trap) ends the test process, which is the failure this suite looks for.
@discardableResult
private func survives(_ bytes: [UInt8]) -> Bool {
    (try? ELFFile.parse(bytes, imports: true)) != nil
}

/// The reader of dynamic symbols and needed libraries, on damaged files: it must return or
/// throw, never trap, loop or allocate without bound. Fixed seeds, so a failure replays.
@Suite("ELFFile: fuzzing the imports reader")
struct ELFFuzzTests {
    /// The slowest single parse allowed: a hang or a runaway loop shows up here.
    static let slowest = Duration.seconds(1)

    @Test func seedsParse() throws {
        let all = try seeds()
        #expect(all.count >= 5)
        for (name, bytes) in all {
            let file = try ELFFile.parse(bytes, imports: true)
            #expect(!file.importedSymbols.isEmpty, "\(name)")
            #expect(!file.neededLibraries.isEmpty, "\(name)")
        }
    }

    @Test func byteFlips() throws {
        var random = SeededRandom(seed: 0xF1_1b5)
        let clock = ContinuousClock()
        var slowest = Duration.zero
        var parsedWithImports = 0
        let all = try seeds()
        for (name, original) in all {
            // Headers and the dynamic data lie in the first pages; damage is concentrated there.
            let hot = min(original.count, 8192)
            for _ in 0..<600 {
                var bytes = original
                for _ in 0..<Int.random(in: 1...8, using: &random) {
                    let position = Bool.random(using: &random)
                        ? Int.random(in: 0..<hot, using: &random) : Int.random(in: 0..<bytes.count, using: &random)
                    bytes[position] = Bool.random(using: &random)
                        ? UInt8.random(in: 0...255, using: &random) : [0, 0xff, 0x7f, 0x80, 1].randomElement(using: &random)!
                }
                let start = clock.now
                if let file = try? ELFFile.parse(bytes, imports: true), !file.importedSymbols.isEmpty {
                    parsedWithImports += 1
                }
                slowest = max(slowest, clock.now - start)
            }
            _ = name
        }
        #expect(slowest < Self.slowest)
        // Most flips miss what matters: the imports path itself must have been exercised.
        #expect(parsedWithImports > all.count * 100)
    }

    @Test func truncations() throws {
        let clock = ContinuousClock()
        var slowest = Duration.zero
        for (name, original) in try seeds() {
            // Every offset in the first 4 KiB, then every 97th.
            let lengths = Array(0..<min(4096, original.count)) + Array(stride(from: 4096, to: original.count, by: 97))
            var parsed = 0
            for length in lengths {
                let start = clock.now
                if survives(Array(original.prefix(length))) { parsed += 1 }
                slowest = max(slowest, clock.now - start)
            }
            #expect(parsed < lengths.count, "\(name): some prefix must fail")
        }
        #expect(slowest < Self.slowest)
    }

    /// Valid identification bytes, then garbage: every field the reader trusts is random.
    @Test func garbageAfterTheIdentification() {
        var random = SeededRandom(seed: 0x6A4B)
        let clock = ContinuousClock()
        var slowest = Duration.zero
        for round in 0..<3_000 {
            let wide = round % 2 == 0, little = round % 4 < 2
            var bytes = [0x7f, 0x45, 0x4c, 0x46, wide ? 2 : 1, little ? 1 : 2, 1] + [UInt8](repeating: 0, count: 9)
            bytes += (0..<Int.random(in: 0...2048, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            // Small header fields, so that tables are often found inside the garbage.
            if bytes.count >= 64 && Bool.random(using: &random) {
                for at in stride(from: wide ? 32 : 28, to: wide ? 48 : 36, by: 1) { bytes[at] = 0 }
                bytes[wide ? 32 : 28] = UInt8(wide ? 64 : 52)
                bytes[wide ? 56 : 44] = UInt8.random(in: 0...8, using: &random)
                bytes[wide ? 57 : 45] = 0
            }
            let start = clock.now
            survives(bytes)
            slowest = max(slowest, clock.now - start)
        }
        #expect(slowest < Self.slowest)
    }

    /// The file reader agrees with the memory reader on damaged files (they share the
    /// parser, not the reading of bytes: the file one checks against the file's size).
    @Test func fileAndMemoryAgree() throws {
        var random = SeededRandom(seed: 0xD15C)
        let directory = try makeTemporaryDirectory()
        var disagreements: [String] = []
        for (name, original) in try seeds() {
            for round in 0..<40 {
                var bytes = Array(original.prefix(Int.random(in: original.count / 2...original.count, using: &random)))
                for _ in 0..<3 { bytes[Int.random(in: 0..<min(4096, bytes.count), using: &random)] ^= 0x41 }
                let path = directory + "/mutant"
                try writeFile(path, bytes)
                let fromMemory = Result { () throws(ELFFile.Failure) -> ELFFile in try ELFFile.parse(bytes, imports: true) }
                let fromDisk = Result { () throws(ELFFile.Failure) -> ELFFile in try ELFFile.read(path: path, imports: true) }
                if fromMemory != fromDisk { disagreements.append("\(name) round \(round)") }
            }
        }
        #expect(disagreements.isEmpty, "\(disagreements.prefix(5))")
    }
}

import CLibcap
import Foundation
import Testing
@testable import LNPTools

#if canImport(Glibc)
import Glibc
#endif

private func copyOfTrue(in directory: String, name: String = "prog", mode: mode_t = 0o755) throws -> String {
    let path = directory + "/" + name
    try writeFile(path, [UInt8](try Data(contentsOf: URL(fileURLWithPath: "/bin/true"))), mode: mode)
    return path
}

/// A hand-built dynamic program importing `imports`.
private func programImporting(_ imports: [String], in directory: String) throws -> String {
    var builder = ELFBuilder()
    builder.programs = [(3, Array("/lib64/ld-linux-x86-64.so.2".utf8) + [0])]
    builder.dynamic = ELFBuilder.Dynamic(needed: ["libc.so.6"], imports: imports)
    let path = directory + "/importer"
    try writeFile(path, builder.build(), mode: 0o755)
    return path
}

private func identity() -> (uid: UInt32, gid: UInt32) { (geteuid(), getegid()) }

@Suite("ProgramInspection")
struct ProgramInspectionTests {
    @Test func dynamicProgram() throws {
        let path = try copyOfTrue(in: try makeTemporaryDirectory())
        let result = ProgramInspection.inspect(path: path)
        #expect(result.kind == .dynamic)
        #expect(result.isObservable == true)
        #expect(result.obstacles.isEmpty && result.reasons.isEmpty)
        #expect(result.interpreter?.contains("ld-") == true)
        #expect(result.needed == ["libc.so.6"])
        #expect(result.buildID == (try ELFFile.read(path: "/bin/true")).buildID)
        #expect(result.owner == identity().uid && !result.setuid && !result.setgid && result.fileCapabilities == nil)
        #expect(result.warnings.isEmpty, "a program without socket imports is still watched through its libraries")
        #expect(result.error == nil)
    }

    @Test func socketImportsAndTheirWarnings() throws {
        let path = try programImporting(
            ["printf", "__connect", "syscall", "sendto", "connect", "res_query", "getaddrinfo_a"], in: try makeTemporaryDirectory())
        let result = ProgramInspection.inspect(path: path)
        #expect(result.kind == .dynamic && result.isObservable == true)
        // In the list's order; "__connect" is not "connect".
        #expect(result.imports == ["connect", "sendto", "getaddrinfo_a", "res_query", "syscall"])
        #expect(result.warnings.contains { $0.hasPrefix("imports syscall(): lnp checks the socket calls made through it too") })
        #expect(result.warnings.count == 1, "the resolver's functions are checked like getaddrinfo")
    }

    @Test func staticProgram() throws {
        let result = ProgramInspection.inspect(path: try staticBinary.get())
        #expect(result.kind == .static)
        #expect(result.isObservable == false)
        #expect(result.obstacles == [.staticBinary])
        #expect(result.interpreter == nil && result.imports.isEmpty && result.needed.isEmpty)
        #expect(result.warnings.isEmpty, "nothing to add once it cannot be observed")
    }

    /// A set-id bit counts even for its owner: inspect describes the file for every user.
    @Test func setuidAndSetgidCountForTheOwnerToo() throws {
        let path = try copyOfTrue(in: try makeTemporaryDirectory(), mode: 0o6755)
        let (uid, gid) = identity()
        let result = ProgramInspection.inspect(path: path)
        #expect(result.setuid && result.setgid)
        #expect(result.obstacles == [.setuid(owner: uid), .setgid(group: gid)])
        #expect(result.isObservable == false)
        #expect(result.reasons[0] == "setuid uid \(uid) (the loader ignores LD_PRELOAD unless uid \(uid) runs it)")
        #expect(result.reasons[1].hasPrefix("setgid gid \(gid) "))
    }

    @Test(.enabled(if: geteuid() == 0, "setting file capabilities needs root"))
    func fileCapabilities() throws {
        let path = try copyOfTrue(in: try makeTemporaryDirectory())
        let capabilities = try #require(cap_from_text("cap_net_raw=ep"))
        defer { cap_free(UnsafeMutableRawPointer(capabilities)) }
        try #require(cap_set_file(path, capabilities) == 0, "cap_set_file: errno \(errno)")
        let result = ProgramInspection.inspect(path: path)
        #expect(result.fileCapabilities == "cap_net_raw=ep")
        #expect(result.obstacles == [.fileCapabilities])
        #expect(result.reasons == ["file capabilities (the loader ignores LD_PRELOAD unless root runs it)"])
    }

    @Test func goProgram() throws {
        var builder = ELFBuilder()
        builder.programs = [(3, Array("/lib64/ld-linux-x86-64.so.2".utf8) + [0])]
        builder.sections = [(".go.buildinfo", 1, [0xff])]
        let path = try makeTemporaryDirectory() + "/goprog"
        try writeFile(path, builder.build(), mode: 0o755)
        let result = ProgramInspection.inspect(path: path)
        #expect(result.isGo && result.obstacles == [.goProgram])
    }

    @Test func otherArchitecture() throws {
        var builder = ELFBuilder()
        builder.wide = false
        builder.machine = 3
        builder.programs = [(3, Array("/lib/ld-linux.so.2".utf8) + [0])]
        let path = try makeTemporaryDirectory() + "/prog32"
        try writeFile(path, builder.build(), mode: 0o755)
        let preload = try ELFFile.read(path: "/bin/true")
        let result = ProgramInspection.inspect(path: path, preload: preload)
        #expect(result.architecture == "32-bit x86")
        #expect(result.obstacles == [.otherArchitecture(program: "32-bit x86", preload: preload.architecture)])
        #expect(ProgramInspection.inspect(path: path).obstacles.isEmpty, "without liblnp.so there is nothing to compare")
    }

    @Test func scriptsAreJudgedByTheirInterpreter() throws {
        let directory = try makeTemporaryDirectory()
        let staticPath = try staticBinary.get()
        try writeFile(directory + "/fine", Array("#!/bin/true -x\necho\n".utf8), mode: 0o755)
        let fine = ProgramInspection.inspect(path: directory + "/fine")
        #expect(fine.kind == .script && fine.interpreter == "/bin/true" && fine.isObservable == true)

        try writeFile(directory + "/blocked", Array("#!\(staticPath)\n".utf8), mode: 0o755)
        let blocked = ProgramInspection.inspect(path: directory + "/blocked")
        #expect(blocked.obstacles == [.interpreter(staticPath, .staticBinary)])
        #expect(blocked.reasons == ["its interpreter \(staticPath): static binary (the loader that applies LD_PRELOAD never runs)"])

        // A setuid interpreter is an obstacle; a setuid script is not (Linux ignores the bit).
        let setuidInterpreter = try copyOfTrue(in: directory, name: "setuid-true", mode: 0o4755)
        try writeFile(directory + "/through-setuid", Array("#!\(setuidInterpreter)\n".utf8), mode: 0o4755)
        let throughSetuid = ProgramInspection.inspect(path: directory + "/through-setuid")
        #expect(throughSetuid.obstacles == [.interpreter(setuidInterpreter, .setuid(owner: identity().uid))])
        #expect(throughSetuid.warnings.contains("set-id bit on a script: Linux ignores it"))
    }

    @Test func envScripts() throws {
        let directory = try makeTemporaryDirectory()
        try writeFile(directory + "/env-sh", Array("#!/usr/bin/env sh\n".utf8), mode: 0o755)
        let found = ProgramInspection.inspect(path: directory + "/env-sh")
        #expect(found.kind == .script)
        #expect(found.interpreter?.hasSuffix("/sh") == true)

        try writeFile(directory + "/env-missing", Array("#!/usr/bin/env -S lnp-no-such-interpreter -x\n".utf8), mode: 0o755)
        let missing = ProgramInspection.inspect(path: directory + "/env-missing")
        #expect(missing.kind == .script && missing.interpreter == "lnp-no-such-interpreter")
        #expect(missing.isObservable == nil && missing.warnings.isEmpty)
        #expect(missing.reasons == ["its interpreter lnp-no-such-interpreter (not in PATH) is missing: it cannot run here"])

        // Named by its path, and further down a chain.
        try writeFile(directory + "/path-missing", Array("#!/nonexistent/lnp-interpreter\n".utf8), mode: 0o755)
        let byPath = ProgramInspection.inspect(path: directory + "/path-missing")
        #expect(byPath.isObservable == nil)
        #expect(byPath.reasons == ["its interpreter /nonexistent/lnp-interpreter is missing: it cannot run here"])
        try writeFile(directory + "/through-missing", Array("#!\(directory)/path-missing\n".utf8), mode: 0o755)
        let chained = ProgramInspection.inspect(path: directory + "/through-missing")
        #expect(chained.isObservable == nil && chained.missingInterpreter == "/nonexistent/lnp-interpreter")
    }

    @Test func interpreterChainsAreFollowedToALimit() throws {
        let directory = try makeTemporaryDirectory()
        let staticPath = try staticBinary.get()
        var previous = staticPath
        for level in 1...6 {
            try writeFile(directory + "/level\(level)", Array("#!\(previous)\n".utf8), mode: 0o755)
            previous = directory + "/level\(level)"
        }
        let three = ProgramInspection.inspect(path: directory + "/level3")
        #expect(three.obstacles == [.interpreter(directory + "/level2", .interpreter(directory + "/level1", .interpreter(staticPath, .staticBinary)))])
        let six = ProgramInspection.inspect(path: directory + "/level6")
        #expect(six.obstacles.isEmpty)
        #expect(six.warnings.count == 1 && six.warnings[0].hasSuffix("is one script too many to follow"))

        // A script that names itself ends too.
        try writeFile(directory + "/loop", Array("#!\(directory)/loop\n".utf8), mode: 0o755)
        #expect(ProgramInspection.inspect(path: directory + "/loop").kind == .script)
    }

    @Test func filesLnpDoesNotKnowAndBrokenOnes() throws {
        let directory = try makeTemporaryDirectory()
        try writeFile(directory + "/garbage", [0x00, 0x13, 0x37, 0x42, 0x99], mode: 0o755)
        let garbage = ProgramInspection.inspect(path: directory + "/garbage")
        #expect(garbage.kind == .other && garbage.isObservable == nil && garbage.error == nil)
        #expect(garbage.reasons == ["not an executable lnp knows (neither ELF nor a #! script)"])

        try writeFile(directory + "/empty", [], mode: 0o755)
        #expect(ProgramInspection.inspect(path: directory + "/empty").kind == .other)

        let whole = [UInt8](try Data(contentsOf: URL(fileURLWithPath: "/bin/true")))
        try writeFile(directory + "/truncated", Array(whole.prefix(100)), mode: 0o755)
        let truncated = ProgramInspection.inspect(path: directory + "/truncated")
        #expect(truncated.kind == .error && truncated.isObservable == nil)
        #expect(truncated.error?.hasPrefix("truncated ELF file") == true)

        let missing = ProgramInspection.inspect(path: directory + "/missing")
        #expect(missing.kind == .error && missing.error == "No such file or directory")
        #expect(ProgramInspection.inspect(path: directory).error == "not a regular file")
    }

    @Test func namedFilesWithoutExecutePermissionAreInspectedWithANote() throws {
        let path = try copyOfTrue(in: try makeTemporaryDirectory(), mode: 0o644)
        let result = ProgramInspection.inspect(path: path)
        #expect(result.kind == .dynamic && result.warnings.first == "no execute permission")
    }
}

@Suite("InspectionTargets")
struct InspectionTargetsTests {
    @Test func directoriesStandForTheirExecutables() throws {
        let directory = try makeTemporaryDirectory()
        _ = try copyOfTrue(in: directory, name: "b-exec")
        _ = try copyOfTrue(in: directory, name: "a-plain", mode: 0o644)
        #expect(symlink("b-exec", directory + "/c-link-here") == 0)
        #expect(symlink(directory + "/./b-exec", directory + "/c-link-here-absolute") == 0)
        #expect(symlink("/bin/true", directory + "/d-link-elsewhere") == 0)
        #expect(symlink("missing", directory + "/e-dangling") == 0)
        #expect(mkdir(directory + "/f-sub", 0o755) == 0)
        _ = try copyOfTrue(in: directory + "/f-sub", name: "inner")
        #expect(symlink(directory, directory + "/f-sub/loop") == 0)
        #expect(symlink(directory + "/f-sub", directory + "/g-link-to-directory") == 0)

        #expect(InspectionTargets.expand([directory], recursive: false) == [
            .file(directory + "/b-exec"), .file(directory + "/d-link-elsewhere"),
        ])
        #expect(InspectionTargets.expand([directory + "/"], recursive: true) == [
            .file(directory + "/b-exec"), .file(directory + "/d-link-elsewhere"), .file(directory + "/f-sub/inner"),
        ])
        // Named files are taken as named: links followed, no execute bit needed, missing ones kept.
        #expect(InspectionTargets.expand([directory + "/c-link-here", directory + "/a-plain", "/nonexistent/x"], recursive: false) == [
            .file(directory + "/c-link-here"), .file(directory + "/a-plain"), .file("/nonexistent/x"),
        ])
    }

    @Test func namesThatAreNotUTF8AreReported() throws {
        let directory = try makeTemporaryDirectory()
        let name: [UInt8] = Array("bad-".utf8) + [0xff, 0xfe]
        let path = Array(directory.utf8) + [0x2f] + name + [0]
        let fd = path.map { CChar(bitPattern: $0) }.withUnsafeBufferPointer { open($0.baseAddress!, O_CREAT | O_WRONLY, 0o755) }
        try #require(fd >= 0)
        close(fd)
        _ = try copyOfTrue(in: directory, name: "good")
        #expect(InspectionTargets.expand([directory], recursive: false) == [
            .failure(path: directory + "/bad-\u{FFFD}\u{FFFD}", reason: "its name is not UTF-8; inspect it through a link"),
            .file(directory + "/good"),
        ])
    }

    @Test(.enabled(if: geteuid() != 0, "root can list any directory"))
    func unlistableDirectories() throws {
        let directory = try makeTemporaryDirectory() + "/closed"
        #expect(mkdir(directory, 0o000) == 0)
        defer { chmod(directory, 0o755) }
        #expect(InspectionTargets.expand([directory], recursive: false) == [
            .failure(path: directory, reason: "cannot list it: Permission denied"),
        ])
    }
}

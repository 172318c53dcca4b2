import Foundation
import Testing
@testable import LNPTools

#if canImport(Glibc)
import Glibc
#endif

/// A copy of /bin/true in a fresh directory, with `mode`.
private func copyOfTrue(mode: mode_t) throws -> String {
    let path = try makeTemporaryDirectory() + "/prog"
    try writeFile(path, [UInt8](try Data(contentsOf: URL(fileURLWithPath: "/bin/true"))), mode: mode)
    return path
}

private func owner(of path: String) -> (uid: UInt32, gid: UInt32) {
    var info = stat()
    precondition(stat(path, &info) == 0)
    return (info.st_uid, info.st_gid)
}

@Suite("Observability")
struct ObservabilityTests {
    @Test func dynamicProgramIsObservable() throws {
        let path = try copyOfTrue(mode: 0o755)
        let result = Observability.examine(path)
        #expect(result.obstacles == [])
        #expect(result.isObservable)
        #expect(result.summary == "")
    }

    @Test func staticProgramIsNot() throws {
        let result = Observability.examine(try staticBinary.get())
        #expect(result.obstacles == [.staticBinary])
        #expect(!result.isObservable)
        #expect(result.summary.contains("static binary"))
    }

    @Test func scriptsAreJudgedByTheirInterpreter() throws {
        let staticPath = try staticBinary.get()
        let directory = try makeTemporaryDirectory()
        try writeFile(directory + "/script", Array("#!\(staticPath) -x\n".utf8), mode: 0o755)
        #expect(Observability.examine(directory + "/script").obstacles == [.interpreter(staticPath, .staticBinary)])
        try writeFile(directory + "/fine", Array("#!/bin/true\n".utf8), mode: 0o755)
        #expect(Observability.examine(directory + "/fine").obstacles == [])
        // Linux ignores a script's set-id bits, so they stop nothing.
        try writeFile(directory + "/setuid-script", Array("#!/bin/sh\n".utf8), mode: 0o4755)
        #expect(Observability.examine(directory + "/setuid-script", effectiveUID: 12345).obstacles == [])
        // A chain of scripts is followed, to a limit.
        try writeFile(directory + "/outer", Array("#!\(directory)/script\n".utf8), mode: 0o755)
        #expect(Observability.examine(directory + "/outer").obstacles
            == [.interpreter(directory + "/script", .interpreter(staticPath, .staticBinary))])
    }

    @Test func setuidAndSetgidOnlyMatterForSomeoneElse() throws {
        let path = try copyOfTrue(mode: 0o6755)
        let (uid, gid) = owner(of: path)
        let stranger = Observability.examine(path, effectiveUID: uid &+ 1000, effectiveGID: gid &+ 1000)
        #expect(stranger.obstacles.contains(.setuid(owner: uid)))
        #expect(stranger.obstacles.contains(.setgid(group: gid)))
        #expect(Observability.examine(path, effectiveUID: uid, effectiveGID: gid).obstacles == [])
        #expect(Observability.examine(path, effectiveUID: uid, effectiveGID: gid &+ 1).obstacles == [.setgid(group: gid)])
    }

    @Test func goProgramsAreReported() throws {
        var builder = ELFBuilder()
        builder.programs = [(3, Array("/lib64/ld-linux-x86-64.so.2".utf8) + [0])]
        builder.sections = [(".gopclntab", 1, [0])]
        let path = try makeTemporaryDirectory() + "/goprog"
        try writeFile(path, builder.build(), mode: 0o755)
        #expect(Observability.examine(path).obstacles == [.goProgram])
    }

    /// A program of another architecture cannot load liblnp.so: the loader skips it.
    @Test func otherArchitecturesAreReported() throws {
        var builder = ELFBuilder()
        builder.wide = false
        builder.machine = 3  // i386
        builder.programs = [(type: 3, data: Array("/lib/ld-linux.so.2\0".utf8))]  // PT_INTERP
        let path = try makeTemporaryDirectory() + "/prog32"
        try writeFile(path, builder.build(), mode: 0o755)
        let preload = try ELFFile.read(path: "/bin/true")  // this machine's architecture
        let result = Observability.examine(path, preload: preload)
        #expect(result.obstacles == [.otherArchitecture(program: "32-bit x86", preload: preload.architecture)])
        #expect(result.summary.contains("a 32-bit x86 program (liblnp.so is \(preload.architecture)"))
        #expect(Observability.examine("/bin/true", preload: preload).obstacles == [])
    }

    @Test func missingFilesHaveNoObstacles() {
        #expect(Observability.examine("/nonexistent/lnp-test").obstacles == [])
    }

    @Test func aPlainFileHasNoCapabilities() throws {
        #expect(!Observability.hasFileCapabilities(try copyOfTrue(mode: 0o755)))
        #expect(!Observability.hasFileCapabilities("/nonexistent/lnp-test"))
    }
}

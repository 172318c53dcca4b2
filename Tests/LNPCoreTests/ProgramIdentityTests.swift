import Foundation
import Testing
@testable import LNPTools

#if canImport(Glibc)
import Glibc
#endif

/// A directory with a script to name to interpreters (tool.py, not executable, no "#!"),
/// one executed directly (run.sh), ELF files with and without a build-id, and a directory.
private struct Scripts {
    let root: String
    var tool: String { root + "/tool.py" }
    var direct: String { root + "/run.sh" }
    var withBuildID: String { root + "/with-id" }
    var withoutBuildID: String { root + "/without-id" }
    var directory: String { root + "/dir.py" }

    init() throws {
        root = try makeTemporaryDirectory()
        try writeFile(root + "/tool.py", Array("print('hello')\n".utf8))
        try writeFile(root + "/run.sh", Array("#!/bin/sh\nexit 0\n".utf8), mode: 0o755)
        var builder = ELFBuilder()
        builder.programs = [(3, Array("/lib64/ld-linux-x86-64.so.2\0".utf8))]
        try writeFile(root + "/without-id", builder.build(), mode: 0o755)
        builder.programs.append((4, ELFBuilder.note(owner: "GNU", type: 3, description: [0xab, 0xcd, 0x01, 0x23])))
        try writeFile(root + "/with-id", builder.build(), mode: 0o755)
        try FileManager.default.createDirectory(atPath: root + "/dir.py", withIntermediateDirectories: false)
    }
}

private func script(_ path: String) -> ProgramIdentity {
    ProgramIdentity(path: path, buildID: nil, isScript: true)
}

/// The file itself as the program (the interpreters named here may or may not be installed:
/// the file decides its build-id).
private func program(_ path: String) -> ProgramIdentity {
    ProgramIdentity.identity(ofFile: path)
}

@Suite("ProgramIdentity")
struct ProgramIdentityTests {
    @Test func pythonScripts() throws {
        let s = try Scripts()
        let python = "/usr/bin/python3"
        #expect(ProgramIdentity.of(executable: python, arguments: [s.tool]) == script(s.tool))
        #expect(ProgramIdentity.of(executable: python, arguments: ["-u", s.tool, "arg", "-c"]) == script(s.tool))
        #expect(ProgramIdentity.of(executable: python, arguments: ["-W", "ignore", s.tool]) == script(s.tool))
        #expect(ProgramIdentity.of(executable: python, arguments: ["-Wignore", "-X", "dev", s.tool]) == script(s.tool))
        #expect(ProgramIdentity.of(executable: python, arguments: ["-BuX", "dev", s.tool]) == script(s.tool))
        #expect(ProgramIdentity.of(executable: python, arguments: ["--", s.tool]) == script(s.tool))
        #expect(ProgramIdentity.of(executable: python, arguments: ["-I", "-s", "--check-hash-based-pycs", "never", s.tool])
            == script(s.tool))
    }

    /// lnp-run looks the program up by `path(executable:arguments:)` while `of` reads the file:
    /// both must name the same file, script or not.
    @Test func thePathWithoutReadingTheFileIsTheIdentitysPath() throws {
        let s = try Scripts()
        let lines: [(String, [String])] = [
            ("/usr/bin/python3", [s.tool]), ("/usr/bin/python3", ["-c", "pass", s.tool]), ("/usr/bin/python3", [s.directory]),
            ("/bin/sh", ["-c", "true", s.tool]), ("/bin/bash", ["-x", s.tool]), ("/usr/bin/node", ["-e", "1", s.tool]),
            (s.direct, []), (s.withBuildID, ["x"]), (s.withoutBuildID, []), (s.root + "/missing", []),
            ("/usr/bin/python3", [s.root + "/missing.py"]), ("/usr/bin/python3", ["tool.py"]),
        ]
        for (executable, arguments) in lines {
            #expect(ProgramIdentity.path(executable: executable, arguments: arguments)
                == ProgramIdentity.of(executable: executable, arguments: arguments).path, "\(executable) \(arguments)")
        }
        #expect(ProgramIdentity.path(executable: "/usr/bin/python3", arguments: [s.tool]) == s.tool)
    }

    @Test func pythonWithoutAScriptFile() throws {
        let s = try Scripts()
        let python = "/usr/bin/python3"
        #expect(ProgramIdentity.of(executable: python, arguments: ["-c", "import os", s.tool]) == program(python))
        #expect(ProgramIdentity.of(executable: python, arguments: ["-uc", "pass"]) == program(python))
        #expect(ProgramIdentity.of(executable: python, arguments: ["-m", "http.server", s.tool]) == program(python))
        #expect(ProgramIdentity.of(executable: python, arguments: ["-", s.tool]) == program(python), "the script is stdin")
        #expect(ProgramIdentity.of(executable: python, arguments: []) == program(python))
        #expect(ProgramIdentity.of(executable: python, arguments: [s.root + "/missing.py"]) == program(python),
                "no such file: the interpreter runs (and fails)")
        #expect(ProgramIdentity.of(executable: python, arguments: [s.directory]) == program(python), "not a regular file")
        #expect(ProgramIdentity.of(executable: python, arguments: ["-W", s.tool]) == program(python),
                "the option's argument is not the script")
    }

    @Test func shells() throws {
        let s = try Scripts()
        #expect(ProgramIdentity.of(executable: "/bin/sh", arguments: ["-c", "echo hi", s.tool]) == program("/bin/sh"))
        #expect(ProgramIdentity.of(executable: "/bin/bash", arguments: ["-ec", "true"]) == program("/bin/bash"))
        #expect(ProgramIdentity.of(executable: "/bin/bash", arguments: ["-s", s.tool]) == program("/bin/bash"))
        #expect(ProgramIdentity.of(executable: "/bin/bash", arguments: ["-x", s.tool]) == script(s.tool))
        #expect(ProgramIdentity.of(executable: "/bin/bash", arguments: ["-euo", "pipefail", s.tool]) == script(s.tool))
        #expect(ProgramIdentity.of(executable: "/bin/dash", arguments: ["+o", "posix", s.tool]) == script(s.tool))
        #expect(ProgramIdentity.of(executable: "/usr/bin/zsh", arguments: ["--rcfile", "x", s.tool]) == script(s.tool))
    }

    @Test func nodePerlAndOthers() throws {
        let s = try Scripts()
        #expect(ProgramIdentity.of(executable: "/usr/bin/node", arguments: ["-e", "1", s.tool]) == program("/usr/bin/node"))
        #expect(ProgramIdentity.of(executable: "/usr/bin/node", arguments: ["-p", "1"]) == program("/usr/bin/node"))
        #expect(ProgramIdentity.of(executable: "/usr/bin/node", arguments: ["--eval=1"]) == program("/usr/bin/node"))
        #expect(ProgramIdentity.of(executable: "/usr/bin/node", arguments: ["--print", "1"]) == program("/usr/bin/node"))
        #expect(ProgramIdentity.of(executable: "/usr/bin/nodejs", arguments: ["-r", "dotenv/config", s.tool]) == script(s.tool))
        #expect(ProgramIdentity.of(executable: "/usr/bin/node", arguments: ["--inspect", s.tool]) == script(s.tool))
        #expect(ProgramIdentity.of(executable: "/usr/bin/perl", arguments: ["-ne", "print", s.tool]) == program("/usr/bin/perl"))
        #expect(ProgramIdentity.of(executable: "/usr/bin/perl", arguments: ["-E", "say 1"]) == program("/usr/bin/perl"))
        #expect(ProgramIdentity.of(executable: "/usr/bin/perl", arguments: ["-w", "-I", "lib", s.tool]) == script(s.tool))
        #expect(ProgramIdentity.of(executable: "/usr/bin/perl", arguments: ["-Ilib", "-0777", s.tool]) == script(s.tool))
        #expect(ProgramIdentity.of(executable: "/usr/bin/ruby", arguments: ["-e", "1"]) == program("/usr/bin/ruby"))
        #expect(ProgramIdentity.of(executable: "/usr/bin/ruby", arguments: ["-r", "json", s.tool]) == script(s.tool))
        #expect(ProgramIdentity.of(executable: "/usr/bin/php8.2", arguments: ["-r", "echo 1;"]) == program("/usr/bin/php8.2"))
        #expect(ProgramIdentity.of(executable: "/usr/bin/php", arguments: ["-d", "x=1", "-f", s.tool]) == script(s.tool))
        #expect(ProgramIdentity.of(executable: "/usr/bin/lua5.4", arguments: ["-e", "x=1", s.tool]) == script(s.tool))
        #expect(ProgramIdentity.of(executable: "/usr/bin/tclsh8.6", arguments: ["-encoding", "utf-8", s.tool]) == script(s.tool))
        #expect(ProgramIdentity.of(executable: "/usr/bin/Rscript", arguments: ["-e", "1"]) == program("/usr/bin/Rscript"))
        #expect(ProgramIdentity.of(executable: "/usr/bin/Rscript", arguments: ["--vanilla", s.tool]) == script(s.tool))
    }

    @Test func interpreterNames() {
        for name in ["python", "python3", "python3.11", "python2.7", "pypy3", "perl", "perl5.36.0", "ruby", "ruby3.1",
                     "node", "nodejs", "bash", "sh", "dash", "zsh", "ksh", "ksh93", "mksh", "php", "php8.2", "lua",
                     "lua5.4", "luajit", "tclsh", "tclsh8.6", "Rscript"] {
            #expect(Interpreter.named(name) != nil, "\(name)")
        }
        for name in ["pythonic", "python3-config", "shellcheck", "bashful", "nodemon", "curl", "true", "perldoc", "env", ""] {
            #expect(Interpreter.named(name) == nil, "\(name)")
        }
    }

    @Test func otherProgramsAreThemselvesWhateverTheirArguments() throws {
        let s = try Scripts()
        #expect(program("/bin/sh").isScript == false && program(s.tool).isScript && program(s.direct).isScript)
        #expect(ProgramIdentity.of(executable: "/usr/bin/cat", arguments: [s.tool]) == program("/usr/bin/cat"))
        #expect(ProgramIdentity.of(executable: "/usr/bin/./cat", arguments: []).path == "/usr/bin/cat", "normalized")
    }

    @Test func aScriptExecutedDirectly() throws {
        let s = try Scripts()
        #expect(ProgramIdentity.of(executable: s.direct, arguments: ["-c", "x"]) == script(s.direct))
        #expect(ProgramIdentity.named(s.direct) == script(s.direct))
    }

    @Test func elfBinariesCarryTheirBuildID() throws {
        let s = try Scripts()
        #expect(ProgramIdentity.of(executable: s.withBuildID, arguments: [s.tool])
            == ProgramIdentity(path: s.withBuildID, buildID: "abcd0123", isScript: false))
        #expect(ProgramIdentity.of(executable: s.withoutBuildID, arguments: [])
            == ProgramIdentity(path: s.withoutBuildID, buildID: nil, isScript: false))
        #expect(ProgramIdentity.currentBuildID(of: s.withBuildID) == "abcd0123")
        #expect(ProgramIdentity.currentBuildID(of: s.withoutBuildID) == nil)
        #expect(ProgramIdentity.currentBuildID(of: s.tool) == nil)
        #expect(ProgramIdentity.currentBuildID(of: s.root + "/missing") == nil)
        #expect(ProgramIdentity.currentBuildID(of: s.directory) == nil)

        let real = try ELFFile.read(path: "/bin/true")
        let trueIdentity = ProgramIdentity.of(executable: "/bin/true", arguments: [])
        #expect(trueIdentity == ProgramIdentity(path: "/bin/true", buildID: real.buildID, isScript: false))
    }

    @Test func namedPrograms() throws {
        let s = try Scripts()
        #expect(ProgramIdentity.named(s.root + "/./x/../tool.py") == script(s.root + "/tool.py"),
                "a file that is not ELF is a script, with #! or not")
        #expect(ProgramIdentity.named(s.withBuildID).buildID == "abcd0123")
        #expect(ProgramIdentity.named("/nowhere/gone") == ProgramIdentity(path: "/nowhere/gone", buildID: nil, isScript: false),
                "may not exist (for reset)")
        let sh = try #require(try? ProgramLocator.locate("sh").get())
        #expect(ProgramIdentity.named("sh").path == sh)
        let missing = ProgramIdentity.named("no-such-program-\(getpid())")
        #expect(missing.path.hasPrefix("/") && missing.path.hasSuffix("/no-such-program-\(getpid())"),
                "a bare name found nowhere in PATH is taken from the current directory")
    }
}

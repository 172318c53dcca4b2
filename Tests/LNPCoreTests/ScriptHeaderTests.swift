import Testing
@testable import LNPTools

@Suite("ScriptHeader")
struct ScriptHeaderTests {
    @Test func plainInterpreter() throws {
        let header = try #require(ScriptHeader.parse("#!/bin/sh"))
        #expect(header == ScriptHeader(path: "/bin/sh", arguments: []))
        #expect(header.program == "/bin/sh")
    }

    @Test func envWithArguments() throws {
        let header = try #require(ScriptHeader.parse("#! /usr/bin/env python3 -u\n"))
        #expect(header.path == "/usr/bin/env")
        #expect(header.arguments == ["python3", "-u"])
    }

    @Test func blanksAndNewline() throws {
        #expect(ScriptHeader.parse("#!\t/bin/bash\t-e  -x\n") == ScriptHeader(path: "/bin/bash", arguments: ["-e", "-x"]))
        #expect(ScriptHeader.parse("#!/bin/sh\n") == ScriptHeader(path: "/bin/sh", arguments: []))
        #expect(ScriptHeader.parse("#!/bin/sh\r") == ScriptHeader(path: "/bin/sh", arguments: []))
    }

    /// A script saved with CRLF line ends: the parser treats both CR and LF as separators,
    /// so neither may end up in the path or the arguments ("\r\n" is one Character in Swift).
    @Test func carriageReturnLineFeed() throws {
        #expect(ScriptHeader.parse("#!/bin/sh\r\n") == ScriptHeader(path: "/bin/sh", arguments: []))
        #expect(ScriptHeader.parse("#!/usr/bin/env python3\r\n")?.arguments == ["python3"])
    }

    @Test(arguments: ["", "#", "#!", "#!   ", "#!\n", " #!/bin/sh", "#/bin/sh", "!#/bin/sh", "echo hi", "\u{7f}ELF"])
    func noInterpreter(line: String) {
        #expect(ScriptHeader.parse(line) == nil, "\(line.debugDescription)")
    }

    @Test func envProgramIsLookedUpInPath() {
        // Options before the name are skipped; with no name at all, env itself runs.
        #expect(ScriptHeader(path: "/usr/bin/env", arguments: ["-i"]).program == "/usr/bin/env")
        #expect(ScriptHeader(path: "/usr/bin/env", arguments: ["lnp-test-no-such-program-here"]).program == nil)
        #expect(ScriptHeader(path: "/usr/bin/env", arguments: ["-S", "lnp-test-no-such-program-here"]).program == nil)
        // Not env: the interpreter itself, whatever its arguments.
        #expect(ScriptHeader(path: "/usr/bin/python3", arguments: ["-u"]).program == "/usr/bin/python3")
    }

    @Test func readsTheFirstLineOfAFile() throws {
        let directory = try makeTemporaryDirectory()
        try writeFile(directory + "/script", Array("#!/bin/sh -e\necho '#!/not/this'\n".utf8), mode: 0o755)
        #expect(ScriptHeader.interpreter(of: directory + "/script") == ScriptHeader(path: "/bin/sh", arguments: ["-e"]))
        try writeFile(directory + "/plain", Array("just text\n".utf8))
        #expect(ScriptHeader.interpreter(of: directory + "/plain") == nil)
        try writeFile(directory + "/empty", [])
        #expect(ScriptHeader.interpreter(of: directory + "/empty") == nil)
        #expect(ScriptHeader.interpreter(of: directory + "/missing") == nil)
        #expect(ScriptHeader.interpreter(of: "/bin/true") == nil, "an ELF file has no #! line")
    }
}

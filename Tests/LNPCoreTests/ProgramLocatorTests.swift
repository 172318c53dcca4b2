import Foundation
import Testing
@testable import LNPTools

#if canImport(Glibc)
import Glibc
#endif

/// A PATH layout in a fresh directory:
///   empty/         nothing
///   bin/tool       executable
///   data/tool2     not executable (mode 0644)
///   data/both      not executable; exec/both is
///   exec/both      executable
///   dirs/tool3/    a directory where a program is looked for
private struct Layout {
    let root: String
    var empty: String { root + "/empty" }
    var bin: String { root + "/bin" }
    var data: String { root + "/data" }
    var exec: String { root + "/exec" }
    var dirs: String { root + "/dirs" }

    init() throws {
        root = try makeTemporaryDirectory()
        for directory in [root + "/empty", root + "/bin", root + "/data", root + "/exec", root + "/dirs/tool3"] {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        let script = Array("#!/bin/sh\nexit 0\n".utf8)
        try writeFile(root + "/bin/tool", script, mode: 0o755)
        try writeFile(root + "/data/tool2", script, mode: 0o644)
        try writeFile(root + "/data/both", script, mode: 0o644)
        try writeFile(root + "/exec/both", script, mode: 0o755)
    }
}

@Suite("ProgramLocator")
struct ProgramLocatorTests {
    @Test func foundInALaterEntry() throws {
        let layout = try Layout()
        #expect(ProgramLocator.locate("tool", path: "\(layout.empty):\(layout.bin)") == .success(layout.bin + "/tool"))
    }

    @Test func notFound() throws {
        let layout = try Layout()
        #expect(ProgramLocator.locate("missing", path: "\(layout.empty):\(layout.bin)") == .failure(.notFound("missing")))
        #expect(ProgramLocator.locate("", path: layout.bin) == .failure(.notFound("")))
    }

    @Test func foundButNotExecutable() throws {
        let layout = try Layout()
        #expect(ProgramLocator.locate("tool2", path: "\(layout.empty):\(layout.data)") == .failure(.notExecutable(layout.data + "/tool2")))
        #expect(ProgramLocator.locate("tool3", path: layout.dirs) == .failure(.notFound("tool3")),
                "a directory in PATH is passed over, as bash does")
    }

    @Test func anExecutableLaterInPathWinsOverANonExecutableEarlier() throws {
        let layout = try Layout()
        #expect(ProgramLocator.locate("both", path: "\(layout.data):\(layout.exec)") == .success(layout.exec + "/both"))
        #expect(ProgramLocator.locate("both", path: "\(layout.exec):\(layout.data)") == .success(layout.exec + "/both"))
    }

    @Test func trailingSlashesInEntries() throws {
        let layout = try Layout()
        #expect(ProgramLocator.locate("tool", path: layout.bin + "/") == .success(layout.bin + "/tool"))
        #expect(ProgramLocator.locate("tool", path: layout.bin + "//") == .success(layout.bin + "/tool"))
    }

    @Test func namesWithASlashAreNotLookedUp() throws {
        let layout = try Layout()
        #expect(ProgramLocator.locate(layout.bin + "/tool", path: layout.empty) == .success(layout.bin + "/tool"))
        #expect(ProgramLocator.locate(layout.bin + "/./../bin/tool", path: "") == .success(layout.bin + "/tool"))
        #expect(ProgramLocator.locate(layout.data + "/tool2", path: layout.bin) == .failure(.notExecutable(layout.data + "/tool2")))
        #expect(ProgramLocator.locate(layout.bin + "/nothing", path: layout.bin) == .failure(.notFound(layout.bin + "/nothing")))
        #expect(ProgramLocator.locate(layout.dirs + "/tool3", path: layout.bin) == .failure(.isDirectory(layout.dirs + "/tool3")))
    }

    @Test func defaultPathWhenNoneIsSet() {
        guard case .success(let found) = ProgramLocator.locate("sh", path: nil) else {
            Issue.record("sh is in /usr/local/bin:/usr/bin:/bin on every system")
            return
        }
        #expect(["/usr/local/bin/sh", "/usr/bin/sh", "/bin/sh"].contains(found))
    }

    @Test func absolutePathsAreNormalized() {
        #expect(ProgramLocator.absolute("/a/./b/../c") == "/a/c")
        #expect(ProgramLocator.absolute("/usr//bin/") == "/usr/bin")
        #expect(ProgramLocator.absolute("/") == "/")
    }
}

/// Tests that change the current directory: serialized among themselves, and no other test
/// depends on the current directory.
@Suite("ProgramLocator and the current directory", .serialized)
struct ProgramLocatorCurrentDirectoryTests {
    private func inDirectory<T>(_ directory: String, _ body: () throws -> T) throws -> T {
        let previous = FileManager.default.currentDirectoryPath
        try #require(chdir(directory) == 0)
        defer { _ = chdir(previous) }
        return try body()
    }

    @Test func anEmptyEntryMeansTheCurrentDirectory() throws {
        let layout = try Layout()
        let expected = Result<String, ProgramLocator.Failure>.success(layout.bin + "/tool")
        try inDirectory(layout.bin) {
            #expect(ProgramLocator.locate("tool", path: "\(layout.empty):") == expected, "trailing empty entry")
            #expect(ProgramLocator.locate("tool", path: ":\(layout.empty)") == expected, "leading empty entry")
            #expect(ProgramLocator.locate("tool", path: "\(layout.empty)::\(layout.data)") == expected, "empty entry in the middle")
            #expect(ProgramLocator.locate("tool", path: "") == expected, "PATH set but empty")
            #expect(ProgramLocator.locate("tool", path: layout.empty) == .failure(.notFound("tool")), "no empty entry: not searched")
        }
    }

    @Test func relativeNamesAreMadeAbsolute() throws {
        let layout = try Layout()
        try inDirectory(layout.root) {
            #expect(ProgramLocator.locate("./bin/tool", path: layout.empty) == .success(layout.bin + "/tool"))
            #expect(ProgramLocator.locate("bin/../bin/tool", path: layout.empty) == .success(layout.bin + "/tool"))
            #expect(ProgramLocator.locate("tool", path: "bin") == .success(layout.bin + "/tool"), "a relative PATH entry")
            #expect(ProgramLocator.absolute("data/tool2") == layout.data + "/tool2")
        }
        try inDirectory(layout.empty) {
            #expect(ProgramLocator.locate("bin/tool", path: layout.root) == .failure(.notFound("bin/tool")),
                    "a relative name with a slash is relative to the current directory, not to PATH")
        }
    }
}

import Foundation
import Testing

@testable import LNPReport

#if canImport(Glibc)
import Glibc
#endif

@Suite("Unnamed temporary files")
struct UnnamedFileTests {
    @Test func aDirectoryThatCannotHoldOneIsPassedOver() throws {
        let directory = try makeTemporaryDirectory()
        let fd = try UnnamedFile.make(in: [directory + "/missing", directory]).get()
        defer { close(fd) }
        var info = stat()
        #expect(fstat(fd, &info) == 0)
        #expect(info.st_nlink == 0, "no other process can open it")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
        #expect(write(fd, "x", 1) == 1)
    }

    @Test func whyNoneCouldBeMadeNamesEachDirectory() throws {
        let directory = try makeTemporaryDirectory()
        let file = directory + "/file"
        try writeFile(file, [])
        switch UnnamedFile.make(in: [directory + "/missing", file]) {
        case .success(let fd):
            close(fd)
            Issue.record("a file was made")
        case .failure(let failure):
            #expect(failure.reason == "\(directory)/missing: No such file or directory; \(file): Not a directory")
        }
    }
}

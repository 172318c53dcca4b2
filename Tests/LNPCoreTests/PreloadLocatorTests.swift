import Foundation
import SystemPackage
import Testing
@testable import LNPTools

/// lnp-run finds liblnp.so (and lnp-run-arguments) from its own resolved path by cutting text, as FilePath would.
@Suite("Preload locator")
struct PreloadLocatorTests {
    @Test(arguments: ["/usr/local/bin/lnp-run", "/opt/lnp/.build/release/lnp-run", "/lnp-run", "/", "/a", "/a/b", "/a/b/"])
    func directoriesAsFilePathCutsThem(_ path: String) {
        #expect(PathText.directory(of: path) == FilePath(path).removingLastComponent().string)
        let directory = PathText.directory(of: path)
        #expect(PathText.join(directory, "liblnp.so") == FilePath(directory).appending("liblnp.so").string)
        #expect(PathText.join(directory, "lib/lnp", "liblnp.so") == FilePath(directory).appending("lib/lnp/liblnp.so").string)
    }

    @Test func besideOrInstalled() throws {
        let root = try makeTemporaryDirectory()
        try FileManager.default.createDirectory(atPath: root + "/lib/lnp", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/bin", withIntermediateDirectories: true)
        try writeFile(root + "/lib/lnp/liblnp.so", [])
        #expect(PreloadLocator.locate(beside: root + "/bin/lnp-run") == root + "/lib/lnp/liblnp.so")
        try writeFile(root + "/bin/liblnp.so", [])
        #expect(PreloadLocator.locate(beside: root + "/bin/lnp-run") == root + "/bin/liblnp.so")
        #expect(PreloadLocator.locate(PreloadLocator.argumentReaderName, beside: root + "/bin/lnp-run") == nil)
        try writeFile(root + "/lib/lnp/lnp-run-arguments", [])
        #expect(PreloadLocator.locate(PreloadLocator.argumentReaderName, beside: root + "/bin/lnp-run") == root + "/lib/lnp/lnp-run-arguments")
        #expect(PreloadLocator.locate(beside: "bin/lnp-run") == nil, "a relative path is not the kernel's")
    }

    /// The Debian package's place: /usr/lib/x86_64-linux-gnu/lnp/ from /usr/bin/lnp-run, after
    /// the other two.
    @Test func inTheMultiarchDirectory() throws {
        let triplet = try #require(PreloadLocator.multiarchTriplet)
        #if arch(x86_64)
        #expect(triplet == "x86_64-linux-gnu")
        #endif
        let root = try makeTemporaryDirectory()
        let multiarch = root + "/lib/" + triplet + "/lnp"
        try FileManager.default.createDirectory(atPath: multiarch, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/lib/lnp", withIntermediateDirectories: true)
        #expect(PreloadLocator.locate(beside: root + "/bin/lnp-run") == nil)
        try writeFile(multiarch + "/liblnp.so", [])
        try writeFile(multiarch + "/lnp-run-arguments", [])
        #expect(PreloadLocator.locate(beside: root + "/bin/lnp-run") == multiarch + "/liblnp.so")
        #expect(PreloadLocator.locate(PreloadLocator.argumentReaderName, beside: root + "/bin/lnp-run") == multiarch + "/lnp-run-arguments")
        try writeFile(root + "/lib/lnp/liblnp.so", [])
        #expect(PreloadLocator.locate(beside: root + "/bin/lnp-run") == root + "/lib/lnp/liblnp.so")
        #expect(PreloadLocator.places == "beside lnp-run, in ../lib/lnp/ or in ../lib/\(triplet)/lnp/")
    }
}

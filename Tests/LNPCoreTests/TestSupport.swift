import Foundation
@testable import LNPCoreHost

#if canImport(Glibc)
import Glibc
#endif

// Helpers shared by the test files. Addresses are built from numbers here, not parsed, so
// that tests of the classifier and the writers do not depend on the parser under test.

/// An IPv4 address from its four octets.
func v4(_ a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8) -> IPAddress {
    IPAddress(v4: UInt32(a) << 24 | UInt32(b) << 16 | UInt32(c) << 8 | UInt32(d))
}

/// An IPv6 address from its eight groups.
func v6(_ g: UInt16...) -> IPAddress {
    precondition(g.count == 8, "an IPv6 address has eight groups")
    var high: UInt64 = 0
    var low: UInt64 = 0
    for i in 0..<4 { high = high << 16 | UInt64(g[i]) }
    for i in 4..<8 { low = low << 16 | UInt64(g[i]) }
    return IPAddress(v6High: high, low: low)
}

/// The core's parser on a Swift string.
func parseAddress(_ text: String) -> IPAddress? {
    Array(text.utf8).withUnsafeBufferPointer { IPAddress.parse($0) }
}

/// The bytes a `ByteWriter` of `capacity` holds after `body`, and its truncation flag.
func writeBytes(capacity: Int = 4096, _ body: (inout ByteWriter) -> Void) -> (bytes: [UInt8], truncated: Bool) {
    var storage = [UInt8](repeating: 0, count: capacity)
    return storage.withUnsafeMutableBytes { raw in
        var writer = ByteWriter(raw)
        body(&writer)
        return (Array(writer.written), writer.truncated)
    }
}

/// What `body` writes, as a string.
func writeText(capacity: Int = 4096, _ body: (inout ByteWriter) -> Void) -> String {
    String(decoding: writeBytes(capacity: capacity, body).bytes, as: UTF8.self)
}

/// The canonical text of an address, as the audit writes it.
func text(of address: IPAddress) -> String {
    writeText { address.write(to: &$0) }
}

/// An interface name as the kernel stores it (at most 15 bytes, little-endian words).
func interfaceName(_ name: String) -> InterfaceName {
    var bytes = Array(name.utf8.prefix(15))
    bytes += [UInt8](repeating: 0, count: 16 - bytes.count)
    var first: UInt64 = 0
    var second: UInt64 = 0
    for i in (0..<8).reversed() {
        first = first << 8 | UInt64(bytes[i])
        second = second << 8 | UInt64(bytes[i + 8])
    }
    return InterfaceName(first: first, second: second)
}

/// A small deterministic generator (SplitMix64), so a failing fuzz case can be replayed.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Parses `bytes` as one JSON value (fragments allowed); nil if it is not valid JSON.
func parseJSON(_ bytes: [UInt8]) -> Any? {
    try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
}

/// Where this test process keeps its files; removed when the process exits.
private let temporaryRoot: String = {
    let root = NSTemporaryDirectory() + "/lnp-unit-tests-\(getpid())"
    mkdir(root, 0o700)
    atexit { try? FileManager.default.removeItem(atPath: NSTemporaryDirectory() + "/lnp-unit-tests-\(getpid())") }
    return root
}()

/// A fresh directory for one test.
func makeTemporaryDirectory() throws -> String {
    var template = Array((temporaryRoot + "/XXXXXX").utf8CString)
    guard let made = mkdtemp(&template), let resolved = realpath(made, nil) else {
        throw POSIXError(.init(rawValue: errno) ?? .EIO)
    }
    defer { free(resolved) }
    // Resolved, so that paths compare equal to what getcwd(3) reports.
    return String(cString: resolved)
}

/// Writes `contents` to `path` with mode `mode`.
func writeFile(_ path: String, _ contents: [UInt8], mode: mode_t = 0o644) throws {
    try Data(contents).write(to: URL(fileURLWithPath: path))
    guard chmod(path, mode) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
}

/// Runs a program to completion; returns its exit status and standard output.
func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}

/// A statically linked program, compiled once per test run with `gcc -static`; nil with the
/// reason if that failed.
let staticBinary: Result<String, StaticBinaryFailure> = {
    do {
        let directory = try makeTemporaryDirectory()
        let source = directory + "/main.c"
        let output = directory + "/static-true"
        try writeFile(source, Array("int main(void) { return 0; }\n".utf8))
        let result = try run("/usr/bin/env", ["gcc", "-static", "-o", output, source])
        guard result.status == 0 else { return .failure(StaticBinaryFailure(reason: "gcc exited \(result.status)")) }
        return .success(output)
    } catch {
        return .failure(StaticBinaryFailure(reason: "\(error)"))
    }
}()

struct StaticBinaryFailure: Error, CustomStringConvertible {
    var reason: String
    var description: String { "could not build a static binary: \(reason)" }
}

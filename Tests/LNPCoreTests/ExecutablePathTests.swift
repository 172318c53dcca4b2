import Testing
@testable import LNPCoreHost
import LNPSys

#if canImport(Glibc)
import Glibc
#endif

@Suite("The executable's path, read once per process", .serialized)
struct ExecutablePathTests {
    private func read(capacity: Int) -> String? {
        var buffer = [UInt8](repeating: 0, count: capacity)
        return buffer.withUnsafeMutableBytes { raw in
            ExecutablePath.copy(into: raw).map { String(decoding: raw[0..<$0], as: UTF8.self) }
        }
    }

    private func forget() { ExecutablePath.record.words.storeRelaxed(1, 0) }

    @Test func theKernelsPathAndThenTheSame() throws {
        forget()
        let kernel = try #require(read(capacity: 4096))
        #expect(kernel.hasPrefix("/"))
        #expect(read(capacity: 4096) == kernel)
    }

    /// A record made on the stack has little room for the path: what it read, cut short,
    /// must not become every later record's path.
    @Test func aPathCutShortIsNotRemembered() throws {
        forget()
        let whole = try #require(read(capacity: 4096))
        forget()
        #expect(read(capacity: 8) == String(whole.prefix(8)))
        #expect(read(capacity: 4096) == whole)
    }

    /// Read once: later reads are the remembered path, not the kernel's again.
    @Test func theRememberedPathIsWhatLaterReadsGet() throws {
        forget()
        let whole = try #require(read(capacity: 4096))
        #expect(ExecutablePath.record.words.loadRelaxed(1) == UInt64(whole.utf8.count))
        let marker = Array("/remembered".utf8)
        ExecutablePath.path.update(from: marker, count: marker.count)
        ExecutablePath.record.words.storeRelaxed(1, UInt64(marker.count))
        #expect(read(capacity: 4096) == "/remembered")
        forget()
        #expect(read(capacity: 4096) == whole)
    }
}

import Testing
@testable import LNPCoreHost
import LNPSys

#if canImport(Glibc)
import Glibc
#endif

@Suite("The executable's path, read once per process", .serialized)
struct ExecutablePathTests {
    private func read(capacity: Int, pid: Int32 = getpid()) -> String? {
        var buffer = [UInt8](repeating: 0, count: capacity)
        return buffer.withUnsafeMutableBytes { raw in
            ExecutablePath.copy(into: raw, pid: pid).map { String(decoding: raw[0..<$0], as: UTF8.self) }
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

    @Test func anotherProcessReadsItsOwn() throws {
        forget()
        let whole = try #require(read(capacity: 4096))
        ExecutablePath.record.words.storeRelaxed(1, 12345)  // as if another process had read it
        #expect(read(capacity: 4096) == whole)
        #expect(ExecutablePath.record.words.loadRelaxed(1) == UInt64(UInt32(bitPattern: getpid())))
    }
}

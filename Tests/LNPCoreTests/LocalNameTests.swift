import Testing
@testable import LNPCoreHost

private func isLocal(_ name: String) -> Bool {
    Array(name.utf8).withUnsafeBufferPointer { LocalName.isLocal($0) }
}

@Suite("LocalName")
struct LocalNameTests {
    @Test(arguments: [
        "printer.local", "PRINTER.LOCAL.", "Printer.Local", "x.lOcAl", "a.b.c.local", ".local",
        "_ipp._tcp.local", "my-mac.local.",
    ])
    func localNames(name: String) {
        #expect(isLocal(name), "\(name)")
    }

    /// The bare name `local` is not in the domain: glibc sends it to DNS.
    @Test(arguments: [
        "local", "local.", "LOCAL", "notlocal", "xlocal.", "x.localhost", "x.local.com", "local.com", "", ".", "local..", "printer.local..", "ocal", "lo",
        "x.loca1", "x.locale", "x.lokal", "x-local", "x_local", "printer.local ", "printer.loc\u{0}l",
    ])
    func otherNames(name: String) {
        #expect(!isLocal(name), "\(name)")
    }

    /// Only A–Z fold to a–z: bytes that differ from "local" by anything but bit 5 never match.
    @Test func caseFoldingIsOnlyForLetters() {
        for byte in UInt8(0)...UInt8(255) where byte != UInt8(ascii: "l") && byte != UInt8(ascii: "L") {
            let name = [UInt8(ascii: "x"), UInt8(ascii: "."), byte] + Array("ocal".utf8)
            #expect(!name.withUnsafeBufferPointer { LocalName.isLocal($0) }, "byte \(byte)")
        }
    }
}

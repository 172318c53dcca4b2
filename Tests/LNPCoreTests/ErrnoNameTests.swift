import Testing
@testable import LNPTools

#if canImport(Glibc)
import Glibc
#endif

@Suite("ErrnoName")
struct ErrnoNameTests {
    @Test func byName() {
        #expect(ErrnoName.value(of: "EHOSTUNREACH") == 113)
        #expect(ErrnoName.value(of: "ehostunreach") == 113)
        #expect(ErrnoName.value(of: "EHostUnreach") == 113)
        #expect(ErrnoName.value(of: "ECONNREFUSED") == ECONNREFUSED)
        #expect(ErrnoName.value(of: "ENETUNREACH") == ENETUNREACH)
        #expect(ErrnoName.value(of: "EPERM") == 1)
        #expect(ErrnoName.value(of: "EACCES") == EACCES)
    }

    @Test func byNumber() {
        #expect(ErrnoName.value(of: "113") == 113)
        #expect(ErrnoName.value(of: "1") == 1)
        #expect(ErrnoName.value(of: "13") == EACCES)
    }

    @Test(arguments: ["EBOGUS", "", "E", "0", "-1", "-113", "4095", "4096", "99999999999", " 113", "113 ", "0x71", "EHOSTUNREACH "])
    func unknown(text: String) {
        #expect(ErrnoName.value(of: text) == nil, "\(text.debugDescription)")
    }

    /// Other names for the same values, as programs' own code spells them.
    @Test func aliases() {
        #expect(ErrnoName.value(of: "EWOULDBLOCK") == EAGAIN)
        #expect(ErrnoName.value(of: "enotsup") == EOPNOTSUPP)
        #expect(ErrnoName.value(of: "EDEADLOCK") == EDEADLK)
    }

    @Test func names() {
        #expect(ErrnoName.name(of: 113) == "EHOSTUNREACH")
        #expect(ErrnoName.name(of: ENOENT) == "ENOENT")
        #expect(ErrnoName.name(of: 9999) == nil)
        #expect(ErrnoName.name(of: -1) == nil)
    }

    /// Every number the C library names reads back from its name.
    @Test func namesRoundTrip() {
        var named = 0
        for number in Int32(1)..<Int32(200) {
            guard let name = ErrnoName.name(of: number) else { continue }
            named += 1
            #expect(ErrnoName.value(of: name) == number, "\(name)")
            #expect(ErrnoName.value(of: name.lowercased()) == number, "\(name)")
            #expect(ErrnoName.value(of: String(number)) == number)
        }
        #expect(named > 100)
    }

    @Test func descriptions() {
        #expect(ErrnoName.description(of: EHOSTUNREACH) == "No route to host")
        #expect(ErrnoName.description(of: ENOENT) == "No such file or directory")
    }
}

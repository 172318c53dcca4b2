import Testing
@testable import LNPCoreHost
@testable import LNPSupervisor
import LNPSys

/// The options the preload reads are listed once, in C (`lnp_option_is_read`, where the
/// setsockopt hook lets every other option through uncopied); the readers must agree with it,
/// and the supervisor must be notified of each.
@Suite("Socket options lnp reads")
struct SocketOptionListTests {
    @Test func theListIsWhatTheReadersRead() {
        for level in [Int32(LNP_SOL_SOCKET), Int32(LNP_IPPROTO_IP), Int32(LNP_IPPROTO_IPV6), Int32(LNP_IPPROTO_TCP), 17, 255] {
            for name in Int32(0)..<256 {
                let read = SocketEgress.forcesInterface(level: level, name: name) || SocketEgress.writesHeaders(level: level, name: name)
                    || SourceRoute.isRoute(level: level, name: name) || MulticastJoin.isJoin(level: level, name: name)
                #expect((lnp_option_is_read(level, name) != 0) == read, "level \(level), option \(name)")
                if read {
                    #expect(GatedCalls.notifiedOptions.contains { $0.level == UInt32(level) && $0.name == UInt32(name) },
                            "the supervisor is notified of level \(level), option \(name)")
                }
            }
        }
    }
}

import LNPSupervisorSys
import LNPSys

/// The system calls lnp's seccomp filter looks at, per architecture, and what it does with
/// each: the one list the filter is built from (`SeccompFilter`) and notifications are read
/// by (`NotifiedCall`).
public enum SupervisedCall: Equatable, Sendable {
    case socket, connect, sendto, sendmsg, sendmmsg, bind, setsockopt
    /// 32-bit x86's one entry to all socket calls.
    case socketcall
    case ioctl, ioUringSetup
}

/// What the filter does with one call.
enum CallRule {
    /// Ask the supervisor, unless the call comes from the gadget page.
    case notify
    /// Only when argument `argument` (a pointer: sendto's destination) is not NULL.
    case notifyWithAddress(argument: Int)
    /// socket(): only a packet socket (AF_PACKET, or the old AF_INET with SOCK_PACKET).
    case notifyPacketSocket
    /// setsockopt(): only these (level, name) pairs.
    case notifyOptions([(level: UInt32, name: UInt32)])
    /// Fail at once with the errno.
    case refuse(errno: UInt32)
    /// Fail at once when argument `argument` is `value` (ioctl's TIOCSTI).
    case refuseWhen(argument: Int, value: UInt32, errno: UInt32)
}

struct GatedCall {
    var number: UInt32
    var call: SupervisedCall
    var rule: CallRule
}

/// One architecture's calls. The supervisor decides the native architecture's notified
/// calls, and refuses the others' (32-bit x86, x32, 32-bit Arm), saying so once.
struct ArchitectureCalls {
    var arch: UInt32
    var calls: [GatedCall]
}

enum GatedCalls {
    static let refusedRequest = UInt32(LNP_EPERM)  // as Docker's profile refuses io_uring

    /// setsockopt's options the core decides — joins (`MulticastJoin.isJoin`), forced
    /// egress (`SocketEgress.forcesInterface`), own headers (`SocketEgress.writesHeaders`) and
    /// source routes (`SourceRoute.isRoute`),
    /// checked against them in the unit tests — and the multicast egress.
    static let notifiedOptions: [(level: UInt32, name: UInt32)] = [
        (ip, LNP_IP_ADD_MEMBERSHIP), (ip, LNP_IP_ADD_SOURCE_MEMBERSHIP), (ip, LNP_MCAST_JOIN_GROUP),
        (ip, LNP_MCAST_JOIN_SOURCE_GROUP), (ip, LNP_IP_UNICAST_IF), (ip, LNP_IP_MULTICAST_IF),
        (ipv6, LNP_IPV6_JOIN_GROUP), (ipv6, LNP_MCAST_JOIN_GROUP), (ipv6, LNP_MCAST_JOIN_SOURCE_GROUP),
        (ipv6, LNP_IPV6_UNICAST_IF), (ipv6, LNP_IPV6_MULTICAST_IF),
        (socket, LNP_SO_BINDTODEVICE), (socket, LNP_SO_BINDTOIFINDEX), (ip, LNP_IP_OPTIONS), (ipv6, LNP_IPV6_RTHDR), (ipv6, LNP_IPV6_2292PKTOPTIONS),
        (ip, LNP_IP_HDRINCL), (ipv6, LNP_IPV6_HDRINCL),
    ].map { ($0.0, UInt32($0.1)) }

    private static let ip = UInt32(LNP_IPPROTO_IP), ipv6 = UInt32(LNP_IPPROTO_IPV6), socket = UInt32(LNP_SOL_SOCKET)

    /// The rules, by call, whatever the numbers.
    static func rule(for call: SupervisedCall) -> CallRule {
        switch call {
        case .socket: return .notifyPacketSocket
        case .sendto: return .notifyWithAddress(argument: 4)
        case .setsockopt: return .notifyOptions(notifiedOptions)
        case .ioctl: return .refuseWhen(argument: 1, value: UInt32(LNP_TIOCSTI), errno: refusedRequest)
        case .ioUringSetup: return .refuse(errno: refusedRequest)
        case .connect, .sendmsg, .sendmmsg, .bind, .socketcall: return .notify
        }
    }

    static func table(_ numbers: [(UInt32, SupervisedCall)]) -> [GatedCall] {
        numbers.map { GatedCall(number: $0.0, call: $0.1, rule: rule(for: $0.1)) }
    }

    /// This machine's own calls, with the numbers its C headers give.
    static let native = ArchitectureCalls(
        arch: nativeArch,
        calls: table([
            (UInt32(LNP_NR_SENDTO), .sendto), (UInt32(LNP_NR_CONNECT), .connect),
            (UInt32(LNP_NR_SENDMSG), .sendmsg), (UInt32(LNP_NR_SENDMMSG), .sendmmsg),
            (UInt32(LNP_NR_SOCKET), .socket), (UInt32(LNP_NR_BIND), .bind),
            (UInt32(LNP_NR_SETSOCKOPT), .setsockopt), (UInt32(LNP_NR_IOCTL), .ioctl),
            (UInt32(LNP_NR_IO_URING_SETUP), .ioUringSetup),
        ]))

    #if arch(x86_64)
    static let nativeArch = LNP_ARCH_X86_64
    /// x32 programs: x86_64's numbers with the x32 bit, some of their own (512 and up).
    static let x32: ArchitectureCalls? = ArchitectureCalls(
        arch: LNP_ARCH_X86_64,
        calls: table([
            (41, .socket), (42, .connect), (44, .sendto), (49, .bind), (425, .ioUringSetup), (514, .ioctl),
            (518, .sendmsg), (538, .sendmmsg), (541, .setsockopt),
        ]).map { GatedCall(number: $0.number | LNP_X32_SYSCALL_BIT, call: $0.call, rule: $0.rule) })
    /// 32-bit x86 programs, with socketcall and the direct calls.
    static let compat = ArchitectureCalls(
        arch: LNP_ARCH_I386,
        calls: table([
            (102, .socketcall), (359, .socket), (361, .bind), (362, .connect), (366, .setsockopt), (369, .sendto),
            (370, .sendmsg), (345, .sendmmsg), (54, .ioctl), (425, .ioUringSetup),
        ]))
    #elseif arch(arm64)
    static let nativeArch = LNP_ARCH_AARCH64
    static let x32: ArchitectureCalls? = nil
    /// 32-bit Arm programs (EABI numbers).
    static let compat = ArchitectureCalls(
        arch: LNP_ARCH_ARM,
        calls: table([
            (281, .socket), (282, .bind), (283, .connect), (290, .sendto), (296, .sendmsg), (374, .sendmmsg),
            (294, .setsockopt), (54, .ioctl), (425, .ioUringSetup),
        ]))
    #endif
}

extension GatedCalls {
    /// The call a notification names, and whether it is the native architecture's (the
    /// supervisor decides those, and refuses the others').
    static func call(arch: UInt32, number: UInt32) -> (call: SupervisedCall, isNative: Bool)? {
        if arch == native.arch, let found = native.calls.first(where: { $0.number == number }) { return (found.call, true) }
        for other in [x32, compat].compactMap({ $0 }) where other.arch == arch {
            if let found = other.calls.first(where: { $0.number == number }) { return (found.call, false) }
        }
        return nil
    }
}

extension GatedCalls {
    #if arch(x86_64)
    static let nativeName = "x86_64"
    #elseif arch(arm64)
    static let nativeName = "aarch64"
    #endif
}

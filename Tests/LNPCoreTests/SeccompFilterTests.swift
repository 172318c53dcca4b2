import LNPSupervisorSys
@testable import LNPCoreHost
import Testing
@testable import LNPSupervisor

/// The supervised run's filter, run by a small classic-BPF interpreter over the calls a
/// program makes: what it notifies, lets through and refuses.
@Suite("Seccomp filter")
struct SeccompFilterTests {
    static let gadget: UInt64 = 0x0000_2a5c_3e7f_1000

    /// A call as seccomp describes it.
    struct Call {
        var arch = GatedCalls.native.arch
        var number: UInt32
        var arguments: [UInt64] = [0, 0, 0, 0, 0, 0]
        var instructionPointer: UInt64 = 0x5555_5555_1234

        func word(at offset: UInt32) -> UInt32 {
            switch offset {
            case UInt32(LNP_SECCOMP_NR): return number
            case UInt32(LNP_SECCOMP_ARCH): return arch
            case UInt32(LNP_SECCOMP_IP): return UInt32(truncatingIfNeeded: instructionPointer)
            case UInt32(LNP_SECCOMP_IP) + 4: return UInt32(truncatingIfNeeded: instructionPointer >> 32)
            default:
                let index = Int((offset - UInt32(LNP_SECCOMP_ARGS)) / 8)
                let value = arguments[index]
                return (offset - UInt32(LNP_SECCOMP_ARGS)) % 8 == 0 ? UInt32(truncatingIfNeeded: value) : UInt32(value >> 32)
            }
        }
    }

    /// Runs the program on `call`: its return value.
    static func run(_ program: [lnp_filter_instruction], _ call: Call) -> UInt32 {
        var accumulator: UInt32 = 0
        var pc = 0
        while pc < program.count {
            let i = program[pc]
            pc += 1
            switch Int(i.code) {
            case Int(LNP_BPF_LOAD_WORD): accumulator = call.word(at: i.k)
            case Int(LNP_BPF_AND): accumulator &= i.k
            case Int(LNP_BPF_RETURN): return i.k
            case Int(LNP_BPF_JUMP): pc += Int(i.k)
            case Int(LNP_BPF_JUMP_EQUAL): pc += accumulator == i.k ? Int(i.jt) : Int(i.jf)
            case Int(LNP_BPF_JUMP_GREATER_EQUAL): pc += accumulator >= i.k ? Int(i.jt) : Int(i.jf)
            case Int(LNP_BPF_JUMP_GREATER): pc += accumulator > i.k ? Int(i.jt) : Int(i.jf)
            default: Issue.record("unexpected instruction \(i.code)"); return 0
            }
        }
        Issue.record("ran off the end")
        return 0
    }

    let supervised = SeccompFilter.program(gadget: gadget)
    let strict = SeccompFilter.program(gadget: nil)

    func number(_ call: SupervisedCall) -> UInt32 { GatedCalls.native.calls.first { $0.call == call }!.number }

    @Test func ordinaryCallsPass() {
        for nr: UInt32 in [0, 1, 3, 7, 9, 202, 232, 300, 424, 426, 500] {
            #expect(Self.run(supervised, Call(number: nr)) == LNP_RET_ALLOW, "call \(nr)")
        }
    }

    @Test func gatedCallsAreNotifiedUnlessFromTheGadgetPage() {
        for call in [SupervisedCall.connect, .sendmsg, .sendmmsg, .bind] {
            #expect(Self.run(supervised, Call(number: number(call))) == LNP_RET_NOTIFY, "\(call)")
            let fromPage = Call(number: number(call), instructionPointer: Self.gadget + 2)
            #expect(Self.run(supervised, fromPage) == LNP_RET_ALLOW, "\(call) from the page")
            #expect(Self.run(strict, fromPage) == LNP_RET_NOTIFY, "\(call) from the page, strict")
            // The same offset in another page, or the same lower half elsewhere, is not the page.
            #expect(Self.run(supervised, Call(number: number(call), instructionPointer: Self.gadget + 0x1002)) == LNP_RET_NOTIFY)
            #expect(Self.run(supervised, Call(number: number(call), instructionPointer: (Self.gadget & 0xffff_ffff) + 2)) == LNP_RET_NOTIFY)
        }
    }

    @Test func sendtoWithoutADestinationPasses() {
        #expect(Self.run(supervised, Call(number: number(.sendto))) == LNP_RET_ALLOW)
        #expect(Self.run(supervised, Call(number: number(.sendto), arguments: [3, 0, 0, 0, 0x7fff_0000_0000, 16])) == LNP_RET_NOTIFY)
        #expect(Self.run(supervised, Call(number: number(.sendto), arguments: [3, 0, 0, 0, 0x1000, 16])) == LNP_RET_NOTIFY)
    }

    @Test func onlyPacketSocketsAreNotified() {
        #expect(Self.run(supervised, Call(number: number(.socket), arguments: [2, 2, 0, 0, 0, 0])) == LNP_RET_ALLOW)
        #expect(Self.run(supervised, Call(number: number(.socket), arguments: [1, 1, 0, 0, 0, 0])) == LNP_RET_ALLOW)
        #expect(Self.run(supervised, Call(number: number(.socket), arguments: [17, 3, 0, 0, 0, 0])) == LNP_RET_NOTIFY)
        #expect(Self.run(supervised, Call(number: number(.socket), arguments: [44, 3, 0, 0, 0, 0])) == LNP_RET_NOTIFY)  // AF_XDP
        #expect(Self.run(supervised, Call(number: number(.socket), arguments: [2, 10 | 0x80000, 0, 0, 0, 0])) == LNP_RET_NOTIFY)
    }

    @Test func joinsAndEgressOptionsAreNotified() {
        for option in GatedCalls.notifiedOptions {
            let call = Call(number: number(.setsockopt), arguments: [3, UInt64(option.level), UInt64(option.name), 0, 0, 0])
            #expect(Self.run(supervised, call) == LNP_RET_NOTIFY, "\(option)")
        }
        for (level, name): (UInt64, UInt64) in [(1, 2), (1, 20), (6, 1), (0, 1), (41, 26)] {
            #expect(Self.run(supervised, Call(number: number(.setsockopt), arguments: [3, level, name, 0, 0, 0])) == LNP_RET_ALLOW)
        }
    }

    /// Every option the core decides is one the filter notifies (the core's switches are
    /// the rules; the filter's list must not fall behind them).
    @Test func everyOptionTheCoreDecidesIsNotified() {
        let notified = Set(GatedCalls.notifiedOptions.map { "\($0.level)/\($0.name)" })
        for level: Int32 in [0, 1, 41] {
            for name: Int32 in 0..<256
            where MulticastJoin.isJoin(level: level, name: name) || SocketEgress.forcesInterface(level: level, name: name)
                || SourceRoute.isRoute(level: level, name: name) || SocketEgress.writesHeaders(level: level, name: name)
            {
                #expect(notified.contains("\(level)/\(name)"), "level \(level) option \(name)")
            }
        }
    }

    @Test func ioUringAndTerminalTypingAreRefused() {
        let refused = LNP_RET_ERRNO | GatedCalls.refusedRequest
        #expect(Self.run(supervised, Call(number: number(.ioUringSetup))) == refused)
        #expect(Self.run(supervised, Call(number: number(.ioctl), arguments: [0, 0x5412, 0, 0, 0, 0])) == refused)
        #expect(Self.run(supervised, Call(number: number(.ioctl), arguments: [0, 0x5401, 0, 0, 0, 0])) == LNP_RET_ALLOW)
        // From the page too: the page passes only what the preload decided.
        #expect(Self.run(supervised, Call(number: number(.ioUringSetup), instructionPointer: Self.gadget)) == refused)
    }

    #if arch(x86_64)
    @Test func otherX86ProgramsAreNotifiedNeverPassedUnseen() {
        let x32 = GatedCalls.x32!
        for call in x32.calls where call.call == .connect || call.call == .sendmsg {
            #expect(Self.run(supervised, Call(number: call.number, instructionPointer: Self.gadget)) == LNP_RET_NOTIFY)
        }
        #expect(Self.run(supervised, Call(number: LNP_X32_SYSCALL_BIT | 0)) == LNP_RET_ALLOW)
        for nr: UInt32 in [102, 362, 370] {
            #expect(Self.run(supervised, Call(arch: LNP_ARCH_I386, number: nr)) == LNP_RET_NOTIFY, "i386 \(nr)")
        }
        #expect(Self.run(supervised, Call(arch: LNP_ARCH_I386, number: 3)) == LNP_RET_ALLOW)
        #expect(Self.run(supervised, Call(arch: 0x1234, number: 42)) == LNP_RET_ERRNO | 38)
    }
    #endif
}

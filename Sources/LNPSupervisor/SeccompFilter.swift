import LNPSupervisorSys
import LNPSys

/// The seccomp filter of a supervised run, built from `GatedCalls`. Its shape:
///
///     architecture native?  else → the compatible architecture's section, or refuse
///     number outside the gated range?  → allow   (most calls leave after three tests)
///     number = each gated call?  → its rule: the arguments it looks at, then
///         from the gadget page?  → allow   (the preload decided it)
///         → notify the supervisor
///     → allow
///
/// Classic BPF jumps only forward: the program is written with labels and the offsets are
/// filled in at the end.
public enum SeccompFilter {
    /// The IP-level setsockopt options the filter notifies (and the supervisor decides), as
    /// (level, name) pairs.
    public static var decidedIPOptions: [(level: UInt32, name: UInt32)] {
        GatedCalls.notifiedOptions.filter { $0.level != UInt32(LNP_SOL_SOCKET) }
    }

    /// The program; `gadget`: the page whose calls pass (nil: none, every gated call notified).
    public static func program(gadget: UInt64?) -> [lnp_filter_instruction] {
        var a = FilterAssembler()
        let native = a.label(), x32 = a.label(), compat = a.label(), unknown = a.label()
        a.load(LNP_SECCOMP_ARCH)
        a.jumpIf(equal: GatedCalls.native.arch, then: nil, else: compat)
        a.load(LNP_SECCOMP_NR)
        if GatedCalls.x32 != nil {
            a.jumpIf(greaterOrEqual: LNP_X32_SYSCALL_BIT, then: nil, else: native)
            a.jump(x32)
        }
        a.place(native)
        section(GatedCalls.native, gadget: gadget, into: &a)
        if let calls = GatedCalls.x32 {
            a.place(x32)
            section(calls, gadget: nil, into: &a)
        }
        a.place(compat)
        a.load(LNP_SECCOMP_ARCH)
        a.jumpIf(equal: GatedCalls.compat.arch, then: nil, else: unknown)
        a.load(LNP_SECCOMP_NR)
        section(GatedCalls.compat, gadget: nil, into: &a)
        // No other architecture runs here; were one to, nothing of it passes unseen.
        a.place(unknown)
        a.ret(LNP_RET_ERRNO | UInt32(LNP_ENOSYS))
        return a.assemble()
    }

    /// One architecture's calls, with the number loaded; each section has its own returns,
    /// so that every jump stays within a conditional jump's reach.
    private static func section(_ calls: ArchitectureCalls, gadget: UInt64?, into a: inout FilterAssembler) {
        let allow = a.label(), notify = a.label()
        var lowest = UInt32.max, highest = UInt32.min
        for call in calls.calls {
            lowest = min(lowest, call.number)
            highest = max(highest, call.number)
        }
        a.jumpIf(greaterOrEqual: lowest, then: nil, else: allow)
        a.jumpIf(greater: highest, then: allow, else: nil)
        var rules: [FilterAssembler.Label] = []
        for call in calls.calls {
            rules.append(a.label())
            a.jumpIf(equal: call.number, then: rules[rules.count - 1], else: nil)
        }
        a.jump(allow)
        let fromGadget = gadget == nil ? notify : a.label()
        for (index, call) in calls.calls.enumerated() {
            a.place(rules[index])
            rule(call.rule, passes: fromGadget, allow: allow, into: &a)
        }
        if let gadget {
            // The call comes from the gadget page: its instruction pointer's upper half, and
            // its lower half with the offset in the page masked off.
            a.place(fromGadget)
            a.load(LNP_SECCOMP_IP + 4)
            a.jumpIf(equal: UInt32(truncatingIfNeeded: gadget >> 32), then: nil, else: notify)
            a.load(LNP_SECCOMP_IP)
            a.and(0xffff_f000)
            a.jumpIf(equal: UInt32(truncatingIfNeeded: gadget), then: allow, else: notify)
        }
        a.place(allow)
        a.ret(LNP_RET_ALLOW)
        a.place(notify)
        a.ret(LNP_RET_NOTIFY)
    }

    /// The tests of one rule; the call goes to `passes` when the rule notifies it.
    private static func rule(
        _ rule: CallRule, passes: FilterAssembler.Label, allow: FilterAssembler.Label, into a: inout FilterAssembler
    ) {
        switch rule {
        case .notify:
            a.jump(passes)
        case .notifyWithAddress(let argument):
            a.load(argumentLow(argument))
            a.jumpIf(equal: 0, then: nil, else: passes)
            a.load(argumentLow(argument) + 4)
            a.jumpIf(equal: 0, then: allow, else: passes)
        case .notifyPacketSocket:
            a.load(argumentLow(0))
            a.jumpIf(equal: UInt32(LNP_AF_PACKET), then: passes, else: nil)
            a.jumpIf(equal: UInt32(LNP_AF_XDP), then: passes, else: nil)  // frames straight to a device's queue
            a.jumpIf(equal: UInt32(LNP_AF_INET), then: nil, else: allow)  // AF_INET with SOCK_PACKET is one too
            a.load(argumentLow(1))
            a.and(UInt32(LNP_SOCK_TYPE_MASK))
            a.jumpIf(equal: UInt32(LNP_SOCK_PACKET), then: passes, else: allow)
        case .notifyOptions(let options):
            // The levels in ascending order, each with its options in the table's order.
            var levels: [UInt32] = []
            for option in options where !levels.contains(option.level) { levels.append(option.level) }
            levels.sort()
            a.load(argumentLow(1))
            var tests: [FilterAssembler.Label] = []
            for level in levels {
                tests.append(a.label())
                a.jumpIf(equal: level, then: tests[tests.count - 1], else: nil)
            }
            a.jump(allow)
            for (index, level) in levels.enumerated() {
                a.place(tests[index])
                a.load(argumentLow(2))
                for option in options where option.level == level { a.jumpIf(equal: option.name, then: passes, else: nil) }
                a.jump(allow)
            }
        case .refuse(let errno):
            a.ret(LNP_RET_ERRNO | errno)
        case .refuseWhen(let argument, let value, let errno):
            a.load(argumentLow(argument))
            a.jumpIf(equal: value, then: nil, else: allow)
            a.ret(LNP_RET_ERRNO | errno)
        }
    }

    /// The lower 32 bits of argument `index` (seccomp_data is little-endian here).
    private static func argumentLow(_ index: Int) -> UInt32 { UInt32(LNP_SECCOMP_ARGS) + UInt32(index) * 8 }
}

/// Classic BPF with jumps to labels, placed later; `nil` as a target is the next instruction.
/// Labels are numbers and instructions plain values: the filter is built at every launch, and
/// a table keyed by strings made the runtime look up Hashable conformances, which cost more
/// than the rest of the filter (docs/benchmarks.md, "The launcher's start").
struct FilterAssembler {
    /// A place in the program, made by `label()` and placed once by `place(_:)`.
    struct Label {
        fileprivate let index: Int
    }

    /// An instruction whose jumps are labels (-1: none).
    private struct Pending {
        var op: UInt16
        var k: UInt32
        var target: Int = -1
        var jt: Int = -1
        var jf: Int = -1
    }

    private var code: [Pending] = []
    /// Each label's instruction, -1 until placed.
    private var places: [Int] = []

    mutating func label() -> Label {
        places.append(-1)
        return Label(index: places.count - 1)
    }

    mutating func place(_ label: Label) {
        precondition(places[label.index] < 0, "label placed twice")
        places[label.index] = code.count
    }

    mutating func load<T: BinaryInteger>(_ offset: T) { code.append(Pending(op: UInt16(LNP_BPF_LOAD_WORD), k: UInt32(offset))) }
    mutating func and(_ mask: UInt32) { code.append(Pending(op: UInt16(LNP_BPF_AND), k: mask)) }
    mutating func ret(_ value: UInt32) { code.append(Pending(op: UInt16(LNP_BPF_RETURN), k: value)) }
    mutating func jump(_ target: Label) { code.append(Pending(op: UInt16(LNP_BPF_JUMP), k: 0, target: target.index)) }

    mutating func jumpIf(equal value: UInt32, then: Label?, else otherwise: Label?) {
        code.append(Pending(op: UInt16(LNP_BPF_JUMP_EQUAL), k: value, jt: then?.index ?? -1, jf: otherwise?.index ?? -1))
    }

    mutating func jumpIf(greaterOrEqual value: UInt32, then: Label?, else otherwise: Label?) {
        code.append(Pending(op: UInt16(LNP_BPF_JUMP_GREATER_EQUAL), k: value, jt: then?.index ?? -1, jf: otherwise?.index ?? -1))
    }

    mutating func jumpIf(greater value: UInt32, then: Label?, else otherwise: Label?) {
        code.append(Pending(op: UInt16(LNP_BPF_JUMP_GREATER), k: value, jt: then?.index ?? -1, jf: otherwise?.index ?? -1))
    }

    /// The instructions, every jump resolved (forward, within reach: checked).
    func assemble() -> [lnp_filter_instruction] {
        precondition(code.count <= Int(LNP_BPF_MAX_INSTRUCTIONS))
        var program: [lnp_filter_instruction] = []
        program.reserveCapacity(code.count)
        for (index, instruction) in code.enumerated() {
            func offset(_ label: Int) -> Int {
                guard label >= 0 else { return 0 }
                precondition(places[label] >= 0, "jump to a label never placed")
                let distance = places[label] - index - 1
                precondition(distance >= 0, "jump back")
                return distance
            }
            let k = instruction.target >= 0 ? UInt32(offset(instruction.target)) : instruction.k
            let jt = offset(instruction.jt), jf = offset(instruction.jf)
            precondition(jt < 256 && jf < 256, "jump too far")
            program.append(lnp_filter_instruction(code: instruction.op, jt: UInt8(jt), jf: UInt8(jf), k: k))
        }
        return program
    }
}

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
        a.load(LNP_SECCOMP_ARCH)
        a.jumpIf(equal: GatedCalls.native.arch, then: nil, else: "compat")
        a.load(LNP_SECCOMP_NR)
        if GatedCalls.x32 != nil {
            a.jumpIf(greaterOrEqual: LNP_X32_SYSCALL_BIT, then: nil, else: "native")
            a.jump("x32")
        }
        a.label("native")
        section(GatedCalls.native, gadget: gadget, into: &a, prefix: "n")
        if let x32 = GatedCalls.x32 {
            a.label("x32")
            section(x32, gadget: nil, into: &a, prefix: "x")
        }
        a.label("compat")
        a.load(LNP_SECCOMP_ARCH)
        a.jumpIf(equal: GatedCalls.compat.arch, then: nil, else: "unknown")
        a.load(LNP_SECCOMP_NR)
        section(GatedCalls.compat, gadget: nil, into: &a, prefix: "c")
        // No other architecture runs here; were one to, nothing of it passes unseen.
        a.label("unknown")
        a.ret(LNP_RET_ERRNO | UInt32(LNP_ENOSYS))
        return a.assemble()
    }

    /// One architecture's calls, with the number loaded; each section has its own returns,
    /// so that every jump stays within a conditional jump's reach.
    private static func section(_ calls: ArchitectureCalls, gadget: UInt64?, into a: inout FilterAssembler, prefix: String) {
        let allow = "\(prefix)allow", notify = "\(prefix)notify"
        let numbers = calls.calls.map(\.number)
        a.jumpIf(greaterOrEqual: numbers.min()!, then: nil, else: allow)
        a.jumpIf(greater: numbers.max()!, then: allow, else: nil)
        for call in calls.calls { a.jumpIf(equal: call.number, then: "\(prefix)\(call.number)", else: nil) }
        a.jump(allow)
        let passes = gadget == nil ? notify : "\(prefix)gadget"
        for call in calls.calls {
            a.label("\(prefix)\(call.number)")
            rule(call.rule, passes: passes, allow: allow, into: &a, prefix: "\(prefix)\(call.number)")
        }
        if let gadget {
            // The call comes from the gadget page: its instruction pointer's upper half, and
            // its lower half with the offset in the page masked off.
            a.label(passes)
            a.load(LNP_SECCOMP_IP + 4)
            a.jumpIf(equal: UInt32(truncatingIfNeeded: gadget >> 32), then: nil, else: notify)
            a.load(LNP_SECCOMP_IP)
            a.and(0xffff_f000)
            a.jumpIf(equal: UInt32(truncatingIfNeeded: gadget), then: allow, else: notify)
        }
        a.label(allow)
        a.ret(LNP_RET_ALLOW)
        a.label(notify)
        a.ret(LNP_RET_NOTIFY)
    }

    /// The tests of one rule; the call goes to `passes` when the rule notifies it.
    private static func rule(_ rule: CallRule, passes: String, allow: String, into a: inout FilterAssembler, prefix: String) {
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
            let levels = Dictionary(grouping: options, by: \.level)
            a.load(argumentLow(1))
            for level in levels.keys.sorted() { a.jumpIf(equal: level, then: "\(prefix)l\(level)", else: nil) }
            a.jump(allow)
            for level in levels.keys.sorted() {
                a.label("\(prefix)l\(level)")
                a.load(argumentLow(2))
                for option in levels[level]! { a.jumpIf(equal: option.name, then: passes, else: nil) }
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

/// Classic BPF with named jump targets; `nil` as a target is the next instruction.
struct FilterAssembler {
    private enum Operand {
        case value(UInt32)
        case target(String)
    }

    private var code: [(op: UInt16, k: Operand, jt: String?, jf: String?)] = []
    private var labels: [String: Int] = [:]

    mutating func label(_ name: String) {
        precondition(labels[name] == nil, "label \(name) twice")
        labels[name] = code.count
    }

    mutating func load<T: BinaryInteger>(_ offset: T) { code.append((UInt16(LNP_BPF_LOAD_WORD), .value(UInt32(offset)), nil, nil)) }
    mutating func and(_ mask: UInt32) { code.append((UInt16(LNP_BPF_AND), .value(mask), nil, nil)) }
    mutating func ret(_ value: UInt32) { code.append((UInt16(LNP_BPF_RETURN), .value(value), nil, nil)) }
    mutating func jump(_ target: String) { code.append((UInt16(LNP_BPF_JUMP), .target(target), nil, nil)) }

    mutating func jumpIf(equal value: UInt32, then: String?, else otherwise: String?) {
        code.append((UInt16(LNP_BPF_JUMP_EQUAL), .value(value), then, otherwise))
    }

    mutating func jumpIf(greaterOrEqual value: UInt32, then: String?, else otherwise: String?) {
        code.append((UInt16(LNP_BPF_JUMP_GREATER_EQUAL), .value(value), then, otherwise))
    }

    mutating func jumpIf(greater value: UInt32, then: String?, else otherwise: String?) {
        code.append((UInt16(LNP_BPF_JUMP_GREATER), .value(value), then, otherwise))
    }

    /// The instructions, every jump resolved (forward, within reach: checked).
    func assemble() -> [lnp_filter_instruction] {
        precondition(code.count <= Int(LNP_BPF_MAX_INSTRUCTIONS))
        return code.enumerated().map { index, instruction in
            func offset(_ target: String?) -> Int {
                guard let target else { return 0 }
                let distance = labels[target]! - index - 1
                precondition(distance >= 0, "jump back to \(target)")
                return distance
            }
            let k: UInt32
            switch instruction.k {
            case .value(let value): k = value
            case .target(let target): k = UInt32(offset(target))
            }
            let jt = offset(instruction.jt), jf = offset(instruction.jf)
            precondition(jt < 256 && jf < 256, "jump too far")
            return lnp_filter_instruction(code: instruction.op, jt: UInt8(jt), jf: UInt8(jf), k: k)
        }
    }
}

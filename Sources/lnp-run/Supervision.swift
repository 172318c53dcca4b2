import LNPCoreHost
import LNPSupervisor
import LNPSupervisorSys

#if canImport(Glibc)
import Glibc
#endif

/// How a run supervises its tree's system calls (`CallSupervisor`): the seccomp filter the
/// program starts under, and the gadget page from which the preload's own calls pass.
struct Supervision {
    /// Where the preload maps its page (nil: none).
    var gadget: UInt64?
    /// The filter to install, or nil.
    var filter: [lnp_filter_instruction]?
    /// Whether the program must set no_new_privs first: lnp-run lacks CAP_SYS_ADMIN.
    var noNewPrivs: Bool
    var features: KernelFeatures

    enum Mode {
        /// The preload decides what it sees and makes those calls from the gadget page; the
        /// supervisor decides the rest.
        case withGadget
        /// No page: every gated call is the supervisor's (--strict).
        case strict
        /// No filter: the preload alone (--preload-only).
        case off
    }

    init(_ mode: Mode, features: KernelFeatures) {
        self.features = features
        noNewPrivs = !(CapabilitySets.of(thread: 0)?.administersTheSystem ?? false)
        guard mode != .off else { return }
        gadget = mode == .withGadget ? Self.randomGadgetAddress() : nil
        filter = SeccompFilter.program(gadget: gadget)
    }

    /// Whether the supervisor sees every gated call, the preload's too: a filter of its own
    /// with no page.
    var isStrict: Bool { filter != nil && gadget == nil }

    /// The same run without a filter of its own: it runs below another supervisor (a nested
    /// lnp-run, whose calls the outer one decides), or the kernel refused the filter. The
    /// page the outer run's filter lets through, if any, is the one to use.
    func withoutFilter(inheritedGadget: UInt64?) -> Supervision {
        var copy = self
        copy.filter = nil
        copy.gadget = inheritedGadget
        return copy
    }

    /// The environment entry that tells the preload where its page goes.
    var environment: [String] { gadget.map { ["LNP_GADGET=" + String($0, radix: 16)] } ?? [] }

    /// A page between 64 GiB and 256 GiB, far from where programs map anything, chosen anew
    /// for each run so no program can count on it.
    static func randomGadgetAddress() -> UInt64 {
        UInt64.random(in: 0x10_0000_0000..<0x40_0000_0000) & ~UInt64(0xfff)
    }

    /// The gadget an enclosing run's filter lets through (its LNP_GADGET), if readable.
    static func inheritedGadget(_ value: String?) -> UInt64? {
        value.flatMap { UInt64($0, radix: 16) }.flatMap { $0 != 0 && $0 & 0xfff == 0 ? $0 : nil }
    }

    /// Which call lnp-run may not make to take descriptors (pidfd_open, pidfd_getfd, tried on
    /// its own) and why, or nil when it may: a seccomp filter above it refuses the call
    /// (systemd's SystemCallFilter=@system-service leaves out pidfd_getfd), and then the
    /// supervisor can take no socket of the program's.
    static func descriptorTakingRefused() -> (call: String, errno: Int32)? {
        let own = lnp_pidfd_open(getpid(), 0)
        guard own >= 0 else { return ("pidfd_open", errno) }
        let taken = lnp_pidfd_getfd(own, own)
        let failure = errno
        close(own)
        guard taken < 0 else {
            close(taken)
            return nil
        }
        return ("pidfd_getfd", failure)
    }

    /// The kernel features to use: all the kernel has, unless LNP_SUPERVISOR_AS_KERNEL asks
    /// lnp-run to behave as on an older kernel (6.1: without thread pidfds and synchronous
    /// wake-up; 5.15: nor the killable wait), so those paths can be tested on a newer one.
    static func features(asKernel: String?) -> Result<KernelFeatures, Failure> {
        guard let asKernel else { return .success(KernelFeatures()) }
        guard asKernel == "6.1" || asKernel == "5.15" else {
            return .failure(Failure("LNP_SUPERVISOR_AS_KERNEL takes 6.1 or 5.15, not '\(asKernel)'"))
        }
        return .success(asKernel == "6.1" ? .linux61 : .linux515)
    }
}

import LNPTools

/// What lnp-run says about a program before it starts, given how it will be supervised:
/// what the preload cannot see is seen by the supervisor; what the supervisor changes
/// (privileges under no_new_privs) or cannot decide (another architecture's calls) is said.
enum SupervisedProgram {
    /// A --strict run below a run with a gadget page: the enclosing filter lets that page's
    /// calls through, so a program that finds it can still use it.
    static let strictBelowGadget = "--strict: the enclosing lnp-run supervises this one with a page whose calls pass, which a "
        + "program that finds it can still use; run the outer lnp-run with --strict"

    static func warnings(_ observability: Observability, program: String, supervision: Supervision) -> [String] {
        guard !observability.isObservable else { return [] }
        guard supervision.filter != nil else {
            return ["cannot observe \(program): \(observability.summary); running it unobserved"]
        }
        return observability.obstacles.compactMap { warning(for: $0, program: program, supervision: supervision) }
    }

    private static func warning(for obstacle: Observability.Obstacle, program: String, supervision: Supervision) -> String? {
        switch obstacle {
        case .staticBinary, .goProgram: return nil  // the supervisor sees its calls
        case .setuid(let owner): return withoutPrivileges(program, "is setuid (uid \(owner))", supervision)
        case .setgid(let group): return withoutPrivileges(program, "is setgid (gid \(group))", supervision)
        case .fileCapabilities: return withoutPrivileges(program, "has file capabilities", supervision)
        case .otherArchitecture:
            return "\(program) is \(obstacle): its socket calls will be refused (lnp decides only this machine's own architecture)"
        case .interpreter(_, let inner):
            return warning(for: inner, program: program, supervision: supervision)
        }
    }

    /// A program that would gain privileges at exec, under a filter that needs no_new_privs.
    private static func withoutPrivileges(_ program: String, _ what: String, _ supervision: Supervision) -> String? {
        guard supervision.noNewPrivs else { return nil }
        return "\(program) \(what): under the supervisor it starts without those privileges (no_new_privs); "
            + "--preload-only keeps them, and leaves it unobserved"
    }

    /// lnp-run may not take descriptors (`Supervision.descriptorTakingRefused`).
    static func descriptorsRefused(_ call: String, _ errno: Int32) -> String {
        "\(call) is refused here (\(ErrnoName.description(of: errno)): a seccomp filter, as systemd's "
            + "SystemCallFilter=@system-service, which leaves out pidfd_getfd): the supervisor cannot take the socket of a "
            + "call it is notified of, and denies each one (the C library's own DNS queries, static programs, raw system "
            + "calls); allow \(call), or run with --preload-only"
    }

    /// The kernel would not install the filter.
    static func refusedFilter(_ errno: Int32) -> String {
        "cannot supervise system calls (seccomp: \(ErrnoName.description(of: errno))); only the preload decides, "
            + "and static programs, raw system calls and children without the preload go unseen"
    }
}

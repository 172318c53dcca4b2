/// What lnp-run does with the asks of an undetermined program: one prompt for however many
/// processes and threads ask, every holder answered when the person answers, and no
/// second prompt in the same run once asking has failed. No I/O here: the supervisor
/// carries out the actions.
struct AskingState {
    /// The reply to one ask, as the preload reads it (Sources/LNPCore/Asking.swift).
    struct Reply: Equatable, Sendable {
        var allow: Bool
        var basis: Basis
        /// Whether the process may keep it for the rest of its life.
        var isFinal: Bool

        /// The three bytes on the wire.
        var bytes: [UInt8] { [allow ? UInt8(ascii: "a") : UInt8(ascii: "d"), UInt8(ascii: "0") + basis.rawValue, isFinal ? UInt8(ascii: "1") : UInt8(ascii: "0")] }
    }

    /// The preload's `DecisionBasis`, by raw value.
    enum Basis: UInt8 {
        case answered = 3, asking = 4, unanswered = 5, noTerminal = 6, noSupervisor = 8
    }

    enum Phase: Equatable {
        case undetermined
        case prompting
        case decided(allow: Bool)
        /// Asking failed (no terminal, no answer in time): every ask is denied, not recorded.
        case refusing(Basis)
    }

    /// What the supervisor must do for an ask.
    enum Action: Equatable {
        case reply(Reply)
        /// Keep the asker waiting for the answer.
        case hold
        /// Show the prompt (no terminal: `refuse` instead), then treat the ask again.
        case startPrompt
    }

    private(set) var phase = Phase.undetermined

    func action(forAskHolding holding: Bool) -> Action {
        switch phase {
        case .undetermined: return .startPrompt
        case .prompting: return holding ? .hold : .reply(Reply(allow: false, basis: .asking, isFinal: false))
        case .decided(let allow): return .reply(Reply(allow: allow, basis: .answered, isFinal: true))
        case .refusing(let basis): return .reply(Reply(allow: false, basis: basis, isFinal: false))
        }
    }

    mutating func promptShown() { phase = .prompting }

    /// No prompt can be shown: this ask, and every later one, is denied.
    mutating func refuse(_ basis: Basis) { phase = .refusing(basis) }

    /// The person answered; the reply for every holder.
    mutating func answered(allow: Bool) -> Reply {
        phase = .decided(allow: allow)
        return Reply(allow: allow, basis: .answered, isFinal: true)
    }

    /// The prompt timed out: holders are denied, and so is every later ask of this run.
    mutating func timedOut() -> Reply {
        phase = .refusing(.unanswered)
        return Reply(allow: false, basis: .unanswered, isFinal: false)
    }

    /// The person interrupted the prompt (Ctrl-C): holders are denied; a later ask asks again.
    mutating func interrupted() -> Reply {
        phase = .undetermined
        return Reply(allow: false, basis: .unanswered, isFinal: false)
    }
}

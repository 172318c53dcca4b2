import LNPCoreHost

/// What lnp-run does with the asks of an undetermined program: one prompt for however many
/// processes and threads ask, every holder answered when the person answers, and no
/// second prompt in the same run once asking has failed. No I/O here: the supervisor
/// carries out the actions.
struct AskingState {
    enum Phase: Equatable {
        case undetermined
        case prompting
        case decided(allow: Bool)
        /// Asking failed (no terminal, no answer in time): every ask is denied, not recorded.
        case refusing(DecisionBasis)
    }

    /// What the supervisor must do for an ask.
    enum Action: Equatable {
        case reply(Answer)
        /// Keep the asker waiting for the answer.
        case hold
        /// Show the prompt (no terminal: `refuse` instead), then treat the ask again.
        case startPrompt
    }

    private(set) var phase = Phase.undetermined

    func action(forAskHolding holding: Bool) -> Action {
        switch phase {
        case .undetermined: return .startPrompt
        case .prompting: return holding ? .hold : .reply(Self.denied(.asking))
        case .decided(let allow): return .reply(Self.answer(allow: allow))
        case .refusing(let basis): return .reply(Self.denied(basis))
        }
    }

    mutating func promptShown() { phase = .prompting }

    /// No prompt can be shown: this ask, and every later one, is denied.
    mutating func refuse(_ basis: DecisionBasis) { phase = .refusing(basis) }

    /// The person answered; the reply for every holder.
    mutating func answered(allow: Bool) -> Answer {
        phase = .decided(allow: allow)
        return Self.answer(allow: allow)
    }

    /// The prompt timed out: holders are denied, and so is every later ask of this run.
    mutating func timedOut() -> Answer {
        phase = .refusing(.unanswered)
        return Self.denied(.unanswered)
    }

    /// The person interrupted the prompt (Ctrl-C): holders are denied; a later ask asks again.
    mutating func interrupted() -> Answer {
        phase = .undetermined
        return Self.denied(.unanswered)
    }

    /// The person's answer: final, so each process keeps it.
    static func answer(allow: Bool) -> Answer { Answer(decision: allow ? .allow : .deny, basis: .answered, isFinal: true) }

    /// Denied for this operation only: not remembered, so a later one asks again.
    static func denied(_ basis: DecisionBasis) -> Answer { Answer(decision: .deny, basis: basis, isFinal: false) }
}

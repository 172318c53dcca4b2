/// Why an operation was denied: the record's `because`, in words a person reading a report
/// understands (README, "The audit record").
public enum DenialCause: Hashable, Comparable, Sendable {
    case runOption, remembered, administrator, answered, asking, unanswered, noTerminal, storeUnreadable
    case noSupervisor, notConfirmed
    /// A record with no `because` (or null).
    case unrecorded
    /// A word this version does not know, as written.
    case word(String)
    /// Words past the ones a report names one by one (`DenialCounts.words`).
    case otherWords

    /// The causes lnp-run writes, in the order reports list them when equally frequent.
    static let known: [DenialCause] = [
        .runOption, .remembered, .administrator, .answered, .asking, .unanswered, .noTerminal, .storeUnreadable,
        .noSupervisor, .notConfirmed,
    ]

    public init(because: String?) {
        switch because {
        case nil: self = .unrecorded
        case "run-option": self = .runOption
        case "remembered": self = .remembered
        case "administrator": self = .administrator
        case "answered": self = .answered
        case "asking": self = .asking
        case "unanswered": self = .unanswered
        case "no-terminal": self = .noTerminal
        case "store-unreadable": self = .storeUnreadable
        case "no-supervisor": self = .noSupervisor
        case "not-confirmed": self = .notConfirmed
        case let word?: self = .word(word)
        }
    }

    /// The record's word for it: `no-terminal`.
    public var because: String {
        switch self {
        case .runOption: "run-option"
        case .remembered: "remembered"
        case .administrator: "administrator"
        case .answered: "answered"
        case .asking: "asking"
        case .unanswered: "unanswered"
        case .noTerminal: "no-terminal"
        case .storeUnreadable: "store-unreadable"
        case .noSupervisor: "no-supervisor"
        case .notConfirmed: "not-confirmed"
        case .unrecorded: "(none)"
        case .word(let word): word
        case .otherWords: "(other words)"
        }
    }

    /// A few words, for a table's cell: `no terminal to ask on`.
    public var short: String {
        switch self {
        case .runOption: "lnp-run --deny"
        case .remembered: "your decision"
        case .administrator: "administrator"
        case .answered: "answered Don't Allow"
        case .asking: "while asking"
        case .unanswered: "not answered"
        case .noTerminal: "no terminal"
        case .storeUnreadable: "store unreadable"
        case .noSupervisor: "no lnp-run"
        case .notConfirmed: "not confirmed"
        case .unrecorded: "not recorded"
        case .word(let word): "“\(word)”"
        case .otherWords: "other words"
        }
    }

    /// What it means, in a sentence.
    public var meaning: String {
        switch self {
        case .runOption: "the run was started with lnp-run --deny"
        case .remembered: "a decision you made earlier and lnp remembered (lnp deny, or Don't Allow at an earlier prompt)"
        case .administrator: "the administrator's file, /etc/lnp/decisions.conf, denies the program"
        case .answered: "you answered Don't Allow at the prompt during this run"
        case .asking: "denied while the question was up (lnp-run --deny-while-asking)"
        case .unanswered: "the question timed out or was interrupted, so the rest of the run was denied"
        case .noTerminal: "the program was undetermined and there was no terminal to ask on (decide with lnp allow or lnp deny)"
        case .storeUnreadable: "the decision store or the administrator's file could not be read, so lnp failed closed"
        case .noSupervisor: "the process could not reach its lnp-run (it had ended), so lnp failed closed"
        case .notConfirmed: "lnp-run did not find the operation the process asked about local, so it denied it without asking"
        case .unrecorded: "the records do not say why"
        case .word(let word): "the records say “\(word)”, which this version of lnp does not know"
        case .otherWords: "other words this version of lnp does not know"
        }
    }

    public static func < (a: DenialCause, b: DenialCause) -> Bool {
        switch (a.rank, b.rank) {
        case let (x, y) where x != y: x < y
        default: a.because < b.because
        }
    }

    private var rank: Int {
        if let at = Self.known.firstIndex(of: self) { return at }
        switch self {
        case .unrecorded: return Self.known.count
        case .word: return Self.known.count + 1
        default: return Self.known.count + 2
        }
    }
}

/// How many of a program's operations were denied for each cause. A file may carry any
/// number of words in `because`: the first `words` unknown ones are counted each, the rest
/// together, so what a report keeps does not grow with the records.
public struct DenialCounts: Equatable, Sendable {
    public private(set) var counts: [DenialCause: Int] = [:]
    private var unknownWords = 0
    static let words = 8

    public init() {}

    public mutating func add(_ because: String?) { add(DenialCause(because: because)) }

    mutating func add(_ cause: DenialCause, count: Int = 1) {
        var cause = cause
        if case .word = cause, counts[cause] == nil {
            if unknownWords < Self.words { unknownWords += 1 } else { cause = .otherWords }
        }
        counts[cause, default: 0] += count
    }

    /// Adds another's counts (a report's programs together).
    public mutating func add(_ other: DenialCounts) {
        for cause in other.counts.keys.sorted() { add(cause, count: other.counts[cause]!) }
    }

    public var total: Int { counts.values.reduce(0, +) }

    /// Most frequent first; equal ones in the order of `DenialCause`.
    public var byCount: [(cause: DenialCause, count: Int)] {
        counts.map { (cause: $0.key, count: $0.value) }.sorted {
            $0.count != $1.count ? $0.count > $1.count : $0.cause < $1.cause
        }
    }
}

/// Which causes denied a destination's operations: one bit each, so that the tens of
/// thousands of destinations of a large audit each keep two bytes for it.
public struct DenialCauseSet: Equatable, Hashable, Sendable {
    public private(set) var bits: UInt16 = 0

    public init() {}

    public mutating func insert(_ because: String?) { bits |= Self.bit(DenialCause(because: because)) }

    public mutating func formUnion(_ other: DenialCauseSet) { bits |= other.bits }

    public var isEmpty: Bool { bits == 0 }

    /// In the order of `DenialCause`; any unknown words as one, `.otherWords`.
    public var causes: [DenialCause] {
        (DenialCause.known + [.unrecorded, .otherWords]).filter { bits & Self.bit($0) != 0 }
    }

    private static func bit(_ cause: DenialCause) -> UInt16 {
        if let at = DenialCause.known.firstIndex(of: cause) { return 1 << UInt16(at) }
        if cause == .unrecorded { return 1 << UInt16(DenialCause.known.count) }
        return 1 << UInt16(DenialCause.known.count + 1)
    }
}

import LNPSys

/// What happens to a local-network operation.
public enum Decision: UInt8, BitwiseCopyable, Sendable {
    case deny = 0
    case allow = 1
}

/// Apple's attribution values (`NE_SOCKET_ATTRIBUTION_DEVELOPER`, `…_USER`).
public enum Attribution: UInt8, BitwiseCopyable {
    case app = 1
    case user = 2
}

/// Whether this process asks lnp-run, which asks the person, before deciding: only while
/// the program is undetermined.
public enum AskMode: UInt8, BitwiseCopyable, Sendable {
    /// The program is decided; the decision came with the settings.
    case never = 0
    /// Hold the operation until the person answers (or lnp-run gives up).
    case holding = 1
    /// Apple's way: fail the operation at once while the prompt is up; later ones follow
    /// the answer.
    case denyingWhileAsking = 2
}

/// Why an operation was allowed or denied: the audit's `because`.
public enum DecisionBasis: UInt8, BitwiseCopyable, Sendable {
    /// lnp-run's --allow or --deny.
    case runOption = 0
    /// The person's decision, remembered in their store.
    case remembered = 1
    /// The administrator's file.
    case administrator = 2
    /// The person answered the prompt during this run.
    case answered = 3
    /// Denied while the prompt was up (--deny-while-asking).
    case asking = 4
    /// The prompt went unanswered.
    case unanswered = 5
    /// Undetermined, and no terminal to ask on.
    case noTerminal = 6
    /// The store or the administrator's file could not be read: lnp fails closed.
    case storeUnreadable = 7
    /// lnp-run could not be reached to ask.
    case noSupervisor = 8
    /// Not a local-network operation: recorded only when all activity is (always allowed).
    case notLocal = 9
    /// lnp-run's own look at an ask did not find a local-network operation (or could not read
    /// the ask): denied, without asking the person.
    case notConfirmed = 10
    /// A Bonjour service type the program did not declare (`--bonjour-services`): denied
    /// without asking, as Apple's undeclared types are (NoAuth).
    case undeclared = 11

    /// The name the audit and lnp-run's policy line use.
    public var name: StaticString {
        switch self {
        case .runOption: return "run-option"
        case .remembered: return "remembered"
        case .administrator: return "administrator"
        case .answered: return "answered"
        case .asking: return "asking"
        case .unanswered: return "unanswered"
        case .noTerminal: return "no-terminal"
        case .storeUnreadable: return "store-unreadable"
        case .noSupervisor: return "no-supervisor"
        case .notLocal: return "not-local"
        case .notConfirmed: return "not-confirmed"
        case .undeclared: return "undeclared"
        }
    }

    static func named(_ bytes: UnsafeBufferPointer<UInt8>) -> DecisionBasis? {
        var raw: UInt8 = 0
        while let basis = DecisionBasis(rawValue: raw) {
            if Bytes.equal(bytes, basis.name) { return basis }
            raw += 1
        }
        return nil
    }
}

/// What the audit records: nothing, local-network operations, or all outgoing activity.
public enum RecordScope: UInt8, BitwiseCopyable, Sendable {
    case none = 0, local = 1, all = 2

    /// The word lnp-run writes.
    public var name: StaticString {
        switch self {
        case .none: return "none"
        case .local: return "local"
        case .all: return "all"
        }
    }
}

/// What lnp-run tells a process of its tree when it first needs to know (`SettingsStore`):
///
///     deny,113,app,remembered,local
///     /usr/bin/curl
///
/// The policy line: `allow`, `deny`, `ask` (hold the operation while asking lnp-run) or
/// `ask-deny` (deny while asking), anything else denying — lnp fails closed; the errno of a
/// denied operation (default EHOSTUNREACH, as Apple's); `user` to make every socket
/// user-initiated; why the decision is what it is (`DecisionBasis`); what the audit records
/// (`RecordScope`). Then the program lnp-run was asked to run, for the records.
///
/// Nothing of it comes from the environment, which any descendant can rewrite or empty: the
/// environment only says which lnp-run to ask (`LNP_RUN`, its process id), and that is
/// checked by both ends (`RunChannel`).
public struct Settings {
    public var decision: Decision = .deny
    public var errno: Int32 = Int32(LNP_EHOSTUNREACH)
    public var attribution: Attribution = .app
    public var asking: AskMode = .never
    public var basis: DecisionBasis = .runOption
    public var records: RecordScope = .none
    public var program = UnsafeBufferPointer<UInt8>(start: nil, count: 0)
    /// The lnp-run these came from, which asks and records go to; 0 when none answered.
    public var runPID: Int32 = 0

    public var recordsAllActivity: Bool { records == .all }

    /// Without lnp-run: every local-network operation denied, nothing recorded — lnp fails closed.
    static var unreachable: Settings {
        var settings = Settings()
        settings.basis = .noSupervisor
        return settings
    }

    /// `DECISION,ERRNO,ATTRIBUTION,BASIS,RECORDS`; a missing or malformed field keeps its default.
    public mutating func readPolicy(_ value: UnsafeBufferPointer<UInt8>) {
        var field = 0
        var start = 0
        for index in 0...value.count where index == value.count || value[index] == UInt8(ascii: ",") {
            let text = UnsafeBufferPointer(rebasing: value[start..<index])
            switch field {
            case 0:
                decision = Bytes.equal(text, "allow") ? .allow : .deny
                asking = Bytes.equal(text, "ask") ? .holding : Bytes.equal(text, "ask-deny") ? .denyingWhileAsking : .never
            case 1: if let number = Bytes.parseDecimal(text), number > 0, number < 4096 { errno = Int32(number) }
            case 2: attribution = Bytes.equal(text, "user") ? .user : .app
            case 3: if let named = DecisionBasis.named(text) { basis = named }
            case 4: records = Bytes.equal(text, "all") ? .all : Bytes.equal(text, "local") ? .local : .none
            default: break
            }
            field += 1
            start = index + 1
        }
    }

    /// lnp-run's reply to `settings`: `ok`, the policy line, the program — the rest of the
    /// reply, newlines and all (a path may hold them); nil otherwise (`elsewhere`: the asker is
    /// not of lnp-run's own tree, or another lnp-run's nearer).
    public static func fromReply(_ reply: UnsafeBufferPointer<UInt8>) -> Settings? {
        var lines = InlineArray<3, Range<Int>>(repeating: 0..<0)
        var count = 0
        var start = 0
        for index in 0..<reply.count where count < 2 && reply[index] == UInt8(ascii: "\n") {
            lines[count] = start..<index
            count += 1
            start = index + 1
        }
        guard count == 2, Bytes.equal(UnsafeBufferPointer(rebasing: reply[lines[0]]), "ok") else { return nil }
        lines[2] = start..<reply.count
        var settings = Settings()
        settings.readPolicy(UnsafeBufferPointer(rebasing: reply[lines[1]]))
        settings.program = UnsafeBufferPointer(rebasing: reply[lines[2]].prefix(Int(LNP_PATH_CAPACITY) - 1))
        return settings
    }
}

/// The settings of this process, kept in static storage once lnp-run has told them: word 0
/// is the state (0 unread, 1 being fetched, 2 ready), word 1 packs decision, attribution,
/// errno, ask mode, basis and record scope, word 3 the program's length (the program in its
/// own static buffer), word 4 lnp-run's process id. Word 5 is the answer lnp-run gave this
/// process (`Answers`), word 6 the process id `LNP_RUN` named when the library started, word 7
/// how many records could not be sent (`AuditLog`), word 8 the process that registered with
/// lnp-run (`registerIfForked`).
///
/// A process fetches them at its first call that needs them, not at start: most processes of
/// a wrapped tree (a build's compilers) never touch the network, and pay nothing. Until then
/// the hot path is closed (`PassWord`), so the first call that could be recorded takes the
/// slow path, which fetches. A forked child keeps its parent's (the same program); an
/// exec'd one fetches again.
enum SettingsStore {
    static let unread: UInt64 = 0, fetching: UInt64 = 1, ready: UInt64 = 2

    /// The settings of this process. The first caller fetches and stores them; a caller that
    /// finds another one mid-way (another thread, or a signal handler that interrupted it)
    /// fetches for itself instead of waiting.
    @inline(__always)
    static func current() -> Settings {
        let words = SharedWords(lnp_storage_settings())
        if words.load(0) == ready { return decode(words) }
        return load()
    }

    @inline(never)
    static func load() -> Settings {
        let words = SharedWords(lnp_storage_settings())
        guard words.compareExchange(0, expected: unread, desired: fetching) else {
            if words.load(0) == ready { return decode(words) }
            // Another thread is fetching, or a parent forked in the middle of it: fetch for
            // this call alone, into a small buffer (the program's path, which may not fit, is
            // left out of this call's record).
            var reply = InlineArray<256, UInt8>(repeating: 0)
            var settings = withUnsafeMutableBytes(of: &reply) { fetch(into: $0) }
            settings.program = UnsafeBufferPointer(start: nil, count: 0)
            PassWord.setOpen(!settings.recordsAllActivity)
            return settings
        }
        // The reply is received straight into the program's static buffer (no room for 4 KB
        // on the stack of a hook, which may run in a signal handler), then the program's path
        // is moved to its start.
        let buffer = UnsafeMutableRawBufferPointer(start: lnp_storage_program(), count: Int(LNP_PATH_CAPACITY) - 1)
        let settings = fetch(into: buffer)
        let program = settings.program
        if let start = program.baseAddress {
            let offset = UnsafeRawPointer(start) - UnsafeRawPointer(buffer.baseAddress!)
            for i in 0..<program.count { buffer[i] = buffer[offset + i] }
        }
        buffer[program.count] = 0
        words.store(1, pack(settings))
        words.store(3, UInt64(program.count))
        words.store(4, UInt64(UInt32(bitPattern: settings.runPID)))
        words.store(8, UInt64(UInt32(bitPattern: Sys.getpid())))  // registered with lnp-run by this request
        words.store(0, ready)
        PassWord.setOpen(!settings.recordsAllActivity)
        return decode(words)
    }

    /// Asks lnp-run — the one `LNP_RUN` names, else the nearest ancestor that answers — and
    /// believes it only if the runs above it vouch for it (`RunChannel.isVouchedFor`): a
    /// process of the program listening where an lnp-run would is passed over. The settings
    /// point into `reply`. Without an answer, `Settings.unreachable`.
    private static func fetch(into reply: UnsafeMutableRawBufferPointer) -> Settings {
        let hint = Int32(truncatingIfNeeded: SharedWords(lnp_storage_settings()).load(6))
        if let found = ask(hint, reply), RunChannel.isVouchedFor(hint) { return found }
        // The hint is gone, stale or false: the nearest ancestor that is an lnp-run.
        var pid = ProcessAncestry.parent(of: 0)
        for _ in 0..<ProcessAncestry.depth {
            guard let candidate = pid, candidate > 1 else { break }
            if candidate != hint, let found = ask(candidate, reply), RunChannel.isVouchedFor(candidate) { return found }
            pid = ProcessAncestry.parent(of: candidate)
        }
        return Settings.unreachable
    }

    private static func ask(_ pid: Int32, _ reply: UnsafeMutableRawBufferPointer) -> Settings? {
        let request: StaticString = "settings"
        guard pid > 0,
            let count = RunChannel.request(UnsafeRawBufferPointer(start: request.utf8Start, count: request.utf8CodeUnitCount),
                                           to: pid, reply: reply),
            var settings = Settings.fromReply(UnsafeBufferPointer(start: reply.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                                                 count: count))
        else { return nil }
        settings.runPID = pid
        return settings
    }

    /// lnp-run takes records from the processes it knows: each one registers, while it lives,
    /// by asking for its settings. A forked child inherits them without asking, so before its
    /// first record it asks once (the reply is the same).
    static func registerIfForked(with runPID: Int32) {
        let words = SharedWords(lnp_storage_settings())
        let pid = UInt64(UInt32(bitPattern: Sys.getpid()))
        guard words.load(8) != pid else { return }
        var reply = InlineArray<64, UInt8>(repeating: 0)
        withUnsafeMutableBytes(of: &reply) { raw in
            let request: StaticString = "settings"
            _ = RunChannel.request(UnsafeRawBufferPointer(start: request.utf8Start, count: request.utf8CodeUnitCount),
                                   to: runPID, reply: raw)
        }
        words.store(8, pid)
    }

    /// Word 1: the decision, attribution, errno, asking mode, basis and record scope.
    static func pack(_ settings: Settings) -> UInt64 {
        UInt64(settings.decision.rawValue) | UInt64(settings.attribution.rawValue) << 8
            | UInt64(UInt16(truncatingIfNeeded: settings.errno)) << 16 | UInt64(settings.asking.rawValue) << 32
            | UInt64(settings.basis.rawValue) << 40 | UInt64(settings.records.rawValue) << 48
    }

    static func decode(_ words: SharedWords) -> Settings {
        let packed = words.load(1)
        var settings = Settings()
        settings.decision = Decision(rawValue: UInt8(truncatingIfNeeded: packed)) ?? .deny
        settings.attribution = Attribution(rawValue: UInt8(truncatingIfNeeded: packed >> 8)) ?? .app
        settings.errno = Int32(UInt16(truncatingIfNeeded: packed >> 16))
        settings.asking = AskMode(rawValue: UInt8(truncatingIfNeeded: packed >> 32)) ?? .never
        settings.basis = DecisionBasis(rawValue: UInt8(truncatingIfNeeded: packed >> 40)) ?? .runOption
        settings.records = RecordScope(rawValue: UInt8(truncatingIfNeeded: packed >> 48)) ?? .none
        settings.program = UnsafeBufferPointer(start: lnp_storage_program(), count: Int(words.load(3)))
        settings.runPID = Int32(truncatingIfNeeded: words.load(4))
        return settings
    }

    /// Whether this process's settings are read and let every operation go unasked and
    /// unrecorded (`CallGate.passesEveryOperation`): two loads and a mask of word 1, as
    /// `decode` reads it, since every slow-path call asks before anything else.
    @inline(__always)
    static func passesEveryOperation() -> Bool {
        let words = SharedWords(lnp_storage_settings())
        return words.load(0) == ready && passesEveryOperation(packed: words.load(1))
    }

    @inline(__always)
    static func passesEveryOperation(packed: UInt64) -> Bool {
        let mask: UInt64 = 0xff | 0xff << 32 | 0xff << 48  // decision, asking, records
        let passing = UInt64(Decision.allow.rawValue) | UInt64(AskMode.never.rawValue) << 32
            | UInt64(RecordScope.none.rawValue) << 48
        return packed & mask == passing
    }

    /// When the library starts: which lnp-run the environment names (`LNP_RUN=PID`), and the
    /// proxies the environment names (`ProxyAddresses`), in one pass — every process of a
    /// wrapped tree pays for this walk.
    static func readEnvironment() {
        var hint: Int32 = 0
        var gadget: UInt64 = 0
        Environment.forEachEntry { entry in
            if Environment.mayBeLNP(entry) {
                if let value = Environment.value(of: entry, ifNamed: "LNP_RUN"), let pid = Bytes.parseDecimal(value) {
                    hint = Int32(pid)
                } else if let value = Environment.value(of: entry, ifNamed: "LNP_GADGET"),
                    let address = Bytes.parseHexadecimal(value)
                {
                    gadget = address
                }
            } else if let value = Environment.proxyValue(entry) {
                ProxyAddresses.record(host: ProxyURL.host(in: value))
            }
        }
        SharedWords(lnp_storage_settings()).store(6, UInt64(UInt32(bitPattern: hint)))
        // A forged address only costs speed: the filter lets through lnp-run's page alone.
        if gadget != 0 { lnp_gadget_map(gadget) }
    }

    private static func copy(_ bytes: UnsafeBufferPointer<UInt8>, to destination: UnsafeMutablePointer<UInt8>) {
        for i in 0..<bytes.count { destination[i] = bytes[i] }
        destination[bytes.count] = 0
    }
}

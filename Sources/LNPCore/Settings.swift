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

    /// The name `LNP_POLICY` and the audit use.
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

/// What lnp-run told this process, through its environment:
///
/// - `LNP_POLICY=DECISION,ERRNO,ATTRIBUTION,BASIS,SCOPE`, e.g. `deny,113,app,remembered,local`:
///   `allow`, `deny`, `ask` (hold the operation while asking lnp-run) or `ask-deny` (deny
///   while asking), anything else denying: lnp fails closed; the errno of a denied operation
///   (default EHOSTUNREACH, as Apple's); `user` to make every socket user-initiated; why the
///   decision is what it is (`DecisionBasis`, default `run-option`); what the audit records:
///   `local` operations (the default) or `all` outgoing connections and datagrams.
/// - `LNP_ASK`: the socket lnp-run answers on while the program is undetermined.
/// - `LNP_AUDIT`: the audit file, an absolute path, or `syslog` for the system logger; none
///   if unset.
/// - `LNP_PROGRAM`: the program lnp-run was asked to run, for the records.
///
/// Few variables, because the loader reads every variable of every process at start.
/// Read once, when the library starts, so a program changing its own environment later does
/// not change its policy. Stored in static words; see `SettingsStore`.
public struct Settings {
    public var decision: Decision = .deny
    public var errno: Int32 = Int32(LNP_EHOSTUNREACH)
    public var attribution: Attribution = .app
    public var asking: AskMode = .never
    public var basis: DecisionBasis = .runOption
    /// Whether the audit records every outgoing connection and datagram destination, not only
    /// local-network operations.
    public var recordsAllActivity = false
    /// NUL-terminated; nil when nothing is audited.
    public var auditPath: UnsafePointer<UInt8>? = nil
    public var program = UnsafeBufferPointer<UInt8>(start: nil, count: 0)
    /// lnp-run's socket, without its NUL; empty when there is no one to ask.
    public var askPath = UnsafeBufferPointer<UInt8>(start: nil, count: 0)

    /// Parses the environment in place (the paths point into it). With `recordingProxies`,
    /// also records the proxy variables' hosts, in the same pass: every process of a wrapped
    /// tree pays for this walk at start.
    static func fromEnvironment(recordingProxies: Bool = false) -> Settings {
        var settings = Settings()
        Environment.forEachEntry { entry in
            if Environment.mayBeLNP(entry) {
                settings.read(entry)
            } else if recordingProxies, let value = Environment.proxyValue(entry) {
                ProxyAddresses.record(host: ProxyURL.host(in: value))
            }
        }
        if settings.asking != .never && settings.askPath.isEmpty {  // no one to ask: denied
            settings.asking = .never
            settings.basis = .noSupervisor
        }
        return settings
    }

    private mutating func read(_ entry: UnsafePointer<UInt8>) {
        switch entry[4] {  // past "LNP_": one byte tells which variable it may be
        case UInt8(ascii: "P"):
            if let value = Environment.value(of: entry, ifNamed: "LNP_POLICY") {
                readPolicy(value)
            } else if let value = Environment.value(of: entry, ifNamed: "LNP_PROGRAM") {
                program = UnsafeBufferPointer(start: value.baseAddress, count: min(value.count, Int(LNP_PATH_CAPACITY) - 1))
            }
        case UInt8(ascii: "A"):
            if let value = Environment.value(of: entry, ifNamed: "LNP_AUDIT"), value.count > 0,
                value.count < Int(LNP_PATH_CAPACITY)
            {
                auditPath = value.baseAddress
            } else if let value = Environment.value(of: entry, ifNamed: "LNP_ASK"), value.count > 0,
                value.count < Int(LNP_SOCKET_PATH_CAPACITY)
            {
                askPath = value
            }
        default:
            break
        }
    }

    /// `DECISION,ERRNO,ATTRIBUTION,BASIS`; a missing or malformed field keeps its default.
    mutating func readPolicy(_ value: UnsafeBufferPointer<UInt8>) {
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
            case 4: recordsAllActivity = Bytes.equal(text, "all")
            default: break
            }
            field += 1
            start = index + 1
        }
    }
}

/// The settings, kept in static storage: word 0 is the state (0 unread, 1 being read,
/// 2 ready), word 1 packs decision, attribution, errno, ask mode, basis and scope, word 2 the
/// audit path's length (0: none), word 3 the program's length, word 4 the ask socket's
/// length. The paths live in their own static buffers. Word 5 is the answer lnp-run gave
/// this process (see `Answers`).
///
/// One more word, read by every hot call, says whether a call to a destination known not to
/// be local may pass untouched: 0 until the settings are read, and while all activity is
/// recorded (`HotPath`).
enum SettingsStore {
    static let unread: UInt64 = 0, reading: UInt64 = 1, ready: UInt64 = 2

    /// The settings of this process. The first caller stores them; a caller that finds
    /// another one mid-way (another thread, or a signal handler that interrupted it) parses
    /// the environment for itself instead of waiting.
    @inline(__always)
    static func current() -> Settings {
        let words = SharedWords(lnp_storage_settings())
        if words.load(0) == ready { return decode(words) }
        return load()
    }

    static func load() -> Settings {
        let words = SharedWords(lnp_storage_settings())
        guard words.compareExchange(0, expected: unread, desired: reading) else {
            if words.load(0) == ready { return decode(words) }
            // Mid-way in another thread, or forever in a child forked from the middle of it: this
            // caller parses for itself, and may still open the hot path (the value is the same).
            let parsed = Settings.fromEnvironment()
            storePassWord(for: parsed)
            return parsed
        }
        let parsed = Settings.fromEnvironment(recordingProxies: true)
        var auditLength = 0
        if let path = parsed.auditPath {
            auditLength = CString.length(path, limit: Int(LNP_PATH_CAPACITY) - 1)
            copy(UnsafeBufferPointer(start: path, count: auditLength), to: lnp_storage_audit_path())
        }
        copy(parsed.program, to: lnp_storage_program())
        copy(parsed.askPath, to: lnp_storage_ask_path())
        words.store(1, UInt64(parsed.decision.rawValue) | UInt64(parsed.attribution.rawValue) << 8
            | UInt64(UInt16(truncatingIfNeeded: parsed.errno)) << 16 | UInt64(parsed.asking.rawValue) << 32
            | UInt64(parsed.basis.rawValue) << 40 | UInt64(parsed.recordsAllActivity ? 1 : 0) << 48)
        words.store(2, UInt64(auditLength))
        words.store(3, UInt64(parsed.program.count))
        words.store(4, UInt64(parsed.askPath.count))
        words.store(0, ready)
        storePassWord(for: parsed)
        return parsed
    }

    /// Opens the hot path to calls known not to be local, unless they are all recorded.
    private static func storePassWord(for settings: Settings) {
        let recordsNotLocal = settings.recordsAllActivity && settings.auditPath != nil
        PassWord.setOpen(!recordsNotLocal)
    }

    private static func decode(_ words: SharedWords) -> Settings {
        let packed = words.load(1)
        var settings = Settings()
        settings.decision = Decision(rawValue: UInt8(truncatingIfNeeded: packed)) ?? .deny
        settings.attribution = Attribution(rawValue: UInt8(truncatingIfNeeded: packed >> 8)) ?? .app
        settings.errno = Int32(UInt16(truncatingIfNeeded: packed >> 16))
        settings.asking = AskMode(rawValue: UInt8(truncatingIfNeeded: packed >> 32)) ?? .never
        settings.basis = DecisionBasis(rawValue: UInt8(truncatingIfNeeded: packed >> 40)) ?? .runOption
        settings.recordsAllActivity = packed >> 48 & 1 != 0
        if words.load(2) > 0 { settings.auditPath = UnsafePointer(lnp_storage_audit_path()) }
        settings.program = UnsafeBufferPointer(start: lnp_storage_program(), count: Int(words.load(3)))
        settings.askPath = UnsafeBufferPointer(start: lnp_storage_ask_path(), count: Int(words.load(4)))
        return settings
    }

    private static func copy(_ bytes: UnsafeBufferPointer<UInt8>, to destination: UnsafeMutablePointer<UInt8>) {
        for i in 0..<bytes.count { destination[i] = bytes[i] }
        destination[bytes.count] = 0
    }
}

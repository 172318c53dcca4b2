import LNPSys

/// What happens to a local-network operation.
public enum Decision: UInt8, BitwiseCopyable {
    case deny = 0
    case allow = 1
}

/// Apple's attribution values (`NE_SOCKET_ATTRIBUTION_DEVELOPER`, `…_USER`).
public enum Attribution: UInt8, BitwiseCopyable {
    case app = 1
    case user = 2
}

/// What lnp-run told this process, through its environment:
///
/// - `LNP_POLICY=DECISION,ERRNO,ATTRIBUTION`, e.g. `deny,113,app`: `allow` or `deny` (anything
///   else, or no variable, denies: lnp fails closed); the errno of a denied operation
///   (default EHOSTUNREACH, as Apple's); `user` to make every socket user-initiated.
/// - `LNP_AUDIT`: the audit file, an absolute path; none if unset.
/// - `LNP_PROGRAM`: the program lnp-run was asked to run, for the records.
///
/// Few variables, because the loader reads every variable of every process at start.
/// Read once, when the library starts, so a program changing its own environment later does
/// not change its policy. Stored in static words; see `SettingsStore`.
public struct Settings {
    public var decision: Decision = .deny
    public var errno: Int32 = Int32(LNP_EHOSTUNREACH)
    public var attribution: Attribution = .app
    /// NUL-terminated; nil when nothing is audited.
    public var auditPath: UnsafePointer<UInt8>? = nil
    public var program = UnsafeBufferPointer<UInt8>(start: nil, count: 0)

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
            }
        default:
            break
        }
    }

    /// `DECISION,ERRNO,ATTRIBUTION`; a missing or malformed field keeps its default.
    mutating func readPolicy(_ value: UnsafeBufferPointer<UInt8>) {
        var field = 0
        var start = 0
        for index in 0...value.count where index == value.count || value[index] == UInt8(ascii: ",") {
            let text = UnsafeBufferPointer(rebasing: value[start..<index])
            switch field {
            case 0: decision = Bytes.equal(text, "allow") ? .allow : .deny
            case 1: if let number = Bytes.parseDecimal(text), number > 0, number < 4096 { errno = Int32(number) }
            case 2: attribution = Bytes.equal(text, "user") ? .user : .app
            default: break
            }
            field += 1
            start = index + 1
        }
    }
}

/// The settings, kept in static storage: word 0 is the state (0 unread, 1 being read,
/// 2 ready), word 1 packs decision, attribution and errno, word 2 the audit path's length
/// (0: none), word 3 the program's length. The paths live in their own static buffers.
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
            return words.load(0) == ready ? decode(words) : Settings.fromEnvironment()
        }
        let parsed = Settings.fromEnvironment(recordingProxies: true)
        var auditLength = 0
        if let path = parsed.auditPath {
            auditLength = CString.length(path, limit: Int(LNP_PATH_CAPACITY) - 1)
            copy(UnsafeBufferPointer(start: path, count: auditLength), to: lnp_storage_audit_path())
        }
        copy(parsed.program, to: lnp_storage_program())
        words.store(1, UInt64(parsed.decision.rawValue) | UInt64(parsed.attribution.rawValue) << 8
            | UInt64(UInt32(bitPattern: parsed.errno)) << 16)
        words.store(2, UInt64(auditLength))
        words.store(3, UInt64(parsed.program.count))
        words.store(0, ready)
        return parsed
    }

    private static func decode(_ words: SharedWords) -> Settings {
        let packed = words.load(1)
        var settings = Settings()
        settings.decision = Decision(rawValue: UInt8(truncatingIfNeeded: packed)) ?? .deny
        settings.attribution = Attribution(rawValue: UInt8(truncatingIfNeeded: packed >> 8)) ?? .app
        settings.errno = Int32(bitPattern: UInt32(truncatingIfNeeded: packed >> 16))
        if words.load(2) > 0 { settings.auditPath = UnsafePointer(lnp_storage_audit_path()) }
        settings.program = UnsafeBufferPointer(start: lnp_storage_program(), count: Int(words.load(3)))
        return settings
    }

    private static func copy(_ bytes: UnsafeBufferPointer<UInt8>, to destination: UnsafeMutablePointer<UInt8>) {
        for i in 0..<bytes.count { destination[i] = bytes[i] }
        destination[bytes.count] = 0
    }
}

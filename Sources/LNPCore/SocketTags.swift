import LNPSys

/// What a program said about one of its sockets with the ne_socket API: its attribution and
/// the domains it connects to.
public struct SocketTag: Equatable, BitwiseCopyable {
    public var attribution: Attribution?
    public var domains: DomainReference

    public init(attribution: Attribution? = nil, domains: DomainReference = DomainReference()) {
        self.attribution = attribution
        self.domains = domains
    }

    /// Bits 0–1 the attribution (0: not set), 2–31 the domain reference; never 0 once set.
    init(word: UInt64) {
        attribution = Attribution(rawValue: UInt8(truncatingIfNeeded: word & 3))
        domains = DomainReference(rawValue: UInt32(truncatingIfNeeded: word >> 2))
    }

    var word: UInt64 { UInt64(attribution?.rawValue ?? 0) | UInt64(domains.rawValue) << 2 | 1 << 63 }
}

/// Tags belong to the socket, as on Apple's systems, not to a descriptor number: they are
/// kept by the kernel's socket cookie (SO_COOKIE), unique for the life of the system. So a
/// tag follows the socket through dup, dup2, dup3 and F_DUPFD and through fork, and a new
/// socket that reuses a closed one's number starts untagged, with no hook on close or dup
/// at all — even for descriptors closed inside the C library or by a raw system call.
///
/// The table (mapped on first use, so a program that never tags pays nothing) holds
/// `capacity` pairs of words: the cookie and the tag. It is open-addressed; when a probe
/// window is full, the oldest-claimed entry in it gives way, so at most `capacity` sockets
/// keep tags at once.
enum SocketTags {
    static let capacity = Int(LNP_SOCKET_TAGS)
    static let window = 8

    static func table(create: Bool) -> UnsafeMutablePointer<UInt64>? {
        let holder = lnp_storage_socket_tags()!
        if let table = lnp_load_pointer(holder) { return table.assumingMemoryBound(to: UInt64.self) }
        guard create, let mapped = lnp_sys_map_zeroed(capacity * 16) else { return nil }
        if lnp_install_pointer(holder, mapped) == 0 { _ = Sys.call(Int(SYS_munmap), Int(bitPattern: mapped), capacity * 16) }
        return lnp_load_pointer(holder)?.assumingMemoryBound(to: UInt64.self)
    }

    /// The cookie of the socket `fd` refers to; EBADF or ENOTSOCK otherwise.
    static func cookie(of fd: Int32) -> Result<UInt64, Errno> {
        var cookie: UInt64 = 0
        var length: UInt32 = 8
        let result = withUnsafeMutablePointer(to: &cookie) { cookiePointer in
            withUnsafeMutablePointer(to: &length) { lengthPointer in
                Sys.call(Int(LNP_SYS_GETSOCKOPT), Int(fd), Int(LNP_SOL_SOCKET), Int(LNP_SO_COOKIE),
                         Int(bitPattern: cookiePointer), Int(bitPattern: lengthPointer))
            }
        }
        return result.map { _ in cookie }
    }

    @inline(__always) static func home(of cookie: UInt64) -> Int {
        Int(truncatingIfNeeded: (cookie &* 0x9E37_79B9_7F4A_7C15) >> 40) % capacity
    }

    /// The tag of the socket `fd` refers to, or nil if it has none.
    static func tag(of fd: Int32) -> SocketTag? {
        guard let table = table(create: false), case .success(let cookie) = cookie(of: fd) else { return nil }
        let words = SharedWords(table)
        let home = home(of: cookie)
        for step in 0..<window {
            let entry = (home + step) % capacity
            guard words.load(2 * entry) == cookie else { continue }
            let word = words.load(2 * entry + 1)
            return word == 0 ? nil : SocketTag(word: word)
        }
        return nil
    }

    /// Changes the tag of the socket `fd` refers to. Returns 0 or an errno value, as the
    /// ne_socket API does.
    static func update(_ fd: Int32, _ change: (inout SocketTag) -> Void) -> Int32 {
        let cookie: UInt64
        switch Self.cookie(of: fd) {
        case .success(let value): cookie = value
        case .failure(let error): return error.rawValue
        }
        guard let table = table(create: true) else { return Int32(LNP_ENOMEM) }
        let words = SharedWords(table)
        let home = home(of: cookie)
        var entry = -1
        for step in 0..<window where entry < 0 {
            let candidate = (home + step) % capacity
            let holder = words.load(2 * candidate)
            if holder == cookie || (holder == 0 && words.compareExchange(2 * candidate, expected: 0, desired: cookie)) {
                entry = candidate
            }
        }
        if entry < 0 {
            // A full window: the entry that waited longest in it gives way.
            entry = (home + Int(lnp_fetch_add(Counter.tagEvictions.word, 1) % UInt64(window))) % capacity
            words.store(2 * entry + 1, 0)
            words.store(2 * entry, cookie)
        }
        var tag = SocketTag(word: words.load(2 * entry + 1))
        change(&tag)
        words.store(2 * entry + 1, tag.word)
        return 0
    }
}

import LNPSys

/// The exemptions Apple makes: traffic to the DNS servers the system uses, and to the proxy
/// it is configured with, needs no local network access even when they are on-link.
public struct LiveExemptions: ExemptionSource {
    public init() {}

    public func exemption(for address: IPAddress) -> NotLocalReason? {
        if DNSServers.contains(address) { return .dnsServer }
        if ProxyAddresses.contains(address) { return .proxy }
        return nil
    }
}

/// A short list of addresses in shared words: word 0 sequence, word 1 stamp, word 2 count,
/// then three words (family, high, low) per address.
struct AddressList {
    static let capacity = 16
    let record: SequencedRecord

    init(_ storage: UnsafeMutablePointer<UInt64>) { record = SequencedRecord(words: SharedWords(storage)) }

    /// nil when the list is being written or its stamp differs from `stamp` (if given).
    func contains(_ address: IPAddress, stamp: UInt64? = nil) -> Bool? {
        guard let sequence = record.beginRead() else { return nil }
        let w = record.words
        if let stamp, w.loadRelaxed(1) != stamp { return nil }
        let count = min(Int(w.loadRelaxed(2)), Self.capacity)
        var found = false
        for i in 0..<count {
            let base = 3 + 3 * i
            if w.loadRelaxed(base) == UInt64(address.family.rawValue) && w.loadRelaxed(base + 1) == address.high
                && w.loadRelaxed(base + 2) == address.low
            {
                found = true
            }
        }
        return record.endRead(sequence) ? found : nil
    }

    func replace(with addresses: InlineArray<16, IPAddress>, count: Int, stamp: UInt64) {
        guard let claimed = record.beginWrite() else { return }
        let w = record.words
        let stored = min(count, Self.capacity)
        for i in 0..<stored { store(addresses[i], at: i) }
        w.storeRelaxed(1, stamp)
        w.storeRelaxed(2, UInt64(stored))
        record.endWrite(claimed)
    }

    /// Adds an address if there is room and it is not there yet.
    func add(_ address: IPAddress) {
        guard let claimed = record.beginWrite() else { return }
        let w = record.words
        let count = min(Int(w.loadRelaxed(2)), Self.capacity)
        var present = false
        for i in 0..<count
        where w.loadRelaxed(3 + 3 * i) == UInt64(address.family.rawValue) && w.loadRelaxed(4 + 3 * i) == address.high
            && w.loadRelaxed(5 + 3 * i) == address.low
        {
            present = true
        }
        if !present && count < Self.capacity {
            store(address, at: count)
            w.storeRelaxed(2, UInt64(count + 1))
        }
        record.endWrite(claimed)
    }

    private func store(_ address: IPAddress, at index: Int) {
        let w = record.words
        w.storeRelaxed(3 + 3 * index, UInt64(address.family.rawValue))
        w.storeRelaxed(4 + 3 * index, address.high)
        w.storeRelaxed(5 + 3 * index, address.low)
    }
}

/// The DNS servers of /etc/resolv.conf, read again at most once a half second.
enum DNSServers {
    static func contains(_ address: IPAddress) -> Bool {
        let stamp = Clock.stamp() &+ 1
        let list = AddressList(lnp_storage_dns_servers())
        if let known = list.contains(address, stamp: stamp) { return known }
        var servers = InlineArray<16, IPAddress>(repeating: IPAddress(v4: 0))
        let count = read(into: &servers)
        list.replace(with: servers, count: count, stamp: stamp)
        for i in 0..<count where servers[i] == address { return true }
        return false
    }

    static func read(into servers: inout InlineArray<16, IPAddress>) -> Int {
        guard case .success(let fd) = Sys.open(StaticString("/etc/resolv.conf").utf8Start, flags: Int32(LNP_O_RDONLY))
        else { return 0 }
        defer { Sys.close(fd) }
        var text = InlineArray<4096, UInt8>(repeating: 0)
        return withUnsafeMutableBytes(of: &text) { raw in
            var filled = 0
            while filled < raw.count {
                guard case .success(let count) = Sys.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: raw[filled...])),
                    count > 0
                else { break }
                filled += count
            }
            let bytes = UnsafeBufferPointer(start: raw.baseAddress!.assumingMemoryBound(to: UInt8.self), count: filled)
            return ResolvConf.nameservers(in: bytes, into: &servers)
        }
    }
}

/// The `nameserver` lines of resolv.conf(5).
public enum ResolvConf {
    /// Fills `servers` with the addresses of the `nameserver` lines; returns how many.
    public static func nameservers(in text: UnsafeBufferPointer<UInt8>, into servers: inout InlineArray<16, IPAddress>) -> Int {
        var count = 0
        var lineStart = 0
        while lineStart < text.count && count < 16 {
            var lineEnd = lineStart
            while lineEnd < text.count && text[lineEnd] != 0x0a { lineEnd += 1 }
            // The keyword starts the line, as the C library's resolver reads it.
            var cursor = lineStart
            let keyword: StaticString = "nameserver"
            var matches = lineEnd - cursor > keyword.utf8CodeUnitCount
            if matches {
                for i in 0..<keyword.utf8CodeUnitCount where text[cursor + i] != keyword.utf8Start[i] { matches = false }
            }
            if matches {
                cursor += keyword.utf8CodeUnitCount
                let afterKeyword = cursor
                skipBlanks(text, &cursor, lineEnd)
                if cursor > afterKeyword {
                    var end = cursor
                    while end < lineEnd && !isBlank(text[end]) && text[end] != UInt8(ascii: "%") && text[end] != 0x0d {
                        end += 1
                    }
                    let word = UnsafeBufferPointer(rebasing: text[cursor..<end])
                    if let address = IPAddress.parse(word) {
                        servers[count] = address.unmapped
                        count += 1
                    }
                }
            }
            lineStart = lineEnd + 1
        }
        return count
    }

    static func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }

    static func skipBlanks(_ text: UnsafeBufferPointer<UInt8>, _ cursor: inout Int, _ end: Int) {
        while cursor < end && isBlank(text[cursor]) { cursor += 1 }
    }
}

/// Proxies named in the environment: literal addresses at start, and the addresses a named
/// proxy resolves to as the program resolves it (lnp never resolves names itself).
enum ProxyAddresses {
    static func contains(_ address: IPAddress) -> Bool { list.contains(address) ?? false }

    /// The list; the literal addresses of the proxy variables are added at start, as the
    /// settings are read (`Settings.fromEnvironment`).
    static var list: AddressList { AddressList(lnp_storage_proxies()) }

    /// Called after the program resolved `name`: if a proxy variable names that host, the
    /// addresses it resolved to are the proxy's.
    static func learn(name: UnsafeBufferPointer<UInt8>, addresses: InlineArray<8, IPAddress>, count: Int) {
        var isProxy = false
        Environment.forEachEntry { entry in
            if let value = Environment.proxyValue(entry), Bytes.equalIgnoringCase(ProxyURL.host(in: value), name) {
                isProxy = true
            }
        }
        guard isProxy else { return }
        for i in 0..<min(count, 8) { list.add(addresses[i]) }
    }
}

/// The host part of a proxy setting: `[scheme://][user[:password]@]host[:port][/path]`,
/// where host may be a bracketed IPv6 literal with a scope.
public enum ProxyURL {
    public static func host(in value: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        var start = 0
        var i = 0
        while i + 2 < value.count {
            if value[i] == UInt8(ascii: ":") && value[i + 1] == UInt8(ascii: "/") && value[i + 2] == UInt8(ascii: "/") {
                start = i + 3
                break
            }
            if value[i] == UInt8(ascii: "/") { break }
            i += 1
        }
        var authorityEnd = start
        while authorityEnd < value.count && value[authorityEnd] != UInt8(ascii: "/") && value[authorityEnd] != UInt8(ascii: "?")
            && value[authorityEnd] != UInt8(ascii: "#")
        {
            authorityEnd += 1
        }
        var hostStart = start
        for j in start..<authorityEnd where value[j] == UInt8(ascii: "@") { hostStart = j + 1 }
        if hostStart < authorityEnd && value[hostStart] == UInt8(ascii: "[") {
            var close = hostStart + 1
            while close < authorityEnd && value[close] != UInt8(ascii: "]") && value[close] != UInt8(ascii: "%") { close += 1 }
            return UnsafeBufferPointer(rebasing: value[(hostStart + 1)..<close])
        }
        var hostEnd = hostStart
        while hostEnd < authorityEnd && value[hostEnd] != UInt8(ascii: ":") { hostEnd += 1 }
        return UnsafeBufferPointer(rebasing: value[hostStart..<hostEnd])
    }
}

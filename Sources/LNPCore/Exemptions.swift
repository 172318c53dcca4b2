import LNPSys

/// The exemptions Apple makes: traffic to the DNS servers the system uses, and to the proxy
/// it is configured with, needs no local network access even when they are on-link. DNS
/// servers are exempt for DNS (ports 53, and 853 for DNS over TLS): a router that is also
/// the DNS server keeps its admin page gated.
public struct LiveExemptions: ExemptionSource {
    public init() {}

    public func exemption(for endpoint: SocketEndpoint) -> NotLocalReason? {
        if DNSServers.isDNSPort(endpoint.port) && DNSServers.contains(endpoint.address) { return .dnsServer }
        if ProxyAddresses.contains(endpoint.address) { return .proxy }
        return nil
    }
}

/// No exemptions: the rule alone. lnp-run checks an ask with it, since the preload asks
/// only about what its own exemptions left local.
public struct NoExemptions: ExemptionSource {
    public init() {}

    public func exemption(for endpoint: SocketEndpoint) -> NotLocalReason? { nil }
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
        let found = holds(address, among: min(Int(w.loadRelaxed(2)), Self.capacity))
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
        if !holds(address, among: count) && count < Self.capacity {
            store(address, at: count)
            w.storeRelaxed(2, UInt64(count + 1))
        }
        record.endWrite(claimed)
    }

    /// Whether one of the first `count` entries is `address`.
    private func holds(_ address: IPAddress, among count: Int) -> Bool {
        let w = record.words
        for i in 0..<count
        where w.loadRelaxed(3 + 3 * i) == UInt64(address.family.rawValue) && w.loadRelaxed(4 + 3 * i) == address.high
            && w.loadRelaxed(5 + 3 * i) == address.low
        {
            return true
        }
        return false
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
    static func isDNSPort(_ port: UInt16) -> Bool { port == 53 || port == 853 }

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

    /// Reads the file in small pieces (a hook may run on a small signal stack), a line at a
    /// time; a line longer than 256 bytes is no nameserver line.
    @inline(never)
    static func read(into servers: inout InlineArray<16, IPAddress>) -> Int {
        guard case .success(let fd) = Sys.open(StaticString("/etc/resolv.conf").utf8Start, flags: Int32(LNP_O_RDONLY))
        else { return 0 }
        defer { Sys.close(fd) }
        var chunk = InlineArray<256, UInt8>(repeating: 0)
        var line = InlineArray<256, UInt8>(repeating: 0)
        var lineLength = 0
        var tooLong = false
        var count = 0
        func finishLine() {
            if !tooLong && count < ResolvConf.maximumServers {
                let address = withUnsafeBytes(of: &line) { raw in
                    ResolvConf.nameserver(in: UnsafeBufferPointer(start: raw.baseAddress!.assumingMemoryBound(to: UInt8.self), count: lineLength))
                }
                if let address {
                    servers[count] = address
                    count += 1
                }
            }
            lineLength = 0
            tooLong = false
        }
        while count < ResolvConf.maximumServers {
            let read = withUnsafeMutableBytes(of: &chunk) { raw -> Int in
                guard case .success(let read) = Sys.read(fd, into: raw) else { return 0 }
                return read
            }
            if read <= 0 { break }
            for index in 0..<read {
                let byte = chunk[index]
                if byte == 0x0a {
                    finishLine()
                } else if lineLength < 256 {
                    line[lineLength] = byte
                    lineLength += 1
                } else {
                    tooLong = true
                }
            }
        }
        finishLine()
        return count
    }
}

/// The `nameserver` lines of resolv.conf(5), read as the C library's resolver reads them:
/// the keyword starts the line, and only the first three count (MAXNS).
public enum ResolvConf {
    public static let maximumServers = 3

    /// The addresses of the first `nameserver` lines of `text`; returns how many.
    public static func nameservers(in text: UnsafeBufferPointer<UInt8>, into servers: inout InlineArray<16, IPAddress>) -> Int {
        var count = 0
        var lineStart = 0
        while lineStart < text.count && count < maximumServers {
            var lineEnd = lineStart
            while lineEnd < text.count && text[lineEnd] != 0x0a { lineEnd += 1 }
            if let address = nameserver(in: UnsafeBufferPointer(rebasing: text[lineStart..<lineEnd])) {
                servers[count] = address
                count += 1
            }
            lineStart = lineEnd + 1
        }
        return count
    }

    /// The address of one line, if it is a `nameserver` line (a `%scope` is dropped).
    public static func nameserver(in line: UnsafeBufferPointer<UInt8>) -> IPAddress? {
        let keyword: StaticString = "nameserver"
        let keywordLength = keyword.utf8CodeUnitCount
        guard line.count > keywordLength else { return nil }
        for i in 0..<keywordLength where line[i] != keyword.utf8Start[i] { return nil }
        var cursor = keywordLength
        guard isBlank(line[cursor]) else { return nil }
        while cursor < line.count && isBlank(line[cursor]) { cursor += 1 }
        var end = cursor
        while end < line.count && !isBlank(line[end]) && line[end] != UInt8(ascii: "%") && line[end] != 0x0d { end += 1 }
        return IPAddress.parse(UnsafeBufferPointer(rebasing: line[cursor..<end]))?.unmapped
    }

    static func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }
}

/// Proxies named in the environment when the process started: literal addresses, and the
/// addresses a named proxy resolves to as the program resolves it (lnp never resolves names
/// itself). Both come from the environment as lnp-run left it, so a program that sets a
/// proxy variable later gains no exemption.
enum ProxyAddresses {
    static var list: AddressList { AddressList(lnp_storage_proxies()) }

    static func contains(_ address: IPAddress) -> Bool { list.contains(address) ?? false }

    /// At start: a proxy variable's host, an address or a name.
    static func record(host: UnsafeBufferPointer<UInt8>) {
        if let address = IPAddress.parse(host) {
            list.add(address.unmapped)
        } else {
            ProxyNames.add(host)
        }
    }

    /// After the program resolved `name`: if it is a proxy's name, its addresses are the proxy's.
    static func learn(name: UnsafeBufferPointer<UInt8>, addresses: InlineArray<8, IPAddress>, count: Int) {
        guard ProxyNames.contains(name) else { return }
        for i in 0..<min(count, 8) { list.add(addresses[i]) }
    }
}

/// The proxy host names, written once at start (before the settings are marked ready) and
/// only read afterwards: per name, a length word and up to 256 bytes.
enum ProxyNames {
    static let capacity = Int(LNP_PROXY_NAMES)
    static let words = Int(LNP_PROXY_NAME_WORDS)

    static func add(_ name: UnsafeBufferPointer<UInt8>) {
        guard !name.isEmpty, name.count <= (words - 1) * 8, !contains(name) else { return }
        let storage = lnp_storage_proxy_names()!
        for slot in 0..<capacity where storage[slot * words] == 0 {
            let bytes = UnsafeMutableRawPointer(storage + slot * words + 1).assumingMemoryBound(to: UInt8.self)
            for i in 0..<name.count { bytes[i] = name[i] }
            storage[slot * words] = UInt64(name.count)
            return
        }
    }

    static func contains(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        let storage = lnp_storage_proxy_names()!
        for slot in 0..<capacity {
            let length = Int(storage[slot * words])
            let bytes = UnsafeRawPointer(storage + slot * words + 1).assumingMemoryBound(to: UInt8.self)
            if length > 0 && Bytes.equalIgnoringCase(UnsafeBufferPointer(start: bytes, count: length), name) { return true }
        }
        return false
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

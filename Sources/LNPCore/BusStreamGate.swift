import LNPSys

/// The gate on a program's connections to the system bus, for D-Bus clients that are not
/// libdbus (whose calls bus_calls.c decides): GDBus, sd-bus (busctl, resolvectl), jeepney,
/// dbus-next. Their method calls that have Avahi or systemd-resolved browse, resolve or
/// advertise (`BusMethod`) are decided as libdbus's are, on the bytes the program writes.
///
/// - A connection is watched from its connect: an AF_UNIX socket whose peer is bound at the
///   system bus's path. The program's own socket talks to the bus, so the bus sees the
///   program — its credentials, its pid — as it always did.
/// - Every write to it (write, writev, send, sendto, sendmsg, sendmmsg) is read (`BusStream`)
///   from lnp's copy, and the copy is what is sent: what was decided is what goes.
/// - A refused call never reaches the bus. In its place goes a call with its serial to a name
///   nobody owns (`BusStandIn`); the bus answers that with an error reply — NameHasNoOwner,
///   naming `lnp.LocalNetworkAccessDenied` — so the program's call fails and its connection
///   goes on.
/// - A message written in pieces too small to read is held until enough has come; the
///   program is told those bytes went, as a socket's buffer would.
///
/// The watched connections are a few slots of static storage (`BusStreamSlot`). Not seen: a
/// copy of the descriptor (dup) written to under another number, a descriptor inherited
/// through exec, bytes sent by sendfile or splice (README, "What is not gated").
enum BusStreamGate {
    static let slots = Int(LNP_BUS_STREAMS)

    /// No connection is watched: every write passes at once (one load).
    @inline(__always) static var isIdle: Bool { lnp_load_relaxed(lnp_storage_bus_stream_count()) == 0 }

    /// The slot watching `fd`, locked, if its socket is still the one connected (its cookie);
    /// a slot whose socket is gone is let go. The caller unlocks it.
    static func watched(_ fd: Int32) -> BusStreamSlot? {
        for index in 0..<slots {
            let slot = BusStreamSlot(index)
            guard slot.descriptor == fd else { continue }
            slot.lock()
            if slot.descriptor == fd {
                if !slot.isGone { return slot }
                slot.release()  // its socket was closed: another slot may watch this number's
            }
            slot.unlock()
        }
        return nil
    }

    /// After a connect of `fd` to `address` (AF_UNIX) succeeded: watches it if its peer is
    /// the system bus. Returns 0, or the errno the connect fails with when no slot is free
    /// (the socket is shut first: an unwatched stream must not carry calls).
    static func connected(_ fd: Int32) -> Int32 {
        guard isSystemBus(peerOf: fd), case .success(let cookie) = SocketTags.cookie(of: fd) else { return 0 }
        watched(fd)?.unlock()  // lets go of a slot left by a closed socket of the same number
        if let slot = take(fd, cookie: cookie) {
            slot.unlock()
            return 0
        }
        _ = Sys.call(Int(LNP_SYS_SHUTDOWN), Int(fd), Int(LNP_SHUT_RDWR))
        return Int32(LNP_ENOBUFS)
    }

    /// libdbus decides the calls on `fd` itself: its stream passes from now on.
    static func claim(_ fd: Int32) {
        guard !isIdle, let slot = watched(fd) else { return }
        var stream = slot.stream
        stream.phase = .library
        slot.stream = stream
        slot.unlock()
    }

    /// The paths a system bus listens on (the D-Bus specification's, and Debian's /run): the
    /// peer's address as the bus bound it, whatever path or link led there. getpeername, not
    /// SO_PEERNAME (`SocketPeer`), which wants room for no more than the address it holds.
    private static func isSystemBus(peerOf fd: Int32) -> Bool {
        var address = InlineArray<112, UInt8>(repeating: 0)  // a sockaddr_un
        var length: UInt32 = 110
        let result = withUnsafeMutableBytes(of: &address) { raw in
            withUnsafeMutablePointer(to: &length) {
                Sys.call(Int(LNP_SYS_GETPEERNAME), Int(fd), Int(bitPattern: raw.baseAddress), Int(bitPattern: $0))
            }
        }
        guard case .success = result, length > 2, length <= 110 else { return false }
        return withUnsafeBytes(of: &address) { raw in
            guard raw.loadUnaligned(as: UInt16.self) == UInt16(LNP_AF_UNIX) else { return false }
            var end = 2
            while end < Int(length) && raw[end] != 0 { end += 1 }
            let path = UnsafeBufferPointer(start: raw.baseAddress!.assumingMemoryBound(to: UInt8.self) + 2, count: end - 2)
            return Bytes.equal(path, "/run/dbus/system_bus_socket") || Bytes.equal(path, "/var/run/dbus/system_bus_socket")
        }
    }

    /// A slot for `fd`, locked: one whose socket is gone — a free one first, else one whose
    /// descriptor was closed (its number's socket is another now).
    private static func take(_ fd: Int32, cookie: UInt64) -> BusStreamSlot? {
        for pass in 0..<2 {
            let freeOnly = pass == 0
            for index in 0..<slots {
                let slot = BusStreamSlot(index)
                if freeOnly && slot.descriptor != nil { continue }
                slot.lock()
                if slot.isGone {
                    slot.watch(fd, cookie: cookie)
                    return slot
                }
                slot.unlock()
            }
        }
        return nil
    }

    // MARK: - Writing

    /// The most iovecs held at once of one write (empty ones are skipped); a write with more
    /// is taken in parts, as the kernel may take it.
    static let piecesRead = 16
    /// The kernel's limit on a call's iovecs (UIO_MAXIOV).
    static let piecesAllowed = 1024

    /// Writes the program's bytes — `pieces`, `count` iovecs in its memory, and the control
    /// messages of `message` — to the watched `fd` through the gate (`slot`, locked: unlocked
    /// here). Returns what the call returns: the count of the program's bytes taken, or -1
    /// with errno set. `tooMany`: the errno for more iovecs than the kernel takes (EINVAL,
    /// sendmsg's EMSGSIZE).
    static func write(
        _ slot: BusStreamSlot, _ fd: Int32, pieces: UnsafeRawPointer?, count: Int, message: UnsafeMutablePointer<msghdr>?,
        flags: Int32, tooMany: Int32 = Int32(LNP_EINVAL)
    ) -> Int {
        defer { slot.unlock() }
        guard count >= 0, count <= piecesAllowed else { return lnp_fail(count < 0 ? Int32(LNP_EINVAL) : tooMany) }
        var program = InlineArray<16, iovec>(repeating: iovec(iov_base: nil, iov_len: 0))
        var held = 0
        var total = 0
        let stride = MemoryLayout<iovec>.stride
        // The first `piecesRead` pieces that hold bytes, read from the program 16 at a time.
        var index = 0
        while index < count && held < piecesRead {
            var batch = InlineArray<16, iovec>(repeating: iovec(iov_base: nil, iov_len: 0))
            let batchCount = min(count - index, 16)
            let read = withUnsafeMutableBytes(of: &batch) { raw in
                ProgramBytes.read(from: pieces.map { $0 + index * stride }, count: batchCount * stride, into: raw, process: slot.holder)
            }
            guard case .success(let length) = read, length == batchCount * stride else { return lnp_fail(Int32(LNP_EFAULT)) }
            for piece in 0..<batchCount where held < piecesRead {
                // A length above SSIZE_MAX the kernel refuses.
                guard batch[piece].iov_len >= 0 else { return lnp_fail(Int32(LNP_EINVAL)) }
                guard batch[piece].iov_len > 0 else { continue }
                program[held] = batch[piece]
                held += 1
                total = min(total &+ batch[piece].iov_len, Int.max / 2)
            }
            index += batchCount
        }
        var writer = BusStreamWriter(slot: slot, fd: fd, flags: flags, message: message)
        return withUnsafeBytes(of: &program) { raw in
            writer.write(pieces: UnsafeBufferPointer(start: raw.baseAddress!.assumingMemoryBound(to: iovec.self), count: held),
                         total: total)
        }
    }

    /// The same for one buffer (write, send), whose length the caller has checked.
    static func write(_ slot: BusStreamSlot, _ fd: Int32, _ buffer: UnsafeRawPointer?, _ length: Int, flags: Int32) -> Int {
        defer { slot.unlock() }
        var piece = iovec(iov_base: UnsafeMutableRawPointer(mutating: buffer), iov_len: length)
        var writer = BusStreamWriter(slot: slot, fd: fd, flags: flags, message: nil)
        return withUnsafePointer(to: &piece) { writer.write(pieces: UnsafeBufferPointer(start: $0, count: 1), total: length) }
    }
}

/// One write to a watched stream, under its slot's lock: the steps of `BusStream` carried out
/// on a copy of the program's bytes (the slot's `scratch`, held bytes first).
struct BusStreamWriter {
    let slot: BusStreamSlot
    let fd: Int32
    let flags: Int32
    /// The program's message, whose control messages (descriptors, credentials) go with the
    /// first of its bytes that are sent.
    var message: UnsafeMutablePointer<msghdr>?

    init(slot: BusStreamSlot, fd: Int32, flags: Int32, message: UnsafeMutablePointer<msghdr>?) {
        self.slot = slot
        self.fd = fd
        self.flags = flags
        self.message = message
    }

    /// The program's call: what lnp owes the stream goes first, then the steps.
    mutating func write(pieces: UnsafeBufferPointer<iovec>, total: Int) -> Int {
        if let failure = flushOwed() { return failure }
        if total == 0 { return send(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return steps(pieces: pieces, total: total)
    }

    /// Whether the program's call waits for room on the socket (no MSG_DONTWAIT, not O_NONBLOCK).
    private var waitsForRoom: Bool {
        guard flags & Int32(LNP_MSG_DONTWAIT) == 0, case .success(let status) = Sys.call(Int(LNP_SYS_FCNTL), Int(fd), Int(LNP_F_GETFL))
        else { return false }
        return status & Int(LNP_O_NONBLOCK) == 0
    }

    private mutating func steps(pieces: UnsafeBufferPointer<iovec>, total: Int) -> Int {
        var taken = 0  // the program's bytes taken so far
        let scratch = slot.scratch
        while taken < total {
            if let failure = flushOwed() { return taken > 0 ? taken : failure }
            let held = slot.held
            slot.copyHeld(into: scratch)
            guard let gathered = ProgramBytes.gather(
                pieces, skipping: taken, into: UnsafeMutableRawBufferPointer(rebasing: scratch[held...]), process: slot.holder),
                gathered > 0
            else { return taken > 0 ? taken : lnp_fail(Int32(LNP_EFAULT)) }
            let bytes = UnsafeRawBufferPointer(rebasing: scratch[0..<(held + gathered)])
            var planned = slot.stream
            var step = planned.scan(bytes, limit: bytes.count)
            var decided: (BusMessage, lnp_bonjour_outcome)? = nil
            switch step {
            case .decide, .refuse:
                // Without waiting, decided at the start of a call alone: a stand-in that cannot go
                // yet then fails the call (EAGAIN), and the program's retry sends it and drops
                // the refused bytes — it never waits on a reply to bytes it was told went. A
                // blocking call goes on: the stand-in's send waits for room.
                if taken > 0 && !waitsForRoom { return taken }
                if case .decide = step, let (call, method) = BusStream.gatedCall(bytes) {
                    decided = (call, BusCallGate.decide(method, call: call, in: bytes))
                } else if let call = BusMessage.fixedHeader(bytes) {
                    decided = (call, LNP_BONJOUR_DENIED)
                }
            default: break
            }
            if let (call, outcome) = decided {
                refuseOrPass(call, outcome: outcome)
                if let failure = flushOwed() {
                    // The stand-in took the held bytes' place: what the retry brings is the rest.
                    var stream = slot.stream
                    if stream.swallowing > 0 { stream.swallowing = max(stream.swallowing - held, 0) }
                    slot.stream = stream
                    return failure
                }
                planned = slot.stream
                step = planned.scan(bytes, limit: bytes.count)
            }
            switch step {
            case .send(let count):
                let sent = send(UnsafeRawBufferPointer(rebasing: bytes[0..<count]))
                if sent < 0 { return taken > 0 ? taken : sent }  // held bytes stay held
                // Held bytes that did not go are owed: decided, and the program was told.
                let consumed = max(sent, held)
                if sent == count {
                    slot.stream = planned  // as planned: the state after all of it
                } else {
                    var stream = slot.stream
                    _ = stream.scan(bytes, limit: consumed)
                    slot.stream = stream
                }
                slot.owe(UnsafeRawBufferPointer(rebasing: bytes[sent..<consumed]))
                taken += consumed - held
                if sent < count { return taken > 0 ? taken : lnp_fail(Int32(LNP_EAGAIN)) }
            case .drop(let count):
                slot.stream = planned
                slot.dropHeld()
                taken += count - held
            case .hold:
                // Control messages with them cannot wait: their descriptors are the program's to
                // close once the call returns (README: a limit).
                slot.hold(bytes)
                return taken + gathered
            case .unreadable, .decide, .refuse:  // decided above; never twice
                var stream = slot.stream
                stream.phase = .broken
                slot.stream = stream
                _ = Sys.call(Int(LNP_SYS_SHUTDOWN), Int(fd), Int(LNP_SHUT_RDWR))
                return taken > 0 ? taken : lnp_fail(Int32(LNP_ECONNRESET))
            }
        }
        return taken
    }

    /// The call at the stream's start goes (`passing`), or is dropped (`swallowing`) with a
    /// stand-in owed in its place when it wants a reply.
    private func refuseOrPass(_ call: BusMessage, outcome: lnp_bonjour_outcome) {
        var stream = slot.stream
        if outcome == LNP_BONJOUR_ALLOWED {
            stream.passing = call.length
        } else {
            stream.swallowing = call.length
            if call.flags & BusMessage.noReplyExpected == 0 { slot.owe(standInFor: call, outcome: outcome) }
        }
        slot.stream = stream
    }

    /// Sends what lnp owes the stream (a stand-in, held bytes that did not go) as the program's
    /// call would — waiting for room on a blocking socket, not with MSG_DONTWAIT or on a
    /// non-blocking one; nil once all went, else -1 with errno set (EAGAIN: try again).
    private func flushOwed() -> Int? {
        while slot.owed > 0 {
            let owed = slot.owedBytes
            let result = Sys.call(
                Int(LNP_SYS_SENDTO), Int(fd), Int(bitPattern: owed.baseAddress), owed.count,
                Int(Int32(LNP_MSG_NOSIGNAL) | flags & Int32(LNP_MSG_DONTWAIT)), 0, 0)
            switch result {
            case .success(let sent): slot.paid(sent)
            case .failure(let error) where error.rawValue == Int32(LNP_EINTR): continue
            case .failure(let error): return lnp_fail(error.rawValue)
            }
        }
        return nil
    }

    /// sendmsg of `bytes`, with the program's control messages the first time.
    private mutating func send(_ bytes: UnsafeRawBufferPointer) -> Int {
        var piece = iovec(iov_base: UnsafeMutableRawPointer(mutating: bytes.baseAddress), iov_len: bytes.count)
        var header = msghdr()
        if let message, message.pointee.msg_controllen > 0 {
            header.msg_control = message.pointee.msg_control
            header.msg_controllen = message.pointee.msg_controllen
            self.message = nil
        }
        return withUnsafeMutablePointer(to: &piece) { piece in
            header.msg_iov = piece
            header.msg_iovlen = 1
            return withUnsafeMutablePointer(to: &header) { lnp_call_sendmsg(fd, $0, flags) }
        }
    }
}

/// The program's bytes, read with process_vm_readv on itself: a bad pointer is EFAULT, as the
/// kernel would answer the write, never a fault in the hook (where process_vm_readv is
/// refused, through /proc/self/mem).
enum ProgramBytes {
    /// `process`: this process's id (process_vm_readv names it; the slot's lock holds it).
    static func read(
        from address: UnsafeRawPointer?, count: Int, into buffer: UnsafeMutableRawBufferPointer, process: Int32
    ) -> Result<Int, Errno> {
        guard count > 0 else { return .success(0) }
        let length = min(count, buffer.count)
        var local = iovec(iov_base: buffer.baseAddress, iov_len: length)
        var remote = iovec(iov_base: UnsafeMutableRawPointer(mutating: address), iov_len: length)
        let result = withUnsafeMutablePointer(to: &local) { local in
            withUnsafeMutablePointer(to: &remote) { remote in
                Sys.call(Int(LNP_SYS_PROCESS_VM_READV), Int(process), Int(bitPattern: local), 1, Int(bitPattern: remote), 1, 0)
            }
        }
        // Refused by a seccomp filter (systemd's @system-service leaves it out) or a kernel
        // without it: read through /proc/self/mem, which answers an unmapped page with EIO
        // where a read in place would fault.
        guard case .failure(let error) = result, error.rawValue == Int32(LNP_ENOSYS) || error.rawValue == Int32(LNP_EPERM)
        else { return result }
        let path: StaticString = "/proc/self/mem"
        guard case .success(let memory) = Sys.open(path.utf8Start, flags: Int32(LNP_O_RDONLY)) else {
            return .failure(Errno(Int32(LNP_EFAULT)))
        }
        defer { Sys.close(memory) }
        let read = Sys.call(Int(LNP_SYS_PREAD64), Int(memory), Int(bitPattern: buffer.baseAddress), length, Int(bitPattern: address))
        guard case .success(let count) = read else { return .failure(Errno(Int32(LNP_EFAULT))) }
        return .success(count)
    }

    /// Copies the program's bytes after the first `skipped` of `pieces` into `buffer`, as many
    /// as fit; returns how many, or nil at a bad pointer (the kernel fails a write that meets
    /// one with EFAULT, taking none of the bytes it could not queue whole).
    static func gather(
        _ pieces: UnsafeBufferPointer<iovec>, skipping skipped: Int, into buffer: UnsafeMutableRawBufferPointer, process: Int32
    ) -> Int? {
        var skip = skipped
        var filled = 0
        for piece in pieces where filled < buffer.count {
            if skip >= piece.iov_len {
                skip -= piece.iov_len
                continue
            }
            let start = piece.iov_base.map { UnsafeRawPointer($0) + skip }
            let wanted = min(piece.iov_len - skip, buffer.count - filled)
            skip = 0
            guard case .success(let read) = read(
                from: start, count: wanted, into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]), process: process),
                read == wanted
            else { return nil }
            filled += read
        }
        return filled
    }
}

/// One watched connection in static storage (CShim/sys/storage.c): words — its lock (the pid
/// holding it), the descriptor number plus one, the socket's cookie, the `BusStream`, the
/// counts of held and owed bytes — and room for those bytes. Held bytes are the program's,
/// the start of a message not yet read; owed bytes are decided ones lnp must still send (a
/// stand-in, or held bytes that did not all go). There are never both. Then as much room
/// again for the copy of the program's bytes a write reads.
struct BusStreamSlot {
    let words: SharedWords
    let bytes: UnsafeMutablePointer<UInt8>

    private enum Word: Int {
        case lock, descriptor, cookie, state, passing, swallowing, held, owed
    }

    init(_ index: Int) {
        words = SharedWords(lnp_storage_bus_streams() + index * Int(LNP_BUS_STREAM_WORDS))
        bytes = lnp_storage_bus_stream_bytes() + index * 2 * BusStream.readLimit
    }

    /// Room for the copy of what the program writes (used under the lock).
    var scratch: UnsafeMutableRawBufferPointer {
        UnsafeMutableRawBufferPointer(start: bytes + BusStream.readLimit, count: BusStream.readLimit)
    }

    var descriptor: Int32? {
        let word = words.load(Word.descriptor.rawValue)
        return word == 0 ? nil : Int32(truncatingIfNeeded: word &- 1)
    }

    var cookie: UInt64 { words.loadRelaxed(Word.cookie.rawValue) }

    /// Free, or its descriptor no longer the socket it watched.
    var isGone: Bool {
        guard let descriptor else { return true }
        guard case .success(let current) = SocketTags.cookie(of: descriptor) else { return true }
        return current != cookie
    }

    /// Taken by the process's threads in turn. The storage is the process's own, so a lock
    /// held by another pid is a forked child's copy of its parent's, whose holder is not in
    /// the child: taken over.
    func lock() {
        let me = UInt64(UInt32(bitPattern: Sys.getpid()))
        while true {
            let holder = words.load(Word.lock.rawValue)
            if holder != me && words.compareExchange(Word.lock.rawValue, expected: holder, desired: me) { return }
            _ = Sys.call(Int(LNP_SYS_SCHED_YIELD))
        }
    }

    func unlock() { words.store(Word.lock.rawValue, 0) }

    /// The process holding the lock: the caller, while it holds it.
    var holder: Int32 { Int32(truncatingIfNeeded: words.load(Word.lock.rawValue)) }

    /// Starts watching `fd` here (locked).
    func watch(_ fd: Int32, cookie: UInt64) {
        let wasFree = descriptor == nil
        words.store(Word.descriptor.rawValue, UInt64(UInt32(bitPattern: fd)) + 1)
        words.store(Word.cookie.rawValue, cookie)
        stream = BusStream()
        words.store(Word.held.rawValue, 0)
        words.store(Word.owed.rawValue, 0)
        if wasFree { _ = lnp_fetch_add(lnp_storage_bus_stream_count(), 1) }
    }

    /// Stops watching (locked).
    func release() {
        guard descriptor != nil else { return }
        words.store(Word.descriptor.rawValue, 0)
        _ = lnp_fetch_add(lnp_storage_bus_stream_count(), UInt64.max)
    }

    var stream: BusStream {
        get {
            let word = words.loadRelaxed(Word.state.rawValue)
            var stream = BusStream()
            stream.phase = BusStream.Phase(rawValue: UInt8(truncatingIfNeeded: word)) ?? .broken
            stream.started = word >> 8 & 1 != 0
            stream.matched = UInt8(truncatingIfNeeded: word >> 16)
            stream.passing = Int(truncatingIfNeeded: words.loadRelaxed(Word.passing.rawValue))
            stream.swallowing = Int(truncatingIfNeeded: words.loadRelaxed(Word.swallowing.rawValue))
            return stream
        }
        nonmutating set {
            words.storeRelaxed(
                Word.state.rawValue,
                UInt64(newValue.phase.rawValue) | (newValue.started ? 1 << 8 : 0) | UInt64(newValue.matched) << 16)
            words.storeRelaxed(Word.passing.rawValue, UInt64(newValue.passing))
            words.storeRelaxed(Word.swallowing.rawValue, UInt64(newValue.swallowing))
        }
    }

    var held: Int { min(Int(truncatingIfNeeded: words.loadRelaxed(Word.held.rawValue)), BusStream.readLimit) }
    var owed: Int { min(Int(truncatingIfNeeded: words.loadRelaxed(Word.owed.rawValue)), BusStream.readLimit) }
    var owedBytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: bytes, count: owed) }

    func copyHeld(into buffer: UnsafeMutableRawBufferPointer) {
        for index in 0..<held { buffer[index] = bytes[index] }
    }

    func dropHeld() { words.storeRelaxed(Word.held.rawValue, 0) }

    /// Keeps `kept` (at most `readLimit` bytes) as the held start of a message.
    func hold(_ kept: UnsafeRawBufferPointer) {
        let count = min(kept.count, BusStream.readLimit)
        for index in 0..<count { bytes[index] = kept[index] }
        words.storeRelaxed(Word.held.rawValue, UInt64(count))
    }

    /// Owes the stream `owed` (decided bytes still to send), in place of anything held.
    func owe(_ owed: UnsafeRawBufferPointer) {
        let count = min(owed.count, BusStream.readLimit)
        for index in 0..<count { bytes[index] = owed[index] }
        words.storeRelaxed(Word.held.rawValue, 0)
        words.storeRelaxed(Word.owed.rawValue, UInt64(count))
    }

    /// Owes the stream the stand-in for a refused call.
    func owe(standInFor call: BusMessage, outcome: lnp_bonjour_outcome) {
        let raw = UnsafeMutableRawBufferPointer(start: bytes, count: BusStream.readLimit)
        var writer = ByteWriter(raw)
        let written = outcome == LNP_BONJOUR_UNDECLARED
            ? BusStandIn.write(for: call, destination: "lnp.UndeclaredBonjourServiceType", to: &writer)
            : BusStandIn.write(for: call, destination: "lnp.LocalNetworkAccessDenied", to: &writer)
        words.storeRelaxed(Word.held.rawValue, 0)
        words.storeRelaxed(Word.owed.rawValue, written ? UInt64(writer.count) : 0)
    }

    /// `count` of the owed bytes went.
    func paid(_ count: Int) {
        let remaining = max(owed - count, 0)
        for index in 0..<remaining { bytes[index] = bytes[index + count] }
        words.storeRelaxed(Word.owed.rawValue, UInt64(remaining))
    }
}

import LNPSys

#if canImport(Glibc)
import Glibc
#endif

/// lnp-run's own copy of a buffer a notified call points to: what is decided is what is
/// sent, whatever the program's other threads write meanwhile.
final class OwnedBytes: @unchecked Sendable {
    let base: UnsafeMutableRawPointer
    let count: Int

    /// Filled by the reader (`NotifiedProcess.read`), never read before.
    init(count: Int) {
        self.count = count
        base = .allocate(byteCount: max(count, 1), alignment: 16)
    }

    deinit { base.deallocate() }
}

/// The limits the kernel applies to what a call points to, applied to lnp-run's copies.
enum CopyLimits {
    /// sizeof(struct sockaddr_storage): longer socket addresses are refused (EINVAL), a
    /// longer `msg_namelen` is cut to it.
    static let address = 128
    /// UIO_MAXIOV: more pieces are refused (EMSGSIZE); sendmmsg sends at most this many.
    static let pieces = 1024
    /// Control messages beyond this fail with ENOBUFS (the kernel's optmem limit, 128 KiB).
    static let control = 131_072
    /// The most data one call copies: a stream send of more sends this much (a partial
    /// send, which callers of send loop on); no datagram is this large.
    static let data = 16 << 20
    /// setsockopt's value: as much as the preload copies (an IPv6 routing header of 31
    /// segments); a longer source route is refused (EINVAL), other options are read no further.
    static let option = Int(LNP_OPTION_CAPACITY)
}

/// A socket address a notified call points to, read as the kernel reads one for connect,
/// bind and sendto.
struct NotifiedAddress {
    let bytes: OwnedBytes
    var length: UInt32 { UInt32(bytes.count) }

    /// EINVAL for a length the kernel refuses, EFAULT for memory it cannot read.
    static func read(_ process: NotifiedProcess, at address: UInt64, length: UInt64) -> Result<NotifiedAddress?, CallFailure> {
        let count = Int32(truncatingIfNeeded: length)
        guard count >= 0, count <= Int32(CopyLimits.address) else { return .failure(CallFailure(errno: EINVAL)) }
        if count == 0 { return .success(nil) }
        guard let bytes = process.read(address, count: Int(count)) else { return .failure(CallFailure(errno: EFAULT)) }
        return .success(NotifiedAddress(bytes: bytes))
    }

    /// The address, and `count` bytes of data at `data`, in one read (a sendto's).
    static func read(
        _ process: NotifiedProcess, at address: UInt64, length: UInt64, data: UInt64, count: Int
    ) -> Result<(NotifiedAddress?, OwnedBytes), CallFailure> {
        let addressCount = Int32(truncatingIfNeeded: length)
        guard addressCount >= 0, addressCount <= Int32(CopyLimits.address) else { return .failure(CallFailure(errno: EINVAL)) }
        guard let (name, bytes) = process.read(address, count: Int(addressCount), data, count: count) else {
            return .failure(CallFailure(errno: EFAULT))
        }
        return .success((addressCount == 0 ? nil : NotifiedAddress(bytes: name), bytes))
    }
}

/// A `struct msghdr` a notified call points to, and all it points to, copied: the name, the
/// data gathered into one buffer, the control messages; `header` points to those copies.
final class NotifiedMessage: @unchecked Sendable {
    let name: OwnedBytes?
    let data: OwnedBytes
    let control: OwnedBytes?
    let header: UnsafeMutablePointer<msghdr>
    private let piece: UnsafeMutablePointer<iovec>

    private init(name: OwnedBytes?, data: OwnedBytes, control: OwnedBytes?) {
        self.name = name
        self.data = data
        self.control = control
        piece = .allocate(capacity: 1)
        piece.initialize(to: iovec(iov_base: data.base, iov_len: data.count))
        header = .allocate(capacity: 1)
        var message = msghdr()
        message.msg_name = name?.base
        message.msg_namelen = socklen_t(name?.count ?? 0)
        message.msg_iov = piece
        message.msg_iovlen = 1
        message.msg_control = control?.base
        message.msg_controllen = control?.count ?? 0
        header.initialize(to: message)
    }

    deinit {
        header.deallocate()
        piece.deallocate()
    }

    /// Leaves out the first `count` bytes of the data (sent already: `ResumedSends`).
    func skip(_ count: Int) {
        guard count > 0 else { return }
        piece.pointee = iovec(iov_base: data.base + count, iov_len: data.count - count)
    }

    /// Reads the message at `address`, with the kernel's errors for what it would refuse.
    static func read(_ process: NotifiedProcess, at address: UInt64) -> Result<NotifiedMessage, CallFailure> {
        guard let message = process.read(address, as: RawMessage.self) else { return .failure(CallFailure(errno: EFAULT)) }
        return read(process, message)
    }

    static func read(_ process: NotifiedProcess, _ message: RawMessage) -> Result<NotifiedMessage, CallFailure> {
        var name: OwnedBytes? = nil
        // No name: its length is not read (the kernel takes it as 0).
        let nameLength = message.name == 0 ? 0 : Int32(bitPattern: message.nameLength)
        guard nameLength >= 0 else { return .failure(CallFailure(errno: EINVAL)) }
        if nameLength > 0 {
            name = process.read(message.name, count: min(Int(nameLength), CopyLimits.address))
            guard name != nil else { return .failure(CallFailure(errno: EFAULT)) }
        }
        guard message.pieceCount <= UInt64(CopyLimits.pieces) else { return .failure(CallFailure(errno: EMSGSIZE)) }
        let data: OwnedBytes
        switch gather(process, message) {
        case .success(let gathered): data = gathered
        case .failure(let failure): return .failure(failure)
        }
        var control: OwnedBytes? = nil
        if message.controlLength > 0 {
            guard message.controlLength <= UInt64(CopyLimits.control) else { return .failure(CallFailure(errno: ENOBUFS)) }
            control = process.read(message.control, count: Int(message.controlLength))
            guard control != nil else { return .failure(CallFailure(errno: EFAULT)) }
        }
        return .success(NotifiedMessage(name: name, data: data, control: control))
    }

    /// The message's pieces, gathered into one buffer of at most `CopyLimits.data` bytes.
    private static func gather(_ process: NotifiedProcess, _ message: RawMessage) -> Result<OwnedBytes, CallFailure> {
        let count = Int(message.pieceCount)
        guard count > 0 else { return .success(OwnedBytes(count: 0)) }
        guard let pieces = process.read(message.pieces, count: count * MemoryLayout<iovec>.size) else {
            return .failure(CallFailure(errno: EFAULT))
        }
        let vector = UnsafeRawBufferPointer(start: pieces.base, count: pieces.count)
        func piece(_ index: Int) -> (base: UInt64, length: UInt64) {
            (vector.loadUnaligned(fromByteOffset: index * 16, as: UInt64.self),
             vector.loadUnaligned(fromByteOffset: index * 16 + 8, as: UInt64.self))
        }
        var total = 0
        for index in 0..<count {
            guard piece(index).length <= UInt64(Int.max) else { return .failure(CallFailure(errno: EINVAL)) }
            total = min(total + Int(piece(index).length), CopyLimits.data)
        }
        let data = OwnedBytes(count: total)
        var filled = 0
        for index in 0..<count where filled < total {
            let wanted = min(Int(piece(index).length), total - filled)
            guard process.read(piece(index).base, count: wanted, into: data.base + filled) else {
                return .failure(CallFailure(errno: EFAULT))
            }
            filled += wanted
        }
        return .success(data)
    }
}

/// `struct msghdr` as the program's memory holds it (x86_64 and aarch64 layout).
struct RawMessage {
    var name: UInt64
    var nameLength: UInt32
    var padding: UInt32
    var pieces: UInt64
    var pieceCount: UInt64
    var control: UInt64
    var controlLength: UInt64
    var flags: Int32
    var padding2: UInt32
}

/// `struct mmsghdr`: a message and, after it, where the kernel writes how much it sent.
enum RawBatchEntry {
    static let size = 64
    static let sentLengthOffset = 56
}

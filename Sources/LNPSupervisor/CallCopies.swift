#if canImport(Glibc)
import Glibc
#endif

/// lnp-run's own copy of a buffer a notified call points to: what is decided is what is
/// sent, whatever the program's other threads write meanwhile.
final class OwnedBytes: @unchecked Sendable {
    let base: UnsafeMutableRawPointer
    let count: Int

    init(count: Int) {
        self.count = count
        base = .allocate(byteCount: max(count, 1), alignment: 16)
        base.initializeMemory(as: UInt8.self, repeating: 0, count: max(count, 1))
    }

    convenience init(_ bytes: [UInt8]) {
        self.init(count: bytes.count)
        bytes.withUnsafeBytes { base.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
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
    /// setsockopt's value: the largest option notified (group_source_req) is 264 bytes.
    static let option = 512
}

/// A socket address read from the program, as the kernel reads one for connect, bind and
/// sendto.
struct AddressCopy {
    let bytes: OwnedBytes
    var length: UInt32 { UInt32(bytes.count) }

    /// EINVAL for a length the kernel refuses, EFAULT for memory it cannot read.
    static func read(_ process: NotifiedProcess, at address: UInt64, length: UInt64) -> Result<AddressCopy?, CallFailure> {
        let count = Int32(truncatingIfNeeded: length)
        guard count >= 0, count <= Int32(CopyLimits.address) else { return .failure(CallFailure(errno: EINVAL)) }
        if count == 0 { return .success(nil) }
        guard let bytes = process.read(address, count: Int(count)) else { return .failure(CallFailure(errno: EFAULT)) }
        return .success(AddressCopy(bytes: OwnedBytes(bytes)))
    }
}

/// A `struct msghdr` and all it points to, copied: the name, the data gathered into one
/// buffer, the control messages; `header` points to those copies.
final class MessageCopy: @unchecked Sendable {
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

    /// Reads the message at `address`, with the kernel's errors for what it would refuse.
    static func read(_ process: NotifiedProcess, at address: UInt64) -> Result<MessageCopy, CallFailure> {
        guard let raw = process.read(address, count: MemoryLayout<msghdr>.size) else { return .failure(CallFailure(errno: EFAULT)) }
        let message = raw.withUnsafeBytes { $0.loadUnaligned(as: RawMessage.self) }
        return read(process, message)
    }

    static func read(_ process: NotifiedProcess, _ message: RawMessage) -> Result<MessageCopy, CallFailure> {
        var name: OwnedBytes? = nil
        // No name: its length is not read (the kernel takes it as 0).
        let nameLength = message.name == 0 ? 0 : Int32(bitPattern: message.nameLength)
        guard nameLength >= 0 else { return .failure(CallFailure(errno: EINVAL)) }
        if message.name != 0 && nameLength > 0 {
            guard let bytes = process.read(message.name, count: min(Int(nameLength), CopyLimits.address)) else {
                return .failure(CallFailure(errno: EFAULT))
            }
            name = OwnedBytes(bytes)
        }
        guard message.pieceCount <= UInt64(CopyLimits.pieces) else { return .failure(CallFailure(errno: EMSGSIZE)) }
        var data: [UInt8] = []
        if message.pieceCount > 0 {
            guard let pieces = process.read(message.pieces, count: Int(message.pieceCount) * 16) else {
                return .failure(CallFailure(errno: EFAULT))
            }
            for index in 0..<Int(message.pieceCount) {
                let base = pieces.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: index * 16, as: UInt64.self) }
                let length = pieces.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: index * 16 + 8, as: UInt64.self) }
                guard length <= UInt64(Int.max) else { return .failure(CallFailure(errno: EINVAL)) }
                let wanted = min(Int(length), CopyLimits.data - data.count)
                if wanted == 0 { continue }
                guard let bytes = process.read(base, count: wanted) else { return .failure(CallFailure(errno: EFAULT)) }
                data += bytes
            }
        }
        var control: OwnedBytes? = nil
        if message.controlLength > 0 {
            guard message.controlLength <= UInt64(CopyLimits.control) else { return .failure(CallFailure(errno: ENOBUFS)) }
            guard let bytes = process.read(message.control, count: Int(message.controlLength)) else {
                return .failure(CallFailure(errno: EFAULT))
            }
            control = OwnedBytes(bytes)
        }
        return .success(MessageCopy(name: name, data: OwnedBytes(data), control: control))
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

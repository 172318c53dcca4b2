import LNPSys

/// An errno value from a failed system call.
public struct Errno: Error, Equatable, BitwiseCopyable {
    public var rawValue: Int32
    public init(_ rawValue: Int32) { self.rawValue = rawValue }

    /// Its name for the errors lnp's own calls meet (`EMFILE`), else `errno N`.
    func write(to writer: inout ByteWriter) {
        switch rawValue {
        case Int32(LNP_EMFILE): writer.append("EMFILE")
        case Int32(LNP_ENFILE): writer.append("ENFILE")
        case Int32(LNP_ENOMEM): writer.append("ENOMEM")
        case Int32(LNP_ENOBUFS): writer.append("ENOBUFS")
        case Int32(LNP_EACCES): writer.append("EACCES")
        case Int32(LNP_EPERM): writer.append("EPERM")
        case Int32(LNP_EAFNOSUPPORT): writer.append("EAFNOSUPPORT")
        case Int32(LNP_EIO): writer.append("EIO")
        default:
            writer.append("errno ")
            writer.appendDecimal(Int64(rawValue))
        }
    }
}

/// Typed wrappers over the raw system calls in CShim/sys. They never pass through a hook,
/// never touch the program's `errno`, and never allocate.
enum Sys {
    @inline(__always)
    static func call(_ number: Int, _ a: Int = 0, _ b: Int = 0, _ c: Int = 0, _ d: Int = 0, _ e: Int = 0, _ f: Int = 0)
        -> Result<Int, Errno>
    {
        let result = lnp_syscall6(number, a, b, c, d, e, f)
        if result < 0 && result > -4096 { return .failure(Errno(Int32(truncatingIfNeeded: -result))) }
        return .success(result)
    }

    /// Opens a descriptor with `open`; in a process at its descriptor limit, with the limit
    /// raised by one for the moment of the call (the core's descriptors live for one call).
    static func openingPastTheLimit(_ open: () -> Result<Int32, Errno>) -> Result<Int32, Errno> {
        let result = open()
        guard case .failure(let error) = result, error.rawValue == Int32(LNP_EMFILE) else { return result }
        let previous = lnp_sys_raise_descriptor_limit()
        guard previous >= 0 else { return result }
        defer { lnp_sys_restore_descriptor_limit(previous) }
        return open()
    }

    /// Calls `body` again while it fails with EINTR: a signal handler that ran mid-call.
    static func retryingInterrupted(_ body: () -> Result<Int, Errno>) -> Result<Int, Errno> {
        while true {
            let result = body()
            if case .failure(let error) = result, error.rawValue == Int32(LNP_EINTR) { continue }
            return result
        }
    }

    static func getpid() -> Int32 {
        Int32(truncatingIfNeeded: lnp_syscall6(Int(LNP_SYS_GETPID), 0, 0, 0, 0, 0, 0))
    }

    static func close(_ fd: Int32) {
        _ = lnp_syscall6(Int(LNP_SYS_CLOSE), Int(fd), 0, 0, 0, 0, 0)
    }

    /// Opens a path given as NUL-terminated bytes; the descriptor is close-on-exec.
    static func open(_ path: UnsafePointer<UInt8>, flags: Int32, mode: Int32 = 0) -> Result<Int32, Errno> {
        call(Int(LNP_SYS_OPENAT), Int(LNP_AT_FDCWD), Int(bitPattern: path), Int(flags | Int32(LNP_O_CLOEXEC)), Int(mode))
            .map { Int32(truncatingIfNeeded: $0) }
    }

    static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> Result<Int, Errno> {
        call(Int(LNP_SYS_READ), Int(fd), Int(bitPattern: buffer.baseAddress), buffer.count)
    }

    static func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Result<Int, Errno> {
        call(Int(LNP_SYS_WRITE), Int(fd), Int(bitPattern: bytes.baseAddress), bytes.count)
    }

    static func readlink(_ path: StaticString, into buffer: UnsafeMutableRawBufferPointer) -> Result<Int, Errno> {
        call(Int(LNP_SYS_READLINKAT), Int(LNP_AT_FDCWD), Int(bitPattern: path.utf8Start), Int(bitPattern: buffer.baseAddress),
             buffer.count)
    }

    /// A socket option of any size, read into `buffer`; its length.
    static func socketOption(_ fd: Int32, level: Int32, _ name: Int32, into buffer: UnsafeMutableRawBufferPointer)
        -> Result<Int, Errno>
    {
        var length = UInt32(buffer.count)
        let result = withUnsafeMutablePointer(to: &length) { lengthPointer in
            call(Int(LNP_SYS_GETSOCKOPT), Int(fd), Int(level), Int(name), Int(bitPattern: buffer.baseAddress),
                 Int(bitPattern: lengthPointer))
        }
        return result.map { _ in Int(length) }
    }

    /// SOL_SOCKET integer options (SO_TYPE, SO_PROTOCOL).
    static func socketOption(_ fd: Int32, _ name: Int32) -> Result<Int32, Errno> {
        socketOption(fd, level: Int32(LNP_SOL_SOCKET), name)
    }

    /// An integer option at any level.
    static func socketOption(_ fd: Int32, level: Int32, _ name: Int32) -> Result<Int32, Errno> {
        var value: Int32 = 0
        var length: UInt32 = 4
        let result = withUnsafeMutablePointer(to: &value) { valuePointer in
            withUnsafeMutablePointer(to: &length) { lengthPointer in
                call(Int(LNP_SYS_GETSOCKOPT), Int(fd), Int(level), Int(name),
                     Int(bitPattern: valuePointer), Int(bitPattern: lengthPointer))
            }
        }
        return result.map { _ in value }
    }
}

import LNPSys

/// A process's parent, as /proc says, read with raw system calls: how a process finds the
/// lnp-run it descends from when its environment no longer says.
public enum ProcessAncestry {
    /// How far up a walk of ancestors goes: as deep as process trees go.
    public static var depth: Int { 4096 }

    /// The parent of `pid` (0: of this process), or nil.
    public static func parent(of pid: Int32) -> Int32? {
        if pid == 0 { return Int32(truncatingIfNeeded: lnp_syscall6(Int(LNP_SYS_GETPPID), 0, 0, 0, 0, 0, 0)) }
        var path = InlineArray<32, UInt8>(repeating: 0)
        var text = InlineArray<512, UInt8>(repeating: 0)
        return withUnsafeMutableBytes(of: &path) { pathBytes -> Int32? in
            var writer = ByteWriter(UnsafeMutableRawBufferPointer(rebasing: pathBytes[0..<31]))
            writer.append("/proc/")
            writer.appendDecimal(Int64(pid))
            writer.append("/stat")
            let file = pathBytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
            guard case .success(let fd) = Sys.openingPastTheLimit({ Sys.open(file, flags: Int32(LNP_O_RDONLY)) }) else { return nil }
            defer { Sys.close(fd) }
            return withUnsafeMutableBytes(of: &text) { raw -> Int32? in
                guard case .success(let count) = Sys.read(fd, into: raw) else { return nil }
                return parentField(UnsafeRawBufferPointer(rebasing: raw[0..<count]))
            }
        }
    }

    /// The fourth field of `pid (comm) state ppid …`; comm may hold spaces and parentheses,
    /// so the last `)` ends it.
    static func parentField(_ stat: UnsafeRawBufferPointer) -> Int32? {
        var end = stat.count
        while end > 0 && stat[end - 1] != UInt8(ascii: ")") { end -= 1 }
        guard end > 0 else { return nil }
        var index = end + 3  // ") S "
        var value: Int32 = 0
        var digits = 0
        while index < stat.count, stat[index] >= UInt8(ascii: "0"), stat[index] <= UInt8(ascii: "9"), digits < 9 {
            value = value * 10 + Int32(stat[index] - UInt8(ascii: "0"))
            index += 1
            digits += 1
        }
        return digits > 0 ? value : nil
    }
}

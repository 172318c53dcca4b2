#if canImport(Glibc)
import Glibc
#endif

/// Strings of bytes as execve takes them: each copied with a NUL after it, the list ended by
/// nil. The bytes are whatever lnp-run was given (a program's arguments and environment need
/// not be UTF-8), so no Swift string comes between.
public enum CStringCopies {
    /// The copies; `release` them.
    public static func of(_ strings: [[UInt8]]) -> [UnsafeMutablePointer<CChar>?] {
        strings.map { bytes -> UnsafeMutablePointer<CChar>? in
            let copy = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
            bytes.withUnsafeBytes { raw in _ = raw.baseAddress.map { memcpy(copy, $0, raw.count) } }
            copy[bytes.count] = 0
            return copy
        } + [nil]
    }

    public static func release(_ copies: [UnsafeMutablePointer<CChar>?]) {
        for copy in copies { copy?.deallocate() }
    }
}

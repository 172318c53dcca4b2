import LNPTools

#if canImport(Glibc)
import Glibc
#endif

/// A directory only this user can enter (mkdtemp makes it 0700), in $XDG_RUNTIME_DIR or /tmp:
/// for the prompt's socket and the summary's records, which no other user may reach.
enum PrivateDirectory {
    static func make(for purpose: String) throws(Failure) -> String {
        var parent = ProgramLocator.environmentValue("XDG_RUNTIME_DIR") ?? "/tmp"
        if !parent.hasPrefix("/") || access(parent, W_OK | X_OK) != 0 { parent = "/tmp" }
        var template = Array((parent + "/lnp-run.XXXXXX").utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            throw Failure("cannot make a directory for \(purpose) in \(parent): \(ErrnoName.description(of: errno))")
        }
        return String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

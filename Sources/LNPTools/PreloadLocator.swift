import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// Finds liblnp.so for lnp-run: beside the lnp-run executable (a build directory), or in
/// ../lib/lnp/ from it (an installation). Never the current directory or LD_LIBRARY_PATH:
/// whoever controls those would choose the code that decides.
public enum PreloadLocator {
    public static let fileName = "liblnp.so"

    public static func locate(executable: String? = currentExecutable()) -> String? {
        guard let executable else { return nil }
        let directory = FilePath(executable).removingLastComponent()
        let candidates = [
            directory.appending(fileName),
            directory.removingLastComponent().appending("lib").appending("lnp").appending(fileName),
        ]
        for candidate in candidates where access(candidate.string, R_OK) == 0 {
            return candidate.lexicallyNormalized().string
        }
        return nil
    }

    /// This process's executable, with symbolic links resolved.
    public static func currentExecutable() -> String? {
        guard let resolved = realpath("/proc/self/exe", nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}

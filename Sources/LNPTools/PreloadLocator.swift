#if canImport(Glibc)
import Glibc
#endif

/// Finds lnp-run's companions — liblnp.so, and lnp-run-arguments (which reads the command
/// lines lnp-run does not) — beside the lnp-run executable (a build directory), or in
/// ../lib/lnp/ from it (an installation). Never the current directory or LD_LIBRARY_PATH:
/// whoever controls those would choose the code that decides.
public enum PreloadLocator {
    public static let fileName = "liblnp.so"
    public static let argumentReaderName = "lnp-run-arguments"

    /// `name` for the executable at `executable`, a resolved path (absolute, without `.`, `..`
    /// or links, as the kernel gives it for this process): the directories are cut off as
    /// text, which costs lnp-run's start a fraction of what FilePath's first use does.
    public static func locate(_ name: String = fileName, beside executable: String? = currentExecutable()) -> String? {
        guard let executable, executable.hasPrefix("/") else { return nil }
        let directory = PathText.directory(of: executable)
        let installed = PathText.directory(of: directory)
        for candidate in [PathText.join(directory, name), PathText.join(installed, "lib/lnp", name)] where access(candidate, R_OK) == 0 {
            return candidate
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

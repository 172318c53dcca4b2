#if canImport(Glibc)
import Glibc
#endif

/// Finds lnp-run's companions — liblnp.so, and lnp-run-arguments (which reads the command
/// lines lnp-run does not) — beside the lnp-run executable (a build directory), in ../lib/lnp/
/// from it (scripts/install), or in ../lib/TRIPLET/lnp/ (the Debian package, which puts them
/// in the multiarch directory: /usr/lib/x86_64-linux-gnu/lnp/). Never the current directory or
/// LD_LIBRARY_PATH: whoever controls those would choose the code that decides.
public enum PreloadLocator {
    public static let fileName = "liblnp.so"
    public static let argumentReaderName = "lnp-run-arguments"

    /// Debian's multiarch triplet for the machine lnp-run is built for (what
    /// `dpkg-architecture -qDEB_HOST_MULTIARCH` says there), or nil for one lnp has no name for.
    public static var multiarchTriplet: String? {
        #if arch(x86_64)
        return "x86_64-linux-gnu"
        #elseif arch(arm64)
        return "aarch64-linux-gnu"
        #elseif arch(riscv64)
        return "riscv64-linux-gnu"
        #elseif arch(powerpc64le)
        return "powerpc64le-linux-gnu"
        #elseif arch(s390x)
        return "s390x-linux-gnu"
        #else
        return nil
        #endif
    }

    /// Where `locate` looks, for messages: "beside lnp-run, in ../lib/lnp/ or in ../lib/x86_64-linux-gnu/lnp/".
    public static var places: String {
        "beside lnp-run, in ../lib/lnp/" + (multiarchTriplet.map { " or in ../lib/\($0)/lnp/" } ?? "")
    }

    /// `name` for the executable at `executable`, a resolved path (absolute, without `.`, `..`
    /// or links, as the kernel gives it for this process): the directories are cut off as
    /// text, which costs lnp-run's start a fraction of what FilePath's first use does.
    public static func locate(_ name: String = fileName, beside executable: String? = currentExecutable()) -> String? {
        guard let executable, executable.hasPrefix("/") else { return nil }
        let directory = PathText.directory(of: executable)
        let installed = PathText.directory(of: directory)
        // Each place made only when the one before is not it: a build directory's run makes one.
        let beside = PathText.join(directory, name)
        if access(beside, R_OK) == 0 { return beside }
        let inLib = PathText.join(installed, "lib/lnp", name)
        if access(inLib, R_OK) == 0 { return inLib }
        guard let multiarchTriplet else { return nil }
        let inMultiarch = PathText.join(installed, "lib", multiarchTriplet, "lnp", name)
        return access(inMultiarch, R_OK) == 0 ? inMultiarch : nil
    }

    /// This process's executable, with symbolic links resolved.
    public static func currentExecutable() -> String? {
        guard let resolved = realpath("/proc/self/exe", nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}

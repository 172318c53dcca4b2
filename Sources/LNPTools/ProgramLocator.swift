import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// Finds the program to run as execvp(3) does: a name with a slash is a path; any other
/// name is searched in PATH, an empty entry meaning the current directory.
public enum ProgramLocator {
    public enum Failure: Error, Equatable {
        /// Nothing of that name (exit status 127).
        case notFound(String)
        /// Found, but not an executable file (exit status 126).
        case notExecutable(String)
    }

    public static func locate(_ name: String, path: String? = environmentValue("PATH")) -> Result<String, Failure> {
        if name.isEmpty { return .failure(.notFound(name)) }
        if name.contains("/") {
            if !exists(name) { return .failure(.notFound(name)) }
            return isExecutableFile(name) ? .success(absolute(name)) : .failure(.notExecutable(name))
        }
        var foundButNotExecutable: String? = nil
        let entries = (path ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":", omittingEmptySubsequences: false)
        for entry in entries {
            let directory = entry.isEmpty ? "." : String(entry)
            let candidate = directory.hasSuffix("/") ? directory + name : directory + "/" + name
            if isExecutableFile(candidate) { return .success(absolute(candidate)) }
            if exists(candidate) && foundButNotExecutable == nil { foundButNotExecutable = candidate }
        }
        if let candidate = foundButNotExecutable { return .failure(.notExecutable(candidate)) }
        return .failure(.notFound(name))
    }

    static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    static func isExecutableFile(_ path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return false }
        return access(path, X_OK) == 0
    }

    /// `path` made absolute against the current directory, without resolving symbolic
    /// links (the program is named as the person named it).
    public static func absolute(_ path: String) -> String {
        if path.hasPrefix("/") { return FilePath(path).lexicallyNormalized().string }
        guard let cwd = getcwd(nil, 0) else { return path }
        defer { free(cwd) }
        return FilePath(String(cString: cwd)).appending(FilePath(path).components).lexicallyNormalized().string
    }

    public static func environmentValue(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        return String(cString: value)
    }
}

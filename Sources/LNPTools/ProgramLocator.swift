import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// Finds the program to run as a shell does: a name with a slash is a path; any other name
/// is searched in PATH, an empty entry meaning the current directory, and directories there
/// are passed over (bash says "command not found" for a directory in PATH, not "Is a directory").
public enum ProgramLocator {
    public enum Failure: Error, Equatable {
        /// Nothing of that name (exit status 127).
        case notFound(String)
        /// A directory where a program was named (exit status 126).
        case isDirectory(String)
        /// Found, but not an executable file (exit status 126).
        case notExecutable(String)
    }

    /// What is at a path, as far as running it goes.
    public enum FileKind: Equatable {
        case missing, directory, executable, regular, other
    }

    public static func locate(_ name: String, path: String? = environmentValue("PATH")) -> Result<String, Failure> {
        if name.isEmpty { return .failure(.notFound(name)) }
        if name.contains("/") {
            switch kind(of: name) {
            case .executable: return .success(absolute(name))
            case .missing: return .failure(.notFound(name))
            case .directory: return .failure(.isDirectory(name))
            case .regular, .other: return .failure(.notExecutable(name))
            }
        }
        var foundButNotExecutable: String? = nil
        let entries = (path ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":", omittingEmptySubsequences: false)
        for entry in entries {
            let directory = entry.isEmpty ? "." : String(entry)
            let candidate = directory.hasSuffix("/") ? directory + name : directory + "/" + name
            switch kind(of: candidate) {
            case .executable: return .success(absolute(candidate))
            case .regular, .other: if foundButNotExecutable == nil { foundButNotExecutable = candidate }
            case .missing, .directory: continue
            }
        }
        if let candidate = foundButNotExecutable { return .failure(.notExecutable(candidate)) }
        return .failure(.notFound(name))
    }

    /// One stat (and, for a regular file, one access) per path: every judgement of a program
    /// path — running it, deciding for it — starts here.
    public static func kind(of path: String) -> FileKind {
        var info = stat()
        guard stat(path, &info) == 0 else { return .missing }
        switch info.st_mode & S_IFMT {
        case S_IFDIR: return .directory
        case S_IFREG: return access(path, X_OK) == 0 ? .executable : .regular
        default: return .other
        }
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

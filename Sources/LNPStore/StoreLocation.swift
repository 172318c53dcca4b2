import LNPTools

#if canImport(Glibc)
import Glibc
#endif

/// Where a person's store lives, and making its directory and file with private modes.
enum StoreLocation {
    static let directoryName = "lnp"
    static let fileName = "decisions.sqlite"

    /// $XDG_STATE_HOME/lnp/decisions.sqlite (an absolute XDG_STATE_HOME only, as the XDG
    /// specification says), else ~/.local/state/lnp/decisions.sqlite with $HOME, else with the
    /// home directory of the password database.
    static func defaultPath(environment: [String: String]) -> String {
        defaultPath { environment[$0] }
    }

    /// The same, from this process's environment. (No dictionary of it: lnp-run reads this at
    /// every start, and a dictionary of strings costs a start a search of the binary's
    /// protocol conformances.)
    static func defaultPath() -> String {
        defaultPath { name in getenv(name).map { String(cString: $0) } }
    }

    private static func defaultPath(_ variable: (String) -> String?) -> String {
        if let state = variable("XDG_STATE_HOME"), state.hasPrefix("/") {
            return PathText.join(state, directoryName, fileName)
        }
        let home: String
        if let value = variable("HOME"), value.hasPrefix("/") {
            home = value
        } else if let entry = getpwuid(getuid()), let directory = entry.pointee.pw_dir {
            home = String(cString: directory)
        } else {
            home = "/"
        }
        return PathText.join(home, ".local/state", directoryName, fileName)
    }

    /// The directory of `path` (parents too, each made 0700 when it is made) and an empty
    /// database file of mode 0600, unless there is one. The file appears whole under its name
    /// (made under a temporary name, then linked), so no other connection can meet a file of
    /// a wider mode, and this process never closes a descriptor of a file SQLite has locked.
    static func prepare(_ path: String) throws(StoreFailure) {
        let directory = PathText.directory(of: path)
        try makeDirectories(directory.isEmpty ? "." : directory, for: path)
        var info = stat()
        if stat(path, &info) == 0 { return }
        if errno != ENOENT { throw StoreFailure(path: path, reason: errorText(errno)) }

        var template = Array((directory + "/.decisions.sqlite.XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        if fd < 0 { throw StoreFailure(path: path, reason: "cannot create it: " + errorText(errno), writing: true) }
        let temporary = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        // mkstemp makes it 0600; make sure whatever the umask.
        _ = fchmod(fd, 0o600)
        close(fd)
        defer { unlink(temporary) }
        if link(temporary, path) != 0 && errno != EEXIST {
            throw StoreFailure(path: path, reason: "cannot create it: " + errorText(errno), writing: true)
        }
    }

    static func makeDirectories(_ directory: String, for path: String) throws(StoreFailure) {
        var info = stat()
        if stat(directory, &info) == 0 {
            if info.st_mode & S_IFMT == S_IFDIR { return }
            throw StoreFailure(path: path, reason: "\(directory) is not a directory", writing: true)
        }
        let parent = PathText.directory(of: directory)
        if !parent.isEmpty && parent != directory { try makeDirectories(parent, for: path) }
        if mkdir(directory, 0o700) != 0 && errno != EEXIST {
            throw StoreFailure(path: path, reason: "cannot create \(directory): " + errorText(errno), writing: true)
        }
    }

    static func errorText(_ code: Int32) -> String {
        String(cString: strerror(code)).lowercased()
    }
}

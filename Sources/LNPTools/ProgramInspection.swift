import CLibcap
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// What `lnp inspect` tells an administrator about one file: what kind of executable it is,
/// what it takes from shared libraries, and whether lnp-run can observe it. It describes the
/// file for whoever may run it, not for the person inspecting: a setuid bit counts even when
/// the owner inspects. The file is only read, never executed.
public struct ProgramInspection: Equatable {
    public enum Kind: String, Equatable {
        case dynamic, `static`, script, other, error
    }

    /// The socket-related functions worth reporting when a program imports them.
    public static let socketFunctions = [
        "socket", "connect", "sendto", "sendmsg", "sendmmsg", "bind", "setsockopt", "getaddrinfo", "getaddrinfo_a",
        "gethostbyname", "gethostbyname2", "gethostbyname_r", "res_query", "res_search", "res_nquery", "res_nsearch",
        "res_send", "res_nsend", "rcmd", "rcmd_af", "rexec", "rexec_af", "syscall",
    ]

    /// The libraries through which a program does Bonjour: those that ask the mDNS daemon,
    /// which lnp gates in the preload alone, and Avahi's embeddable responder, which does its
    /// own multicast (socket calls, which both of lnp's layers see).
    public static let bonjourLibraries: [(prefix: String, asksTheDaemon: Bool)] = [
        ("libdns_sd.so", true), ("libavahi-client.so", true), ("libavahi-gobject.so", true),
        ("libavahi-compat-howl.so", true), ("libavahi-core.so", false),
    ]

    /// Scripts whose interpreter is a script: the kernel follows a few levels, so does lnp.
    static let interpreterDepthLimit = 4

    public var path: String
    public var kind: Kind
    /// An ELF file's PT_INTERP; for a script, the program that runs it.
    public var interpreter: String? = nil
    public var owner: UInt32? = nil
    public var group: UInt32? = nil
    public var setuid = false
    public var setgid = false
    /// The file's capabilities as libcap writes them ("cap_net_raw=ep"); nil for none.
    public var fileCapabilities: String? = nil
    public var isGo = false
    public var buildID: String? = nil
    public var architecture: String? = nil
    /// DT_NEEDED, in order.
    public var needed: [String] = []
    /// The imported functions among `socketFunctions`, in that order.
    public var imports: [String] = []
    /// The needed libraries among `bonjourLibraries`.
    public var bonjour: [String] = []
    /// What stops lnp-run observing it; empty if nothing does.
    public var obstacles: [Observability.Obstacle] = []
    /// What does not stop observation but is worth knowing.
    public var warnings: [String] = []
    /// Why the file could not be inspected (kind `error`).
    public var error: String? = nil
    /// A script's interpreter (or one further down its chain) that is not there: the script
    /// cannot run here, so whether lnp could observe it does not arise.
    public var missingInterpreter: String? = nil

    /// nil when lnp cannot tell: the file is not an executable it knows, could not be read,
    /// or cannot run (`missingInterpreter`).
    public var isObservable: Bool? {
        kind == .other || kind == .error || missingInterpreter != nil ? nil : obstacles.isEmpty
    }

    /// Whether lnp gates the program's Bonjour operations (nil: it links no Bonjour library):
    /// through the daemon, only where the preload is loaded.
    public var bonjourGated: Bool? {
        guard !bonjour.isEmpty else { return nil }
        let throughTheDaemon = bonjour.contains { library in
            Self.bonjourLibraries.contains { library.hasPrefix($0.prefix) && $0.asksTheDaemon }
        }
        return !throughTheDaemon || (kind == .dynamic && obstacles.isEmpty)
    }

    public var reasons: [String] {
        if kind == .other { return ["not an executable lnp knows (neither ELF nor a #! script)"] }
        if let missingInterpreter { return ["its interpreter \(missingInterpreter) is missing: it cannot run here"] }
        return obstacles.map(Self.describe)
    }

    /// A file (or directory) that could not be inspected.
    public init(path: String, error: String) {
        self.init(path: path, kind: .error, error: error)
    }

    init(path: String, kind: Kind, error: String? = nil) {
        self.path = path
        self.kind = kind
        self.error = error
    }

    /// Inspects the file at `path` (symbolic links followed). `preload` is liblnp.so's ELF
    /// file: a program of another architecture cannot load it.
    /// `imports: false` skips the dynamic symbols, for a caller that needs only the verdict.
    public static func inspect(path: String, preload: ELFFile? = nil, imports: Bool = true) -> ProgramInspection {
        inspect(path: path, preload: preload, imports: imports, depth: 0)
    }

    static func inspect(path: String, preload: ELFFile?, imports: Bool, depth: Int) -> ProgramInspection {
        var result = ProgramInspection(path: path, kind: .error)
        var info = stat()
        guard stat(path, &info) == 0 else {
            result.error = "\(Errno(rawValue: errno))"
            return result
        }
        result.owner = info.st_uid
        result.group = info.st_gid
        result.setuid = info.st_mode & S_ISUID != 0
        result.setgid = info.st_mode & S_ISGID != 0
        guard info.st_mode & S_IFMT == S_IFREG else {
            result.error = "not a regular file"
            return result
        }
        result.fileCapabilities = capabilityText(path)
        if depth == 0 && info.st_mode & 0o111 == 0 { result.warnings.append("no execute permission") }

        switch magic(of: path) {
        case .failure(let errno):
            result.error = "cannot read it: \(errno)"
        case .success(let head) where head.starts(with: [0x7f, 0x45, 0x4c, 0x46]):
            result.describeELF(preload: preload, imports: imports)
        case .success(let head) where head.starts(with: [0x23, 0x21]):  // "#!"
            result.describeScript(preload: preload, imports: imports, depth: depth)
        case .success:
            result.kind = .other
        }
        return result
    }

    mutating func describeELF(preload: ELFFile?, imports readImports: Bool) {
        let elf: ELFFile
        do {
            elf = try ELFFile.read(path: path, imports: readImports)
        } catch {
            self.error = error.description
            return
        }
        kind = elf.isStatic ? .static : .dynamic
        interpreter = elf.interpreter
        isGo = elf.isGo
        buildID = elf.buildID
        architecture = elf.architecture
        needed = elf.neededLibraries
        let imported = Set(elf.importedSymbols)
        imports = Self.socketFunctions.filter(imported.contains)
        bonjour = needed.filter { library in Self.bonjourLibraries.contains { library.hasPrefix($0.prefix) } }

        if let owner, setuid { obstacles.append(.setuid(owner: owner)) }
        if let group, setgid { obstacles.append(.setgid(group: group)) }
        if fileCapabilities != nil { obstacles.append(.fileCapabilities) }
        if elf.isStatic { obstacles.append(.staticBinary) }
        if elf.isGo { obstacles.append(.goProgram) }
        if let preload, !elf.isStatic, elf.architecture != preload.architecture {
            obstacles.append(.otherArchitecture(program: elf.architecture, preload: preload.architecture))
        }

        if bonjourGated == false {
            warnings.append(
                "its Bonjour operations (\(bonjour.joined(separator: ", "))) ask the mDNS daemon, which lnp gates in the "
                    + "preload alone: not gated for this program")
        }
        if elf.isStatic {
            if !needed.isEmpty {
                warnings.append("no interpreter, yet it needs shared libraries: a shared library rather than a program?")
            }
            return
        }
        if imports.contains("syscall") {
            warnings.append(
                "imports syscall(): lnp checks the socket calls made through it too (connect, sendto, sendmsg, "
                    + "sendmmsg, bind, setsockopt)")
        }
    }

    mutating func describeScript(preload: ELFFile?, imports: Bool, depth: Int) {
        kind = .script
        // Linux runs a script with the interpreter's identity: set-id bits and capabilities
        // on the script file itself are ignored.
        if setuid || setgid { warnings.append("set-id bit on a script: Linux ignores it") }
        if fileCapabilities != nil { warnings.append("file capabilities on a script: Linux ignores them") }
        guard let header = ScriptHeader.interpreter(of: path) else {
            self.error = "cannot read its #! line"
            kind = .error
            return
        }
        guard let program = header.program else {
            let name = header.arguments.first { !$0.hasPrefix("-") } ?? header.path
            interpreter = name
            missingInterpreter = name + " (not in PATH)"
            return
        }
        interpreter = program
        if access(program, F_OK) != 0 && errno == ENOENT {
            missingInterpreter = program
            return
        }
        guard depth < Self.interpreterDepthLimit else {
            warnings.append("its interpreter \(program) is one script too many to follow")
            return
        }
        let runner = Self.inspect(path: program, preload: preload, imports: imports, depth: depth + 1)
        switch runner.kind {
        case .error:
            warnings.append("its interpreter \(program) cannot be inspected: \(runner.error ?? "unknown error")")
        case .other:
            warnings.append("its interpreter \(program) is not an executable lnp knows")
        case .script:
            // What stops the chain further down concerns this script too.
            missingInterpreter = runner.missingInterpreter
            obstacles += runner.obstacles.map { .interpreter(program, $0) }
            warnings += runner.warnings.map { "its interpreter \(program): \($0)" }
        case .dynamic, .static:
            obstacles += runner.obstacles.map { .interpreter(program, $0) }
        }
    }

    /// The reasons as inspect words them: for the file, whoever runs it. (Observability's
    /// words are for one person about to run it.)
    static func describe(_ obstacle: Observability.Obstacle) -> String {
        switch obstacle {
        case .setuid(let owner):
            return "setuid uid \(owner) (the loader ignores LD_PRELOAD unless uid \(owner) runs it)"
        case .setgid(let group):
            return "setgid gid \(group) (the loader ignores LD_PRELOAD unless the user's group is gid \(group))"
        case .fileCapabilities:
            return "file capabilities (the loader ignores LD_PRELOAD unless root runs it)"
        case .interpreter(let path, let inner):
            return "its interpreter \(path): \(describe(inner))"
        default:
            return obstacle.description
        }
    }

    /// The first bytes of the file, enough to tell ELF from a script.
    static func magic(of path: String) -> Result<[UInt8], Errno> {
        do {
            let fd = try FileDescriptor.open(FilePath(path), .readOnly, options: [.closeOnExec, .nonBlocking])
            defer { try? fd.close() }
            var head = [UInt8](repeating: 0, count: 4)
            let count = try head.withUnsafeMutableBytes { try fd.read(fromAbsoluteOffset: 0, into: $0) }
            return .success(Array(head.prefix(count)))
        } catch {
            return .failure(error as? Errno ?? .ioError)
        }
    }

    /// The file's capabilities in libcap's text form; nil if it has none (or an empty set).
    static func capabilityText(_ path: String) -> String? {
        guard Observability.hasFileCapabilities(path), let capabilities = cap_get_file(path) else { return nil }
        defer { cap_free(UnsafeMutableRawPointer(capabilities)) }
        guard let text = cap_to_text(capabilities, nil) else { return "(unreadable)" }
        defer { cap_free(text) }
        return String(cString: text)
    }
}

/// The files `lnp inspect` looks at, from the paths it is given: a file as named (its
/// symbolic link followed); in a directory, the regular files with an execute bit, and the
/// symbolic links to such files elsewhere (a link to a file of the same directory would
/// report that file twice); subdirectories only when recursive, never through a link.
public enum InspectionTargets {
    public enum Entry: Equatable {
        case file(String)
        /// A directory that could not be listed.
        case failure(path: String, reason: String)
    }

    public static func expand(_ paths: [String], recursive: Bool) -> [Entry] {
        var entries: [Entry] = []
        var visited = Set<DirectoryID>()
        for path in paths {
            var info = stat()
            if stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR {
                list(path, recursive: recursive, visited: &visited, into: &entries)
            } else {
                entries.append(.file(path))  // missing or not a file: inspect says so
            }
        }
        return entries
    }

    struct DirectoryID: Hashable {
        var device: UInt64
        var inode: UInt64
    }

    static func list(_ directory: String, recursive: Bool, visited: inout Set<DirectoryID>, into entries: inout [Entry]) {
        var info = stat()
        guard stat(directory, &info) == 0,
            visited.insert(DirectoryID(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))).inserted
        else { return }
        let names: [String]
        let prefix = directory.hasSuffix("/") ? directory : directory + "/"
        switch Self.names(in: directory) {
        case .success(let found):
            names = found.names
            // A Swift string cannot hold such a name, so the file cannot be opened by it.
            for name in found.notUTF8 {
                entries.append(.failure(path: prefix + name, reason: "its name is not UTF-8; inspect it through a link"))
            }
        case .failure(let errno):
            entries.append(.failure(path: directory, reason: "cannot list it: \(errno)"))
            return
        }
        let realDirectory = realPath(directory)
        let siblings = Set(names)
        var subdirectories: [String] = []
        for name in names {
            let path = prefix + name
            var link = stat()
            guard lstat(path, &link) == 0 else { continue }
            switch link.st_mode & S_IFMT {
            case S_IFREG where link.st_mode & 0o111 != 0:
                entries.append(.file(path))
            case S_IFLNK:
                var target = stat()
                guard stat(path, &target) == 0, target.st_mode & S_IFMT == S_IFREG, target.st_mode & 0o111 != 0,
                    let resolved = realPath(path)
                else { continue }
                let file = FilePath(resolved)
                let inSameDirectory =
                    file.removingLastComponent().string == realDirectory && siblings.contains(file.lastComponent?.string ?? "")
                if !inSameDirectory { entries.append(.file(path)) }
            case S_IFDIR where recursive:
                subdirectories.append(path)
            default:
                break
            }
        }
        for subdirectory in subdirectories {
            list(subdirectory, recursive: true, visited: &visited, into: &entries)
        }
    }

    /// The directory's entries, sorted by name, without "." and ".."; apart, those whose
    /// names are not UTF-8 (with the invalid bytes replaced, to show them).
    static func names(in directory: String) -> Result<(names: [String], notUTF8: [String]), Errno> {
        guard let stream = opendir(directory) else { return .failure(Errno(rawValue: errno)) }
        defer { closedir(stream) }
        var names: [String] = []
        var notUTF8: [String] = []
        while let entry = readdir(stream) {
            let bytes = withUnsafeBytes(of: entry.pointee.d_name) { raw in Array(raw.prefix { $0 != 0 }) }
            if let name = String(validating: bytes, as: UTF8.self) {
                if name != "." && name != ".." { names.append(name) }
            } else {
                notUTF8.append(String(decoding: bytes, as: UTF8.self))
            }
        }
        let byBytes = { (a: String, b: String) in Array(a.utf8).lexicographicallyPrecedes(Array(b.utf8)) }
        return .success((names.sorted(by: byBytes), notUTF8.sorted(by: byBytes)))
    }

    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}

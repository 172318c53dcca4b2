import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// What "a program" is for a decision: the file a person would name. For an ELF binary, the
/// binary (with its build-id, so a rebuilt file can be noticed); for a script, the script —
/// whether it is executed directly (`./tool.py`) or named to its interpreter
/// (`python3 -u tool.py`) — never the interpreter that runs it.
public struct ProgramIdentity: Equatable, Sendable {
    /// Absolute, lexically normalized, symbolic links not resolved (the program is named as
    /// the person named it). For a script, the script file.
    public var path: String
    /// The ELF build-id as lower-case hex; nil for scripts and binaries without one.
    public var buildID: String?
    /// Whether `path` is a script: it starts with `#!`, or an interpreter was given it to run.
    public var isScript: Bool

    public init(path: String, buildID: String?, isScript: Bool) {
        self.path = path
        self.buildID = buildID
        self.isScript = isScript
    }

    /// The program a command line runs. `executable` is argv[0] already located (absolute);
    /// `arguments` are the others. When `executable` is a known interpreter, the first
    /// operand — after the interpreter's options and their arguments — is the script if it
    /// names an existing regular file; an option that means "no script" (`python -c`,
    /// `perl -e`, `node -e`, `sh -c`, …) before it, or no such file, leaves the interpreter as
    /// the program.
    public static func of(executable: String, arguments: [String]) -> ProgramIdentity {
        let executablePath = ProgramLocator.absolute(executable)
        if let script = script(run: executablePath, arguments: arguments) {
            return ProgramIdentity(path: script, buildID: nil, isScript: true)
        }
        return identity(ofFile: executablePath)
    }

    /// `of(executable:arguments:).path`, without reading the file (lnp-run looks the program
    /// up in the store with it while it reads the build-id).
    public static func path(executable: String, arguments: [String]) -> String {
        let executablePath = ProgramLocator.absolute(executable)
        return script(run: executablePath, arguments: arguments) ?? executablePath
    }

    /// The word of `arguments` that names the script an interpreter `executable` is given to
    /// run, as given (not looked up, not made absolute); nil when it runs none.
    public static func scriptWord(executable: String, arguments: [String]) -> String? {
        Interpreter.named(basename(ProgramLocator.absolute(executable)))?.script(in: arguments)
    }

    /// The script an interpreter at `executablePath` is given to run, made absolute.
    private static func script(run executablePath: String, arguments: [String]) -> String? {
        guard let script = scriptWord(executable: executablePath, arguments: arguments), isRegularFile(script) else { return nil }
        return ProgramLocator.absolute(script)
    }

    /// The program as `lnp allow PROGRAM` names it: a name with a slash is a path, made
    /// absolute against the current directory (it need not exist: one can reset a program
    /// that was removed); a bare name is looked up in PATH, as the shell would, and failing
    /// that is taken from the current directory.
    public static func named(_ name: String) -> ProgramIdentity {
        if name.contains("/") || name.isEmpty { return identity(ofFile: ProgramLocator.absolute(name)) }
        switch ProgramLocator.locate(name) {
        case .success(let found): return identity(ofFile: found)
        case .failure(.notExecutable(let found)): return identity(ofFile: ProgramLocator.absolute(found))
        case .failure(.notFound), .failure(.isDirectory): return identity(ofFile: ProgramLocator.absolute(name))
        }
    }

    /// The build-id the file at `path` has now; nil if it is not ELF, cannot be read, or has none.
    public static func currentBuildID(of path: String) -> String? {
        (try? ELFFile.read(path: path))?.buildID
    }

    /// The file itself as the program: an ELF binary with its build-id; any other file that
    /// can be read is a script (with `#!` or not, only an interpreter can run it); a file that
    /// is missing or cannot be read is neither.
    static func identity(ofFile path: String) -> ProgramIdentity {
        switch magic(of: path) {
        case .elf: return ProgramIdentity(path: path, buildID: currentBuildID(of: path), isScript: false)
        case .other: return ProgramIdentity(path: path, buildID: nil, isScript: true)
        case .unreadable: return ProgramIdentity(path: path, buildID: nil, isScript: false)
        }
    }

    enum Magic { case elf, other, unreadable }

    static func magic(of path: String) -> Magic {
        guard isRegularFile(path), let file = fopen(path, "re") else { return .unreadable }
        defer { fclose(file) }
        var bytes = [UInt8](repeating: 0, count: 4)
        let count = fread(&bytes, 1, 4, file)
        return count == 4 && bytes == [0x7f, 0x45, 0x4c, 0x46] ? .elf : .other
    }

    static func basename(_ path: String) -> String {
        FilePath(path).lastComponent?.string ?? path
    }

    static func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
    }
}

/// How an interpreter's command line names its script: which options take an argument, and
/// which mean that there is no script file (the code is on the command line or on stdin).
struct Interpreter: Equatable {
    /// Short options (one letter after "-") whose argument is the rest of the word or, when
    /// nothing follows in the word, the next word.
    var shortWithArgument: Set<Character> = []
    /// Short options whose argument, if any, can only be attached (`perl -I/lib`, `-0777`):
    /// they end the word but never take the next one.
    var shortAttachedOnly: Set<Character> = []
    /// Short options that mean no script file: the rest is code, a module, or stdin.
    var shortNoScript: Set<Character> = []
    /// Short options whose argument is the script itself (`php -f FILE`).
    var shortScript: Set<Character> = []
    /// Long options (with their dashes) that take the next word, unless written `--opt=value`.
    var longWithArgument: Set<String> = []
    /// Long options that mean no script file.
    var longNoScript: Set<String> = []
    /// Options may also start with "+" (shells: `+o posix`).
    var plusOptions = false
    /// Any word starting with "-" is an option without argument except those listed
    /// (tclsh, Rscript: options are whole words, not clusters of letters).
    var wholeWordOptions = false

    static let python = Interpreter(
        shortWithArgument: ["W", "X", "Q"], shortNoScript: ["c", "m"],
        longWithArgument: ["--check-hash-based-pycs"])
    static let perl = Interpreter(
        // -I, -M, -m take a separate word too; -0 -C -d -D -i -l -x only an attached value.
        shortWithArgument: ["I", "M", "m"], shortAttachedOnly: ["0", "C", "d", "D", "i", "l", "x", "V"],
        shortNoScript: ["e", "E"])
    static let ruby = Interpreter(
        shortWithArgument: ["I", "r", "C", "E"], shortAttachedOnly: ["0", "F", "K", "T", "W", "x", "i"],
        shortNoScript: ["e"], longWithArgument: ["--encoding", "--external-encoding", "--internal-encoding"])
    static let node = Interpreter(
        shortWithArgument: ["r", "C"], shortNoScript: ["e", "p", "i"],
        longWithArgument: [
            "--require", "--import", "--loader", "--experimental-loader", "--conditions", "--input-type", "--title",
            "--inspect-port", "--redirect-warnings", "--env-file",
        ],
        longNoScript: ["--eval", "--print", "--interactive", "--test", "--run"])
    static let shell = Interpreter(
        shortWithArgument: ["o", "O"], shortNoScript: ["c", "s", "i"],
        longWithArgument: ["--rcfile", "--init-file"], plusOptions: true)
    static let php = Interpreter(
        shortWithArgument: ["c", "d", "z", "t"], shortNoScript: ["r", "a", "S", "R", "B", "E"], shortScript: ["f"])
    static let lua = Interpreter(shortWithArgument: ["e", "l"], shortNoScript: ["i"])
    static let tcl = Interpreter(longWithArgument: ["-encoding"], wholeWordOptions: true)
    static let rscript = Interpreter(
        longNoScript: ["-e"], wholeWordOptions: true)

    /// The interpreter with this file name, versioned names included (`python3.11`,
    /// `perl5.36.0`, `lua5.4`, `tclsh8.6`, `php8.2`). Only the one named is made: lnp-run
    /// asks for every program it starts, and making the tables costs more than the rest.
    static func named(_ name: String) -> Interpreter? {
        // Each family's names once; a name another starts with comes after it (`nodejs`
        // before `node`, `luajit` before `lua`).
        let families: [(name: String, interpreter: () -> Interpreter)] = [
            ("python", { .python }), ("pypy", { .python }), ("perl", { .perl }), ("ruby", { .ruby }),
            ("nodejs", { .node }), ("node", { .node }), ("bash", { .shell }), ("dash", { .shell }), ("zsh", { .shell }),
            ("mksh", { .shell }), ("ksh", { .shell }), ("ash", { .shell }), ("sh", { .shell }), ("php", { .php }),
            ("luajit", { .lua }), ("lua", { .lua }), ("tclsh", { .tcl }), ("Rscript", { .rscript }),
        ]
        for family in families where name.hasPrefix(family.name) {
            let version = name.dropFirst(family.name.count)
            if version.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }) { return family.interpreter() }
        }
        return nil
    }

    /// The word that names the script, or nil when the command line runs no script file.
    func script(in arguments: [String]) -> String? {
        var index = 0
        while index < arguments.count {
            let word = arguments[index]
            index += 1
            if word == "--" { return index < arguments.count ? arguments[index] : nil }
            if word == "-" { return nil }  // the script is stdin
            let isOption = word.hasPrefix("-") || (plusOptions && word.hasPrefix("+"))
            if !isOption || word.count < 2 { return word }

            if word.hasPrefix("--") || wholeWordOptions {
                let name = word.split(separator: "=", maxSplits: 1).first.map(String.init) ?? word
                if longNoScript.contains(name) { return nil }
                if longWithArgument.contains(name) && !word.contains("=") { index += 1 }
                continue
            }
            // A cluster of short options: -uc, -Wd, -I/lib, -euo pipefail.
            var letters = word.dropFirst()
            while let letter = letters.first {
                letters = letters.dropFirst()
                if shortNoScript.contains(letter) { return nil }
                if shortScript.contains(letter) {
                    if !letters.isEmpty { return String(letters) }
                    return index < arguments.count ? arguments[index] : nil
                }
                if shortWithArgument.contains(letter) {
                    if letters.isEmpty { index += 1 }
                    break
                }
                if shortAttachedOnly.contains(letter) { break }
            }
        }
        return nil
    }
}

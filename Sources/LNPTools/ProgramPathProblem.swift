/// Why a program cannot be run, in a shell's words and with its exit status, so that `lnp-run`,
/// `lnp allow`/`deny` and `lnp reset` say the same of the same path:
///
///     prog: command not found              127   (a bare name, not in PATH)
///     /opt/prog: No such file or directory 127
///     /tmp: Is a directory                 126
///     /etc/passwd: Permission denied       126   (not executable)
public struct ProgramPathProblem: Equatable {
    public var message: String
    public var status: Int32

    public static let notFoundStatus: Int32 = 127
    public static let notExecutableStatus: Int32 = 126

    /// What stops `ProgramLocator.locate` finding a program to run.
    public init(_ failure: ProgramLocator.Failure) {
        switch failure {
        case .notFound(let name):
            let shown = UntrustedText.visible(name)
            self.init(message: name.contains("/") ? "\(shown): No such file or directory" : "\(shown): command not found",
                      status: Self.notFoundStatus)
        case .isDirectory(let path):
            self.init(message: "\(UntrustedText.visible(path)): Is a directory", status: Self.notExecutableStatus)
        case .notExecutable(let path):
            self.init(message: "\(UntrustedText.visible(path)): Permission denied", status: Self.notExecutableStatus)
        }
    }

    init(message: String, status: Int32) {
        self.message = message
        self.status = status
    }

    /// For a decision (`lnp allow`, `deny`): the file `ProgramIdentity.named(name)` found must
    /// be there and not a directory. A regular file that is not executable is a program too —
    /// a script its interpreter runs (`python3 tool.py` is decided as tool.py).
    public static func ofDecided(_ name: String, path: String) -> ProgramPathProblem? {
        switch ProgramLocator.kind(of: path) {
        case .executable, .regular: return nil
        case .missing: return ProgramPathProblem(.notFound(name))
        case .directory: return ProgramPathProblem(.isDirectory(name))
        case .other: return ProgramPathProblem(.notExecutable(name))
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif

/// lnp-run's entry point (Sources/LNPRunMain/main.swift): a command line in a plain form is
/// read by hand and run; any other is lnp-run-arguments' to read (`ArgumentReader`). The
/// program's words are passed on as they were given (`GivenWords`).
public func launcherMain() -> Never {
    let arguments = Array(CommandLine.arguments.dropFirst())
    let given = GivenWords.fromArgv(1)
    guard let options = PlainArguments.parse(arguments) else { ArgumentReader.read(given) }
    // (lnp-run-arguments says so itself on the other path: it passes text on.)
    if let word = given.optionWordNotUTF8(programCount: options.command.count) {
        Diagnostics.error(GivenWords.optionNotUTF8(word))
        exit(ExitStatus.ownError)
    }
    do {
        try options.launch(programWords: given.last(options.command.count))
    } catch {
        Diagnostics.error(error.message)
        exit(error.status)
    }
    exit(0)
}

/// Exit statuses of lnp-run's own, as env(1) and the shells use them.
public enum ExitStatus {
    public static let ownError: Int32 = 125
    static let notExecutable: Int32 = 126
    static let notFound: Int32 = 127
}

struct Failure: Error {
    var message: String
    var status: Int32

    init(_ message: String, status: Int32 = ExitStatus.ownError) {
        self.message = message
        self.status = status
    }
}

public enum Diagnostics {
    public static func error(_ message: String) { write("lnp-run: \(message)\n") }
    static func warning(_ message: String) { write("lnp-run: warning: \(message)\n") }
    public static func note(_ message: String) { write("lnp-run: \(message)\n") }
    /// A line of `--summary`, which names itself.
    static func summary(_ line: String) { write(line + "\n") }

    /// One write, so the line stays whole next to the program's own output.
    private static func write(_ text: String) {
        var bytes = Array(text.utf8)
        _ = Glibc.write(2, &bytes, bytes.count)
    }
}

import Testing
@testable import LNPTools

#if canImport(Glibc)
import Glibc
#endif

/// A shell's words for a program it cannot run, shared by lnp-run and lnp's decisions.
@Suite("Program path problems")
struct ProgramPathProblemTests {
    @Test func aShellsWordsAndStatus() {
        #expect(ProgramPathProblem(.notFound("tool")) == ProgramPathProblem(message: "tool: command not found", status: 127))
        #expect(ProgramPathProblem(.notFound("/opt/tool")).message == "/opt/tool: No such file or directory")
        #expect(ProgramPathProblem(.isDirectory("/tmp")) == ProgramPathProblem(message: "/tmp: Is a directory", status: 126))
        #expect(ProgramPathProblem(.notExecutable("/etc/passwd")).message == "/etc/passwd: Permission denied")
    }

    /// A name on one line, whatever it holds.
    @Test func aHostileNameIsShownEscaped() {
        let problem = ProgramPathProblem(.notFound("/opt/a\nlnp-run: allowed\t\u{1b}[2J"))
        #expect(!problem.message.contains("\n") && !problem.message.contains("\u{1b}") && !problem.message.contains("\t"))
    }

    @Test func aDecisionNeedsAFileThatIsThere() {
        #expect(ProgramPathProblem.ofDecided("/etc/passwd", path: "/etc/passwd") == nil, "a script its interpreter runs")
        #expect(ProgramPathProblem.ofDecided("/tmp", path: "/tmp")?.message == "/tmp: Is a directory")
        #expect(ProgramPathProblem.ofDecided("/dev/null", path: "/dev/null")?.status == 126)
        #expect(ProgramPathProblem.ofDecided("gone", path: "/nonexistent/gone")?.message == "gone: command not found")
    }
}

import LNPTools

#if canImport(Glibc)
import Glibc
#endif

/// The command lines lnp-run does not read by hand (help, completions, mistakes, unusual
/// forms) go to lnp-run-arguments, found where liblnp.so is: ArgumentParser, and the
/// Foundation it links, would add 15 MB and 1,900 protocol conformances to lnp-run, which the
/// Swift runtime searches at every start (docs/benchmarks.md, "The launcher's start").
/// lnp-run-arguments reads the command line, answers help and mistakes itself, and runs this
/// lnp-run again, in this process, with the options in a form read by hand.
enum ArgumentReader {
    static func read(_ arguments: GivenWords) -> Never {
        // Its first argument: this lnp-run, to run again.
        guard let own = PreloadLocator.currentExecutable(),
              let reader = PreloadLocator.locate(PreloadLocator.argumentReaderName, beside: own) else {
            Diagnostics.error("cannot read this command line: \(PreloadLocator.argumentReaderName) is not \(PreloadLocator.places)")
            exit(ExitStatus.ownError)
        }
        let argv = GivenWords([Array(own.utf8)] + arguments.bytes).cStrings()
        execv(reader, argv)
        Diagnostics.error("cannot read this command line: \(reader): \(String(cString: strerror(errno)))")
        exit(ExitStatus.ownError)
    }
}

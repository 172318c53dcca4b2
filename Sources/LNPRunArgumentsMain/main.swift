import lnp_run_arguments

// lnp-run-arguments: reads the command lines lnp-run does not read by hand, then runs lnp-run
// again (Sources/lnp-run-arguments). Its code is a library the tests link too.
LNPRun.readAndRunAgain()

import lnp_run

// lnp-run. Its code is the library lnp_run (Sources/lnp-run), which the tests link too.
launcherMain()

// Reads, while the environment is still as lnp-run left it, which lnp-run to ask (the
// settings themselves are fetched from it at first need). Hooks called before this (from
// another library's constructor) find lnp-run through the process's ancestors instead.
// At exit, records that could not be sent are reported if they can be now.
#include "lnp_core.h"

__attribute__((constructor)) static void lnp_start(void) { lnp_core_start(); }

__attribute__((destructor)) static void lnp_finish(void) { lnp_core_finish(); }

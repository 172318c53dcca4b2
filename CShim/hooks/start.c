// Reads the settings while the environment is still as lnp-run left it. Hooks called
// before this (from another library's constructor) read them on first use instead.
#include "lnp_core.h"

__attribute__((constructor)) static void lnp_start(void) { lnp_core_start(); }

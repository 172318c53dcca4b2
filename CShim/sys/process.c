// The environment, as the C library holds it.
#include "lnp_sys.h"

extern char **environ;

char **lnp_sys_environ(void) { return environ; }

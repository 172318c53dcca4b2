// lnp-run's side of the seccomp supervisor, in C: one umbrella, so that a header added here
// is seen by the module without clearing the build's module cache.
#include "lnp_credentials.h"
#include "lnp_interrupts.h"
#include "lnp_notifications.h"
#include "lnp_seccomp.h"
#include "lnp_socket_hooks.h"
#include "lnp_spawn.h"

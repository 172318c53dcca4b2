// GNU extensions of the C library that Swift's Glibc module does not show (it is built
// without _GNU_SOURCE). Declared here as glibc declares them.
const char *strerrorname_np(int errnum);

// Process control lnp-run needs as a supervisor: prctl is variadic, which Swift cannot call,
// and signalfd's header is not part of Swift's Glibc module.
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <signal.h>

static inline int lnp_become_subreaper(void) { return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); }

/// Ignores SIGPIPE; returns whether it was ignored before (the handler constants are casts,
/// which Swift cannot compare).
static inline int lnp_ignore_sigpipe(void) { return signal(SIGPIPE, SIG_IGN) == SIG_IGN; }

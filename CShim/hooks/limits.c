// setrlimit(2), prlimit(2): lnp keeps one descriptor of the hard limit for itself — a moment's
// netlink socket to ask a route, or a record — so that a program that uses up its
// descriptors still has its operations decided and recorded. lnp-run starts programs with
// the soft limit one below the hard one; these keep it there when a program raises it.
#include <sys/resource.h>
#include <sys/syscall.h>
#include "lnp_copy.h"
#include "lnp_core.h"
#include "lnp_next.h"
#include "lnp_sys.h"

typedef int (*setrlimit_fn)(int, const struct rlimit *);
typedef int (*prlimit_fn)(pid_t, int, const struct rlimit *, struct rlimit *);

/// The limit to pass on: for the descriptor limit, a copy with the soft limit the core keeps.
static const struct rlimit *kept(int resource, const struct rlimit *limit, struct rlimit *copy) {
    if (resource != RLIMIT_NOFILE || !lnp_is_plausible(limit)) return limit;
    *copy = *limit;
    copy->rlim_cur = lnp_descriptor_soft_limit(copy->rlim_cur, copy->rlim_max);
    return copy;
}

int setrlimit(int resource, const struct rlimit *limit) {
    struct rlimit copy;
    setrlimit_fn next = (setrlimit_fn)lnp_next(LNP_NEXT_setrlimit);
    return next ? next(resource, kept(resource, limit, &copy)) : lnp_missing();
}

int prlimit(pid_t pid, int resource, const struct rlimit *limit, struct rlimit *old) {
    struct rlimit copy;
    int own = pid == 0 || pid == (pid_t)lnp_syscall6(SYS_getpid, 0, 0, 0, 0, 0, 0);
    prlimit_fn next = (prlimit_fn)lnp_next(LNP_NEXT_prlimit);
    return next ? next(pid, resource, own ? kept(resource, limit, &copy) : limit, old) : lnp_missing();
}

// The same functions under their large-file names (one function on 64-bit systems).
int setrlimit64(int, const struct rlimit *) __attribute__((alias("setrlimit")));
int prlimit64(pid_t, int, const struct rlimit *, struct rlimit *) __attribute__((alias("prlimit")));

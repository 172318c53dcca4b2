// Acting as the caller: a worker thread of lnp-run takes a notified thread's credentials
// before it makes the call for it, so that lnp-run run as root lends no program its rights.
#ifndef LNP_CREDENTIALS_H
#define LNP_CREDENTIALS_H

#include <stdint.h>
#include <sys/types.h>

enum { LNP_CREDENTIAL_GROUPS = 256 };

struct lnp_credentials {
    uint32_t uid[3];  // real, effective, saved
    uint32_t gid[3];
    int group_count;
    uint32_t groups[LNP_CREDENTIAL_GROUPS];
    uint64_t inheritable, permitted, effective;
};

/// The capability sets of thread `thread` (0: the calling one): one system call, where
/// /proc's status is a page to render and read. 0, or -1 with errno.
int lnp_thread_capabilities(int thread, uint64_t *inheritable, uint64_t *permitted, uint64_t *effective);

/// Gives the calling thread — only it: raw system calls, not the C library's wrappers, which
/// change every thread — these credentials. 0, or -1 with errno.
int lnp_assume_credentials(const struct lnp_credentials *credentials);

#endif

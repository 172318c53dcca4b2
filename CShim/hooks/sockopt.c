// setsockopt(2): joining a multicast group.
#include <errno.h>
#include <sys/socket.h>
#include "lnp_core.h"
#include "lnp_next.h"

typedef int (*setsockopt_fn)(int, int, int, const void *, socklen_t);

int setsockopt(int fd, int level, int name, const void *value, socklen_t length) {
    int denied = lnp_gate_setsockopt(fd, level, name, value, length);
    if (denied) {
        errno = denied;
        return -1;
    }
    setsockopt_fn next = (setsockopt_fn)lnp_next(LNP_NEXT_setsockopt);
    return next ? next(fd, level, name, value, length) : lnp_missing();
}

// bind(2) to a multicast or broadcast address: how a socket receives that traffic.
#include <errno.h>
#include <sys/socket.h>
#include "lnp_core.h"
#include "lnp_next.h"

typedef int (*bind_fn)(int, const struct sockaddr *, socklen_t);

int bind(int fd, const struct sockaddr *address, socklen_t length) {
    int denied = lnp_gate_bind(fd, address, length);
    if (denied) {
        errno = denied;
        return -1;
    }
    bind_fn next = (bind_fn)lnp_next(LNP_NEXT_bind);
    return next ? next(fd, address, length) : lnp_missing();
}

// bind(2) to a multicast or broadcast address: how a socket receives that traffic.
#include <errno.h>
#include <sys/socket.h>
#include "lnp_copy.h"
#include "lnp_core.h"
#include "lnp_next.h"

int bind(int fd, const struct sockaddr *address, socklen_t length) {
    struct lnp_sockaddr_copy copy;
    void *decided = lnp_copy_sockaddr(&copy, address, length);
    int denied = lnp_gate_bind(fd, decided, length);
    if (denied) {
        errno = denied;
        return -1;
    }
    lnp_bind_fn next = (lnp_bind_fn)lnp_next(LNP_NEXT_bind);
    return next ? (int)next(fd, decided, length) : lnp_missing();
}

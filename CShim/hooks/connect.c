// connect(2): outgoing TCP connections and UDP associations.
#include <errno.h>
#include <sys/socket.h>
#include "lnp_core.h"
#include "next.h"

typedef int (*connect_fn)(int, const struct sockaddr *, socklen_t);

int connect(int fd, const struct sockaddr *address, socklen_t length) {
    int denied = lnp_gate_connect(fd, address, length);
    if (denied) {
        errno = denied;
        return -1;
    }
    connect_fn next = (connect_fn)lnp_next(LNP_NEXT_CONNECT);
    return next ? next(fd, address, length) : lnp_missing();
}

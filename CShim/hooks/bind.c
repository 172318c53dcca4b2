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
    return (int)lnp_call_bind(fd, decided, length);
}

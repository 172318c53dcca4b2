// bind(2) to a multicast or broadcast address: how a socket receives that traffic.
#include <sys/socket.h>
#include "lnp_copy.h"
#include "lnp_core.h"

int bind(int fd, const struct sockaddr *address, socklen_t length) {
    struct lnp_sockaddr_copy copy;
    return (int)lnp_bind(fd, lnp_copy_sockaddr(&copy, address, length), length);
}

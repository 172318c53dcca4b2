// connect(2): outgoing TCP connections and UDP associations.
#include <sys/socket.h>
#include "lnp_core.h"

int connect(int fd, const struct sockaddr *address, socklen_t length) {
    return (int)lnp_connect(fd, address, length);
}

// sendto(2), sendmsg(2), sendmmsg(2): datagrams with a destination, and TCP Fast Open.
// sendto and sendmsg are hot: the core takes them whole (Sources/LNPCore/EntryPoints.swift).
#include <errno.h>
#include <sys/socket.h>
#include "lnp_core.h"
#include "lnp_next.h"

typedef int (*sendmmsg_fn)(int, void *, unsigned int, int);

ssize_t sendto(int fd, const void *buffer, size_t length, int flags, const struct sockaddr *address,
               socklen_t address_length) {
    return lnp_sendto(fd, buffer, length, flags, address, address_length);
}

ssize_t sendmsg(int fd, const struct msghdr *message, int flags) { return lnp_sendmsg(fd, message, flags); }

int sendmmsg(int fd, void *messages, unsigned int count, int flags) {
    int allowed = lnp_gate_sendmmsg(fd, messages, count, flags);
    if (allowed < 0) {
        errno = -allowed;
        return -1;
    }
    sendmmsg_fn next = (sendmmsg_fn)lnp_next(LNP_NEXT_sendmmsg);
    return next ? next(fd, messages, (unsigned int)allowed, flags) : lnp_missing();
}

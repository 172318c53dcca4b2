// sendto(2), sendmsg(2), sendmmsg(2): datagrams with a destination, and TCP Fast Open.
#include <errno.h>
#include <sys/socket.h>
#include "lnp_core.h"
#include "next.h"

typedef ssize_t (*sendto_fn)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);
typedef ssize_t (*sendmsg_fn)(int, const struct msghdr *, int);
typedef int (*sendmmsg_fn)(int, void *, unsigned int, int);

ssize_t sendto(int fd, const void *buffer, size_t length, int flags, const struct sockaddr *address,
               socklen_t address_length) {
    int denied = lnp_gate_send(fd, address, address_length, flags, 0);
    if (denied) {
        errno = denied;
        return -1;
    }
    sendto_fn next = (sendto_fn)lnp_next(LNP_NEXT_SENDTO);
    return next ? next(fd, buffer, length, flags, address, address_length) : lnp_missing();
}

ssize_t sendmsg(int fd, const struct msghdr *message, int flags) {
    // A NULL or unreadable header is the kernel's to refuse (EFAULT).
    if ((unsigned long)message >= 4096) {
        int denied = lnp_gate_send(fd, message->msg_name, message->msg_namelen, flags, 1);
        if (denied) {
            errno = denied;
            return -1;
        }
    }
    sendmsg_fn next = (sendmsg_fn)lnp_next(LNP_NEXT_SENDMSG);
    return next ? next(fd, message, flags) : lnp_missing();
}

int sendmmsg(int fd, void *messages, unsigned int count, int flags) {
    int allowed = lnp_gate_sendmmsg(fd, messages, count, flags);
    if (allowed < 0) {
        errno = -allowed;
        return -1;
    }
    sendmmsg_fn next = (sendmmsg_fn)lnp_next(LNP_NEXT_SENDMMSG);
    return next ? next(fd, messages, (unsigned int)allowed, flags) : lnp_missing();
}

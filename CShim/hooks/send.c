// sendto(2), sendmsg(2), sendmmsg(2): datagrams with a destination, and TCP Fast Open.
// sendto and sendmsg are hot: the core takes them whole (Sources/LNPCore/CallEntryPoints.swift).
#define _GNU_SOURCE  // struct mmsghdr
#include <sys/socket.h>
#include "lnp_batches.h"
#include "lnp_copy.h"
#include "lnp_core.h"
#include "lnp_next.h"
#include "lnp_sys.h"

ssize_t sendto(int fd, const void *buffer, size_t length, int flags, const struct sockaddr *address,
               socklen_t address_length) {
    struct lnp_sockaddr_copy copy;
    void *copied = lnp_copy_sockaddr_or_null(&copy, address, address_length);
    // No address (the kernel ignores one of length 0): send() by another name.
    if (!address || address_length == 0) return lnp_send(fd, buffer, length, flags);
    if (!copied) return lnp_call_sendto(fd, buffer, length, flags, address, address_length);  // refused unread
    return lnp_sendto(fd, buffer, length, flags, copied, address_length);
}

ssize_t sendmsg(int fd, const struct msghdr *message, int flags) {
    struct lnp_message_copy copy;
    struct msghdr *copied = lnp_copy_message(&copy, message);
    // The check for a watched bus stream inlines here (lnp_sys.h); every sendmsg pays it.
    if (lnp_bus_streams_idle()) return lnp_sendmsg(fd, copied, flags);
    return lnp_sendmsg_watching(fd, copied, flags);
}

// The next sendmmsg() returns an int, whose -1 may come with the register's upper half zero
// (glibc's does): taken as an int, or lnp_send_in_batches would read a count of 4294967295.
static long next_sendmmsg(int fd, struct lnp_mmsghdr *messages, unsigned count, int flags) {
    return (int)lnp_call_sendmmsg(fd, messages, count, flags);
}

int sendmmsg(int fd, struct mmsghdr *messages, unsigned int count, int flags) {
    return (int)lnp_send_in_batches(fd, (struct lnp_mmsghdr *)messages, count, flags, next_sendmmsg);
}

// glibc's private other name for sendmmsg, which dlsym still finds.
int __sendmmsg(int fd, struct mmsghdr *messages, unsigned int count, int flags) __attribute__((alias("sendmmsg")));

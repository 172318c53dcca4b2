// connect(2): outgoing TCP connections and UDP associations.
#include <sys/socket.h>
#include "lnp_cancellation.h"
#include "lnp_gadget.h"
#include "lnp_copy.h"
#include "lnp_core.h"
#include "lnp_next.h"

int connect(int fd, const struct sockaddr *address, socklen_t length) {
    struct lnp_sockaddr_copy copy;
    void *copied = lnp_copy_sockaddr_or_null(&copy, address, length);
    if (!copied) return (int)lnp_call_connect(fd, address, length);  // the kernel refuses it unread
    int result = (int)lnp_connect(fd, copied, length);
    // connect is a cancellation point, but made from lnp's page glibc cannot act on a
    // cancellation while it waits: it takes effect as the call returns.
    if (lnp_gadget_page) lnp_cancellation_point();
    return result;
}

// glibc's other name for connect (GLIBC_2.2.5), which programs can call or find with dlsym.
int __connect(int fd, const struct sockaddr *address, socklen_t length) __attribute__((alias("connect")));

// setsockopt(2): joining a multicast group, forcing the output interface, writing IP
// headers, source routes (lnp_option_is_read); any other option passes untouched.
#include <errno.h>
#include <sys/socket.h>
#include "lnp_copy.h"
#include "lnp_core.h"
#include "lnp_next.h"
#include "lnp_sys.h"

// Out of line, so that an option lnp does not read pays neither its frame nor its copy.
__attribute__((noinline)) static int setsockopt_read(int fd, int level, int name, const void *value, socklen_t length) {
    struct lnp_option_copy copy;
    uint32_t copied = lnp_copy_option(&copy, value, length);
    uint32_t passed = length;
    int denied = lnp_gate_setsockopt(fd, level, name, copy.bytes, copied, &passed);
    if (denied) {
        errno = denied;
        return -1;
    }
    // The copy when it holds all the kernel will read; otherwise an option lnp does not read.
    const void *handed = copied > 0 && passed <= copied ? copy.bytes : value;
    return (int)lnp_call_setsockopt(fd, level, name, handed, passed);
}

int setsockopt(int fd, int level, int name, const void *value, socklen_t length) {
    if (!lnp_option_is_read(level, name)) return (int)lnp_call_setsockopt(fd, level, name, value, length);
    return setsockopt_read(fd, level, name, value, length);
}

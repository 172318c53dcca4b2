#define _GNU_SOURCE
#include "lnp_next.h"
#include <dlfcn.h>
#include <errno.h>

#if defined(__x86_64__)
// dlsym's default version is GLIBC_2.34; the same function is there as GLIBC_2.2.5, the
// base version, which spares every process a version check at start (see libc_versions.c).
__asm__(".symver dlsym, dlsym@GLIBC_2.2.5");
#endif

static const char *const names[LNP_NEXT_COUNT] = {
    [LNP_NEXT_CONNECT] = "connect",
    [LNP_NEXT_SENDTO] = "sendto",
    [LNP_NEXT_SENDMSG] = "sendmsg",
    [LNP_NEXT_SENDMMSG] = "sendmmsg",
    [LNP_NEXT_BIND] = "bind",
    [LNP_NEXT_SETSOCKOPT] = "setsockopt",
    [LNP_NEXT_GETADDRINFO] = "getaddrinfo",
    [LNP_NEXT_GETHOSTBYNAME] = "gethostbyname",
    [LNP_NEXT_GETHOSTBYNAME2] = "gethostbyname2",
    [LNP_NEXT_GETHOSTBYNAME_R] = "gethostbyname_r",
    [LNP_NEXT_GETHOSTBYNAME2_R] = "gethostbyname2_r",
    [LNP_NEXT_SYSCALL] = "syscall",
};

void *lnp_next_found[LNP_NEXT_COUNT];

void *lnp_next_resolve(enum lnp_next_symbol symbol) {
    int saved = errno;  // dlsym may set errno; the hook's caller must not see it
    void *next = dlsym(RTLD_NEXT, names[symbol]);
    errno = saved;
    __atomic_store_n(&lnp_next_found[symbol], next, __ATOMIC_RELEASE);
    return next;
}

int lnp_missing(void) {
    errno = ENOSYS;
    return -1;
}

long lnp_fail(int error) {
    errno = error;
    return -1;
}

long lnp_call_connect_first(int fd, const void *address, uint32_t length) {
    lnp_connect_fn next = (lnp_connect_fn)lnp_next(LNP_NEXT_CONNECT);
    return next ? next(fd, address, length) : lnp_missing();
}

long lnp_call_sendto_first(int fd, const void *buffer, size_t length, int flags, const void *address,
                           uint32_t address_length) {
    lnp_sendto_fn next = (lnp_sendto_fn)lnp_next(LNP_NEXT_SENDTO);
    return next ? next(fd, buffer, length, flags, address, address_length) : lnp_missing();
}

long lnp_call_sendmsg_first(int fd, const void *message, int flags) {
    lnp_sendmsg_fn next = (lnp_sendmsg_fn)lnp_next(LNP_NEXT_SENDMSG);
    return next ? next(fd, message, flags) : lnp_missing();
}

#define _GNU_SOURCE
#include "next.h"
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

static void *found[LNP_NEXT_COUNT];

void *lnp_next(enum lnp_next_symbol symbol) {
    void *next = __atomic_load_n(&found[symbol], __ATOMIC_ACQUIRE);
    if (__builtin_expect(next == 0, 0)) {
        int saved = errno;  // dlsym may set errno; the hook's caller must not see it
        next = dlsym(RTLD_NEXT, names[symbol]);
        errno = saved;
        __atomic_store_n(&found[symbol], next, __ATOMIC_RELEASE);
    }
    return next;
}

int lnp_missing(void) {
    errno = ENOSYS;
    return -1;
}

// Thread cancellation at the calls the preload makes from lnp's page (lnp_cancellation.h).
#define _GNU_SOURCE
#include "lnp_cancellation.h"
#include <dlfcn.h>
#include <errno.h>

#if defined(__x86_64__)
__asm__(".symver dlsym, dlsym@GLIBC_2.2.5");  // as in next.c
#endif

typedef void (*lnp_testcancel_fn)(void);

/// 1 once looked up; the function itself, or NULL where there is none.
static int looked;
static lnp_testcancel_fn testcancel;

void lnp_cancellation_point(void) {
    if (!__atomic_load_n(&looked, __ATOMIC_ACQUIRE)) {
        int saved = errno;
        // In libc since glibc 2.34, in libpthread before: looked up, not linked, so that the
        // preload needs no newer C library. A program without libpthread then has no threads
        // to cancel.
        lnp_testcancel_fn found = (lnp_testcancel_fn)dlsym(RTLD_DEFAULT, "pthread_testcancel");
        errno = saved;
        __atomic_store_n(&testcancel, found, __ATOMIC_RELAXED);
        __atomic_store_n(&looked, 1, __ATOMIC_RELEASE);
    }
    lnp_testcancel_fn function = __atomic_load_n(&testcancel, __ATOMIC_RELAXED);
    if (function) function();
}

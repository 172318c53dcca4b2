// Raw system calls. The core's own I/O must never re-enter a hook: a plain call to `close`
// or `syscall` from inside the preload would bind to the preload's own exported hook.
#define _GNU_SOURCE
#include "lnp_sys.h"
#include "lnp_gadget.h"
#include <dlfcn.h>

long lnp_syscall6(long number, long a, long b, long c, long d, long e, long f) {
    // In a supervised run the core's own calls (a route question's netlink sendto) come from
    // the gadget page, so that they are not the supervisor's to decide.
    if (lnp_gadget_page) return lnp_gadget_call(number, a, b, c, d, e, f);
#if defined(__x86_64__)
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    long result;
    __asm__ volatile("syscall"
                     : "=a"(result)
                     : "a"(number), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return result;
#elif defined(__aarch64__)
    register long x8 __asm__("x8") = number;
    register long x0 __asm__("x0") = a;
    register long x1 __asm__("x1") = b;
    register long x2 __asm__("x2") = c;
    register long x3 __asm__("x3") = d;
    register long x4 __asm__("x4") = e;
    register long x5 __asm__("x5") = f;
    __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5) : "memory");
    return x0;
#else
    // Elsewhere: the C library's syscall(), found past this library, errno translated back.
    typedef long (*syscall_fn)(long, ...);
    static syscall_fn next;
    syscall_fn fn = __atomic_load_n(&next, __ATOMIC_RELAXED);
    if (!fn) {
        fn = (syscall_fn)dlsym(RTLD_NEXT, "syscall");
        __atomic_store_n(&next, fn, __ATOMIC_RELAXED);
    }
    int saved = errno;
    long result = fn(number, a, b, c, d, e, f);
    if (result == -1) result = -errno;
    errno = saved;
    return result;
#endif
}

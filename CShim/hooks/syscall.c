// syscall(2): the socket calls a program makes through syscall() are gated like the
// functions, on lnp's copy of what they point to (lnp_copy.h); every other number passes
// through with all six arguments, untouched.
#include <errno.h>
#include <stdarg.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include "lnp_batches.h"
#include "lnp_copy.h"
#include "lnp_core.h"
#include "lnp_next.h"
#include "lnp_sys.h"

typedef long (*syscall_fn)(long, ...);

/// Whether `number` is the system call of one of lnp's hooks (lnp_hooks.def).
static int is_hooked_call(long number) {
#define LNP_HOOK(name, system_call) if ((system_call) != 0 && number == (system_call)) return 1;
#define LNP_ALIAS(name, target)
#define LNP_LIBRARY_HOOK(name, file)
#include "../sys/lnp_hooks.def"
#undef LNP_HOOK
#undef LNP_ALIAS
#undef LNP_LIBRARY_HOOK
    return 0;
}

static long pass(long number, long a, long b, long c, long d, long e, long f) {
    // The system calls of lnp's hooks from the gadget page in a supervised run
    // (lnp_gadget.h); no other: a call such as clone with a stack of its own cannot return
    // through the page.
    if (lnp_gadget_page && is_hooked_call(number)) return lnp_gadget_syscall(number, a, b, c, d, e, f);
    syscall_fn next = (syscall_fn)lnp_next(LNP_NEXT_syscall);
    return next ? next(number, a, b, c, d, e, f) : lnp_missing();
}

static long refuse(int error) {
    errno = error;
    return -1;
}

static long sendmmsg_by_syscall(int fd, struct lnp_mmsghdr *messages, unsigned count, int flags) {
    return pass(SYS_sendmmsg, fd, (long)messages, count, flags, 0, 0);
}

long syscall(long number, ...) {
    va_list arguments;
    va_start(arguments, number);
    long a = va_arg(arguments, long), b = va_arg(arguments, long), c = va_arg(arguments, long);
    long d = va_arg(arguments, long), e = va_arg(arguments, long), f = va_arg(arguments, long);
    va_end(arguments);

    union {
        struct lnp_sockaddr_copy address;
        struct lnp_message_copy message;
        struct lnp_option_copy option;
        struct rlimit limit;
    } copy;
    int denied = 0;
    // socket and connect end in the next socket() and connect(), which return an int: the
    // upper half of the register is undefined (glibc's connect leaves -1 as 4294967295), so
    // their results are taken as ints, as the hooks take them.
    switch (number) {
    case SYS_socket:
        return (int)lnp_socket((int)a, (int)b, (int)c);  // (through the next socket(): the same system call)
    case SYS_connect: {
        void *address = lnp_copy_sockaddr_or_null(&copy.address, (const void *)b, (uint32_t)c);
        if (!address) break;  // no address, or one the kernel refuses unread
        return (int)lnp_connect((int)a, address, (uint32_t)c);
    }
    // sendto and sendmsg as the whole calls (through the next sendto and sendmsg, the same
    // system calls), so that a raw socket's own IP header is decided on a copy too.
    case SYS_sendto: {
        if (!e || (uint32_t)f == 0) return lnp_send((int)a, (const void *)b, (size_t)c, (int)d);  // no address
        void *address = lnp_copy_sockaddr_or_null(&copy.address, (const void *)e, (uint32_t)f);
        if (!address) break;  // an address the kernel refuses unread
        return lnp_sendto((int)a, (const void *)b, (size_t)c, (int)d, address, (uint32_t)f);
    }
    // The bytes of a stream, gated on a stream to the system bus (stream_writes.c).
    case SYS_write:
        return lnp_write((int)a, (const void *)b, (size_t)c);
    case SYS_writev:
        return lnp_writev((int)a, (const struct iovec *)b, (int)c);
    case SYS_sendmsg:
        return lnp_sendmsg_watching((int)a, lnp_copy_message(&copy.message, (const struct msghdr *)b), (int)c);
    case SYS_sendmmsg:
        return lnp_send_in_batches((int)a, (struct lnp_mmsghdr *)b, (unsigned)c, (int)d, sendmmsg_by_syscall);
    case SYS_bind:
        // Decided here and made as the system call it is, not through the next bind(): a
        // later preload whose bind() is syscall(SYS_bind) would come back here without end.
        b = (long)lnp_copy_sockaddr(&copy.address, (const void *)b, (uint32_t)c);
        denied = lnp_gate_bind((int)a, (void *)b, (uint32_t)c);
        break;
    case SYS_setrlimit:
        if ((int)a == RLIMIT_NOFILE && lnp_is_plausible((const void *)b)) {
            copy.limit = *(const struct rlimit *)b;
            copy.limit.rlim_cur = lnp_descriptor_soft_limit(copy.limit.rlim_cur, copy.limit.rlim_max);
            b = (long)&copy.limit;
        }
        break;
    case SYS_prlimit64:
        if ((a == 0 || a == lnp_syscall6(SYS_getpid, 0, 0, 0, 0, 0, 0)) && (int)b == RLIMIT_NOFILE &&
            lnp_is_plausible((const void *)c)) {
            copy.limit = *(const struct rlimit *)c;
            copy.limit.rlim_cur = lnp_descriptor_soft_limit(copy.limit.rlim_cur, copy.limit.rlim_max);
            c = (long)&copy.limit;
        }
        break;
    case SYS_setsockopt: {
        uint32_t copied = lnp_copy_option(&copy.option, (const void *)d, (uint32_t)e);
        uint32_t passed = (uint32_t)e;
        denied = lnp_gate_setsockopt((int)a, (int)b, (int)c, copy.option.bytes, copied, &passed);
        if (copied > 0 && passed <= copied) d = (long)copy.option.bytes;
        e = passed;
        break;
    }
    }
    if (denied) return refuse(denied);
    return pass(number, a, b, c, d, e, f);
}

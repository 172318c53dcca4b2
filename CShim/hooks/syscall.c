// syscall(2): the socket calls a program makes through syscall() are gated like the
// functions; every other number passes through with all six arguments, untouched.
#include <errno.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include "lnp_core.h"
#include "lnp_next.h"

typedef long (*syscall_fn)(long, ...);

static long pass(long number, long a, long b, long c, long d, long e, long f) {
    syscall_fn next = (syscall_fn)lnp_next(LNP_NEXT_syscall);
    return next ? next(number, a, b, c, d, e, f) : lnp_missing();
}

static long refuse(int error) {
    errno = error;
    return -1;
}

long syscall(long number, ...) {
    va_list arguments;
    va_start(arguments, number);
    long a = va_arg(arguments, long), b = va_arg(arguments, long), c = va_arg(arguments, long);
    long d = va_arg(arguments, long), e = va_arg(arguments, long), f = va_arg(arguments, long);
    va_end(arguments);

    int denied = 0;
    switch (number) {
    case SYS_connect:
        denied = lnp_gate_connect((int)a, (const void *)b, (uint32_t)c);
        break;
    case SYS_sendto:
        denied = lnp_gate_sendto((int)a, (const void *)e, (uint32_t)f, (int)d);
        break;
    case SYS_sendmsg:
        denied = lnp_gate_sendmsg((int)a, (const void *)b, (int)c);
        break;
    case SYS_sendmmsg: {
        int allowed = lnp_gate_sendmmsg((int)a, (void *)b, (unsigned)c, (int)d);
        if (allowed < 0) return refuse(-allowed);
        c = allowed;
        break;
    }
    case SYS_bind:
        denied = lnp_gate_bind((int)a, (const void *)b, (uint32_t)c);
        break;
    case SYS_setsockopt:
        denied = lnp_gate_setsockopt((int)a, (int)b, (int)c, (const void *)d, (uint32_t)e);
        break;
    }
    if (denied) return refuse(denied);
    return pass(number, a, b, c, d, e, f);
}

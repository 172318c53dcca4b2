// The gadget page: one page at an address lnp-run chose for the run (LNP_GADGET), holding a
// system call instruction and a return. lnp-run's seccomp filter lets the gated system calls
// made from this page through without asking the supervisor: the preload has decided them.
// Every other place they come from (a static program, a raw syscall instruction, libc's own
// calls, a child without the preload) is decided by the supervisor. A program that knows the
// page can call it too: it protects programs unaware of lnp, not hostile ones (README).
#pragma once
#include <errno.h>
#include <stdint.h>

/// The page, once mapped; NULL when there is none (no supervisor, or the address was taken).
extern void *lnp_gadget_page __attribute__((visibility("hidden")));

/// Maps the page at `address` (LNP_GADGET, read with the rest of the environment at start),
/// if it is a page's address and free.
void lnp_gadget_map(uint64_t address);

/// Whether this process has the page (for the core, which says so with its records).
static inline int lnp_gadget_mapped(void) { return __atomic_load_n(&lnp_gadget_page, __ATOMIC_ACQUIRE) != 0; }

/// System call `number` made from the page: the kernel's raw result (-errno on failure).
static inline long lnp_gadget_call(long number, long a, long b, long c, long d, long e, long f) {
#if defined(__x86_64__)
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    long result;
    // The call pushes its return address: step over the red zone the compiler may be using.
    // It reads the page's address from memory, so that no register is kept for it (every
    // free one holds an argument): a hook's way through it saves none.
    __asm__ volatile("sub $128, %%rsp\n\tcall *%[page]\n\tadd $128, %%rsp"
                     : "=a"(result)
                     : "a"(number), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9), [page] "m"(lnp_gadget_page)
                     : "rcx", "r11", "memory", "cc");
    return result;
#elif defined(__aarch64__)
    register long x8 __asm__("x8") = number;
    register long x0 __asm__("x0") = a;
    register long x1 __asm__("x1") = b;
    register long x2 __asm__("x2") = c;
    register long x3 __asm__("x3") = d;
    register long x4 __asm__("x4") = e;
    register long x5 __asm__("x5") = f;
    __asm__ volatile("blr %[page]"
                     : "+r"(x0)
                     : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5), [page] "r"(lnp_gadget_page)
                     : "x30", "memory", "cc");
    return x0;
#else
    (void)number, (void)a, (void)b, (void)c, (void)d, (void)e, (void)f;
    return -ENOSYS;
#endif
}

/// -1 with errno set to `error` (next.c): out of line, so that a hook's way to a call that
/// succeeds needs no register saved for it.
long lnp_fail(int error);

/// A C library call's result from a raw one: -1 with errno, or the value.
static inline long lnp_gadget_result(long raw) {
    if (__builtin_expect((unsigned long)raw > -4096UL, 0)) return lnp_fail((int)-raw);
    return raw;
}

/// The libc-style call through the page.
static inline long lnp_gadget_syscall(long number, long a, long b, long c, long d, long e, long f) {
    return lnp_gadget_result(lnp_gadget_call(number, a, b, c, d, e, f));
}

// The next definition of each hooked function: the C library's, or another preload's
// loaded after this one. Looked up on first use, not at start: each dlsym costs about 800
// instructions, and start-up cost is paid by every process of a wrapped program tree.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include "lnp_gadget.h"

// LNP_NEXT_connect, LNP_NEXT_sendto, …: one per hook of lnp_hooks.def.
enum lnp_next_symbol {
#define LNP_HOOK(name, system_call) LNP_NEXT_##name,
#define LNP_ALIAS(name, target)
#define LNP_LIBRARY_HOOK(name, file) LNP_NEXT_##name,
#include "../lnp_hooks.def"
#undef LNP_HOOK
#undef LNP_ALIAS
#undef LNP_LIBRARY_HOOK
    LNP_NEXT_COUNT
};

/// Looks the next definition up (dlsym), remembers it and returns it, or NULL.
void *lnp_next_resolve(enum lnp_next_symbol symbol);

/// The function `name` of the library that holds the next definition of `symbol` (a library
/// hook's companions: libdbus's message accessors), or NULL.
void *lnp_next_companion(enum lnp_next_symbol symbol, const char *name);

/// The definitions found so far; read through lnp_next().
extern void *lnp_next_found[LNP_NEXT_COUNT];

/// The next definition, or NULL if there is none (the hook then fails with ENOSYS).
static inline void *lnp_next(enum lnp_next_symbol symbol) {
    void *next = __atomic_load_n(&lnp_next_found[symbol], __ATOMIC_ACQUIRE);
    return __builtin_expect(next != 0, 1) ? next : lnp_next_resolve(symbol);
}

/// What a hook returns when it has nothing to call: -1 with errno ENOSYS.
int lnp_missing(void);

// lnp_fail(error) (lnp_gadget.h): -1 with errno set to `error`, how a denied call fails.

// The next definitions, called with the program's arguments — or, in a supervised run, the
// system call itself, made from the gadget page (lnp_gadget.h), so that what the preload
// decided is not decided again by the supervisor. The core's fast path ends in
// one of these, so that the arguments never leave their registers (see docs/design.md):
// when the definition is known it is a tail call, and when it is not, a tail call of the
// out-of-line `…_first` version, which looks it up first.

typedef long (*lnp_connect_fn)(int, const void *, uint32_t);
typedef long (*lnp_sendto_fn)(int, const void *, size_t, int, const void *, uint32_t);
typedef long (*lnp_sendmsg_fn)(int, const void *, int);
typedef long (*lnp_sendmmsg_fn)(int, void *, unsigned, int);
typedef long (*lnp_bind_fn)(int, const void *, uint32_t);
typedef long (*lnp_setsockopt_fn)(int, int, int, const void *, uint32_t);
typedef long (*lnp_socket_fn)(int, int, int);
typedef long (*lnp_write_fn)(int, const void *, size_t);
typedef long (*lnp_writev_fn)(int, const void *, int);
typedef long (*lnp_send_fn)(int, const void *, size_t, int);

long lnp_call_socket_first(int domain, int type, int protocol);
long lnp_call_connect_first(int fd, const void *address, uint32_t length);
long lnp_call_sendto_first(int fd, const void *buffer, size_t length, int flags, const void *address,
                           uint32_t address_length);
long lnp_call_sendmsg_first(int fd, const void *message, int flags);
long lnp_call_write_first(int fd, const void *buffer, size_t length);
long lnp_call_writev_first(int fd, const void *pieces, int count);
long lnp_call_send_first(int fd, const void *buffer, size_t length, int flags);
long lnp_call_sendmmsg_first(int fd, void *messages, unsigned count, int flags);
long lnp_call_bind_first(int fd, const void *address, uint32_t length);
long lnp_call_setsockopt_first(int fd, int level, int name, const void *value, uint32_t length);

static inline void *lnp_next_known(enum lnp_next_symbol symbol) {
    return __atomic_load_n(&lnp_next_found[symbol], __ATOMIC_ACQUIRE);
}

static inline long lnp_call_socket(int domain, int type, int protocol) {
    if (lnp_gadget_page) return lnp_gadget_syscall(SYS_socket, domain, type, protocol, 0, 0, 0);
    lnp_socket_fn next = (lnp_socket_fn)lnp_next_known(LNP_NEXT_socket);
    if (__builtin_expect(next != 0, 1)) return next(domain, type, protocol);
    return lnp_call_socket_first(domain, type, protocol);
}

static inline long lnp_call_connect(int fd, const void *address, uint32_t length) {
    if (lnp_gadget_page) return lnp_gadget_syscall(SYS_connect, fd, (long)address, length, 0, 0, 0);
    lnp_connect_fn next = (lnp_connect_fn)lnp_next_known(LNP_NEXT_connect);
    if (__builtin_expect(next != 0, 1)) return next(fd, address, length);
    return lnp_call_connect_first(fd, address, length);
}

static inline long lnp_call_sendto(int fd, const void *buffer, size_t length, int flags, const void *address,
                                   uint32_t address_length) {
    if (lnp_gadget_page) {
        return lnp_gadget_syscall(SYS_sendto, fd, (long)buffer, (long)length, flags, (long)address, address_length);
    }
    lnp_sendto_fn next = (lnp_sendto_fn)lnp_next_known(LNP_NEXT_sendto);
    if (__builtin_expect(next != 0, 1)) return next(fd, buffer, length, flags, address, address_length);
    return lnp_call_sendto_first(fd, buffer, length, flags, address, address_length);
}

static inline long lnp_call_sendmsg(int fd, const void *message, int flags) {
    if (lnp_gadget_page) return lnp_gadget_syscall(SYS_sendmsg, fd, (long)message, flags, 0, 0, 0);
    lnp_sendmsg_fn next = (lnp_sendmsg_fn)lnp_next_known(LNP_NEXT_sendmsg);
    if (__builtin_expect(next != 0, 1)) return next(fd, message, flags);
    return lnp_call_sendmsg_first(fd, message, flags);
}

// write, writev and send are gated only on a stream to the system bus (BusStreamGate.swift),
// which lnp sends with sendmsg; the supervisor does not watch them, so they need no page.

static inline long lnp_call_write(int fd, const void *buffer, size_t length) {
    lnp_write_fn next = (lnp_write_fn)lnp_next_known(LNP_NEXT_write);
    if (__builtin_expect(next != 0, 1)) return next(fd, buffer, length);
    return lnp_call_write_first(fd, buffer, length);
}

static inline long lnp_call_writev(int fd, const void *pieces, int count) {
    lnp_writev_fn next = (lnp_writev_fn)lnp_next_known(LNP_NEXT_writev);
    if (__builtin_expect(next != 0, 1)) return next(fd, pieces, count);
    return lnp_call_writev_first(fd, pieces, count);
}

static inline long lnp_call_send(int fd, const void *buffer, size_t length, int flags) {
    lnp_send_fn next = (lnp_send_fn)lnp_next_known(LNP_NEXT_send);
    if (__builtin_expect(next != 0, 1)) return next(fd, buffer, length, flags);
    return lnp_call_send_first(fd, buffer, length, flags);
}

// sendmmsg, bind and setsockopt: gated calls, through the page in a supervised run.

static inline long lnp_call_sendmmsg(int fd, void *messages, unsigned count, int flags) {
    if (lnp_gadget_page) return lnp_gadget_syscall(SYS_sendmmsg, fd, (long)messages, count, flags, 0, 0);
    lnp_sendmmsg_fn next = (lnp_sendmmsg_fn)lnp_next_known(LNP_NEXT_sendmmsg);
    if (__builtin_expect(next != 0, 1)) return next(fd, messages, count, flags);
    return lnp_call_sendmmsg_first(fd, messages, count, flags);
}

static inline long lnp_call_bind(int fd, const void *address, uint32_t length) {
    if (lnp_gadget_page) return lnp_gadget_syscall(SYS_bind, fd, (long)address, length, 0, 0, 0);
    lnp_bind_fn next = (lnp_bind_fn)lnp_next_known(LNP_NEXT_bind);
    if (__builtin_expect(next != 0, 1)) return next(fd, address, length);
    return lnp_call_bind_first(fd, address, length);
}

static inline long lnp_call_setsockopt(int fd, int level, int name, const void *value, uint32_t length) {
    if (lnp_gadget_page) return lnp_gadget_syscall(SYS_setsockopt, fd, level, name, (long)value, length, 0);
    lnp_setsockopt_fn next = (lnp_setsockopt_fn)lnp_next_known(LNP_NEXT_setsockopt);
    if (__builtin_expect(next != 0, 1)) return next(fd, level, name, value, length);
    return lnp_call_setsockopt_first(fd, level, name, value, length);
}

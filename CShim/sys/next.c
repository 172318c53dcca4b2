#define _GNU_SOURCE
#include "lnp_next.h"
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__x86_64__)
// dlsym's default version is GLIBC_2.34; the same function is there as GLIBC_2.2.5, the
// base version, which spares every process a version check at start (see libc_versions.c).
__asm__(".symver dlsym, dlsym@GLIBC_2.2.5");
__asm__(".symver dlopen, dlopen@GLIBC_2.2.5");
__asm__(".symver dladdr, dladdr@GLIBC_2.2.5");
#endif

// Every name lnp looks up — the hooks', their other names, the libraries of library hooks —
// in one block of characters, found by offset: a table of offsets needs no relocation when
// the library is loaded, where a table of pointers needs one per entry, which every process
// pays at start.
struct lnp_names {
#define LNP_HOOK(name, system_call) char name[sizeof(#name)];
#define LNP_ALIAS(name, target) char name[sizeof(#name)];
#define LNP_LIBRARY_HOOK(name, file) char name[sizeof(#name)]; char name##_library[sizeof(file)];
#include "lnp_hooks.def"
#undef LNP_HOOK
#undef LNP_ALIAS
#undef LNP_LIBRARY_HOOK
};

static const struct lnp_names text = {
#define LNP_HOOK(name, system_call) #name,
#define LNP_ALIAS(name, target) #name,
#define LNP_LIBRARY_HOOK(name, file) #name, file,
#include "lnp_hooks.def"
#undef LNP_HOOK
#undef LNP_ALIAS
#undef LNP_LIBRARY_HOOK
};

_Static_assert(sizeof(struct lnp_names) < 0xffff, "the names' offsets are 16 bits");

// Each hook's name, as an offset into `text`.
static const uint16_t names[LNP_NEXT_COUNT] = {
#define LNP_HOOK(name, system_call) [LNP_NEXT_##name] = offsetof(struct lnp_names, name),
#define LNP_ALIAS(name, target)
#define LNP_LIBRARY_HOOK(name, file) [LNP_NEXT_##name] = offsetof(struct lnp_names, name),
#include "lnp_hooks.def"
#undef LNP_HOOK
#undef LNP_ALIAS
#undef LNP_LIBRARY_HOOK
};

// The other name of each hook that has one, as its offset plus one (0: none): the C library
// before 2.34 defines only `__res_query` and the like (in libresolv), newer ones both.
static const uint16_t other_names[LNP_NEXT_COUNT] = {
#define LNP_HOOK(name, system_call)
#define LNP_ALIAS(name, target) [LNP_NEXT_##target] = offsetof(struct lnp_names, name) + 1,
#define LNP_LIBRARY_HOOK(name, file)
#include "lnp_hooks.def"
#undef LNP_HOOK
#undef LNP_ALIAS
#undef LNP_LIBRARY_HOOK
};

// The library of each library hook, as its offset plus one (0: none).
static const uint16_t libraries[LNP_NEXT_COUNT] = {
#define LNP_HOOK(name, system_call)
#define LNP_ALIAS(name, target)
#define LNP_LIBRARY_HOOK(name, file) [LNP_NEXT_##name] = offsetof(struct lnp_names, name##_library) + 1,
#include "lnp_hooks.def"
#undef LNP_HOOK
#undef LNP_ALIAS
#undef LNP_LIBRARY_HOOK
};

static const char *name_at(uint16_t offset) { return (const char *)&text + offset; }

void *lnp_next_found[LNP_NEXT_COUNT];

void *lnp_next_resolve(enum lnp_next_symbol symbol) {
    int saved = errno;  // dlsym may set errno; the hook's caller must not see it
    void *next = dlsym(RTLD_NEXT, name_at(names[symbol]));
    if (!next && other_names[symbol]) next = dlsym(RTLD_NEXT, name_at(other_names[symbol] - 1));
    if (!next && libraries[symbol]) {
        // Kept open: the definition must outlive any dlclose of the program's.
        void *library = dlopen(name_at(libraries[symbol] - 1), RTLD_NOLOAD | RTLD_LAZY);
        if (library) next = dlsym(library, name_at(names[symbol]));
    }
    errno = saved;
    __atomic_store_n(&lnp_next_found[symbol], next, __ATOMIC_RELEASE);
    return next;
}

void *lnp_next_companion(enum lnp_next_symbol symbol, const char *name) {
    void *next = lnp_next(symbol);
    Dl_info found;
    if (!next || !dladdr(next, &found) || !found.dli_fname) return NULL;
    int saved = errno;
    void *library = dlopen(found.dli_fname, RTLD_NOLOAD | RTLD_LAZY);
    void *companion = library ? dlsym(library, name) : NULL;
    errno = saved;
    return companion;
}

int lnp_missing(void) {
    errno = ENOSYS;
    return -1;
}

long lnp_fail(int error) {
    errno = error;
    return -1;
}

long lnp_call_socket_first(int domain, int type, int protocol) {
    lnp_socket_fn next = (lnp_socket_fn)lnp_next(LNP_NEXT_socket);
    return next ? next(domain, type, protocol) : lnp_missing();
}

long lnp_call_connect_first(int fd, const void *address, uint32_t length) {
    lnp_connect_fn next = (lnp_connect_fn)lnp_next(LNP_NEXT_connect);
    return next ? next(fd, address, length) : lnp_missing();
}

long lnp_call_sendto_first(int fd, const void *buffer, size_t length, int flags, const void *address,
                           uint32_t address_length) {
    lnp_sendto_fn next = (lnp_sendto_fn)lnp_next(LNP_NEXT_sendto);
    return next ? next(fd, buffer, length, flags, address, address_length) : lnp_missing();
}

long lnp_call_sendmsg_first(int fd, const void *message, int flags) {
    lnp_sendmsg_fn next = (lnp_sendmsg_fn)lnp_next(LNP_NEXT_sendmsg);
    return next ? next(fd, message, flags) : lnp_missing();
}

long lnp_call_write_first(int fd, const void *buffer, size_t length) {
    lnp_write_fn next = (lnp_write_fn)lnp_next(LNP_NEXT_write);
    return next ? next(fd, buffer, length) : lnp_missing();
}

long lnp_call_writev_first(int fd, const void *pieces, int count) {
    lnp_writev_fn next = (lnp_writev_fn)lnp_next(LNP_NEXT_writev);
    return next ? next(fd, pieces, count) : lnp_missing();
}

long lnp_call_send_first(int fd, const void *buffer, size_t length, int flags) {
    lnp_send_fn next = (lnp_send_fn)lnp_next(LNP_NEXT_send);
    return next ? next(fd, buffer, length, flags) : lnp_missing();
}

long lnp_call_sendmmsg_first(int fd, void *messages, unsigned count, int flags) {
    lnp_sendmmsg_fn next = (lnp_sendmmsg_fn)lnp_next(LNP_NEXT_sendmmsg);
    return next ? next(fd, messages, count, flags) : lnp_missing();
}

long lnp_call_bind_first(int fd, const void *address, uint32_t length) {
    lnp_bind_fn next = (lnp_bind_fn)lnp_next(LNP_NEXT_bind);
    return next ? next(fd, address, length) : lnp_missing();
}

long lnp_call_setsockopt_first(int fd, int level, int name, const void *value, uint32_t length) {
    lnp_setsockopt_fn next = (lnp_setsockopt_fn)lnp_next(LNP_NEXT_setsockopt);
    return next ? next(fd, level, name, value, length) : lnp_missing();
}

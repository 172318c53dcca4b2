/*
 * ne_socket.h — Apple's per-socket attribution API, for Linux programs run under lnp.
 *
 * Mark a socket's connections as initiated by the user, or by the program (the default),
 * and name the domains it connects to; lnp attaches both to the socket's local-network
 * records, as Apple's App Privacy Report does:
 *
 *     int fd = socket(AF_INET, SOCK_STREAM, 0);
 *     if (ne_socket_set_attribution(fd, NE_SOCKET_ATTRIBUTION_USER) != 0) { ... }
 *     const char *domains[] = { "printer.local" };
 *     ne_socket_set_domains(fd, domains, 1);
 *
 * Each function returns 0 or an errno value (not -1 with errno set): EINVAL for a negative
 * socket, an unknown attribution or a malformed name (over 253 characters, a label over
 * 63, or not printable ASCII); ENAMETOOLONG when the names of one call take more than
 * 1,008 bytes; EBADF or ENOTSOCK for a descriptor that is not a socket.
 *
 * Under lnp-run the calls reach liblnp.so. Without lnp they do nothing and return 0 (EINVAL
 * for a negative socket), so a program written against this header links and runs
 * anywhere, without linking anything of lnp's. Include it as <networkext/ne_socket.h>.
 */
#ifndef LNP_NE_SOCKET_H
#define LNP_NE_SOCKET_H

#include <dlfcn.h>
#include <errno.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ne_socket_attribution {
    NE_SOCKET_ATTRIBUTION_DEVELOPER = 1,
    NE_SOCKET_ATTRIBUTION_USER = 2,
} ne_socket_attribution_t;

/* The preload's implementation, if it is loaded. RTLD_DEFAULT is the null handle. */
static inline void *lnp_ne_socket_lookup_(void **cache, const char *name) {
    void *function = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
    if (!function) {
        function = dlsym((void *)0, name);
        __atomic_store_n(cache, function, __ATOMIC_RELEASE);
    }
    return function;
}

static inline int ne_socket_set_attribution(int socket, ne_socket_attribution_t attribution) {
    static void *cache;
    int (*function)(int, ne_socket_attribution_t) =
        (int (*)(int, ne_socket_attribution_t))lnp_ne_socket_lookup_(&cache, "ne_socket_set_attribution");
    if (function) return function(socket, attribution);
    return socket < 0 ? EINVAL : 0;
}

static inline int ne_socket_set_domains(int socket, const char *const *const domain_names, int domain_count) {
    static void *cache;
    int (*function)(int, const char *const *const, int) =
        (int (*)(int, const char *const *const, int))lnp_ne_socket_lookup_(&cache, "ne_socket_set_domains");
    if (function) return function(socket, domain_names, domain_count);
    return socket < 0 ? EINVAL : 0;
}

static inline int ne_socket_set_website_attribution(int socket, const char *hostname) {
    static void *cache;
    int (*function)(int, const char *) =
        (int (*)(int, const char *))lnp_ne_socket_lookup_(&cache, "ne_socket_set_website_attribution");
    if (function) return function(socket, hostname);
    return socket < 0 ? EINVAL : 0;
}

#ifdef __cplusplus
}
#endif

#endif

// rcmd(3) and rexec(3), the rsh and rexec clients. The C library looks the host up and
// connects itself, through calls no preload sees; so lnp looks the same host up first and
// decides a connect to each address it has, on the port asked. Denied, the call fails as
// when the host cannot be reached, with the line the C library prints then.
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include "lnp_copy.h"
#include "lnp_core.h"
#include "lnp_next.h"

typedef int (*getaddrinfo_fn)(const char *, const char *, const struct addrinfo *, struct addrinfo **);
typedef int (*rcmd_fn)(char **, unsigned short, const char *, const char *, const char *, int *);
typedef int (*rcmd_af_fn)(char **, unsigned short, const char *, const char *, const char *, int *, sa_family_t);
typedef int (*rexec_fn)(char **, int, const char *, const char *, const char *, int *);
typedef int (*rexec_af_fn)(char **, int, const char *, const char *, const char *, int *, sa_family_t);

/// 0, or the errno of the first address denied. `port` is in network byte order, as rcmd
/// and rexec take it.
static int decide(char **host, unsigned short port, sa_family_t family) {
    if (!lnp_is_plausible(host) || !lnp_is_plausible(*host)) return 0;
    int denied = lnp_gate_resolve(*host);
    getaddrinfo_fn lookup = (getaddrinfo_fn)lnp_next(LNP_NEXT_getaddrinfo);
    struct addrinfo hints = {.ai_family = family, .ai_socktype = SOCK_STREAM}, *found = NULL;
    if (denied || !lookup || lookup(*host, NULL, &hints, &found) != 0) return denied;  // else the C library fails alike
    for (struct addrinfo *entry = found; entry && !denied; entry = entry->ai_next) {
        struct lnp_sockaddr_copy copy;
        if (entry->ai_addrlen > sizeof copy.bytes) continue;
        lnp_copy_bytes(copy.bytes, entry->ai_addr, entry->ai_addrlen);
        ((struct sockaddr_in *)copy.bytes)->sin_port = port;  // the same place in sockaddr_in6
        denied = lnp_gate_remote_command(copy.bytes, entry->ai_addrlen, *host);
    }
    freeaddrinfo(found);
    return denied;
}

static int refuse(const char *host, int error) {
    dprintf(2, "%s: %s\n", host, strerror(error));
    errno = error;
    return -1;
}

int rcmd_af(char **host, unsigned short port, const char *local_user, const char *remote_user, const char *command,
            int *error_descriptor, sa_family_t family) {
    int denied = decide(host, port, family);
    if (denied) return refuse(*host, denied);
    rcmd_af_fn next = (rcmd_af_fn)lnp_next(LNP_NEXT_rcmd_af);
    return next ? next(host, port, local_user, remote_user, command, error_descriptor, family) : lnp_missing();
}

int rcmd(char **host, unsigned short port, const char *local_user, const char *remote_user, const char *command,
         int *error_descriptor) {
    int denied = decide(host, port, AF_INET);
    if (denied) return refuse(*host, denied);
    rcmd_fn next = (rcmd_fn)lnp_next(LNP_NEXT_rcmd);
    return next ? next(host, port, local_user, remote_user, command, error_descriptor) : lnp_missing();
}

int rexec_af(char **host, int port, const char *user, const char *password, const char *command, int *error_descriptor,
             sa_family_t family) {
    int denied = decide(host, (unsigned short)port, family);
    if (denied) return refuse(*host, denied);
    rexec_af_fn next = (rexec_af_fn)lnp_next(LNP_NEXT_rexec_af);
    return next ? next(host, port, user, password, command, error_descriptor, family) : lnp_missing();
}

int rexec(char **host, int port, const char *user, const char *password, const char *command, int *error_descriptor) {
    int denied = decide(host, (unsigned short)port, AF_INET);
    if (denied) return refuse(*host, denied);
    rexec_fn next = (rexec_fn)lnp_next(LNP_NEXT_rexec);
    return next ? next(host, port, user, password, command, error_descriptor) : lnp_missing();
}

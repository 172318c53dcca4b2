// Name resolution: a denied `.local` name fails as a name that does not exist, exactly as
// the C library reports one (EAI_NONAME; HOST_NOT_FOUND with a NULL result).
// (The resolver's own query functions are in resolver.c.)
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <netdb.h>
#include "lnp_copy.h"
#include "lnp_core.h"
#include "lnp_next.h"

typedef int (*getaddrinfo_fn)(const char *, const char *, const struct addrinfo *, struct addrinfo **);
typedef int (*getaddrinfo_a_fn)(int, struct gaicb **, int, struct sigevent *);
typedef struct hostent *(*gethostbyname_fn)(const char *);
typedef struct hostent *(*gethostbyname2_fn)(const char *, int);
typedef int (*gethostbyname_r_fn)(const char *, struct hostent *, char *, size_t, struct hostent **, int *);
typedef int (*gethostbyname2_r_fn)(const char *, int, struct hostent *, char *, size_t, struct hostent **, int *);

int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints, struct addrinfo **results) {
    if (lnp_gate_resolve(node)) return EAI_NONAME;
    getaddrinfo_fn next = (getaddrinfo_fn)lnp_next(LNP_NEXT_getaddrinfo);
    if (!next) {
        lnp_missing();  // errno ENOSYS, which EAI_SYSTEM refers to
        return EAI_SYSTEM;
    }
    int status = next(node, service, hints, results);
    if (status == 0 && results) lnp_note_addrinfo(node, *results);
    return status;
}

// A denied request is answered here, as a name that does not exist, and left out of the
// list the C library queues: glibc skips NULL entries, and still notifies when none is left.
int getaddrinfo_a(int mode, struct gaicb *list[], int count, struct sigevent *notification) {
    getaddrinfo_a_fn next = (getaddrinfo_a_fn)lnp_next(LNP_NEXT_getaddrinfo_a);
    if (!next) {
        lnp_missing();
        return EAI_SYSTEM;
    }
    if (count <= 0 || !lnp_is_plausible(list)) return next(mode, list, count, notification);
    struct gaicb *queued[count];  // as glibc's own getaddrinfo_a, which takes as much
    for (int i = 0; i < count; i++) {
        queued[i] = list[i];
        if (list[i] && lnp_is_plausible(list[i]) && lnp_gate_resolve(list[i]->ar_name)) {
            list[i]->ar_result = NULL;
            list[i]->__return = EAI_NONAME;
            queued[i] = NULL;
        }
    }
    return next(mode, queued, count, notification);
}

struct hostent *gethostbyname(const char *name) {
    if (lnp_gate_resolve(name)) {
        h_errno = HOST_NOT_FOUND;
        return NULL;
    }
    gethostbyname_fn next = (gethostbyname_fn)lnp_next(LNP_NEXT_gethostbyname);
    struct hostent *host = next ? next(name) : NULL;
    if (host) lnp_note_hostent(name, host);
    return host;
}

struct hostent *gethostbyname2(const char *name, int family) {
    if (lnp_gate_resolve(name)) {
        h_errno = HOST_NOT_FOUND;
        return NULL;
    }
    gethostbyname2_fn next = (gethostbyname2_fn)lnp_next(LNP_NEXT_gethostbyname2);
    struct hostent *host = next ? next(name, family) : NULL;
    if (host) lnp_note_hostent(name, host);
    return host;
}

int gethostbyname_r(const char *name, struct hostent *storage, char *buffer, size_t length, struct hostent **result,
                    int *error) {
    if (lnp_gate_resolve(name)) {
        *result = NULL;
        *error = HOST_NOT_FOUND;
        return 0;
    }
    gethostbyname_r_fn next = (gethostbyname_r_fn)lnp_next(LNP_NEXT_gethostbyname_r);
    if (!next) return ENOSYS;
    int status = next(name, storage, buffer, length, result, error);
    if (status == 0 && *result) lnp_note_hostent(name, *result);
    return status;
}

int gethostbyname2_r(const char *name, int family, struct hostent *storage, char *buffer, size_t length,
                     struct hostent **result, int *error) {
    if (lnp_gate_resolve(name)) {
        *result = NULL;
        *error = HOST_NOT_FOUND;
        return 0;
    }
    gethostbyname2_r_fn next = (gethostbyname2_r_fn)lnp_next(LNP_NEXT_gethostbyname2_r);
    if (!next) return ENOSYS;
    int status = next(name, family, storage, buffer, length, result, error);
    if (status == 0 && *result) lnp_note_hostent(name, *result);
    return status;
}

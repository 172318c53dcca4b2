// The resolver's own query functions: res_query, res_search, res_querydomain, res_send and
// their res_n* forms on a state of the program's own. They send DNS queries themselves, past
// every hook, so each is decided first: a `.local` name as getaddrinfo decides it, and a
// name server the program chose on the local network as a destination of the program's
// (resolv.conf's servers stay exempt, as everywhere). Denied, the call fails as the resolver
// fails: a name that does not exist (HOST_NOT_FOUND), a server it cannot reach (TRY_AGAIN).
#include <arpa/nameser.h>
#include <errno.h>
#include <netdb.h>
#include <resolv.h>
#include <stdio.h>
#include "lnp_copy.h"
#include "lnp_core.h"
#include "lnp_next.h"

typedef int (*query_fn)(const char *, int, int, unsigned char *, int);
typedef int (*querydomain_fn)(const char *, const char *, int, int, unsigned char *, int);
typedef int (*send_fn)(const unsigned char *, int, unsigned char *, int);
typedef int (*nquery_fn)(res_state, const char *, int, int, unsigned char *, int);
typedef int (*nquerydomain_fn)(res_state, const char *, const char *, int, int, unsigned char *, int);
typedef int (*nsend_fn)(res_state, const unsigned char *, int, unsigned char *, int);

/// The servers `state` will ask: for each, the IPv4 address where one is set (the program
/// may have set it), else the IPv6 one resolv.conf gave. None before the state is
/// initialised: the resolver then reads resolv.conf, whose servers are exempt.
static void copy_servers(res_state state, struct lnp_name_servers *servers) {
    servers->count = 0;
    if (!lnp_is_plausible(state) || !(state->options & RES_INIT)) return;
    int count = state->nscount < LNP_NAME_SERVER_CAPACITY ? state->nscount : LNP_NAME_SERVER_CAPACITY;
    for (int i = 0; i < count; i++) {
        const struct sockaddr_in6 *v6 = state->_u._ext.nsaddrs[i];
        const void *address = &state->nsaddr_list[i];
        uint32_t length = sizeof state->nsaddr_list[i];
        if (state->nsaddr_list[i].sin_family == 0 && lnp_is_plausible(v6)) {
            address = v6;
            length = sizeof *v6;
        }
        lnp_copy_bytes(servers->addresses[servers->count].bytes, address, length);
        servers->lengths[servers->count++] = length;
    }
}

static int refuse(res_state state, int host_error, int error) {
    h_errno = host_error;  // the thread's and the state's, as the resolver sets them
    if (lnp_is_plausible(state)) state->res_h_errno = host_error;
    errno = error;
    return -1;
}

/// 0 to go on, or -1 with h_errno and errno set.
static int decide(res_state state, const char *name) {
    int denied = lnp_gate_resolve(name);
    if (denied) return refuse(state, HOST_NOT_FOUND, denied);
    struct lnp_name_servers servers;
    copy_servers(state, &servers);
    denied = lnp_gate_name_servers(&servers, name);
    return denied ? refuse(state, TRY_AGAIN, denied) : 0;
}

/// `name.domain`, as res_querydomain asks it.
static const char *joined(char buffer[NS_MAXDNAME], const char *name, const char *domain) {
    if (!domain || !lnp_is_plausible(name)) return name;
    snprintf(buffer, NS_MAXDNAME, "%s.%s", name, domain);
    return buffer;
}

/// The name a query message asks about.
static const char *question(char buffer[NS_MAXDNAME], const unsigned char *message, int length) {
    return lnp_dns_question_name(message, length, buffer, NS_MAXDNAME) >= 0 ? buffer : NULL;
}

int res_query(const char *name, int class, int type, unsigned char *answer, int length) {
    if (decide(&_res, name)) return -1;
    query_fn next = (query_fn)lnp_next(LNP_NEXT_res_query);
    return next ? next(name, class, type, answer, length) : lnp_missing();
}

int res_search(const char *name, int class, int type, unsigned char *answer, int length) {
    if (decide(&_res, name)) return -1;
    query_fn next = (query_fn)lnp_next(LNP_NEXT_res_search);
    return next ? next(name, class, type, answer, length) : lnp_missing();
}

int res_querydomain(const char *name, const char *domain, int class, int type, unsigned char *answer, int length) {
    char full[NS_MAXDNAME];
    if (decide(&_res, joined(full, name, domain))) return -1;
    querydomain_fn next = (querydomain_fn)lnp_next(LNP_NEXT_res_querydomain);
    return next ? next(name, domain, class, type, answer, length) : lnp_missing();
}

int res_send(const unsigned char *message, int length, unsigned char *answer, int capacity) {
    char name[NS_MAXDNAME];
    if (decide(&_res, question(name, message, length))) return -1;
    send_fn next = (send_fn)lnp_next(LNP_NEXT_res_send);
    return next ? next(message, length, answer, capacity) : lnp_missing();
}

int res_nquery(res_state state, const char *name, int class, int type, unsigned char *answer, int length) {
    if (decide(state, name)) return -1;
    nquery_fn next = (nquery_fn)lnp_next(LNP_NEXT_res_nquery);
    return next ? next(state, name, class, type, answer, length) : lnp_missing();
}

int res_nsearch(res_state state, const char *name, int class, int type, unsigned char *answer, int length) {
    if (decide(state, name)) return -1;
    nquery_fn next = (nquery_fn)lnp_next(LNP_NEXT_res_nsearch);
    return next ? next(state, name, class, type, answer, length) : lnp_missing();
}

int res_nquerydomain(res_state state, const char *name, const char *domain, int class, int type, unsigned char *answer,
                     int length) {
    char full[NS_MAXDNAME];
    if (decide(state, joined(full, name, domain))) return -1;
    nquerydomain_fn next = (nquerydomain_fn)lnp_next(LNP_NEXT_res_nquerydomain);
    return next ? next(state, name, domain, class, type, answer, length) : lnp_missing();
}

int res_nsend(res_state state, const unsigned char *message, int length, unsigned char *answer, int capacity) {
    char name[NS_MAXDNAME];
    if (decide(state, question(name, message, length))) return -1;
    nsend_fn next = (nsend_fn)lnp_next(LNP_NEXT_res_nsend);
    return next ? next(state, message, length, answer, capacity) : lnp_missing();
}

// The names programs built against glibc before 2.34 call.
int __res_query(const char *, int, int, unsigned char *, int) __attribute__((alias("res_query")));
int __res_search(const char *, int, int, unsigned char *, int) __attribute__((alias("res_search")));
int __res_querydomain(const char *, const char *, int, int, unsigned char *, int)
    __attribute__((alias("res_querydomain")));
int __res_send(const unsigned char *, int, unsigned char *, int) __attribute__((alias("res_send")));
int __res_nquery(res_state, const char *, int, int, unsigned char *, int) __attribute__((alias("res_nquery")));
int __res_nsearch(res_state, const char *, int, int, unsigned char *, int) __attribute__((alias("res_nsearch")));
int __res_nquerydomain(res_state, const char *, const char *, int, int, unsigned char *, int)
    __attribute__((alias("res_nquerydomain")));
int __res_nsend(res_state, const unsigned char *, int, unsigned char *, int) __attribute__((alias("res_nsend")));

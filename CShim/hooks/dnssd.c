// Apple's Bonjour API (dns_sd.h), as Avahi's compatibility library libdns_sd and Apple's own
// client library export it: a denied operation fails at once with Apple's error — PolicyDenied,
// or NoAuth for a service type the program did not declare — and *sdRef is NULL (but for a
// browse while the person is asked, which finds nothing). The
// declarations are Apple's ABI, written here: the preload needs no Bonjour headers.
#include <stddef.h>
#include <stdint.h>
#include "lnp_bonjour.h"
#include "lnp_core.h"
#include "lnp_next.h"
#include "lnp_sys.h"

typedef struct _DNSServiceRef_t *DNSServiceRef;
typedef int32_t DNSServiceErrorType;
typedef void *callback_fn;  // the reply callbacks, passed on untouched

enum {
    kDNSServiceErr_Unknown = -65537,
    kDNSServiceErr_NoAuth = -65555,
    kDNSServiceErr_PolicyDenied = -65570,
};

typedef DNSServiceErrorType (*browse_fn)(DNSServiceRef *, uint32_t, uint32_t, const char *, const char *, callback_fn, void *);
typedef DNSServiceErrorType (*resolve_fn)(DNSServiceRef *, uint32_t, uint32_t, const char *, const char *, const char *,
                                          callback_fn, void *);
typedef DNSServiceErrorType (*register_fn)(DNSServiceRef *, uint32_t, uint32_t, const char *, const char *, const char *,
                                           const char *, uint16_t, uint16_t, const void *, callback_fn, void *);
typedef DNSServiceErrorType (*query_fn)(DNSServiceRef *, uint32_t, uint32_t, const char *, uint16_t, uint16_t, callback_fn,
                                        void *);
typedef DNSServiceErrorType (*addrinfo_fn)(DNSServiceRef *, uint32_t, uint32_t, uint32_t, const char *, callback_fn, void *);
typedef DNSServiceErrorType (*domains_fn)(DNSServiceRef *, uint32_t, uint32_t, callback_fn, void *);

// A browse made while the person is asked (--deny-while-asking) finds nothing, as Apple's
// does: the program gets a reference of lnp's own, one of these slots, whose descriptor (an
// eventfd never written) never becomes readable. Known by its address alone: lnp never reads
// through a reference the program passes.
enum { WAITING = 16 };
static struct waiting_browse {
    int taken;
    int fd;
} waiting[WAITING];

static int is_waiting(DNSServiceRef reference) {
    uintptr_t at = (uintptr_t)reference, first = (uintptr_t)&waiting[0];
    return at >= first && at < (uintptr_t)&waiting[WAITING] && (at - first) % sizeof(waiting[0]) == 0;
}

static DNSServiceErrorType start_waiting(DNSServiceRef *reference) {
    for (int slot = 0; slot < WAITING; slot++) {
        int free = 0;
        if (!__atomic_compare_exchange_n(&waiting[slot].taken, &free, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) continue;
        long fd = lnp_syscall6(SYS_eventfd2, 0, O_CLOEXEC, 0, 0, 0, 0);  // EFD_CLOEXEC is O_CLOEXEC
        if (fd < 0) {
            __atomic_store_n(&waiting[slot].taken, 0, __ATOMIC_RELEASE);
            break;
        }
        waiting[slot].fd = (int)fd;
        *reference = (DNSServiceRef)&waiting[slot];
        return 0;
    }
    *reference = NULL;
    return kDNSServiceErr_PolicyDenied;  // no slot: it fails as denied
}

/// Apple's error for an outcome lnp did not allow; the program gets no reference.
static DNSServiceErrorType refuse(DNSServiceRef *reference, int outcome) {
    if (!reference) return kDNSServiceErr_PolicyDenied;
    if (outcome == LNP_BONJOUR_WAITING) return start_waiting(reference);
    *reference = NULL;
    return outcome == LNP_BONJOUR_UNDECLARED ? kDNSServiceErr_NoAuth : kDNSServiceErr_PolicyDenied;
}

// The real call, its thread marked decided for the D-Bus hooks (bus_calls.c).
#define CALL_DECIDED(next, ...)                         \
    ({                                                  \
        int mark = lnp_mark_decided();                  \
        DNSServiceErrorType result = next(__VA_ARGS__); \
        lnp_unmark_decided(mark);                       \
        result;                                         \
    })

DNSServiceErrorType DNSServiceBrowse(DNSServiceRef *reference, uint32_t flags, uint32_t interface, const char *type,
                                     const char *domain, callback_fn callback, void *context) {
    browse_fn next = (browse_fn)lnp_next(LNP_NEXT_DNSServiceBrowse);
    if (!next) return kDNSServiceErr_Unknown;
    int outcome = lnp_gate_bonjour(LNP_BONJOUR_BROWSE, NULL, type);
    if (outcome) return refuse(reference, outcome);
    return CALL_DECIDED(next, reference, flags, interface, type, domain, callback, context);
}

DNSServiceErrorType DNSServiceResolve(DNSServiceRef *reference, uint32_t flags, uint32_t interface, const char *name,
                                      const char *type, const char *domain, callback_fn callback, void *context) {
    resolve_fn next = (resolve_fn)lnp_next(LNP_NEXT_DNSServiceResolve);
    if (!next) return kDNSServiceErr_Unknown;
    int outcome = lnp_gate_bonjour(LNP_BONJOUR_RESOLVE_SERVICE, name, type);
    if (outcome) return refuse(reference, outcome);
    return CALL_DECIDED(next, reference, flags, interface, name, type, domain, callback, context);
}

DNSServiceErrorType DNSServiceRegister(DNSServiceRef *reference, uint32_t flags, uint32_t interface, const char *name,
                                       const char *type, const char *domain, const char *host, uint16_t port,
                                       uint16_t text_length, const void *text, callback_fn callback, void *context) {
    register_fn next = (register_fn)lnp_next(LNP_NEXT_DNSServiceRegister);
    if (!next) return kDNSServiceErr_Unknown;
    int outcome = lnp_gate_bonjour(LNP_BONJOUR_REGISTER, name, type);
    if (outcome) return refuse(reference, outcome);
    return CALL_DECIDED(next, reference, flags, interface, name, type, domain, host, port, text_length, text, callback,
                        context);
}

DNSServiceErrorType DNSServiceQueryRecord(DNSServiceRef *reference, uint32_t flags, uint32_t interface, const char *name,
                                          uint16_t type, uint16_t class, callback_fn callback, void *context) {
    query_fn next = (query_fn)lnp_next(LNP_NEXT_DNSServiceQueryRecord);
    if (!next) return kDNSServiceErr_Unknown;
    int outcome = lnp_gate_bonjour(LNP_BONJOUR_QUERY, name, NULL);
    if (outcome) return refuse(reference, outcome);
    return CALL_DECIDED(next, reference, flags, interface, name, type, class, callback, context);
}

DNSServiceErrorType DNSServiceGetAddrInfo(DNSServiceRef *reference, uint32_t flags, uint32_t interface, uint32_t protocol,
                                          const char *name, callback_fn callback, void *context) {
    addrinfo_fn next = (addrinfo_fn)lnp_next(LNP_NEXT_DNSServiceGetAddrInfo);
    if (!next) return kDNSServiceErr_Unknown;
    int outcome = lnp_gate_bonjour(LNP_BONJOUR_QUERY, name, NULL);
    if (outcome) return refuse(reference, outcome);
    return CALL_DECIDED(next, reference, flags, interface, protocol, name, callback, context);
}

DNSServiceErrorType DNSServiceEnumerateDomains(DNSServiceRef *reference, uint32_t flags, uint32_t interface,
                                               callback_fn callback, void *context) {
    domains_fn next = (domains_fn)lnp_next(LNP_NEXT_DNSServiceEnumerateDomains);
    if (!next) return kDNSServiceErr_Unknown;
    int outcome = lnp_gate_bonjour(LNP_BONJOUR_DOMAINS, NULL, NULL);
    if (outcome) return refuse(reference, outcome);
    return CALL_DECIDED(next, reference, flags, interface, callback, context);
}

typedef int (*socket_of_fn)(DNSServiceRef);
typedef DNSServiceErrorType (*process_fn)(DNSServiceRef);
typedef void (*deallocate_fn)(DNSServiceRef);

int DNSServiceRefSockFD(DNSServiceRef reference) {
    if (is_waiting(reference)) return ((struct waiting_browse *)reference)->fd;
    socket_of_fn next = (socket_of_fn)lnp_next(LNP_NEXT_DNSServiceRefSockFD);
    return next ? next(reference) : -1;
}

// A waiting browse has no result to give: like Apple's, the call waits for one.
DNSServiceErrorType DNSServiceProcessResult(DNSServiceRef reference) {
    if (is_waiting(reference)) {
        uint64_t nothing;
        lnp_syscall6(SYS_read, ((struct waiting_browse *)reference)->fd, (long)&nothing, sizeof nothing, 0, 0, 0);
        return kDNSServiceErr_Unknown;
    }
    process_fn next = (process_fn)lnp_next(LNP_NEXT_DNSServiceProcessResult);
    return next ? next(reference) : kDNSServiceErr_Unknown;
}

void DNSServiceRefDeallocate(DNSServiceRef reference) {
    if (is_waiting(reference)) {
        struct waiting_browse *browse = (struct waiting_browse *)reference;
        lnp_syscall6(SYS_close, browse->fd, 0, 0, 0, 0, 0);
        __atomic_store_n(&browse->taken, 0, __ATOMIC_RELEASE);
        return;
    }
    deallocate_fn next = (deallocate_fn)lnp_next(LNP_NEXT_DNSServiceRefDeallocate);
    if (next) next(reference);
}

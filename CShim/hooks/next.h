// The next definition of each hooked function: the C library's, or another preload's
// loaded after this one. Looked up on first use, not at start: each dlsym costs about 800
// instructions, and start-up cost is paid by every process of a wrapped program tree.
#pragma once

enum lnp_next_symbol {
    LNP_NEXT_CONNECT,
    LNP_NEXT_SENDTO,
    LNP_NEXT_SENDMSG,
    LNP_NEXT_SENDMMSG,
    LNP_NEXT_BIND,
    LNP_NEXT_SETSOCKOPT,
    LNP_NEXT_GETADDRINFO,
    LNP_NEXT_GETHOSTBYNAME,
    LNP_NEXT_GETHOSTBYNAME2,
    LNP_NEXT_GETHOSTBYNAME_R,
    LNP_NEXT_GETHOSTBYNAME2_R,
    LNP_NEXT_SYSCALL,
    LNP_NEXT_COUNT
};

/// The next definition, or NULL if there is none (the hook then fails with ENOSYS).
void *lnp_next(enum lnp_next_symbol symbol);

/// What a hook returns when it has nothing to call: -1 with errno ENOSYS.
int lnp_missing(void);

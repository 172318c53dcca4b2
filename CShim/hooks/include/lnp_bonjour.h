// Between the two kinds of Bonjour hooks: a dns_sd.h function decides its operation itself,
// and the D-Bus calls the library makes for it on the same thread are not decided again.
#pragma once

/// Nonzero on a thread inside a dns_sd.h function lnp let through (dnssd.c).
int lnp_bonjour_decided(void);

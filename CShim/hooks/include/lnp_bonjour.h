// Marks on the threads inside a Bonjour call lnp has decided and let through (a dns_sd.h
// function, libdbus's blocking call), so that the library's own calls on the same thread —
// libdns_sd's D-Bus calls, libdbus's send inside its blocking call — are not decided (and
// recorded) again (decided_marks.c).
#pragma once

/// Marks the calling thread; the mark to give back, or -1 when there is no room (the inner
/// calls are then decided again).
int lnp_mark_decided(void);
void lnp_unmark_decided(int mark);
/// Nonzero on a marked thread.
int lnp_bonjour_decided(void);

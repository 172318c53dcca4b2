// connect is a cancellation point. Made from lnp's page (lnp_gadget.h), glibc cannot act on a
// cancellation while the call waits: the hook acts on it as the call returns.
#pragma once

/// pthread_testcancel(), found at run time.
void lnp_cancellation_point(void);

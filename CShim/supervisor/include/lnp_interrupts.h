// Interrupting a worker thread's blocking call: lnp-run makes a program's blocking connect or
// send on a worker, and when the program's waiting thread is sent a signal, the call is
// interrupted as the kernel would interrupt the program's own (see InterruptedCalls.swift).
#ifndef LNP_INTERRUPTS_H
#define LNP_INTERRUPTS_H

#include <pthread.h>

/// The signal lnp-run interrupts its workers with (a real-time one of its own).
int lnp_interrupt_signal(void);
/// Installs its handler, which does nothing and does not restart calls. 0, or -1 with errno.
int lnp_interrupt_install(void);
/// Lets the calling thread (a worker) be interrupted: unblocks the signal in it alone.
void lnp_interrupt_accept(void);
/// Interrupts `thread`'s system call, if it is in one. 0, or an errno.
int lnp_interrupt_thread(pthread_t thread);
/// pthread_self(), for the registry of calls in flight.
pthread_t lnp_interrupt_self(void);

#endif

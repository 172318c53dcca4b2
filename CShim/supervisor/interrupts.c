// lnp_interrupts.h.
#define _GNU_SOURCE
#include "lnp_interrupts.h"
#include <signal.h>
#include <string.h>

int lnp_interrupt_signal(void) { return SIGRTMIN + 4; }

static void interrupted(int signal_number) { (void)signal_number; }

int lnp_interrupt_install(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = interrupted;  // no SA_RESTART: the call returns EINTR
    sigemptyset(&action.sa_mask);
    return sigaction(lnp_interrupt_signal(), &action, NULL);
}

void lnp_interrupt_accept(void) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, lnp_interrupt_signal());
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

int lnp_interrupt_thread(pthread_t thread) { return pthread_kill(thread, lnp_interrupt_signal()); }

pthread_t lnp_interrupt_self(void) { return pthread_self(); }

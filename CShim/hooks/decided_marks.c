// The threads inside a Bonjour call lnp let through (lnp_bonjour.h), by pthread_self() and
// process: no thread-local storage, which would add a dynamic symbol and a loader dependency
// to the preload. A forked child finds its parent's marks, which name another process (a
// thread of its own may have the same pthread_self).
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>
#include "lnp_bonjour.h"

enum { MARKS = 32 };
static uintptr_t thread_of[MARKS];
static pid_t process_of[MARKS];
static int taken;

int lnp_mark_decided(void) {
    uintptr_t self = (uintptr_t)pthread_self();
    for (int mark = 0; mark < MARKS; mark++) {
        uintptr_t free = 0;
        if (__atomic_compare_exchange_n(&thread_of[mark], &free, self, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
            __atomic_store_n(&process_of[mark], getpid(), __ATOMIC_RELEASE);
            __atomic_fetch_add(&taken, 1, __ATOMIC_ACQ_REL);
            return mark;
        }
    }
    return -1;
}

void lnp_unmark_decided(int mark) {
    if (mark < 0) return;
    __atomic_fetch_sub(&taken, 1, __ATOMIC_ACQ_REL);
    __atomic_store_n(&thread_of[mark], 0, __ATOMIC_RELEASE);
}

int lnp_bonjour_decided(void) {
    if (!__atomic_load_n(&taken, __ATOMIC_ACQUIRE)) return 0;
    uintptr_t self = (uintptr_t)pthread_self();
    pid_t process = getpid();
    for (int mark = 0; mark < MARKS; mark++)
        if (__atomic_load_n(&thread_of[mark], __ATOMIC_ACQUIRE) == self &&
            __atomic_load_n(&process_of[mark], __ATOMIC_ACQUIRE) == process)
            return 1;
    return 0;
}

// Starting the program (Sources/lnp-run/ProcessControl.swift): a child sharing lnp-run's
// memory until its exec (as posix_spawn's), its setup, and — when the run is supervised — the
// seccomp filter installed in the child before it executes the program, its listener left in
// lnp-run's descriptor table. posix_spawn cannot install a filter.
#ifndef LNP_SPAWN_H
#define LNP_SPAWN_H

#include <signal.h>
#include <stddef.h>

struct lnp_filter_instruction {
    unsigned short code;
    unsigned char jt;
    unsigned char jf;
    unsigned int k;
};

struct lnp_spawn_request {
    const char *path;
    char *const *argv;
    char *const *envp;
    /// The signal mask the program starts with, and the signals set back to their default.
    sigset_t mask;
    sigset_t defaults;
    /// A terminal to start the program on, in a session of its own (NULL: stay in lnp-run's),
    /// and which of the standard streams (bit 0, 1, 2) it replaces.
    const char *terminal;
    int terminal_streams;
    /// The seccomp filter (NULL: none), and whether the child must set no_new_privs first
    /// (a process without CAP_SYS_ADMIN may install a filter only then).
    const struct lnp_filter_instruction *filter;
    unsigned short filter_length;
    int no_new_privs;
    /// Whether the program's notified calls wait killably (WAIT_KILLABLE_RECV, where the
    /// kernel has it); 0 behaves as a kernel without it.
    int killable_wait;
    /// `cgroup.procs` of the cgroup the program starts in, open for writing (-1: lnp-run's).
    int cgroup_procs;
    /// Where the child writes its own pid in decimal, NUL-terminated (room for 11 bytes each;
    /// NULL: none): the values of the environment's variables that must name the program's own
    /// process, which only the child knows before its exec (LISTEN_PID, WATCHDOG_PID).
    char *own_pid[2];
};

/// Which step of the child's setup failed.
enum lnp_spawn_step {
    LNP_SPAWN_FORK = 1,
    LNP_SPAWN_TERMINAL = 2,
    LNP_SPAWN_NO_NEW_PRIVS = 3,
    LNP_SPAWN_FILTER = 4,
    LNP_SPAWN_LISTENER = 5,
    LNP_SPAWN_EXEC = 6,
    LNP_SPAWN_CGROUP = 7,
};

struct lnp_spawned {
    int pid;
    /// lnp-run's copy of the filter's listener, or -1.
    int listener;
    /// On failure: the step, and its errno.
    int failed_step;
    int error;
};

/// Starts the program; 0, or -1 with `failed_step` and `error` set (the child, if any, reaped).
int lnp_spawn(const struct lnp_spawn_request *request, struct lnp_spawned *spawned);

#endif

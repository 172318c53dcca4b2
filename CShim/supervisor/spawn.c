// The program's start, in a child that shares lnp-run's memory and descriptor table until it
// executes the program (clone(CLONE_VM | CLONE_VFORK | CLONE_FILES), as posix_spawn does):
// no page tables are copied, neither process takes copy-on-write faults, and lnp-run waits
// only until the exec. The child does only system calls (no allocation: lnp-run may have
// threads), and says what failed in the memory it shares with lnp-run.
// Under valgrind, which cannot run such a child ("Unsupported clone() flags") and is how
// scripts/bench counts lnp-run's instructions, the child is a fork's, as before: it reports
// on a close-on-exec pipe, and lnp-run takes the listener from it (pidfd_getfd). lnp-run
// knows valgrind when it is built with valgrind's header (scripts/deps bench installs it).
#define _GNU_SOURCE
#include "lnp_spawn.h"
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#else
#define RUNNING_ON_VALGRIND 0
#endif

#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

/// What lnp-run and the child share: the request, and what the child leaves for lnp-run
/// (volatile: the child writes it while lnp-run is stopped in clone). A forked child
/// (`status_pipe` open) says it on the pipe instead.
struct child_state {
    const struct lnp_spawn_request *request;
    volatile int listener;
    volatile int failed_step;
    volatile int error;
    int status_pipe;
    int go_pipe;
};

/// What a forked child says on the status pipe: its listener's number, or a failed step.
struct child_message {
    int kind;  // 0: listener number in `value`; else the failed lnp_spawn_step, errno in `value`
    int value;
};

static _Noreturn void fail(struct child_state *state, int step) {
    state->error = errno;
    state->failed_step = step;
    if (state->status_pipe >= 0) {
        struct child_message message = {step, state->error};
        (void)!write(state->status_pipe, &message, sizeof message);
    }
    _exit(step == LNP_SPAWN_EXEC ? 127 : 125);
}

static void take_terminal(struct child_state *state) {
    const struct lnp_spawn_request *request = state->request;
    if (setsid() < 0) fail(state, LNP_SPAWN_TERMINAL);
    // Opened without O_NOCTTY by a session leader with none, it becomes the controlling terminal.
    int fd = open(request->terminal, O_RDWR);
    if (fd < 0) fail(state, LNP_SPAWN_TERMINAL);
    for (int stream = 0; stream <= 2; stream++) {
        if ((request->terminal_streams & (1 << stream)) && dup2(fd, stream) < 0) fail(state, LNP_SPAWN_TERMINAL);
    }
    if (fd > 2) close(fd);
}

/// Installs the filter while the child still shares lnp-run's descriptor table: the listener
/// the kernel makes lands in lnp-run's table, and its number in the shared memory.
static void install_filter(struct child_state *state) {
    const struct lnp_spawn_request *request = state->request;
    if (request->no_new_privs && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) fail(state, LNP_SPAWN_NO_NEW_PRIVS);
    struct sock_fprog program = {request->filter_length, (struct sock_filter *)request->filter};
    // Once lnp-run has read a call, only a fatal signal ends the wait: a call lnp-run makes
    // for the program must not be restarted (sent twice) or abandoned while it is made
    // (Linux 5.19; older kernels refuse the flag and run without it).
    long listener = -1;
    errno = EINVAL;
    if (request->killable_wait) {
        listener = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                           SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, &program);
    }
    if (listener < 0 && errno == EINVAL) {
        listener = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &program);
    }
    if (listener < 0) fail(state, LNP_SPAWN_FILTER);
    state->listener = (int)listener;
    if (state->status_pipe < 0) return;
    // A forked child: lnp-run takes its own copy, then says go.
    struct child_message message = {0, (int)listener};
    if (write(state->status_pipe, &message, sizeof message) != sizeof message) fail(state, LNP_SPAWN_LISTENER);
    char go;
    if (read(state->go_pipe, &go, 1) != 1) fail(state, LNP_SPAWN_LISTENER);
}

/// Writes this process's pid where the request says: the program's environment, in memory
/// this child may share with lnp-run (no allocation, no library call that may take a lock).
static void write_own_pid(const struct lnp_spawn_request *request) {
    char digits[12];
    int count = 0;
    for (long pid = syscall(SYS_getpid); pid > 0; pid /= 10) digits[count++] = (char)('0' + pid % 10);
    for (int slot = 0; slot < 2; slot++) {
        char *value = request->own_pid[slot];
        if (value == NULL) continue;
        for (int index = 0; index < count; index++) value[index] = digits[count - 1 - index];
        value[count] = 0;
    }
}

static int child(void *argument) {
    struct child_state *state = argument;
    const struct lnp_spawn_request *request = state->request;
    // Every signal is blocked (lnp_spawn): a handler of lnp-run's must not run here, on
    // lnp-run's memory, when the program's mask lets signals in before the exec. Handlers
    // go back to their default (the exec would do so anyway), and so do the signals the
    // program must start with at their default whatever lnp-run does with them.
    for (int signal_number = 1; signal_number < NSIG; signal_number++) {
        struct sigaction current;
        int caught = sigaction(signal_number, NULL, &current) == 0 && current.sa_handler != SIG_DFL && current.sa_handler != SIG_IGN;
        if (caught || sigismember(&request->defaults, signal_number) == 1) {
            struct sigaction action = {.sa_handler = SIG_DFL};
            sigaction(signal_number, &action, NULL);
        }
    }
    if (request->filter) install_filter(state);
    // From here on the descriptor table is the program's own: the terminal below replaces its
    // standard streams, not lnp-run's, and the listener is closed in it (the kernel makes it
    // close-on-exec too): the program never holds it.
    if (syscall(SYS_unshare, CLONE_FILES) < 0) fail(state, LNP_SPAWN_LISTENER);
    if (state->listener >= 0) close(state->listener);
    if (request->terminal) take_terminal(state);
    // "0": the writing process, and with it everything it starts.
    if (request->cgroup_procs >= 0 && write(request->cgroup_procs, "0", 1) != 1) fail(state, LNP_SPAWN_CGROUP);
    write_own_pid(request);
    sigprocmask(SIG_SETMASK, &request->mask, NULL);
    execve(request->path, request->argv, request->envp);
    fail(state, LNP_SPAWN_EXEC);
}

static int failed(struct lnp_spawned *spawned, int step, int error) {
    spawned->failed_step = step;
    spawned->error = error;
    if (spawned->listener >= 0) close(spawned->listener);
    spawned->listener = -1;
    if (spawned->pid > 0) {
        kill(spawned->pid, SIGKILL);
        while (waitpid(spawned->pid, NULL, 0) < 0 && errno == EINTR) {}
    }
    return -1;
}

/// lnp-run's copy of descriptor `number` of process `pid`.
static int take_descriptor(int pid, int number) {
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pidfd < 0) return -1;
    int taken = (int)syscall(SYS_pidfd_getfd, pidfd, number, 0);
    int saved = errno;
    close(pidfd);
    errno = saved;
    return taken;
}

/// The start under valgrind: a forked child, a status pipe (end of file: the program is
/// executing) and a go pipe, so that the child holds on to its listener until lnp-run has
/// taken it.
static int spawn_forked(const struct lnp_spawn_request *request, struct lnp_spawned *spawned) {
    int status[2], go[2];
    if (pipe2(status, O_CLOEXEC) < 0) return failed(spawned, LNP_SPAWN_FORK, errno);
    if (pipe2(go, O_CLOEXEC) < 0) {
        int error = errno;
        close(status[0]);
        close(status[1]);
        return failed(spawned, LNP_SPAWN_FORK, error);
    }
    int pid = fork();
    if (pid == 0) {
        // lnp-run takes the listener from this process: it must be dumpable (the keeper is not).
        prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
        close(status[0]);
        close(go[1]);
        struct child_state state = {.request = request, .listener = -1, .status_pipe = status[1], .go_pipe = go[0]};
        child(&state);
    }
    close(status[1]);
    close(go[0]);
    if (pid < 0) {
        int error = errno;
        close(status[0]);
        close(go[1]);
        return failed(spawned, LNP_SPAWN_FORK, error);
    }
    spawned->pid = pid;
    struct child_message message;
    long count;
    int error = 0;
    while ((count = read(status[0], &message, sizeof message)) == sizeof message && message.kind == 0) {
        spawned->listener = take_descriptor(pid, message.value);
        if (spawned->listener < 0) {
            error = errno;
            break;
        }
        char byte = 1;
        (void)!write(go[1], &byte, 1);
    }
    close(status[0]);
    close(go[1]);
    if (count == sizeof message && message.kind != 0) return failed(spawned, message.kind, message.value);
    if (request->filter && spawned->listener < 0) return failed(spawned, LNP_SPAWN_LISTENER, error);
    return 0;
}

int lnp_spawn(const struct lnp_spawn_request *request, struct lnp_spawned *spawned) {
    *spawned = (struct lnp_spawned){.pid = 0, .listener = -1, .failed_step = 0, .error = 0};
    if (RUNNING_ON_VALGRIND) return spawn_forked(request, spawned);
    struct child_state state = {.request = request, .listener = -1, .status_pipe = -1, .go_pipe = -1};
    // The child's stack, in this frame: lnp-run stays in clone until the child has executed
    // the program or exited (CLONE_VFORK). The child makes a handful of calls.
    _Alignas(16) char stack[16384];
    sigset_t all, saved;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &saved);
    int pid = clone(child, stack + sizeof stack, CLONE_VM | CLONE_VFORK | CLONE_FILES | SIGCHLD, &state);
    int error = errno;
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    if (pid < 0) return failed(spawned, LNP_SPAWN_FORK, error);
    spawned->pid = pid;
    spawned->listener = state.listener;
    if (state.failed_step != 0) return failed(spawned, state.failed_step, state.error);
    if (request->filter && spawned->listener < 0) return failed(spawned, LNP_SPAWN_LISTENER, 0);
    return 0;
}

// The program's start. The child does only what is safe after fork in a process that may have
// threads (system calls, no allocation), and reports a failed step on a close-on-exec pipe:
// end of file there means the program is executing.
#define _GNU_SOURCE
#include "lnp_spawn.h"
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

/// What the child says on the status pipe: its listener's number, or a failed step.
struct child_message {
    int kind;  // 0: listener number in `value`; else the failed lnp_spawn_step, errno in `value`
    int value;
};

static _Noreturn void fail(int status_pipe, int step) {
    struct child_message message = {step, errno};
    (void)!write(status_pipe, &message, sizeof message);
    _exit(step == LNP_SPAWN_EXEC ? 127 : 125);
}

static void take_terminal(const struct lnp_spawn_request *request, int status_pipe) {
    if (setsid() < 0) fail(status_pipe, LNP_SPAWN_TERMINAL);
    // Opened without O_NOCTTY by a session leader with none, it becomes the controlling terminal.
    int fd = open(request->terminal, O_RDWR);
    if (fd < 0) fail(status_pipe, LNP_SPAWN_TERMINAL);
    for (int stream = 0; stream <= 2; stream++) {
        if ((request->terminal_streams & (1 << stream)) && dup2(fd, stream) < 0) fail(status_pipe, LNP_SPAWN_TERMINAL);
    }
    if (fd > 2) close(fd);
}

/// Installs the filter; lnp-run takes the listener from this process (pidfd_getfd) before
/// this copy is closed, so the program never holds it.
static void install_filter(const struct lnp_spawn_request *request, int status_pipe, int go_pipe) {
    if (request->no_new_privs && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) fail(status_pipe, LNP_SPAWN_NO_NEW_PRIVS);
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
    if (listener < 0) fail(status_pipe, LNP_SPAWN_FILTER);
    struct child_message message = {0, (int)listener};
    if (write(status_pipe, &message, sizeof message) != sizeof message) fail(status_pipe, LNP_SPAWN_LISTENER);
    char go;
    if (read(go_pipe, &go, 1) != 1) fail(status_pipe, LNP_SPAWN_LISTENER);
    close((int)listener);
}

static _Noreturn void child(const struct lnp_spawn_request *request, int status_pipe, int go_pipe) {
    for (int signal_number = 1; signal_number < NSIG; signal_number++) {
        if (sigismember(&request->defaults, signal_number) == 1) {
            struct sigaction action = {.sa_handler = SIG_DFL};
            sigaction(signal_number, &action, NULL);
        }
    }
    if (request->terminal) take_terminal(request, status_pipe);
    // "0": the writing process, and with it everything it starts.
    if (request->cgroup_procs >= 0 && write(request->cgroup_procs, "0", 1) != 1) fail(status_pipe, LNP_SPAWN_CGROUP);
    if (request->filter) install_filter(request, status_pipe, go_pipe);
    close(go_pipe);
    sigprocmask(SIG_SETMASK, &request->mask, NULL);
    execve(request->path, request->argv, request->envp);
    fail(status_pipe, LNP_SPAWN_EXEC);
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

int lnp_spawn(const struct lnp_spawn_request *request, struct lnp_spawned *spawned) {
    *spawned = (struct lnp_spawned){.pid = 0, .listener = -1, .failed_step = 0, .error = 0};
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
        close(status[0]);
        close(go[1]);
        child(request, status[1], go[0]);
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

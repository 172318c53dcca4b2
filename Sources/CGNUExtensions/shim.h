// GNU extensions of the C library that Swift's Glibc module does not show (it is built
// without _GNU_SOURCE). Declared here as glibc declares them.
const char *strerrorname_np(int errnum);

// Process control lnp-run needs as a supervisor: prctl is variadic, which Swift cannot call,
// and signalfd's header is not part of Swift's Glibc module.
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <signal.h>

static inline int lnp_become_subreaper(void) { return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); }

/// Whether processes of this process's user that are not privileged may trace it, take its
/// descriptors (pidfd_getfd) or read its memory (the kernel's dumpable flag).
static inline int lnp_set_dumpable(int dumpable) { return prctl(PR_SET_DUMPABLE, dumpable ? 1 : 0, 0, 0, 0); }

/// Ignores SIGPIPE; returns whether it was ignored before (the handler constants are casts,
/// which Swift cannot compare).
static inline int lnp_ignore_sigpipe(void) { return signal(SIGPIPE, SIG_IGN) == SIG_IGN; }

// The run's sockets (Sources/lnp-run/RunServer.swift): credentials the kernel vouches for.
// struct ucred and SCM_CREDENTIALS are declared only under _GNU_SOURCE, which this module
// cannot count on: the kernel's layout and value, as <linux/socket.h> has them.
#include <sys/socket.h>
#include <sys/uio.h>
#include <string.h>
#include <errno.h>

struct lnp_ucred {
    int pid;
    unsigned uid;
    unsigned gid;
};
enum { LNP_SCM_CREDENTIALS = 2 };

/// Asks the kernel to attach its sender's credentials to every datagram `fd` receives.
static inline int lnp_pass_credentials(int fd) {
    int on = 1;
    return setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof on);
}

/// One datagram and the process id of its sender (0 if the kernel gave none); its length, or
/// -1 with errno. A datagram longer than `capacity` is cut (MSG_TRUNC tells the caller).
static inline long lnp_receive_with_sender(int fd, void *buffer, size_t capacity, int *pid, int *truncated) {
    struct iovec piece = {.iov_base = buffer, .iov_len = capacity};
    union {
        struct cmsghdr align;
        char bytes[CMSG_SPACE(sizeof(struct lnp_ucred))];
    } control;
    struct msghdr message = {.msg_iov = &piece, .msg_iovlen = 1, .msg_control = control.bytes,
                             .msg_controllen = sizeof control.bytes};
    long length = recvmsg(fd, &message, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    *pid = 0;
    *truncated = (message.msg_flags & MSG_TRUNC) != 0;
    if (length < 0) return length;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&message); c; c = CMSG_NXTHDR(&message, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == LNP_SCM_CREDENTIALS &&
            c->cmsg_len >= CMSG_LEN(sizeof(struct lnp_ucred))) {
            struct lnp_ucred credentials;
            memcpy(&credentials, CMSG_DATA(c), sizeof credentials);
            *pid = credentials.pid;
        }
    }
    return length;
}

/// The process at the other end of a connected unix socket, as the kernel knows it; 0 if none.
static inline int lnp_peer_pid(int fd) {
    struct lnp_ucred credentials = {0, 0, 0};
    socklen_t length = sizeof credentials;
    return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0 ? credentials.pid : 0;
}

/// accept4 (a GNU extension): a connection, close-on-exec and non-blocking; or -1.
int accept4(int fd, struct sockaddr *address, socklen_t *length, int flags);
static inline int lnp_accept_nonblocking(int fd) { return accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK); }

// The program's terminal (Sources/lnp-run/TerminalRelay.swift): ioctl is variadic, which Swift
// cannot call; posix_openpt and POSIX_SPAWN_SETSID need _GNU_SOURCE-era declarations.
#include <sys/ioctl.h>
#include <fcntl.h>
#include <stdlib.h>
#include <spawn.h>

/// A new pseudo-terminal's master, unlocked, not this process's controlling terminal; -1
/// with errno.
static inline int lnp_open_pty_master(void) {
    int fd = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return -1;
    if (grantpt(fd) != 0 || unlockpt(fd) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

/// The number of a pty master's terminal (/dev/pts/N); -1 with errno.
static inline int lnp_pty_number(int fd) {
    unsigned number = 0;
    return ioctl(fd, TIOCGPTN, &number) == 0 ? (int)number : -1;
}

/// The columns of terminal `fd`, or 0 if it does not say.
static inline int lnp_terminal_columns(int fd) {
    struct winsize size;
    return ioctl(fd, TIOCGWINSZ, &size) == 0 ? size.ws_col : 0;
}

/// The window size of terminal `from`, given to terminal `to` (whose process group hears
/// of it by SIGWINCH).
static inline int lnp_copy_window_size(int from, int to) {
    struct winsize size;
    if (ioctl(from, TIOCGWINSZ, &size) != 0) return -1;
    return ioctl(to, TIOCSWINSZ, &size);
}

/// The foreground process group of the terminal behind a pty master.
static inline int lnp_foreground_group(int fd) {
    int group = 0;
    return ioctl(fd, TIOCGPGRP, &group) == 0 ? group : -1;
}

enum { LNP_POSIX_SPAWN_SETSID = 0x80 };

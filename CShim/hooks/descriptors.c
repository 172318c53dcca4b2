// Descriptor lifetime: a socket's attribution and domains follow the socket through
// dup/dup2/dup3/F_DUPFD and are forgotten when it is closed.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <unistd.h>
#include <linux/close_range.h>
#include "lnp_core.h"
#include "next.h"

typedef int (*close_fn)(int);
typedef int (*close_range_fn)(unsigned int, unsigned int, int);
typedef void (*closefrom_fn)(int);
typedef int (*dup_fn)(int);
typedef int (*dup2_fn)(int, int);
typedef int (*dup3_fn)(int, int, int);
typedef int (*fcntl_fn)(int, int, ...);

int close(int fd) {
    lnp_fd_closing(fd);
    close_fn next = (close_fn)lnp_next(LNP_NEXT_CLOSE);
    return next ? next(fd) : lnp_missing();
}

int close_range(unsigned int first, unsigned int last, int flags) {
    if (!(flags & CLOSE_RANGE_CLOEXEC)) lnp_fd_range_closing(first, last);
    close_range_fn next = (close_range_fn)lnp_next(LNP_NEXT_CLOSE_RANGE);
    return next ? next(first, last, flags) : lnp_missing();
}

void closefrom(int first) {
    if (first >= 0) lnp_fd_range_closing((unsigned)first, ~0U);
    closefrom_fn next = (closefrom_fn)lnp_next(LNP_NEXT_CLOSEFROM);
    if (next) next(first);
}

int dup(int fd) {
    dup_fn next = (dup_fn)lnp_next(LNP_NEXT_DUP);
    int copy = next ? next(fd) : lnp_missing();
    if (copy >= 0) lnp_fd_duplicated(fd, copy);
    return copy;
}

int dup2(int fd, int target) {
    dup2_fn next = (dup2_fn)lnp_next(LNP_NEXT_DUP2);
    int copy = next ? next(fd, target) : lnp_missing();
    if (copy >= 0 && copy != fd) lnp_fd_duplicated(fd, copy);
    return copy;
}

int dup3(int fd, int target, int flags) {
    dup3_fn next = (dup3_fn)lnp_next(LNP_NEXT_DUP3);
    int copy = next ? next(fd, target, flags) : lnp_missing();
    if (copy >= 0) lnp_fd_duplicated(fd, copy);
    return copy;
}

// fcntl's third argument is an int or a pointer depending on the command; it is passed on
// as a pointer-sized value, as the C library itself reads it.
static int fcntl_through(enum lnp_next_symbol symbol, int fd, int command, void *argument) {
    fcntl_fn next = (fcntl_fn)lnp_next(symbol);
    int result = next ? next(fd, command, argument) : lnp_missing();
    if (result >= 0 && (command == F_DUPFD || command == F_DUPFD_CLOEXEC)) lnp_fd_duplicated(fd, result);
    return result;
}

int fcntl(int fd, int command, ...) {
    va_list arguments;
    va_start(arguments, command);
    void *argument = va_arg(arguments, void *);
    va_end(arguments);
    return fcntl_through(LNP_NEXT_FCNTL, fd, command, argument);
}

int fcntl64(int fd, int command, ...) {
    va_list arguments;
    va_start(arguments, command);
    void *argument = va_arg(arguments, void *);
    va_end(arguments);
    return fcntl_through(LNP_NEXT_FCNTL64, fd, command, argument);
}

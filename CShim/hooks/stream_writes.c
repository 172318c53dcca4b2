// write(2), writev(2), send(2): the bytes of a stream. Only a stream to the system bus is
// gated (its method calls to the mDNS daemons: Sources/LNPCore/BusStreamGate.swift); every
// other descriptor passes at once. write is the most frequent call of all: the core takes
// these whole, and its fast path ends in a tail call of the next definition.
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#include "lnp_core.h"

ssize_t write(int fd, const void *buffer, size_t length) { return lnp_write(fd, buffer, length); }

ssize_t writev(int fd, const struct iovec *pieces, int count) { return lnp_writev(fd, pieces, count); }

ssize_t send(int fd, const void *buffer, size_t length, int flags) { return lnp_send(fd, buffer, length, flags); }

// glibc's other names (GLIBC_2.2.5), which programs can call or find with dlsym.
ssize_t __write(int fd, const void *buffer, size_t length) __attribute__((alias("write")));
ssize_t __send(int fd, const void *buffer, size_t length, int flags) __attribute__((alias("send")));

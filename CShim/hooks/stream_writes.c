// write(2), writev(2), send(2): the bytes of a stream. Only a stream to the system bus is
// gated (its method calls to the mDNS daemons: Sources/LNPCore/BusStreamGate.swift).
// write is the most frequent call of all, so the one check every call pays — does the
// process watch any such stream? (lnp_bus_streams_idle) — is made here, where it and the call
// of the next definition inline (from Swift they are calls of their own: about 30
// instructions more per write). The core takes the call whole once a stream is watched.
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#include "lnp_core.h"
#include "lnp_next.h"
#include "lnp_sys.h"

ssize_t write(int fd, const void *buffer, size_t length) {
    if (lnp_bus_streams_idle()) return lnp_call_write(fd, buffer, length);
    return lnp_write(fd, buffer, length);
}

ssize_t writev(int fd, const struct iovec *pieces, int count) {
    if (lnp_bus_streams_idle()) return lnp_call_writev(fd, pieces, count);
    return lnp_writev(fd, pieces, count);
}

ssize_t send(int fd, const void *buffer, size_t length, int flags) {
    if (lnp_bus_streams_idle()) return lnp_call_send(fd, buffer, length, flags);
    return lnp_send(fd, buffer, length, flags);
}

// glibc's other names (GLIBC_2.2.5), which programs can call or find with dlsym.
ssize_t __write(int fd, const void *buffer, size_t length) __attribute__((alias("write")));
ssize_t __send(int fd, const void *buffer, size_t length, int flags) __attribute__((alias("send")));

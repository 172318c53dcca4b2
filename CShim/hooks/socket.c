// socket(2): a packet socket talks to the link directly, so opening one is the local-network
// operation; a raw IP socket is noted, since it may write its own IP header. Every program
// opens sockets: the core takes the call whole (Sources/LNPCore/CallEntryPoints.swift).
#include <sys/socket.h>
#include "lnp_core.h"

int socket(int domain, int type, int protocol) { return (int)lnp_socket(domain, type, protocol); }

// glibc's private other name for socket, which dlsym still finds.
int __socket(int domain, int type, int protocol) __attribute__((alias("socket")));

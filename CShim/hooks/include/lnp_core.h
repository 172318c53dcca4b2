// The policy core's entry points (Sources/LNPCore/EntryPoints.swift), as the hooks see them.
#pragma once
#include <netdb.h>
#include <stdint.h>
#include <sys/socket.h>

struct lnp_mmsghdr;

void lnp_core_start(void);

// Whole calls: decided, then passed on to the next definition or failed with the errno.
long lnp_connect(int fd, const void *address, uint32_t length);
long lnp_sendto(int fd, const void *buffer, size_t length, int flags, const void *address, uint32_t address_length);
long lnp_sendmsg(int fd, const void *message, int flags);

// 0: let the call through; otherwise the errno it fails with.
int lnp_gate_connect(int fd, const void *address, uint32_t length);
int lnp_gate_sendto(int fd, const void *address, uint32_t length, int flags);
int lnp_gate_sendmsg(int fd, const void *message, int flags);
int lnp_gate_bind(int fd, const void *address, uint32_t length);
int lnp_gate_setsockopt(int fd, int level, int name, const void *value, uint32_t length);
// How many leading messages may go, or minus the errno when the first one may not.
int lnp_gate_sendmmsg(int fd, void *messages, unsigned count, int flags);
// Nonzero: the name is a denied .local name.
int lnp_gate_resolve(const char *name);

void lnp_note_addrinfo(const char *name, const struct addrinfo *results);
void lnp_note_hostent(const char *name, const struct hostent *host);

int lnp_api_set_attribution(int fd, int attribution);
int lnp_api_set_domains(int fd, const char *const *names, int count);
int lnp_api_set_website_attribution(int fd, const char *hostname);

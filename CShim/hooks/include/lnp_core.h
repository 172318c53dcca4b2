// The policy core's entry points (Sources/LNPCore/*EntryPoints.swift), as the hooks see them.
// Pointers the core may write to are lnp's private copies (lnp_copy.h).
#pragma once
#include <netdb.h>
#include <stdint.h>
#include <sys/socket.h>

struct lnp_mmsghdr;

void lnp_core_start(void);
void lnp_core_finish(void);

// Whole calls: decided, then passed on to the next definition or failed with the errno.
// connect and sendto take lnp's copy of the address (never NULL): the hooks pass what was
// not copied straight on.
long lnp_socket(int domain, int type, int protocol);
long lnp_connect(int fd, void *address, uint32_t length);
long lnp_sendto(int fd, const void *buffer, size_t length, int flags, void *address, uint32_t address_length);
long lnp_sendmsg(int fd, struct msghdr *message, int flags);
// bind takes lnp's copy of the address, or the program's own when nothing was copied.
long lnp_bind(int fd, void *address, uint32_t length);
// sendmsg in a process that watches a stream to the system bus, whose bytes it reads first.
long lnp_sendmsg_watching(int fd, struct msghdr *message, int flags);
// The bytes of a stream: gated only on a stream to the system bus (BusStreamGate.swift).
struct iovec;
long lnp_write(int fd, const void *buffer, size_t length);
long lnp_writev(int fd, const struct iovec *pieces, int count);
long lnp_send(int fd, const void *buffer, size_t length, int flags);

// 0: let the call through; otherwise the errno it fails with.
// bind's decision alone, for syscall(SYS_bind), which makes the system call itself.
int lnp_gate_bind(int fd, void *address, uint32_t length);
// `value`: the option's first `copied` bytes; `length` is lowered to what the kernel reads of
// an option the core read, so that the copy can be handed on.
int lnp_gate_setsockopt(int fd, int level, int name, void *value, uint32_t copied, uint32_t *length);
// A run of messages: how many leading ones may go, or minus the errno when the first may not.
int lnp_gate_sendmmsg(int fd, struct lnp_mmsghdr *messages, unsigned count, int flags);
// Nonzero when sendmmsg sends `fd`'s messages one by one through lnp_sendmsg: a raw socket
// writing its own IP header, or a stream to the system bus.
int lnp_send_one_by_one(int fd);
// Nonzero: the name is a denied .local name.
int lnp_gate_resolve(const char *name);
// Operations the C library performs itself for the program (Sources/LNPCore/LibraryEntryPoints.swift):
// a query of `name` to the servers a resolver state will ask; rcmd's or rexec's connect to
// an address of `host` (a sockaddr with the port set).
struct lnp_name_servers;
int lnp_gate_name_servers(const struct lnp_name_servers *servers, const char *name);
int lnp_gate_remote_command(const void *address, uint32_t length, const char *host);
// The name a DNS query message asks about, as text in `name`; its length, or -1.
int lnp_dns_question_name(const unsigned char *message, int length, char *name, int capacity);

// Bonjour (Sources/LNPCore/BonjourEntryPoints.swift): an lnp_bonjour_call with the name and
// type the program gave (either may be NULL); a D-Bus method call, known by its interface
// (NULL when it names none), member and argument signature, with its first `count`
// arguments' text (NULL for those that are not strings). Each returns an lnp_bonjour_outcome.
int lnp_gate_bonjour(int call, const char *name, const char *type);
int lnp_bus_method_is_gated(const char *interface, const char *member, const char *signature);
int lnp_gate_bus_call(const char *interface, const char *member, const char *signature, const char *const *arguments,
                      int count);
// libdbus decides the calls on its connection `fd` itself (bus_calls.c): the gate on the
// stream lets it be.
void lnp_bus_stream_claim(int fd);

void lnp_note_addrinfo(const char *name, const struct addrinfo *results);
void lnp_note_hostent(const char *name, const struct hostent *host);

// The soft descriptor limit to set for `soft` and `hard`: one below a hard limit asked for
// (lnp keeps that descriptor), else `soft`.
uint64_t lnp_descriptor_soft_limit(uint64_t soft, uint64_t hard);

int lnp_api_set_attribution(int fd, int attribution);
int lnp_api_set_domains(int fd, const char *const *names, int count);
int lnp_api_set_website_attribution(int fd, const char *hostname);

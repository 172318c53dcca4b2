// The supervisor's calls to the kernel (Sources/LNPSupervisor): the listener's ioctls, the
// notified process's descriptors and memory. Marshalling only; each returns what the system
// call does (-1 and errno on failure).
#ifndef LNP_NOTIFICATIONS_H
#define LNP_NOTIFICATIONS_H

#include "lnp_seccomp.h"
#include <stddef.h>
#include <stdint.h>

/// One notification, as the supervisor reads it.
struct lnp_notification {
    uint64_t id;
    int thread;
    uint32_t arch;
    int number;
    uint64_t instruction_pointer;
    uint64_t arguments[6];
};

/// Waits for the next notification (the listener is blocking; poll it first).
int lnp_notification_receive(int listener, struct lnp_notification *notification);
/// The call returns `value`, or fails with `error` when it is not 0.
int lnp_notification_reply(int listener, uint64_t id, int64_t value, int error);
/// The kernel makes the call as the program asked (it reads the arguments again).
int lnp_notification_continue(int listener, uint64_t id);
/// Whether the notified thread still waits in this call (not interrupted, not gone).
int lnp_notification_is_valid(int listener, uint64_t id);
/// Wakes the notified thread on the supervisor's CPU when it is answered (Linux 6.6).
int lnp_notification_sync_wake_up(int listener);

/// A pidfd for `pid`; with `thread`, for a thread that is not its group's leader (Linux 6.9).
int lnp_pidfd_open(int pid, int thread);
/// lnp-run's copy of the process's descriptor `number` (close-on-exec).
int lnp_pidfd_getfd(int pidfd, int number);
/// Copies `length` bytes at `address` of process `pid`: the count copied, or -1.
long lnp_read_process_memory(int pid, uint64_t address, void *into, size_t length);
/// Two pieces in one call (a sendto's address and data): the bytes read, which stop at the
/// first that cannot be.
long lnp_read_process_memory_pair(int pid, uint64_t first, void *into_first, size_t first_length, uint64_t second,
                                  void *into_second, size_t second_length);
/// Writes `length` bytes to `address` of process `pid`.
long lnp_write_process_memory(int pid, uint64_t address, const void *from, size_t length);
/// Whether thread `thread` uses process `pid`'s descriptor table (kcmp KCMP_FILES): a thread
/// may have unshared it. 1, 0, or -1 when the kernel cannot tell.
int lnp_shares_descriptors(int pid, int thread);
/// Sends thread `thread` of process `pid` a signal (tgkill: only that thread of that process).
int lnp_signal_thread(int pid, int thread, int signal_number);
/// The inode of the network namespace `socket` belongs to (SIOCGSKNS), or 0.
uint64_t lnp_socket_namespace(int socket);
/// The inode of lnp-run's own network namespace, or 0.
uint64_t lnp_own_network_namespace(void);
/// Enters the network namespace `socket` belongs to, in the calling thread only.
int lnp_enter_socket_namespace(int socket);
/// Enters the network namespace open at `namespace` (this thread only): 0, or -1 with errno.
int lnp_enter_network_namespace(int namespace);
/// The cookie of the network namespace `socket` belongs to (SO_NETNS_COOKIE, Linux 5.14: one
/// call, no descriptor), or 0.
uint64_t lnp_socket_namespace_cookie(int socket);

#endif

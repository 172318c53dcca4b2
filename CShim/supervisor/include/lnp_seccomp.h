// The seccomp pieces the supervisor (Sources/LNPSupervisor) builds its filter from and answers
// notifications with: constants as the kernel defines them (some newer than this system's
// headers), and the calls Swift cannot make itself (ioctl and syscall are variadic).
#ifndef LNP_SECCOMP_H
#define LNP_SECCOMP_H

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>

enum {
    // struct seccomp_data, as the filter loads it.
    LNP_SECCOMP_NR = offsetof(struct seccomp_data, nr),
    LNP_SECCOMP_ARCH = offsetof(struct seccomp_data, arch),
    LNP_SECCOMP_IP = offsetof(struct seccomp_data, instruction_pointer),
    LNP_SECCOMP_ARGS = offsetof(struct seccomp_data, args),
    // Classic BPF, as seccomp takes it.
    LNP_BPF_LOAD_WORD = BPF_LD | BPF_W | BPF_ABS,
    LNP_BPF_JUMP_EQUAL = BPF_JMP | BPF_JEQ | BPF_K,
    LNP_BPF_JUMP_GREATER_EQUAL = BPF_JMP | BPF_JGE | BPF_K,
    LNP_BPF_JUMP_GREATER = BPF_JMP | BPF_JGT | BPF_K,
    LNP_BPF_JUMP = BPF_JMP | BPF_JA,
    LNP_BPF_AND = BPF_ALU | BPF_AND | BPF_K,
    LNP_BPF_RETURN = BPF_RET | BPF_K,
    LNP_BPF_MAX_INSTRUCTIONS = BPF_MAXINSNS,
};

static const uint32_t LNP_RET_ALLOW = SECCOMP_RET_ALLOW;
static const uint32_t LNP_RET_NOTIFY = SECCOMP_RET_USER_NOTIF;
static const uint32_t LNP_RET_ERRNO = SECCOMP_RET_ERRNO;
static const uint32_t LNP_ARCH_X86_64 = AUDIT_ARCH_X86_64;
static const uint32_t LNP_ARCH_I386 = AUDIT_ARCH_I386;
static const uint32_t LNP_ARCH_AARCH64 = AUDIT_ARCH_AARCH64;
static const uint32_t LNP_ARCH_ARM = AUDIT_ARCH_ARM;
/// x32 system calls are x86_64's with this bit set.
static const uint32_t LNP_X32_SYSCALL_BIT = 0x40000000;

/// The native system calls the filter looks at.
enum {
    LNP_NR_SOCKET = __NR_socket,
    LNP_NR_CONNECT = __NR_connect,
    LNP_NR_SENDTO = __NR_sendto,
    LNP_NR_SENDMSG = __NR_sendmsg,
    LNP_NR_SENDMMSG = __NR_sendmmsg,
    LNP_NR_BIND = __NR_bind,
    LNP_NR_SETSOCKOPT = __NR_setsockopt,
    LNP_NR_IOCTL = __NR_ioctl,
    LNP_NR_IO_URING_SETUP = 425,
};

/// Waits for the next notification; 0, or -1 with errno (ENOENT: its caller went away).
int lnp_notification_receive(int listener, struct seccomp_notif *notification);
/// Answers one: the call returns `value`, or fails with `error` (a positive errno).
int lnp_notification_reply(int listener, uint64_t id, int64_t value, int error);
/// Lets the call go on in the kernel, as the program made it.
int lnp_notification_continue(int listener, uint64_t id);
/// Whether the notification's caller is still waiting (its pid not reused meanwhile).
int lnp_notification_is_valid(int listener, uint64_t id);
/// Asks the kernel to wake the caller on the supervisor's CPU when answered (6.6+); 0 or -1.
int lnp_notification_sync_wake_up(int listener);

/// A pidfd for `pid`, which may name a thread (PIDFD_THREAD, 6.9+, when `thread` is set).
int lnp_pidfd_open(int pid, int thread);
/// This process's copy of descriptor `number` of the process behind `pidfd`.
int lnp_pidfd_getfd(int pidfd, int number);
/// Reads `length` bytes at `address` in process `pid`; the count read, or -1 with errno.
long lnp_read_process_memory(int pid, uint64_t address, void *into, size_t length);
/// The inode of the network namespace `socket` belongs to (SIOCGSKNS), or 0.
uint64_t lnp_socket_namespace(int socket);

#endif

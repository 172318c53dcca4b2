// The seccomp pieces the supervisor (Sources/LNPSupervisor) builds its filter from: constants
// as the kernel defines them.
#ifndef LNP_SECCOMP_H
#define LNP_SECCOMP_H

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <asm/ioctls.h>
#include <errno.h>
#include <netinet/in.h>
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

/// What the filter compares arguments with, and answers, besides what LNPSys names.
enum {
    LNP_IP_MULTICAST_IF = IP_MULTICAST_IF,
    LNP_IPV6_MULTICAST_IF = IPV6_MULTICAST_IF,
    LNP_TIOCSTI = TIOCSTI,
    LNP_ENOSYS = ENOSYS,
};

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

#endif

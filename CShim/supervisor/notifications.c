// The supervisor's calls to the kernel: marshalling only.
#define _GNU_SOURCE
#include "lnp_notifications.h"
#include <errno.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

// Newer than some headers this builds with.
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif
#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif
#ifndef SIOCGSKNS
#define SIOCGSKNS 0x894C
#endif

int lnp_notification_receive(int listener, struct lnp_notification *notification) {
    struct seccomp_notif received = {0};
    int result = ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &received);
    if (result < 0) return result;
    notification->id = received.id;
    notification->thread = (int)received.pid;
    notification->arch = received.data.arch;
    notification->number = received.data.nr;
    notification->instruction_pointer = received.data.instruction_pointer;
    for (int i = 0; i < 6; i++) notification->arguments[i] = received.data.args[i];
    return 0;
}

int lnp_notification_reply(int listener, uint64_t id, int64_t value, int error) {
    struct seccomp_notif_resp response = {.id = id, .val = error ? 0 : value, .error = error ? -error : 0, .flags = 0};
    return ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &response);
}

int lnp_notification_continue(int listener, uint64_t id) {
    struct seccomp_notif_resp response = {.id = id, .val = 0, .error = 0, .flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE};
    return ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &response);
}

int lnp_notification_is_valid(int listener, uint64_t id) {
    return ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

int lnp_notification_sync_wake_up(int listener) {
    return ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP, 0);
}

int lnp_pidfd_open(int pid, int thread) {
    return (int)syscall(SYS_pidfd_open, pid, thread ? PIDFD_THREAD : 0);
}

int lnp_pidfd_getfd(int pidfd, int number) {
    return (int)syscall(SYS_pidfd_getfd, pidfd, number, 0);
}

long lnp_read_process_memory(int pid, uint64_t address, void *into, size_t length) {
    struct iovec local = {.iov_base = into, .iov_len = length};
    struct iovec remote = {.iov_base = (void *)(uintptr_t)address, .iov_len = length};
    return process_vm_readv(pid, &local, 1, &remote, 1, 0);
}

long lnp_read_process_memory_pair(int pid, uint64_t first, void *into_first, size_t first_length, uint64_t second,
                                  void *into_second, size_t second_length) {
    struct iovec local[2] = {{into_first, first_length}, {into_second, second_length}};
    struct iovec remote[2] = {{(void *)(uintptr_t)first, first_length}, {(void *)(uintptr_t)second, second_length}};
    return process_vm_readv(pid, local, 2, remote, 2, 0);
}

long lnp_write_process_memory(int pid, uint64_t address, const void *from, size_t length) {
    struct iovec local = {.iov_base = (void *)from, .iov_len = length};
    struct iovec remote = {.iov_base = (void *)(uintptr_t)address, .iov_len = length};
    return process_vm_writev(pid, &local, 1, &remote, 1, 0);
}

int lnp_shares_descriptors(int pid, int thread) {
    long same = syscall(SYS_kcmp, pid, thread, 2 /* KCMP_FILES */, 0, 0);
    return same < 0 ? -1 : same == 0;
}

int lnp_signal_thread(int pid, int thread, int signal_number) {
    return (int)syscall(SYS_tgkill, pid, thread, signal_number);
}

static uint64_t inode_of(int fd) {
    struct stat facts;
    return fstat(fd, &facts) == 0 ? (uint64_t)facts.st_ino : 0;
}

uint64_t lnp_socket_namespace(int socket) {
    int namespace = ioctl(socket, SIOCGSKNS);
    if (namespace < 0) return 0;
    uint64_t inode = inode_of(namespace);
    close(namespace);
    return inode;
}

uint64_t lnp_own_network_namespace(void) {
    struct stat facts;
    return stat("/proc/thread-self/ns/net", &facts) == 0 ? (uint64_t)facts.st_ino : 0;
}

int lnp_enter_socket_namespace(int socket) {
    int namespace = ioctl(socket, SIOCGSKNS);
    if (namespace < 0) return -1;
    int result = setns(namespace, CLONE_NEWNET);
    int saved = errno;
    close(namespace);
    errno = saved;
    return result;
}

int lnp_enter_network_namespace(int namespace) { return setns(namespace, CLONE_NEWNET); }

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

uint64_t lnp_socket_namespace_cookie(int socket) {
    uint64_t cookie = 0;
    socklen_t length = sizeof cookie;
    return getsockopt(socket, SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &length) == 0 ? cookie : 0;
}

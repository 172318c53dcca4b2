// System calls whose arguments are C structs: filled and read here, decided elsewhere.
#include "lnp_sys.h"
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

int lnp_sys_interface(int fd, uint32_t index, unsigned char name[IFNAMSIZ], uint32_t *flags) {
    struct ifreq request;
    memset(&request, 0, sizeof request);
    request.ifr_ifindex = (int)index;
    long rc = lnp_syscall6(SYS_ioctl, fd, SIOCGIFNAME, (long)&request, 0, 0, 0);
    if (rc < 0) return (int)rc;
    rc = lnp_syscall6(SYS_ioctl, fd, SIOCGIFFLAGS, (long)&request, 0, 0, 0);
    if (rc < 0) return (int)rc;
    memcpy(name, request.ifr_name, IFNAMSIZ);
    name[IFNAMSIZ - 1] = 0;
    *flags = (uint16_t)request.ifr_flags;
    return 0;
}

int lnp_sys_interface_index(int fd, const unsigned char *name, size_t length) {
    struct ifreq request;
    memset(&request, 0, sizeof request);
    if (length == 0 || length >= IFNAMSIZ) return -ENODEV;
    memcpy(request.ifr_name, name, length);
    long rc = lnp_syscall6(SYS_ioctl, fd, SIOCGIFINDEX, (long)&request, 0, 0, 0);
    return rc < 0 ? (int)rc : request.ifr_ifindex;
}

void *lnp_sys_map_zeroed(size_t bytes) {
    long rc = lnp_syscall6(SYS_mmap, 0, (long)bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (rc < 0 && rc > -4096) return NULL;
    return (void *)rc;
}

// The clocks are read with a system call, not the C library's vDSO function: a first call
// through the library's lazily bound PLT would have the loader save every vector register
// on the stack (about 2.7 KB with AVX-512) deep inside a hook, which may run in a signal
// handler on a small alternate stack. The clock is read at most every sixteenth of a second
// per process (see Clock.swift) and once per record.
int64_t lnp_sys_half_seconds(void) {
    struct timespec now = {0, 0};
    lnp_syscall6(SYS_clock_gettime, CLOCK_REALTIME, (long)&now, 0, 0, 0, 0);
    return (int64_t)now.tv_sec * 2 + now.tv_nsec / 500000000;
}

void lnp_sys_realtime(int64_t *seconds, int32_t *microseconds) {
    struct timespec now = {0, 0};
    lnp_syscall6(SYS_clock_gettime, CLOCK_REALTIME, (long)&now, 0, 0, 0, 0);
    *seconds = now.tv_sec;
    *microseconds = (int32_t)(now.tv_nsec / 1000);
}

int64_t lnp_sys_raise_descriptor_limit(void) {
    struct rlimit limit;
    if (lnp_syscall6(SYS_prlimit64, 0, RLIMIT_NOFILE, 0, (long)&limit, 0, 0) < 0) return -1;
    if (limit.rlim_max != RLIM_INFINITY && limit.rlim_cur >= limit.rlim_max) return -1;
    int64_t old = (int64_t)limit.rlim_cur;
    limit.rlim_cur += 1;
    if (lnp_syscall6(SYS_prlimit64, 0, RLIMIT_NOFILE, (long)&limit, 0, 0, 0) < 0) return -1;
    return old;
}

void lnp_sys_restore_descriptor_limit(int64_t soft) {
    struct rlimit limit;
    if (soft < 0 || lnp_syscall6(SYS_prlimit64, 0, RLIMIT_NOFILE, 0, (long)&limit, 0, 0) < 0) return;
    limit.rlim_cur = (rlim_t)soft;
    lnp_syscall6(SYS_prlimit64, 0, RLIMIT_NOFILE, (long)&limit, 0, 0, 0);
}

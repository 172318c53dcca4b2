// System calls whose arguments are C structs: filled and read here, decided elsewhere.
#include "lnp_sys.h"
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

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

void *lnp_sys_map_zeroed(size_t bytes) {
    long rc = lnp_syscall6(SYS_mmap, 0, (long)bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (rc < 0 && rc > -4096) return NULL;
    return (void *)rc;
}

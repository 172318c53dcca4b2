// Mapping the gadget page (lnp_gadget.h), once, at start.
#define _GNU_SOURCE
#include "lnp_gadget.h"
#include "lnp_sys.h"
#include <sys/mman.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

void *lnp_gadget_page __attribute__((visibility("hidden")));

void lnp_gadget_map(uint64_t address) {
    if (address == 0 || (address & 4095) != 0) return;
    long page = lnp_syscall6(SYS_mmap, (long)address, 4096, PROT_READ | PROT_WRITE,
                             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (page != (long)address) {
        // Taken (or an old kernel that ignores NOREPLACE and put it elsewhere): no page.
        if (page > 0 && (unsigned long)page < -4096UL) lnp_syscall6(SYS_munmap, page, 4096, 0, 0, 0, 0);
        return;
    }
#if defined(__x86_64__)
    static const unsigned char code[] = {0x0f, 0x05, 0xc3};  // syscall; ret
#elif defined(__aarch64__)
    static const unsigned char code[] = {0x01, 0x00, 0x00, 0xd4, 0xc0, 0x03, 0x5f, 0xd6};  // svc #0; ret
#else
    static const unsigned char code[] = {0};
    return;
#endif
    for (unsigned i = 0; i < sizeof code; i++) ((unsigned char *)page)[i] = code[i];
#if defined(__aarch64__)
    __builtin___clear_cache((char *)page, (char *)page + sizeof code);
#endif
    if (lnp_syscall6(SYS_mprotect, page, 4096, PROT_READ | PROT_EXEC, 0, 0, 0) != 0) {
        lnp_syscall6(SYS_munmap, page, 4096, 0, 0, 0, 0);
        return;
    }
    __atomic_store_n(&lnp_gadget_page, (void *)page, __ATOMIC_RELEASE);
}

// The calling thread takes a caller's credentials: marshalling only. The C library's
// setresuid and friends change every thread of the process; the raw calls change this one.
#define _GNU_SOURCE
#include "lnp_credentials.h"
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int lnp_thread_capabilities(int thread, uint64_t *inheritable, uint64_t *permitted, uint64_t *effective) {
    struct __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = thread};
    struct __user_cap_data_struct data[2];
    if (syscall(SYS_capget, &header, data) < 0) return -1;
    *inheritable = (uint64_t)data[1].inheritable << 32 | data[0].inheritable;
    *permitted = (uint64_t)data[1].permitted << 32 | data[0].permitted;
    *effective = (uint64_t)data[1].effective << 32 | data[0].effective;
    return 0;
}

int lnp_assume_credentials(const struct lnp_credentials *c) {
    // Keep the permitted capabilities across the change of uid, to set exactly the caller's.
    if (syscall(SYS_prctl, PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0) return -1;
    gid_t groups[LNP_CREDENTIAL_GROUPS];
    for (int i = 0; i < c->group_count; i++) groups[i] = c->groups[i];
    if (syscall(SYS_setgroups, c->group_count, groups) < 0) return -1;
    if (syscall(SYS_setresgid, c->gid[0], c->gid[1], c->gid[2]) < 0) return -1;
    if (syscall(SYS_setresuid, c->uid[0], c->uid[1], c->uid[2]) < 0) return -1;
    struct __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct data[2] = {
        {.effective = (uint32_t)c->effective, .permitted = (uint32_t)c->permitted, .inheritable = (uint32_t)c->inheritable},
        {.effective = (uint32_t)(c->effective >> 32), .permitted = (uint32_t)(c->permitted >> 32),
         .inheritable = (uint32_t)(c->inheritable >> 32)},
    };
    return (int)syscall(SYS_capset, &header, data);
}

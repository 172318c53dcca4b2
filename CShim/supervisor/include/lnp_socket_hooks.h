// The kernel's cgroup socket hooks, for `lnp-run --strict` as root: in the program's cgroup, a
// connect, a UDP send with an address, or a bind on an IPv4 or IPv6 socket, and a setsockopt
// of one of the IP-level options lnp decides, are allowed only when lnp-run's own process
// makes them. Under --strict lnp-run makes every such call it allows itself, so the hooks
// refuse (EPERM) only what slipped past its look: a call the supervisor let the kernel
// continue (a Unix socket's) on whose descriptor another thread put an IP socket meanwhile.
#ifndef LNP_SOCKET_HOOKS_H
#define LNP_SOCKET_HOOKS_H

#include <stdint.h>

/// Loads the hook programs for lnp-run's process `tgid` (as the kernel's first pid namespace
/// numbers it) and attaches them to the cgroup open at `cgroup`; `options` holds `count`
/// (level, name) pairs of the setsockopt options to refuse. 0, or -1 with errno; on failure
/// nothing stays attached.
int lnp_attach_socket_hooks(int cgroup, int tgid, const uint32_t *options, int count);

#endif

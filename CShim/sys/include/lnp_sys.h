// The system layer under the policy core: raw system calls, the core's static storage,
// atomics on raw words, and the few C structs the core needs marshalled.
//
// Nothing here decides anything. Everything here is safe before constructors have run, in
// any thread, in a signal handler and in a vfork child: no locks, no allocation, no errno.
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <netinet/in.h>
#include <netdb.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <errno.h>
#include <net/if.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/fib_rules.h>
#include "lnp_copy.h"
#include "lnp_next.h"

// --- Kernel ABI values, as this platform defines them -------------------------------------

enum {
    LNP_SYS_SOCKET = SYS_socket,
    LNP_SYS_CLOSE = SYS_close,
    LNP_SYS_SENDTO = SYS_sendto,
    LNP_SYS_RECVFROM = SYS_recvfrom,
    LNP_SYS_GETSOCKOPT = SYS_getsockopt,
    LNP_SYS_SETSOCKOPT = SYS_setsockopt,
    LNP_SYS_OPENAT = SYS_openat,
    LNP_SYS_READ = SYS_read,
    LNP_SYS_WRITE = SYS_write,
    LNP_SYS_READLINKAT = SYS_readlinkat,
    LNP_SYS_GETPID = SYS_getpid,
    LNP_SYS_PRCTL = SYS_prctl,
    LNP_SYS_CONNECT = SYS_connect,
    LNP_SYS_PPOLL = SYS_ppoll,
    LNP_SYS_GETPPID = SYS_getppid,
    LNP_SYS_GETPEERNAME = SYS_getpeername,
    LNP_SYS_SHUTDOWN = SYS_shutdown,
    LNP_SYS_SCHED_YIELD = SYS_sched_yield,
    LNP_SYS_PROCESS_VM_READV = SYS_process_vm_readv,
    LNP_SYS_FCNTL = SYS_fcntl,
    LNP_SYS_PREAD64 = SYS_pread64,
};

enum { LNP_F_GETFL = F_GETFL, LNP_O_NONBLOCK = O_NONBLOCK };

enum { LNP_PR_GET_TSC = 25, LNP_PR_TSC_ENABLE = 1 };

enum {
    LNP_EINVAL = EINVAL, LNP_EHOSTUNREACH = EHOSTUNREACH, LNP_ENOMEM = ENOMEM, LNP_ENAMETOOLONG = ENAMETOOLONG,
    LNP_EMFILE = EMFILE, LNP_EINTR = EINTR, LNP_EISCONN = EISCONN, LNP_EAGAIN = EAGAIN,
    LNP_ENFILE = ENFILE, LNP_ENOBUFS = ENOBUFS, LNP_EACCES = EACCES, LNP_EPERM = EPERM,
    LNP_EAFNOSUPPORT = EAFNOSUPPORT, LNP_EIO = EIO, LNP_ECONNREFUSED = ECONNREFUSED,
    LNP_ECONNRESET = ECONNRESET, LNP_EFAULT = EFAULT, LNP_EBADF = EBADF, LNP_ENOSYS = ENOSYS,
    LNP_EMSGSIZE = EMSGSIZE,
};

enum { LNP_SHUT_RDWR = SHUT_RDWR };

// --- Between the Bonjour hooks (CShim/hooks/dnssd.c, bus_calls.c) and the core ------------

// What a dns_sd.h function asks the daemon (BonjourEntryPoints.swift).
enum lnp_bonjour_call {
    LNP_BONJOUR_BROWSE = 0,           // DNSServiceBrowse
    LNP_BONJOUR_RESOLVE_SERVICE = 1,  // DNSServiceResolve
    LNP_BONJOUR_REGISTER = 2,         // DNSServiceRegister
    LNP_BONJOUR_QUERY = 3,            // DNSServiceQueryRecord, DNSServiceGetAddrInfo: a name
    LNP_BONJOUR_DOMAINS = 4,          // DNSServiceEnumerateDomains
};

// What becomes of it; the hook gives its API's error for it.
enum lnp_bonjour_outcome {
    LNP_BONJOUR_ALLOWED = 0,
    LNP_BONJOUR_DENIED = 1,      // kDNSServiceErr_PolicyDenied; D-Bus AccessDenied
    LNP_BONJOUR_UNDECLARED = 2,  // kDNSServiceErr_NoAuth; Avahi's NotPermitted
    LNP_BONJOUR_WAITING = 3,     // a dns_sd.h browse while the person is asked: it finds nothing
};

enum { LNP_POLLOUT = 0x004 };  // <poll.h>'s POLLOUT, the same on every Linux architecture

enum {
    LNP_AF_UNSPEC = AF_UNSPEC, LNP_AF_INET = AF_INET, LNP_AF_INET6 = AF_INET6, LNP_AF_NETLINK = AF_NETLINK, LNP_AF_UNIX = AF_UNIX,
    LNP_SOCK_STREAM = SOCK_STREAM, LNP_SOCK_DGRAM = SOCK_DGRAM, LNP_SOCK_RAW = SOCK_RAW,
    LNP_SOCK_SEQPACKET = SOCK_SEQPACKET, LNP_SOCK_CLOEXEC = SOCK_CLOEXEC,
    LNP_SOL_SOCKET = SOL_SOCKET, LNP_SO_PEERNAME = SO_PEERNAME, LNP_SO_PEERCRED = SO_PEERCRED, LNP_SO_TYPE = SO_TYPE, LNP_SO_PROTOCOL = SO_PROTOCOL, LNP_SO_COOKIE = SO_COOKIE, LNP_SO_DOMAIN = SO_DOMAIN,
    LNP_SO_SNDTIMEO = SO_SNDTIMEO, LNP_SO_RCVTIMEO = SO_RCVTIMEO,
    LNP_MSG_FASTOPEN = MSG_FASTOPEN, LNP_MSG_DONTWAIT = MSG_DONTWAIT, LNP_MSG_NOSIGNAL = MSG_NOSIGNAL,
    LNP_IPPROTO_IP = IPPROTO_IP, LNP_IPPROTO_IPV6 = IPPROTO_IPV6, LNP_IPPROTO_UDPLITE = IPPROTO_UDPLITE, LNP_IPPROTO_ICMP = IPPROTO_ICMP,
    LNP_IPPROTO_ICMPV6 = IPPROTO_ICMPV6, LNP_IPPROTO_SCTP = IPPROTO_SCTP, LNP_IPPROTO_MPTCP = 262,
    LNP_IP_ADD_MEMBERSHIP = IP_ADD_MEMBERSHIP, LNP_IP_ADD_SOURCE_MEMBERSHIP = IP_ADD_SOURCE_MEMBERSHIP,
    LNP_MCAST_JOIN_GROUP = MCAST_JOIN_GROUP, LNP_MCAST_JOIN_SOURCE_GROUP = MCAST_JOIN_SOURCE_GROUP,
    LNP_IPV6_JOIN_GROUP = IPV6_JOIN_GROUP,
    LNP_IPPROTO_TCP = IPPROTO_TCP, LNP_TCP_INFO = 11, LNP_TCP_CLOSE = 7,  // <netinet/tcp.h>, <linux/tcp.h>
    // How a socket chooses its own way out (<asm-generic/socket.h>, <linux/in.h>, <linux/in6.h>).
    LNP_SO_BINDTODEVICE = 25, LNP_SO_BINDTOIFINDEX = 62, LNP_IP_UNICAST_IF = 50, LNP_IPV6_UNICAST_IF = 76,
    LNP_IP_HDRINCL = 3, LNP_IPV6_HDRINCL = 36, LNP_IPPROTO_RAW = IPPROTO_RAW,
    LNP_IP_OPTIONS = 4, LNP_IPV6_2292PKTOPTIONS = 6,  // source routes (IPV6_RTHDR: lnp_copy.h)
    LNP_AF_PACKET = 17, LNP_AF_XDP = 44, LNP_SOCK_PACKET = 10, LNP_SOCK_TYPE_MASK = 0xf,
};

enum {
    LNP_NETLINK_ROUTE = NETLINK_ROUTE, LNP_RTM_GETROUTE = RTM_GETROUTE, LNP_RTM_NEWROUTE = RTM_NEWROUTE,
    LNP_NLM_F_REQUEST = NLM_F_REQUEST, LNP_NLMSG_ERROR = NLMSG_ERROR, LNP_RTM_F_FIB_MATCH = RTM_F_FIB_MATCH,
    LNP_RTA_DST = RTA_DST, LNP_RTA_OIF = RTA_OIF, LNP_RTA_GATEWAY = RTA_GATEWAY, LNP_RTA_VIA = RTA_VIA,
    LNP_RTA_MULTIPATH = RTA_MULTIPATH, LNP_RTA_TABLE = RTA_TABLE, LNP_RTA_PRIORITY = RTA_PRIORITY,
    LNP_RTA_NH_ID = RTA_NH_ID, LNP_RTM_GETRULE = RTM_GETRULE, LNP_RTM_NEWRULE = RTM_NEWRULE,
    LNP_NLM_F_DUMP = NLM_F_DUMP, LNP_NLM_F_DUMP_INTR = NLM_F_DUMP_INTR, LNP_NLMSG_DONE = NLMSG_DONE, LNP_MSG_TRUNC = MSG_TRUNC,
    LNP_RTNH_F_DEAD = RTNH_F_DEAD, LNP_RTNH_F_LINKDOWN = RTNH_F_LINKDOWN,
    LNP_RT_TABLE_LOCAL = RT_TABLE_LOCAL, LNP_RT_TABLE_MAIN = RT_TABLE_MAIN, LNP_RT_TABLE_DEFAULT = RT_TABLE_DEFAULT,
    LNP_RTN_BLACKHOLE = RTN_BLACKHOLE, LNP_RTN_UNREACHABLE = RTN_UNREACHABLE, LNP_RTN_PROHIBIT = RTN_PROHIBIT,
    LNP_FRA_TABLE = FRA_TABLE, LNP_FRA_PRIORITY = FRA_PRIORITY, LNP_FRA_PROTOCOL = FRA_PROTOCOL,
    LNP_FRA_SUPPRESS_PREFIXLEN = FRA_SUPPRESS_PREFIXLEN, LNP_FRA_SUPPRESS_IFGROUP = FRA_SUPPRESS_IFGROUP,
    LNP_FR_ACT_TO_TBL = FR_ACT_TO_TBL,
    LNP_RTN_UNICAST = RTN_UNICAST, LNP_RTN_LOCAL = RTN_LOCAL, LNP_RTN_BROADCAST = RTN_BROADCAST,
    LNP_RTN_ANYCAST = RTN_ANYCAST, LNP_RTN_MULTICAST = RTN_MULTICAST,
    LNP_IFF_UP = IFF_UP, LNP_IFF_BROADCAST = IFF_BROADCAST, LNP_IFF_LOOPBACK = IFF_LOOPBACK,
    LNP_IFF_POINTOPOINT = IFF_POINTOPOINT,
};

enum {
    LNP_O_RDONLY = O_RDONLY, LNP_O_WRONLY = O_WRONLY, LNP_O_APPEND = O_APPEND, LNP_O_CREAT = O_CREAT,
    LNP_O_CLOEXEC = O_CLOEXEC, LNP_O_NOCTTY = O_NOCTTY, LNP_AT_FDCWD = AT_FDCWD,
};


/// The group address inside `struct group_req` / `struct group_source_req` (MCAST_JOIN_*).
enum { LNP_GROUP_REQ_ADDRESS_OFFSET = offsetof(struct group_req, gr_group) };
enum { LNP_GROUP_REQ_SIZE = sizeof(struct group_req), LNP_GROUP_SOURCE_REQ_SIZE = sizeof(struct group_source_req) };

// --- System calls ------------------------------------------------------------------------

/// A system call made directly, past every interposed symbol (ours and other preloads').
/// Returns the kernel's result: a negative errno value on failure. Never touches `errno`.
long lnp_syscall6(long number, long a, long b, long c, long d, long e, long f);

/// Wall-clock half-seconds: the stamp that expires cached routes and resolv.conf. Only
/// equality of stamps matters, so a clock set back or forward just expires them early. Read
/// with a system call (see marshal.c).
int64_t lnp_sys_half_seconds(void);

/// A tick of the CPU's cycle counter that changes at least every sixteenth of a second
/// (rdtsc >> 26 at 1 GHz or more; cntvct scaled by its frequency on arm64), plus one; 0
/// where there is no such counter. It tells the core when to read the clock again, so that
/// most calls read no clock at all.
/// The inode of `fd`'s file (a socket's, as /proc/net lists it), or 0.
static inline uint64_t lnp_sys_inode(int fd) {
    struct stat status;
    return lnp_syscall6(SYS_fstat, fd, (long)&status, 0, 0, 0, 0) == 0 ? (uint64_t)status.st_ino : 0;
}

static inline uint64_t lnp_sys_tick(void) {
#if defined(__x86_64__)
    uint32_t low, high;
    __asm__ volatile("rdtsc" : "=a"(low), "=d"(high));
    return ((((uint64_t)high << 32) | low) >> 26) + 1;
#elif defined(__aarch64__)
    uint64_t count, frequency;
    __asm__ volatile("mrs %0, cntvct_el0" : "=r"(count));
    __asm__ volatile("mrs %0, cntfrq_el0" : "=r"(frequency));
    return (count >> (63 - __builtin_clzll((frequency >> 4) | 1))) + 1;
#else
    return 0;
#endif
}

/// Whether this platform has the counter lnp_sys_tick reads.
static inline int lnp_sys_tick_available(void) {
#if defined(__x86_64__) || defined(__aarch64__)
    return 1;
#else
    return 0;
#endif
}

/// Wall-clock time, for audit records; read with a system call.
void lnp_sys_realtime(int64_t *seconds, int32_t *microseconds);

/// Raises the soft limit on open descriptors by one if the hard limit allows, so that the
/// core can open its one short-lived descriptor in a process at its limit. Returns the old
/// soft limit to restore with lnp_sys_restore_descriptor_limit, or -1 if nothing changed.
int64_t lnp_sys_raise_descriptor_limit(void);
void lnp_sys_restore_descriptor_limit(int64_t soft);

/// The name and flags of interface `index`, asked through any socket `fd`. 0 or -errno.
int lnp_sys_interface(int fd, uint32_t index, unsigned char name[IFNAMSIZ], uint32_t *flags);

/// The index of the interface named by `length` bytes of `name`, asked through any socket
/// `fd`; or -errno (ENODEV: no such interface).
int lnp_sys_interface_index(int fd, const unsigned char *name, size_t length);

/// Zeroed anonymous memory, or NULL.
void *lnp_sys_map_zeroed(size_t bytes);

/// The process environment as the C library holds it.
char **lnp_sys_environ(void);

// --- Atomics on raw 64-bit words ---------------------------------------------------------

static inline uint64_t lnp_load_acquire(const uint64_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline uint64_t lnp_load_relaxed(const uint64_t *p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
static inline void lnp_store_release(uint64_t *p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
static inline void lnp_store_relaxed(uint64_t *p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
static inline uint64_t lnp_fetch_or(uint64_t *p, uint64_t v) { return __atomic_fetch_or(p, v, __ATOMIC_ACQ_REL); }
static inline uint64_t lnp_fetch_and(uint64_t *p, uint64_t v) { return __atomic_fetch_and(p, v, __ATOMIC_ACQ_REL); }
static inline int lnp_compare_exchange(uint64_t *p, uint64_t expected, uint64_t desired) {
    return __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}
static inline uint64_t lnp_fetch_add(uint64_t *p, uint64_t v) { return __atomic_fetch_add(p, v, __ATOMIC_ACQ_REL); }
static inline void lnp_fence_acquire(void) { __atomic_thread_fence(__ATOMIC_ACQUIRE); }
static inline void lnp_fence_release(void) { __atomic_thread_fence(__ATOMIC_RELEASE); }
static inline void *lnp_load_pointer(void *const *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline int lnp_install_pointer(void **p, void *desired) {
    void *expected = 0;
    return __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

// --- The core's storage: static, zero before anything runs --------------------------------

enum {
    LNP_SETTINGS_WORDS = 9,
    LNP_PATH_CAPACITY = 4096,
    // The route cache: sets of four records, 4,096 in all (KernelRoutes.swift).
    LNP_ROUTE_CACHE_WAYS = 4,
    LNP_ROUTE_CACHE_SET_BITS = 10,
    LNP_ROUTE_CACHE_ENTRIES = LNP_ROUTE_CACHE_WAYS << LNP_ROUTE_CACHE_SET_BITS,
    LNP_ROUTE_CACHE_WORDS = 12,
    // The snapshot of the routing tables (RouteSnapshot.swift): a header, the routes, the
    // interfaces they leave through; the routes as dumped before they are settled; the
    // buffer a dump is read into.
    LNP_ROUTE_SNAPSHOT_HEADER_WORDS = 8,
    LNP_ROUTE_SNAPSHOT_ROUTES = 512,
    LNP_ROUTE_SNAPSHOT_INTERFACES = 64,
    LNP_NETLINK_DUMP_SIZE = 8192,
    LNP_EXEMPT_WORDS = 64,
    LNP_PROXY_NAMES = 4,
    LNP_PROXY_NAME_WORDS = 33,
    LNP_NAME_ENTRIES = 64,
    LNP_NAME_WORDS = 40,
    LNP_SOCKET_TAGS = 4096,
    LNP_DOMAIN_ENTRIES = 256,
    LNP_DOMAIN_WORDS = 128,
    LNP_RECORD_BUFFERS = 4,
    LNP_RECORD_BUFFER_SIZE = 8192,
    // Connections to the system bus whose stream is gated (BusStreamGate.swift): each a few
    // words, room for the start of a message written in pieces, and as much for the copy of
    // what the program writes.
    LNP_BUS_STREAMS = 16,
    LNP_BUS_STREAM_WORDS = 8,
    LNP_BUS_HOLD = 2048,
};

// Accessed on every call, so reachable without a call.
__attribute__((visibility("hidden"))) extern uint64_t lnp_route_cache_words[];
__attribute__((visibility("hidden"))) extern uint64_t lnp_clock_word;
__attribute__((visibility("hidden"))) extern uint64_t lnp_pass_not_local_word;
// The date of the day a record was last written for (Sources/LNPCore/DateCache.swift).
__attribute__((visibility("hidden"))) extern uint64_t lnp_date_word;
static inline uint64_t *lnp_storage_route_cache(void) { return lnp_route_cache_words; }
static inline uint64_t *lnp_storage_clock(void) { return &lnp_clock_word; }
static inline uint64_t *lnp_storage_pass_not_local(void) { return &lnp_pass_not_local_word; }
static inline uint64_t *lnp_storage_date(void) { return &lnp_date_word; }

uint64_t *lnp_storage_settings(void);
uint64_t *lnp_storage_route_snapshot(void);
uint64_t *lnp_storage_route_staging(void);
unsigned char *lnp_storage_netlink_dump(void);
unsigned char *lnp_storage_program(void);
uint64_t *lnp_storage_executable_words(void);
unsigned char *lnp_storage_executable_path(void);
uint64_t *lnp_storage_dns_servers(void);
uint64_t *lnp_storage_proxies(void);
uint64_t *lnp_storage_proxy_names(void);
uint64_t *lnp_storage_names(void);
void **lnp_storage_socket_tags(void);
void **lnp_storage_sent_destinations(void);
void **lnp_storage_domain_table(void);
uint64_t *lnp_storage_counters(void);
uint64_t *lnp_storage_socket_flags(void);
uint64_t *lnp_storage_record_holders(void);
unsigned char *lnp_storage_record_buffers(void);
uint64_t *lnp_storage_bus_streams(void);
unsigned char *lnp_storage_bus_stream_bytes(void);
// How many bus streams are watched: read by every write, so reachable without a call.
__attribute__((visibility("hidden"))) extern uint64_t lnp_bus_stream_count_word;
static inline uint64_t *lnp_storage_bus_stream_count(void) { return &lnp_bus_stream_count_word; }
// Whether the process watches no stream to the system bus: the one check every write, send
// and sendmsg pays, made in C by the hooks, where it inlines (from Swift it is a call).
static inline int lnp_bus_streams_idle(void) {
    return __builtin_expect(__atomic_load_n(&lnp_bus_stream_count_word, __ATOMIC_RELAXED) == 0, 1);
}

// The socket options lnp reads (Decisions.socketOption): forcing the output interface,
// writing IP headers, source routes, multicast joins. Any other option goes to the kernel
// straight from the hook, uncopied. The core's own tests check its readers against this list.
static inline int lnp_option_is_read(int level, int name) {
    switch (level) {
    case SOL_SOCKET:
        return name == LNP_SO_BINDTODEVICE || name == LNP_SO_BINDTOIFINDEX;
    case IPPROTO_IP:
        return name == LNP_IP_UNICAST_IF || name == LNP_IP_HDRINCL || name == LNP_IP_OPTIONS ||
               name == LNP_IP_ADD_MEMBERSHIP || name == LNP_IP_ADD_SOURCE_MEMBERSHIP ||
               name == LNP_MCAST_JOIN_GROUP || name == LNP_MCAST_JOIN_SOURCE_GROUP;
    case IPPROTO_IPV6:
        return name == LNP_IPV6_UNICAST_IF || name == LNP_IPV6_HDRINCL || name == LNP_IPV6_RTHDR ||
               name == LNP_IPV6_2292PKTOPTIONS || name == LNP_IPV6_JOIN_GROUP || name == LNP_MCAST_JOIN_GROUP ||
               name == LNP_MCAST_JOIN_SOURCE_GROUP;
    default:
        return 0;
    }
}

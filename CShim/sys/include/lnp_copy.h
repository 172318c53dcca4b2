// Private copies of what a call passes by pointer: the `sockaddr`, a `msghdr` with its name
// and control messages, a socket option's value. lnp decides on the copy and hands the kernel
// that same copy, so another thread rewriting the program's memory between the decision and
// the call changes neither: the kernel would otherwise read the program's memory again.
//
// A copy is made exactly when the kernel would read the memory: a NULL pointer, one that
// cannot be user memory, or a length the kernel refuses unread is passed on as it came, for
// the kernel's own errno. The core parses only what was copied (a pointer it may write to).
#pragma once
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/uio.h>

enum {
    LNP_SOCKADDR_CAPACITY = 128,  // sizeof(struct sockaddr_storage): the most the kernel reads
    LNP_CONTROL_CAPACITY = 256,   // control messages copied; longer ones are read in place
    LNP_OPTION_CAPACITY = 512,    // the largest option lnp reads: an IPv6 routing header of 31 segments
    LNP_MESSAGE_BATCH = 8,        // sendmmsg messages copied and sent at a time
};

/// Whether `pointer` may be user memory: not the zero page, and not above any user address
/// space (x86-64 user addresses end below 2^56 even with 5-level paging; arm64's below 2^52,
/// and its top byte may carry a tag, which the kernel ignores). The kernel answers EFAULT for
/// the others, so they go to it unread.
static inline int lnp_is_plausible(const void *pointer) {
    uintptr_t address = (uintptr_t)pointer;
#if defined(__aarch64__)
    return address >= 4096 && (address & 0x00f0000000000000ull) == 0;
#else
    return address - 4096 < (1ull << 56) - 4096;  // 4096 <= address < 2^56, in one comparison
#endif
}

/// Copies `count` bytes, whole words first, reading no byte past `count`. No call: the
/// sizes of a sockaddr_in and a sockaddr_in6 are copied as moves, and the empty asm keeps
/// the compiler from turning the loops back into a call of memcpy.
static inline void lnp_copy_bytes(void *destination, const void *source, size_t count) {
    unsigned char *to = (unsigned char *)destination;
    const unsigned char *from = (const unsigned char *)source;
    if (count == 16) {
        __builtin_memcpy(to, from, 16);
        return;
    }
    if (count == 28) {
        __builtin_memcpy(to, from, 28);
        return;
    }
    size_t i = 0;
    for (; i + 8 <= count; i += 8) {
        uint64_t word;
        __builtin_memcpy(&word, from + i, 8);
        __asm__ volatile("" : "+r"(word));
        __builtin_memcpy(to + i, &word, 8);
    }
    for (; i < count; i++) {
        unsigned char byte = from[i];
        __asm__ volatile("" : "+r"(byte));
        to[i] = byte;
    }
}

struct lnp_sockaddr_copy {
    _Alignas(8) unsigned char bytes[LNP_SOCKADDR_CAPACITY];
};

/// The `sockaddr` of connect, sendto and bind: copied when the kernel will read it (a length
/// up to 128). Returns the copy, or NULL when nothing was copied (the kernel answers).
static inline void *lnp_copy_sockaddr_or_null(struct lnp_sockaddr_copy *copy, const void *address, uint32_t length) {
    if (!lnp_is_plausible(address) || length > LNP_SOCKADDR_CAPACITY) return 0;  // NULL too
    lnp_copy_bytes(copy->bytes, address, length);
    return copy->bytes;
}

/// The same; the pointer to pass on: the copy, or the program's own when nothing was copied.
static inline void *lnp_copy_sockaddr(struct lnp_sockaddr_copy *copy, const void *address, uint32_t length) {
    void *copied = lnp_copy_sockaddr_or_null(copy, address, length);
    return copied ? copied : (void *)address;
}

struct lnp_message_copy {
    struct msghdr header;
    struct lnp_sockaddr_copy name;
    _Alignas(8) unsigned char control[LNP_CONTROL_CAPACITY];
};

/// Copies a message's name and control messages into `copy` and points `header` at them.
/// The kernel reads at most 128 bytes of a name, whatever msg_namelen says (a length with
/// the top bit set it refuses), and that is what is copied. Control messages longer than
/// LNP_CONTROL_CAPACITY stay where they are.
static inline void lnp_copy_message_parts(struct msghdr *header, struct lnp_sockaddr_copy *name,
                                          unsigned char control[LNP_CONTROL_CAPACITY]) {
    if (header->msg_name && lnp_is_plausible(header->msg_name) && (int)header->msg_namelen > 0) {
        uint32_t length = header->msg_namelen < LNP_SOCKADDR_CAPACITY ? header->msg_namelen : LNP_SOCKADDR_CAPACITY;
        lnp_copy_bytes(name->bytes, header->msg_name, length);
        header->msg_name = name->bytes;
    }
    if (header->msg_control && header->msg_controllen > 0 && header->msg_controllen <= LNP_CONTROL_CAPACITY &&
        lnp_is_plausible(header->msg_control)) {
        lnp_copy_bytes(control, header->msg_control, header->msg_controllen);
        header->msg_control = control;
    }
}

/// The message of sendmsg, copied; the header to pass on (the program's own when the kernel
/// will refuse it unread).
static inline struct msghdr *lnp_copy_message(struct lnp_message_copy *copy, const struct msghdr *message) {
    if (!message || !lnp_is_plausible(message)) return (struct msghdr *)message;
    __builtin_memcpy(&copy->header, message, sizeof copy->header);
    lnp_copy_message_parts(&copy->header, &copy->name, copy->control);
    return &copy->header;
}

/// `struct mmsghdr`, declared here because glibc shows it only under _GNU_SOURCE.
struct lnp_mmsghdr {
    struct msghdr msg_hdr;
    unsigned int msg_len;
};

/// A run of sendmmsg's messages, copied: the headers side by side, as sendmmsg takes them.
struct lnp_message_batch {
    struct lnp_mmsghdr headers[LNP_MESSAGE_BATCH];
    struct lnp_sockaddr_copy names[LNP_MESSAGE_BATCH];
    _Alignas(8) unsigned char controls[LNP_MESSAGE_BATCH][LNP_CONTROL_CAPACITY];
};

/// Copies `count` (at most LNP_MESSAGE_BATCH) messages into `batch`.
static inline void lnp_copy_batch(struct lnp_message_batch *batch, const struct lnp_mmsghdr *messages, unsigned count) {
    for (unsigned i = 0; i < count; i++) {
        struct msghdr *header = &batch->headers[i].msg_hdr;
        __builtin_memcpy(&batch->headers[i], &messages[i], sizeof batch->headers[i]);
        // The usual message first, as lnp_copy_message_parts would copy it: an IPv4 name
        // and no control messages.
        if (header->msg_namelen == 16 && !header->msg_control && lnp_is_plausible(header->msg_name)) {
            __builtin_memcpy(batch->names[i].bytes, header->msg_name, 16);
            header->msg_name = batch->names[i].bytes;
            continue;
        }
        lnp_copy_message_parts(header, &batch->names[i], batch->controls[i]);
    }
}

struct lnp_option_copy {
    _Alignas(8) unsigned char bytes[LNP_OPTION_CAPACITY];
};

/// A setsockopt value: the first LNP_OPTION_CAPACITY bytes at most; how many were copied.
static inline uint32_t lnp_copy_option(struct lnp_option_copy *copy, const void *value, uint32_t length) {
    if (!value || !lnp_is_plausible(value)) return 0;
    uint32_t copied = length < LNP_OPTION_CAPACITY ? length : LNP_OPTION_CAPACITY;
    lnp_copy_bytes(copy->bytes, value, copied);
    return copied;
}

enum { LNP_NAME_SERVER_CAPACITY = 3 };  // MAXNS

/// The name servers a resolver state will ask, copied out of it (CShim/hooks/resolver.c).
struct lnp_name_servers {
    unsigned count;
    uint32_t lengths[LNP_NAME_SERVER_CAPACITY];
    struct lnp_sockaddr_copy addresses[LNP_NAME_SERVER_CAPACITY];
};

static inline const void *lnp_name_server(const struct lnp_name_servers *servers, unsigned index) {
    return servers->addresses[index].bytes;
}

static inline uint32_t lnp_name_server_length(const struct lnp_name_servers *servers, unsigned index) {
    return servers->lengths[index];
}

// --- What a message says beyond its destination ----------------------------------------

enum { LNP_IP_PKTINFO = 8, LNP_IPV6_PKTINFO = 50 };  // <netinet/in.h>, the same on every Linux

/// The output interface a message's control messages force (an IP_PKTINFO or IPV6_PKTINFO
/// with an interface index), or 0, as the kernel reads them: for IPv4 the last IP_PKTINFO
/// wins (an index of 0 clears the ones before); for IPv6 the first index given stays (a
/// different one later is refused). Walks the control messages as CMSG_NXTHDR does, within
/// msg_controllen.
static inline uint32_t lnp_control_interface(const struct msghdr *header) {
    const unsigned char *control = (const unsigned char *)header->msg_control;
    size_t length = header->msg_controllen;
    if (!lnp_is_plausible(control)) return 0;
    size_t offset = 0;
    int32_t v4 = 0, v6 = 0;
    while (offset + sizeof(struct cmsghdr) <= length) {
        struct cmsghdr message;
        __builtin_memcpy(&message, control + offset, sizeof message);
        if (message.cmsg_len < sizeof(struct cmsghdr) || message.cmsg_len > length - offset) return 0;
        const unsigned char *data = control + offset + CMSG_LEN(0);
        if (message.cmsg_level == IPPROTO_IP && message.cmsg_type == LNP_IP_PKTINFO && message.cmsg_len >= CMSG_LEN(12)) {
            __builtin_memcpy(&v4, data, 4);  // struct in_pktinfo: the index first
        } else if (message.cmsg_level == IPPROTO_IPV6 && message.cmsg_type == LNP_IPV6_PKTINFO &&
                   message.cmsg_len >= CMSG_LEN(20) && v6 <= 0) {
            __builtin_memcpy(&v6, data + 16, 4);  // struct in6_pktinfo: the address, then the index
        }
        offset += CMSG_ALIGN(message.cmsg_len);
    }
    if (v4 > 0) return (uint32_t)v4;
    return v6 > 0 ? (uint32_t)v6 : 0;
}

enum { LNP_IP_RETOPTS = 7, LNP_IP_OPTIONS_CAPACITY = 40 };  // <linux/in.h>; MAX_IPOPTLEN
enum { LNP_IPV6_2292RTHDR = 5, LNP_IPV6_RTHDR = 57 };          // <linux/in6.h>

/// The data of the last control message of `level` and `type` (or `other_type`) among the
/// `length` bytes at `control` (each such message replaces those before, as the kernel reads
/// them), or NULL; its length in `data_length`. Walks them as CMSG_NXTHDR does.
static inline const unsigned char *lnp_control_last(const unsigned char *control, size_t length, int level, int type,
                                                    int other_type, uint32_t *data_length) {
    const unsigned char *found = NULL;
    size_t offset = 0;
    if (!lnp_is_plausible(control)) return NULL;
    while (offset + sizeof(struct cmsghdr) <= length) {
        struct cmsghdr message;
        __builtin_memcpy(&message, control + offset, sizeof message);
        if (message.cmsg_len < sizeof(struct cmsghdr) || message.cmsg_len > length - offset) return NULL;
        if (message.cmsg_level == level && (message.cmsg_type == type || message.cmsg_type == other_type)) {
            found = control + offset + sizeof(struct cmsghdr);
            *data_length = (uint32_t)(message.cmsg_len - sizeof(struct cmsghdr));
        }
        offset += CMSG_ALIGN(message.cmsg_len);
    }
    return found;
}

/// The IPv4 options a message's control messages give (IP_RETOPTS; the kernel reads at most
/// 40 bytes of it), or NULL.
static inline const unsigned char *lnp_control_ip_options(const struct msghdr *header, uint32_t *length) {
    const unsigned char *options = lnp_control_last((const unsigned char *)header->msg_control, header->msg_controllen,
                                                    IPPROTO_IP, LNP_IP_RETOPTS, LNP_IP_RETOPTS, length);
    if (options && *length > LNP_IP_OPTIONS_CAPACITY) *length = LNP_IP_OPTIONS_CAPACITY;
    return options;
}

/// The IPv6 routing header control messages give (IPV6_RTHDR, IPV6_2292RTHDR), or NULL:
/// those of a message, or those IPV6_2292PKTOPTIONS sets for a socket.
static inline const unsigned char *lnp_control_routing_header(const unsigned char *control, size_t length,
                                                              uint32_t *header_length) {
    return lnp_control_last(control, length, IPPROTO_IPV6, LNP_IPV6_RTHDR, LNP_IPV6_2292RTHDR, header_length);
}

enum { LNP_PACKET_HEADER_CAPACITY = 60, LNP_PACKET_PIECES = 16 };

/// A packet a raw socket sends with its own IP header: the message rebuilt so that its first
/// bytes (up to 60: the largest IPv4 header, an IPv6 one and then some) come from lnp's copy,
/// and the rest from the program's buffers. The header lnp reads is then the header the
/// kernel sends.
struct lnp_packet_copy {
    struct msghdr header;
    struct iovec pieces[LNP_PACKET_PIECES + 1];
    _Alignas(8) unsigned char ip_header[LNP_PACKET_HEADER_CAPACITY];
    uint32_t header_length;
};

/// Rebuilds `message` (lnp's copy of the header) into `copy`. 0, or -1 when its data lies in
/// more than LNP_PACKET_PIECES buffers or cannot be read: the caller then reads the header
/// where it is.
static inline int lnp_copy_packet(struct lnp_packet_copy *copy, const struct msghdr *message) {
    const struct iovec *pieces = message->msg_iov;
    size_t count = message->msg_iovlen;
    if (count > LNP_PACKET_PIECES || (count > 0 && !lnp_is_plausible(pieces))) return -1;
    copy->header = *message;
    uint32_t taken = 0;
    size_t out = 1;
    for (size_t i = 0; i < count; i++) {
        const unsigned char *base = (const unsigned char *)pieces[i].iov_base;
        size_t length = pieces[i].iov_len, used = 0;
        if (taken < LNP_PACKET_HEADER_CAPACITY && length > 0) {
            if (!lnp_is_plausible(base)) return -1;
            used = LNP_PACKET_HEADER_CAPACITY - taken < length ? LNP_PACKET_HEADER_CAPACITY - taken : length;
            lnp_copy_bytes(copy->ip_header + taken, base, used);
            taken += (uint32_t)used;
        }
        if (used < length) copy->pieces[out++] = (struct iovec){.iov_base = (void *)(base + used), .iov_len = length - used};
    }
    copy->pieces[0] = (struct iovec){.iov_base = copy->ip_header, .iov_len = taken};
    copy->header.msg_iov = copy->pieces;
    copy->header.msg_iovlen = out;
    copy->header_length = taken;
    return 0;
}

static inline const unsigned char *lnp_packet_header(const struct lnp_packet_copy *copy) { return copy->ip_header; }
static inline struct msghdr *lnp_packet_message(struct lnp_packet_copy *copy) { return &copy->header; }

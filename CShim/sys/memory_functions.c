// The memory functions the compiler calls (memcpy, memmove, memset), defined inside liblnp.so
// and hidden, so that its calls bind here at link time rather than through the PLT:
// - a PLT entry is bound on its first call, and binding saves every vector register on the
//   stack (about 2.7 KB with AVX-512) wherever that call happens — deep inside a hook, maybe
//   in a signal handler on a small alternate stack;
// - glibc's memcpy is versioned GLIBC_2.14, and each version node beyond the base one costs
//   every wrapped process string comparisons at start-up (about 250 instructions each).
// The sizes lnp copies are small (a sockaddr, a record buffer's parts).
#include <stddef.h>
#include <stdint.h>

#define HIDDEN __attribute__((visibility("hidden")))
// The loops below must not be turned back into calls of the functions they define.
#define NO_BUILTIN __attribute__((no_builtin))

HIDDEN NO_BUILTIN void *memmove(void *destination, const void *source, size_t count) {
    unsigned char *to = destination;
    const unsigned char *from = source;
#if defined(__x86_64__)
    if (to <= from || to >= from + count) {
        __asm__ volatile("rep movsb" : "+D"(to), "+S"(from), "+c"(count) : : "memory");
    } else {  // overlapping, destination above: copy from the end
        to += count - 1;
        from += count - 1;
        __asm__ volatile("std\n\trep movsb\n\tcld" : "+D"(to), "+S"(from), "+c"(count) : : "memory");
    }
#else
    if (to <= from || to >= from + count) {
        for (size_t i = 0; i < count; i++) to[i] = from[i];
    } else {
        for (size_t i = count; i > 0; i--) to[i - 1] = from[i - 1];
    }
#endif
    return destination;
}

HIDDEN NO_BUILTIN void *memcpy(void *destination, const void *source, size_t count) {
    return memmove(destination, source, count);
}

HIDDEN NO_BUILTIN void *memset(void *destination, int value, size_t count) {
    unsigned char *to = destination;
#if defined(__x86_64__)
    __asm__ volatile("rep stosb" : "+D"(to), "+c"(count) : "a"(value) : "memory");
#else
    for (size_t i = 0; i < count; i++) to[i] = (unsigned char)value;
#endif
    return destination;
}

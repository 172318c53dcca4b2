// GNU extensions of the C library that Swift's Glibc module does not show (it is built
// without _GNU_SOURCE). Declared here as glibc declares them.
const char *strerrorname_np(int errnum);

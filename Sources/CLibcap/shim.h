// libcap, to read a program's file capabilities (the loader ignores LD_PRELOAD for them).
#include <sys/capability.h>

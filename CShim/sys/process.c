// Clocks and the environment, as the C library provides them (gettimeofday goes through
// the vDSO: no system call).
#include "lnp_sys.h"
#include <sys/time.h>

extern char **environ;

char **lnp_sys_environ(void) { return environ; }

int64_t lnp_sys_half_seconds(void) {
    struct timeval now = {0, 0};
    gettimeofday(&now, NULL);
    return (int64_t)now.tv_sec * 2 + now.tv_usec / 500000;
}

void lnp_sys_realtime(int64_t *seconds, int32_t *microseconds) {
    struct timeval now = {0, 0};
    gettimeofday(&now, NULL);
    *seconds = now.tv_sec;
    *microseconds = (int32_t)now.tv_usec;
}

// sendmmsg in runs of copied messages (lnp_batches.h). The kernel sends messages one by one
// and stops at the first it cannot send, returning how many went; sending runs one after
// another keeps that, since a run is sent only when the one before went whole.
#include <errno.h>
#include <limits.h>
#include <sys/uio.h>
#include "lnp_batches.h"
#include "lnp_core.h"

long lnp_send_in_batches(int fd, struct lnp_mmsghdr *messages, unsigned count, int flags, lnp_send_run_fn send) {
    if (!messages || !lnp_is_plausible(messages) || count == 0) return send(fd, messages, count, flags);
    if (count > UIO_MAXIOV) count = UIO_MAXIOV;  // the kernel sends no more in one call
    unsigned sent = 0;
    while (sent < count) {
        struct lnp_message_batch batch;
        unsigned run = count - sent < LNP_MESSAGE_BATCH ? count - sent : LNP_MESSAGE_BATCH;
        lnp_copy_batch(&batch, messages + sent, run);
        int allowed = lnp_gate_sendmmsg(fd, batch.headers, run, flags);
        if (allowed < 0) {
            if (sent > 0) break;
            errno = -allowed;
            return -1;
        }
        long result = send(fd, batch.headers, (unsigned)allowed, flags);
        if (result < 0) {
            if (sent > 0) break;  // as the kernel: what went is the result
            return -1;
        }
        for (long i = 0; i < result; i++) messages[sent + i].msg_len = batch.headers[i].msg_len;
        sent += (unsigned)result;
        if ((unsigned)result < run) break;  // the kernel stopped, or lnp denied the rest
    }
    return sent;
}

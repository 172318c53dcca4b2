// sendmmsg in runs of copied messages (lnp_batches.h). The kernel sends messages one by one
// and stops at the first it cannot send, returning how many went; sending runs one after
// another keeps that, since a run is sent only when the one before went whole.
#include <errno.h>
#include <limits.h>
#include <sys/uio.h>
#include "lnp_batches.h"
#include "lnp_core.h"

// A raw socket that writes its own IP header, or a stream to the system bus: each message
// through lnp_sendmsg, which decides the header (or the bus stream's bytes) on a copy it
// hands the kernel (a copy per message of a whole run would not fit on the stack).
static long send_one_by_one(int fd, struct lnp_mmsghdr *messages, unsigned count, int flags) {
    unsigned sent = 0;
    for (; sent < count; sent++) {
        struct lnp_message_copy copy;
        long result = lnp_sendmsg_watching(fd, lnp_copy_message(&copy, &messages[sent].msg_hdr), flags);
        if (result < 0) {
            if (sent > 0) break;
            return -1;
        }
        messages[sent].msg_len = (unsigned)result;
    }
    return sent;
}

long lnp_send_in_batches(int fd, struct lnp_mmsghdr *messages, unsigned count, int flags, lnp_send_run_fn send) {
    if (!messages || !lnp_is_plausible(messages) || count == 0) return send(fd, messages, count, flags);
    if (count > UIO_MAXIOV) count = UIO_MAXIOV;  // the kernel sends no more in one call
    if (lnp_send_one_by_one(fd)) return send_one_by_one(fd, messages, count, flags);
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

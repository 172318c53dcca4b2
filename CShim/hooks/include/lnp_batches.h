// sendmmsg's messages, copied and decided a run at a time (lnp_copy.h).
#pragma once
#include "lnp_copy.h"

/// Sends a run of messages: the next sendmmsg, or the system call.
typedef long (*lnp_send_run_fn)(int fd, struct lnp_mmsghdr *messages, unsigned count, int flags);

/// sendmmsg, made of runs of LNP_MESSAGE_BATCH copied messages, each decided and then sent
/// as lnp's copy: how many messages went (each one's msg_len written back), or -1 with errno
/// when the first could not go. Messages before the first denied one are sent.
long lnp_send_in_batches(int fd, struct lnp_mmsghdr *messages, unsigned count, int flags, lnp_send_run_fn send);

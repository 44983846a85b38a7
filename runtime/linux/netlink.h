/* rtnetlink (by hand: one request and its ACK). */
#ifndef BRIG_NETLINK_H
#define BRIG_NETLINK_H

#include "../util/error.h"

/* Bring up "lo" in the current network namespace. */
int netlink_lo_up(struct brig_error **err);

#endif

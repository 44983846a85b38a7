/* The loopback link of a new network namespace. */
#ifndef BRIG_LOOPBACK_H
#define BRIG_LOOPBACK_H

#include "../util/error.h"

/* Bring up "lo" in the current network namespace (a no-op when it is up). */
int loopback_up(struct brig_error **err);

#endif

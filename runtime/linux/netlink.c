/* STUB: to be implemented. */
#include "netlink.h"
#include <stdlib.h>

int netlink_lo_up(struct brig_error **err)
{
    return brig_failx(err, "netlink_lo_up: not implemented");
}

/* STUB: to be implemented. */
#include "rootfs.h"
#include <stdlib.h>

int devices_populate(int rootfd, const struct brig_spec *s, bool in_userns, struct brig_error **err)
{
    return brig_failx(err, "devices_populate: not implemented");
}

/* STUB: to be implemented. */
#include "rootfs.h"
#include <stdlib.h>

int mounts_apply(int rootfd, const struct brig_spec *s, bool in_userns, struct brig_error **err)
{
    return brig_failx(err, "mounts_apply: not implemented");
}

/* STUB: to be implemented. */
#include "rootfs.h"
#include <stdlib.h>

int rootfs_prepare(const struct brig_spec *s, int *rootfd, struct brig_error **err)
{
    return brig_failx(err, "rootfs_prepare: not implemented");
}

int rootfs_pivot(int rootfd, const struct brig_spec *s, bool no_pivot, struct brig_error **err)
{
    return brig_failx(err, "rootfs_pivot: not implemented");
}

int rootfs_finish(const struct brig_spec *s, struct brig_error **err)
{
    return brig_failx(err, "rootfs_finish: not implemented");
}

/* STUB: to be implemented. */
#include "rootfs.h"
#include <stdlib.h>

int paths_mask_readonly(const struct brig_spec *s, struct brig_error **err)
{
    return brig_failx(err, "paths_mask_readonly: not implemented");
}

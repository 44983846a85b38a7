/* STUB: to be implemented. */
#include "caps.h"
#include <stdlib.h>

int caps_from_name(const char *name)
{
    return 0;
}

int caps_last_cap(void)
{
    return 0;
}

int caps_apply(const struct brig_caps *caps, struct brig_error **err)
{
    return brig_failx(err, "caps_apply: not implemented");
}

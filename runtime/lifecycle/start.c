/* STUB: to be implemented. */
#include "container.h"
#include <stdlib.h>

int container_start(const struct brig_globals *g, const char *id, struct brig_error **err)
{
    return brig_failx(err, "container_start: not implemented");
}

/* STUB: to be implemented. */
#include "container.h"
#include <stdlib.h>

int container_state(const struct brig_globals *g, const char *id, struct brig_error **err)
{
    return brig_failx(err, "container_state: not implemented");
}

int container_list(const struct brig_globals *g, bool json, bool quiet, struct brig_error **err)
{
    return brig_failx(err, "container_list: not implemented");
}

/* STUB: to be implemented. */
#include "container.h"
#include <stdlib.h>

int container_delete(const struct brig_globals *g, const char *id, bool force, struct brig_error **err)
{
    return brig_failx(err, "container_delete: not implemented");
}

/* STUB: to be implemented. */
#include "container.h"
#include <stdlib.h>

int container_create(const struct brig_globals *g, const struct brig_create_opts *o, struct brig_error **err)
{
    return brig_failx(err, "container_create: not implemented");
}

int container_run(const struct brig_globals *g, const struct brig_create_opts *o, int *exit_status, struct brig_error **err)
{
    return brig_failx(err, "container_run: not implemented");
}

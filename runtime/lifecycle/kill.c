/* STUB: to be implemented. */
#include "container.h"
#include <stdlib.h>

int container_kill(const struct brig_globals *g, const char *id, int sig, bool all, struct brig_error **err)
{
    return brig_failx(err, "container_kill: not implemented");
}

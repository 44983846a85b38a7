/* STUB: to be implemented. */
#include "hooks.h"
#include <stdlib.h>

int hooks_run(const struct brig_spec *s, enum brig_hook_kind kind, const char *state_json, struct brig_error **err)
{
    return brig_failx(err, "hooks_run: not implemented");
}

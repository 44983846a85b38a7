/* STUB: to be implemented. */
#include "identity.h"
#include <stdlib.h>

int identity_apply(const struct brig_user *u, bool in_userns, struct brig_error **err)
{
    return brig_failx(err, "identity_apply: not implemented");
}

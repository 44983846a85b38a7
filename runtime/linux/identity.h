/* process.user: supplementary groups, gid, uid, umask. */
#ifndef BRIG_IDENTITY_H
#define BRIG_IDENTITY_H

#include <stdbool.h>

#include "../config/spec.h"

/* setgroups (skipped when setgroups is denied in a user ns and no
 * additionalGids are asked), setresgid, setresuid with PR_SET_KEEPCAPS so
 * caps_apply can still set the requested sets; umask if given. */
int identity_apply(const struct brig_user *u, bool in_userns, struct brig_error **err);
/* What identity_apply would fail at after `start`, checked before
 * "created" (as runc fails create): an id that is -1, or, in a new user namespace, one
 * its mappings leave out (setresuid/setresgid/setgroups: EINVAL). */
int identity_validate(const struct brig_spec *s, bool new_userns, struct brig_error **err);

#endif

/* process.capabilities through libcap. */
#ifndef BRIG_CAPS_H
#define BRIG_CAPS_H

#include <stdbool.h>

#include "../config/spec.h"

/* Capability name ("CAP_SYS_ADMIN") -> number, -1 if unknown here. */
int caps_from_name(const char *name);
/* Highest capability number this kernel knows. */
int caps_last_cap(void);
/* Whether cap is in any of caps' sets (the bounding one included). */
bool caps_in_any_set(const struct brig_caps *caps, int cap);

/* Drop the bounding set to caps->sets[BOUNDING], then set permitted,
 * effective and inheritable with capset, then the ambient set. Runs after
 * identity_apply() (which keeps the permitted set across setuid). */
int caps_apply(const struct brig_caps *caps, struct brig_error **err);
/* What caps_apply would refuse, checked by the parent before "created"
 * (issue 13): an effective cap outside the permitted set. */
int caps_validate(const struct brig_caps *caps, bool in_userns, struct brig_error **err);
/* Make the permitted set effective again after identity_apply switched to
 * a non-root uid (which empties the effective set). */
int caps_raise_effective_all(struct brig_error **err);

#endif

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

/* process.capabilities in two steps, so that after the identity switch
 * only syscalls remain (util/noheap.h). caps_plan, before identity_apply:
 * the sets this host can grant, checked, with warnings for what it drops.
 * caps_plan_apply, after identity_apply (which keeps the permitted set
 * across setuid): drop the bounding set, then set permitted, effective
 * and inheritable with capset, then the ambient set; no heap. */
struct caps_plan {
    uint64_t sets[BRIG_CAP_SET_COUNT];
    int last;                   /* caps_last_cap */
};
int caps_plan(const struct brig_caps *caps, struct caps_plan *out, struct brig_error **err);
int caps_plan_apply(const struct caps_plan *pl, struct brig_error **err);
/* What caps_apply would refuse, checked by the parent before "created"
 * (as runc fails create): an effective cap outside the permitted set. */
int caps_validate(const struct brig_caps *caps, bool in_userns, struct brig_error **err);
/* Make the permitted set effective again after identity_apply switched to
 * a non-root uid (which empties the effective set). */
int caps_raise_effective_all(struct brig_error **err);

#endif

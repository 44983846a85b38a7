/* The cgroup commands of the lifecycle (runc's pause, resume, update and
 * events), and the cgroup-derived parts of the state (paused, OOM kills). */
#ifndef BRIG_CGROUP_OPS_H
#define BRIG_CGROUP_OPS_H

#include <stdbool.h>
#include <stdint.h>

#include "../config/spec.h"
#include "container.h"
#include "state.h"

/* Freeze / thaw every process of a created or running container. */
int container_pause(const struct brig_globals *g, const char *id, struct brig_error **err);
int container_resume(const struct brig_globals *g, const char *id, struct brig_error **err);
/* Apply the fields set in r to the running container's cgroup. */
int container_update(const struct brig_globals *g, const char *id, const struct brig_resources *r,
                     struct brig_error **err);
/* runc's `events`: with stats_only one {"type":"stats",...} line; otherwise
 * a stats line every interval_ms and an {"type":"oom"} line for every OOM
 * kill, until the container stops. */
int container_events(const struct brig_globals *g, const char *id, bool stats_only,
                     long interval_ms, struct brig_error **err);

/* --cgroup-manager disabled: refuse what only a cgroup could enforce (any
 * linux.resources limit, a device rule a CAP_MKNOD holder could get past, a
 * policy, whose limits are cgroup limits), naming the field. */
int cgroup_disabled_check(const struct brig_spec *s, bool policy, struct brig_error **err);

/* status, or BRIG_STATUS_PAUSED when a created/running container's cgroup
 * is frozen (runc's "paused"). */
enum brig_status cgroup_ops_status(const struct brig_state *st, enum brig_status status);
/* OOM kills counted by the container's memory cgroup; false if unknown
 * (no cgroup recorded, no memory controller, cgroup already removed). */
bool cgroup_ops_oom_kills(const struct brig_state *st, uint64_t *n);

#endif

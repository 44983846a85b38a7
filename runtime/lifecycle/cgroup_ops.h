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

/* No cgroup (--cgroup-manager disabled, or rootless_why: a rootless brig
 * without a delegated cgroup v2 subtree, this sentence saying why): refuse
 * what only a cgroup could enforce (any linux.resources limit, a device
 * rule a CAP_MKNOD holder could get past, a policy's limits), naming the
 * field, and rootless also how to get a cgroup. */
int cgroup_disabled_check(const struct brig_spec *s, bool policy, const char *rootless_why,
                          struct brig_error **err);
/* How a rootless user gets a delegated cgroup v2 subtree (docs/rootless.md). */
#define CGROUP_DELEGATION_FIX                                                                      \
    "run brig on a host with cgroup v2 only (systemd.unified_cgroup_hierarchy=1 on the kernel "   \
    "command line) inside the subtree systemd delegates to your user: under your user manager "   \
    "(loginctl enable-linger USER; systemd-run --user --scope brig ...) or in a unit with User= " \
    "and Delegate=yes (docs/rootless.md)"

/* status, or BRIG_STATUS_PAUSED when a created/running container's cgroup
 * is frozen (runc's "paused"). */
enum brig_status cgroup_ops_status(const struct brig_state *st, enum brig_status status);
/* OOM kills counted by the container's memory cgroup; false if unknown
 * (no cgroup recorded, no memory controller, cgroup already removed). */
bool cgroup_ops_oom_kills(const struct brig_state *st, uint64_t *n);

#endif

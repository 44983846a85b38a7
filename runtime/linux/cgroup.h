/* Cgroups for one container: layout detection (unified / hybrid / legacy),
 * creation, limits from linux.resources, placement, kill and removal.
 * Fail closed: a limit that no mounted hierarchy can enforce is an error
 * naming the field and the missing controller. */
#ifndef BRIG_CGROUP_H
#define BRIG_CGROUP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../config/spec.h"

struct brig_cgroup;

/* Resolve linux.cgroupsPath (absolute, relative to the caller's cgroup, or
 * "slice:prefix:name" with systemd), create the cgroup(s) and apply every
 * limit. On failure nothing is left behind. */
int cgroup_create(const struct brig_spec *s, const char *id, bool systemd,
                  struct brig_cgroup **out, struct brig_error **err);
/* A v2 leaf directory fd usable with CLONE_INTO_CGROUP, or -1. */
int cgroup_clone_fd(const struct brig_cgroup *cg);
/* Put pid into every hierarchy not already joined via cgroup_clone_fd. */
int cgroup_attach(const struct brig_cgroup *cg, pid_t pid, bool cloned_into, struct brig_error **err);
/* Serialized form for the state file, and back. */
char *cgroup_serialize(const struct brig_cgroup *cg);
int cgroup_load(const char *serialized, struct brig_cgroup **out, struct brig_error **err);
/* Signal every process in the container's cgroup. */
int cgroup_kill(const struct brig_cgroup *cg, int sig, struct brig_error **err);
/* Pids in the cgroup (for ps, kill --all). */
int cgroup_pids(const struct brig_cgroup *cg, pid_t **pids, size_t *n, struct brig_error **err);
/* Freeze (pause) or thaw (resume) every process of the container: v2
 * cgroup.freeze (waits for cgroup.events "frozen 1"), else the v1 freezer. */
int cgroup_freeze(const struct brig_cgroup *cg, bool freeze, struct brig_error **err);
bool cgroup_frozen(const struct brig_cgroup *cg);
/* Processes of the container killed by the OOM killer so far (v2
 * memory.events oom_kill, v1 memory.oom_control oom_kill). */
int cgroup_oom_kills(const struct brig_cgroup *cg, uint64_t *n, struct brig_error **err);
/* Kill what is left and remove every directory brig created. */
int cgroup_destroy(struct brig_cgroup *cg, struct brig_error **err);
void cgroup_free(struct brig_cgroup *cg);

#endif

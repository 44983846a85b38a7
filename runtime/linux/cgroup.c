/* STUB: to be implemented. */
#include "cgroup.h"
#include <stdlib.h>

int cgroup_create(const struct brig_spec *s, const char *id, bool systemd, struct brig_cgroup **out, struct brig_error **err)
{
    return brig_failx(err, "cgroup_create: not implemented");
}

int cgroup_clone_fd(const struct brig_cgroup *cg)
{
    return 0;
}

int cgroup_attach(const struct brig_cgroup *cg, pid_t pid, bool cloned_into, struct brig_error **err)
{
    return brig_failx(err, "cgroup_attach: not implemented");
}

char * cgroup_serialize(const struct brig_cgroup *cg)
{
    return NULL;
}

int cgroup_load(const char *serialized, struct brig_cgroup **out, struct brig_error **err)
{
    return brig_failx(err, "cgroup_load: not implemented");
}

int cgroup_kill(const struct brig_cgroup *cg, int sig, struct brig_error **err)
{
    return brig_failx(err, "cgroup_kill: not implemented");
}

int cgroup_pids(const struct brig_cgroup *cg, pid_t **pids, size_t *n, struct brig_error **err)
{
    return brig_failx(err, "cgroup_pids: not implemented");
}

int cgroup_destroy(struct brig_cgroup *cg, struct brig_error **err)
{
    return brig_failx(err, "cgroup_destroy: not implemented");
}

void cgroup_free(struct brig_cgroup *cg)
{
    
}

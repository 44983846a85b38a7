/* `update` (runc's update): new limits for a running container. The same
 * plan as at create decides where each field goes and refuses what cannot
 * be enforced before anything is written; then the same writers apply only
 * the fields that are set. Device rules are not touched: the allowlist is
 * fixed at create, as with runc. */
#include <string.h>

#include "cgroup_internal.h"
#include "../../util/log.h"

/* The hierarchy of the layout that holds dir (by mount point prefix). */
static const struct cg_hier *update_hier_of(const struct cg_layout *l, const char *dir)
{
    for (size_t i = 0; i < l->n; i++) {
        size_t ml = strlen(l->h[i].mnt);
        if (strncmp(dir, l->h[i].mnt, ml) == 0 && dir[ml] == '/') return &l->h[i];
    }
    return NULL;
}

/* Every controller the plan puts on v2 must be enabled for the leaf: on
 * unified hosts create enabled all of them, but an update may name one
 * that a hybrid host's create did not need. */
static int update_enable_v2(const struct brig_cgroup *cg, const struct cg_layout *l,
                            const struct cg_plan *p, struct brig_error **err)
{
    const struct cg_dir *d = cg_dir_v2(cg);
    bool any = false;
    for (int c = 0; c < CG_CTRL_COUNT; c++)
        if (p->where[c] == CG_V2 && c != CG_DEVICES) any = true;
    if (!any) return 0;
    if (d == NULL)
        return brig_failx(err, "the container has no cgroup v2 directory (created on another "
                          "layout?)");
    const struct cg_hier *h = update_hier_of(l, d->path);
    if (h == NULL) return brig_failx(err, "%s is not below the cgroup v2 mount", d->path);
    return cgv2_enable_controllers(h->mnt, d->path, NULL, p, err);
}

/* pids.limit <= 0 means "no limit" (runc): create never needs to write it, a
 * fresh cgroup has none, so the plan does not ask for the controller. An
 * update must lift a limit that is there, wherever pids.max lives. */
static int update_lift_pids(const struct brig_cgroup *cg, const struct brig_resources *r,
                            struct brig_error **err)
{
    if (!r->pids.limit.set || r->pids.limit.v > 0) return 0;
    const struct cg_dir *d = cg_dir_v2(cg);
    if (d == NULL || !cg_file_exists(d->path, "pids.max")) d = cg_dir_v1(cg, "pids");
    if (d == NULL || !cg_file_exists(d->path, "pids.max")) return 0;   /* no limit to lift */
    return cg_write(d->path, "pids.max", "linux.resources.pids.limit", "max", err);
}

int cgroup_update(const struct brig_cgroup *cg, const struct brig_resources *r,
                  struct brig_error **err)
{
    struct cg_layout l = {0};
    struct cg_plan plan;
    if (r == NULL || !r->present) return 0;
    for (size_t i = 0; i < cg->n_dirs; i++)
        if (!cg_is_cgroupfs(cg->dirs[i].path))
            return brig_failx(err, "cgroup: %s is gone or not a cgroup", cg->dirs[i].path);
    if (cg_layout_detect(&l, err) < 0) return brig_wrap(err, "cgroup");
    int rc = cg_plan_make(&l, r, &plan, err);
    /* The device allowlist stays as created. */
    plan.where[CG_DEVICES] = CG_NONE;
    if (rc == 0 && r->n_devices > 0)
        rc = brig_failx(err, "linux.resources.devices: cannot be changed by update");
    if (rc == 0) rc = update_enable_v2(cg, &l, &plan, err);
    cg_layout_clear(&l);
    if (rc == 0) rc = cgv1_apply(cg, &plan, r, err);
    if (rc == 0) rc = cgv2_apply(cg, &plan, r, err);
    if (rc == 0) rc = update_lift_pids(cg, r, err);
    if (rc < 0) return brig_wrap(err, "cgroup update");
    brig_debug("cgroup: limits updated");
    return 0;
}

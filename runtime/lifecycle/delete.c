/* `delete` (runtime.md "Delete"): stop what is left of the container, run
 * the poststop hooks, remove its cgroup and its state directory. Nothing
 * may be left behind; if the cgroup cannot be removed the state stays so
 * that a later delete can retry. */
#include "container.h"
#include "init_proc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../config/spec.h"
#include "../../egress/egress.h"
#include "../linux/cgroup/cgroup.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/log.h"
#include "../util/strutil.h"
#include "cgroup_ops.h"
#include "hooks.h"
#include "launch.h"
#include "../../policy/policy.h"
#include "state.h"

#define DELETE_CONFIG_MAX (16u << 20)

/* The saved config, for poststop hooks. Absent when create died early. */
static struct brig_spec *delete_load_config(int dirfd, const struct brig_state *st)
{
    autofree char *text = NULL;
    size_t len = 0;
    autoerr struct brig_error *e = NULL;
    /* a salvaged state may not know its bundle: no hooks then */
    if (st->bundle == NULL) return NULL;
    if (faccessat(dirfd, "config.json", F_OK, AT_SYMLINK_NOFOLLOW) < 0) return NULL;
    struct brig_spec *spec = NULL;
    if (brig_read_file_at(dirfd, "config.json", DELETE_CONFIG_MAX, &text, &len, &e) == 0 &&
        memmem(text, len, "poststop", 8) == NULL && memmem(text, len, "\\u", 2) == NULL) {
        /* Parsing the whole config (~0.5 ms, most of delete after `run`)
         * only to find no poststop hook: in JSON the key can only be spelled
         * literally or with backslash-u escapes, and neither is there. */
        brig_debug("delete %s: no poststop hooks in the saved config.json", st->id);
        return NULL;
    }
    if (e != NULL || spec_parse(text, len, st->bundle, &spec, &e) < 0) {
        brig_warn("delete %s: cannot read the saved config.json, poststop hooks are not run: %s",
                  st->id, e->msg);
        return NULL;
    }
    return spec;
}

static void delete_poststop(const struct brig_spec *spec, const struct brig_state *st)
{
    if (spec == NULL || spec->hooks[BRIG_HOOK_POSTSTOP].n == 0) return;
    autofree char *json = state_to_oci_json(st, BRIG_STATUS_STOPPED, false);
    autofree char *ctx = brig_asprintf("delete %s", st->id);
    hooks_run_warn(spec, BRIG_HOOK_POSTSTOP, json, ctx);
}

/* No mount namespace of its own: what the container mounted is in the
 * host's (or the joined) namespace, below the root's bind; detached once
 * its processes are gone. Failing, the state stays for a later delete,
 * unless --force (a warning then: the mounts stay). */
static int delete_shared_mnt(const struct brig_state *st, bool force, struct brig_error **err)
{
    if (!st->has_shared_mnt) return 0;
    autoerr struct brig_error *e = NULL;
    if (rootfs_shared_detach(st->rootfs, &st->shared_mnt, &e) == 0) return 0;
    if (!force) return brig_failx(err, "%s", e->msg);
    brig_warn("delete --force %s: its mounts below %s stay: %s", st->id, st->rootfs ? st->rootfs : "?", e->msg);
    return 0;
}

static int delete_state_unreadable(const struct brig_globals *g, const char *id, bool force,
                                   struct brig_error **err)
{
    /* A create that died before its first state write leaves an empty
     * directory: nothing runs, so --force may clean it up. Any other
     * unreadable state could hide a live process and is reported. */
    if (force && err != NULL && *err != NULL && (*err)->errnum == ENOENT) {
        brig_warn("delete %s: no state.json, removing the leftover state directory", id);
        brig_error_freep(err);
        return state_dir_remove(g->root, id, err);
    }
    return brig_wrap(err, "container %s", id);
}

/* state.json is there but state_read refuses it (too large, cut short,
 * corrupt): --force ends the container from what it still says (the init,
 * its cgroup), rather than strand a running init behind a file no command
 * can read. */
static int delete_salvage(int dirfd, const char *id, struct brig_state **st,
                          struct brig_error **err)
{
    autoerr struct brig_error *why = steal_ptr(err);
    autoerr struct brig_error *e = NULL;
    if (state_read_salvage(dirfd, id, st, &e) < 0)
        return brig_failx(err, "container %s: %s; %s: remove its state directory by hand once "
                          "its processes and cgroup are gone", id, why->msg, e->msg);
    brig_warn("delete --force %s: %s; deleting from what it still says (init %d, %s)", id,
              why->msg, (int)(*st)->pid, (*st)->cgroup != NULL ? "its cgroup" : "no cgroup");
    return 0;
}

/* A staged workspace (policy/workspace/): what the container wrote goes
 * back into the workspace, then the stage is unmounted; if the write-back
 * fails the stage goes all the same (no mount is left behind), and the
 * error says what was not written. */
static int delete_stage(int dirfd, const char *id, struct brig_error **err)
{
    if (policy_stage_commit(dirfd, true, err) == 0) return 0;
    policy_stage_discard(dirfd);
    return brig_wrap(err, "delete %s", id);
}

static int delete_unaudited(const struct brig_globals *g, const char *id, bool force, struct brig_error **err)
{
    autoclose int dirfd = -1;
    if (state_dir_open(g->root, id, &dirfd, err) < 0) {
        /* containerd calls `delete --force` after `delete`: a container
         * that is already gone is success then. */
        if (force && err != NULL && *err != NULL && (*err)->errnum == ENOENT) {
            brig_debug("delete --force %s: does not exist", id);
            brig_error_freep(err);
            return 0;
        }
        return -1;
    }
    autostate struct brig_state *st = NULL;
    if (state_read(dirfd, &st, err) < 0) {
        if (!force || err == NULL || *err == NULL || (*err)->errnum == ENOENT)
            return delete_state_unreadable(g, id, force, err);
        TRY(delete_salvage(dirfd, id, &st, err));
    }

    enum brig_status status = cgroup_ops_status(st, state_status(dirfd, st));
    brig_debug("delete %s: status %s", id, state_status_name(status));
    if ((status == BRIG_STATUS_RUNNING || status == BRIG_STATUS_PAUSED) && !force)
        return brig_failx(err, "cannot delete container %s that is not stopped: %s", id,
                          state_status_name(status));

    struct brig_cgroup *cg = NULL;
    if (st->cgroup != NULL && cgroup_load(st->cgroup, &cg, err) < 0)
        return brig_wrap(err, "delete %s", id);

    int rc = 0;
    /* creating: we hold the lock, so the create that owned it is dead. */
    if (status != BRIG_STATUS_STOPPED) rc = init_kill_all(st, cg, err);
    else egress_wait_gone(cg);      /* the init's own end: its proxy may still be writing */
    if (rc == 0) rc = delete_shared_mnt(st, force, err);
    if (rc == 0 && cg != NULL) rc = cgroup_destroy(cg, err);
    if (cg != NULL) cgroup_free(cg);
    if (rc < 0) return brig_wrap(err, "delete %s", id);

    struct brig_spec *spec = delete_load_config(dirfd, st);
    rc = delete_stage(dirfd, id, err);
    if (rc < 0 && force) {     /* the stage is gone either way: nothing is left behind */
        brig_warn("%s", (*err)->msg);
        brig_error_freep(err);
        rc = 0;
    }
    if (rc == 0) rc = state_dir_remove(g->root, id, err);
    if (rc == 0) delete_poststop(spec, st);
    if (spec != NULL) spec_free(spec);
    return rc;
}

static int delete_launched(struct launch *L, const char *id, struct brig_error **err)
{
    /* The init is reaped: the egress proxy ends with the sandbox, its
     * audit lines written, before the cgroup it runs in goes. */
    egress_stop(steal_ptr(&L->egress));
    policy_watch_stop(steal_ptr(&L->wswatch));
    autoerr struct brig_error *le = NULL;
    if (state_relock(L->dirfd, id, &le) < 0) {
        /* removed while it ran (delete --force from elsewhere): done, as
         * delete --force of a container that is gone */
        if (le->errnum != ENOENT) return brig_failx(err, "%s", le->msg);
        brig_debug("delete %s: removed while it ran", id);
        return 0;
    }
    TRY(delete_shared_mnt(L->st, false, err));
    /* Stopped: run reaped the init. What is left in the cgroup (no pid
     * namespace) is killed by cgroup_destroy, as for delete. */
    if (L->cg != NULL && cgroup_destroy(L->cg, err) < 0) return brig_wrap(err, "delete %s", id);
    int rc = delete_stage(L->dirfd, id, err);
    autoerr struct brig_error *rerr = NULL;
    if (state_dir_remove_known(L->rootfd, L->dirfd, id, rc < 0 ? &rerr : err) < 0 && rc == 0) return -1;
    if (rc < 0) return -1;
    delete_poststop(L->spec, L->st);
    return 0;
}

int launch_delete(struct launch *L, const char *id, struct brig_error **err)
{
    int rc = delete_launched(L, id, err);
    policy_audit_op_resolved(L->policy, "delete", id, true, rc < 0 ? 1 : 0, false, 0);
    return rc;
}

/* One audit line per operation under the policy in force (policy/). */
int container_delete(const struct brig_globals *g, const char *id, bool force, struct brig_error **err)
{
    int rc = delete_unaudited(g, id, force, err);
    policy_audit_op(g->policy, "delete", id, true, rc < 0 ? 1 : 0, false, 0);
    return rc;
}

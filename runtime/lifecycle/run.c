/* run: create + start in one process, then wait for the container and
 * return its exit status (128+N for a signal), forwarding signals to it
 * and, with process.terminal, relaying its pty to our terminal. */
#include "container.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../config/spec.h"
#include "../../policy/policy.h"
#include "../linux/cgroup/cgroup.h"
#include "../linux/sync.h"
#include "../util/cleanup.h"
#include "../util/log.h"
#include "../util/strutil.h"
#include "hooks.h"
#include "launch.h"
#include "state.h"
#include "waiter.h"

static uint64_t monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The audit line of a finished run: exit status, duration and the memory
 * peak from the container's cgroup (read only when a policy is in force). */
static void run_audit(const struct brig_policy *p, const char *id, const struct brig_cgroup *cg,
                      int status, uint64_t duration_ms)
{
    if (p == NULL) return;
    autoerr struct brig_error *e = NULL;
    struct policy_audit_event ev = {
        .op = "run", .id = id, .has_exit_status = true, .exit_status = status,
        .has_duration = true, .duration_ms = duration_ms,
    };
    struct cgroup_stats cs = {0};
    if (cg != NULL && cgroup_stats_read(cg, &cs, NULL) == 0 && cs.has_memory && cs.mem_max > 0) {
        ev.has_memory_peak = true;
        ev.memory_peak = cs.mem_max;
    }
    cgroup_stats_clear(&cs);
    if (policy_audit(p, &ev, &e) < 0) brig_warn("run %s: audit: %s", id, e->msg);
}

int container_run(const struct brig_globals *g, const struct brig_create_opts *o, int *exit_status,
                  struct brig_error **err)
{
    /* Blocked before the clone so none is lost; the init unblocks them. */
    sigset_t set, old;
    waiter_signals(&set);
    sigprocmask(SIG_BLOCK, &set, &old);

    struct launch L;
    if (launch_container(&L, g, o, true, err) < 0) {
        sigprocmask(SIG_SETMASK, &old, NULL);
        return -1;
    }
    /* Unlocked, not closed: state/kill may look at it while it runs, and
     * the delete after it locks the same directory again. Run from brig's
     * unsealed binary, only once the init has exec'd the trampoline: until
     * then no `brig exec` may put a process beside it (create.c,
     * launch_seal_decide). */
    if (!L.trampoline) flock(L.dirfd, LOCK_UN);

    uint64_t started = monotonic_ms();
    int rc = 0;
    if (L.console_fd >= 0) rc = waiter_pty_prepare(L.console_fd, err);
    autofree char *start_json = launch_start_json(&L);
    if (rc == 0) rc = sync_send(L.sync_fd, SYNC_START, start_json, err);
    if (rc == 0) rc = sync_wait_exec(L.sync_fd, err);
    if (L.trampoline) flock(L.dirfd, LOCK_UN);
    if (rc == 0 && hooks_any(L.spec, BRIG_HOOK_POSTSTART, BRIG_HOOK_POSTSTART)) {
        /* A failing poststart hook stops the container (start.c): run
         * reaps it below, deletes it and fails, --detach or not. */
        autofree char *json = state_to_oci_json(L.st, BRIG_STATUS_RUNNING, false);
        rc = hooks_run(L.spec, BRIG_HOOK_POSTSTART, json, err);
        if (rc < 0) {
            kill(L.pid, SIGKILL);
            if (L.cg != NULL) cgroup_kill(L.cg, SIGKILL, NULL);
        }
    }
    if (rc == 0 && o->detach) {
        *exit_status = 0;
        launch_release(&L);
        sigprocmask(SIG_SETMASK, &old, NULL);
        return 0;
    }

    int status;
    if (rc == 0 && L.console_fd >= 0) {
        /* process.terminal without --console-socket: attached to our terminal */
        rc = waiter_attach_pty(L.pid, L.console_fd, &set, &status, err);
    } else {
        status = waiter_forward(L.pid, &set);
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    run_audit(L.policy, o->id, L.cg, status, monotonic_ms() - started);
    brig_closep(&L.sync_fd);
    if (rc < 0) brig_wrap(err, "run %s", o->id);
    *exit_status = status;

    /* The init is reaped: what `delete --force` would do, with what we hold. */
    if (!o->keep) {
        struct brig_error *derr = NULL;
        if (launch_delete(&L, o->id, &derr) < 0) {
            if (rc == 0) {
                if (err) *err = derr;
                launch_release(&L);
                return -1;
            }
            brig_warn("%s", derr->msg);
            brig_error_free(derr);
        }
    }
    launch_release(&L);
    return rc;
}

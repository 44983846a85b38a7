/* pause, resume, update and events: the lifecycle operations that act on
 * the container's cgroup (runc's commands of those names; the OCI runtime
 * spec does not define them). Status rules follow runc: pause needs a
 * created or running container, resume a paused one, update a live one. */
#include "cgroup_ops.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../policy/policy.h"
#include "../config/json.h"
#include "../linux/cgroup/cgroup.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/log.h"
#include "../util/strutil.h"

static void ops_cgroup_freep(struct brig_cgroup **cg)
{
    if (cg != NULL) cgroup_free(*cg);
}
#define autocg __attribute__((cleanup(ops_cgroup_freep)))

static int ops_load_cgroup(const struct brig_state *st, struct brig_cgroup **cg,
                           struct brig_error **err)
{
    if (st->cgroup == NULL)
        return brig_failx(err, "container %s has no cgroup recorded in its state", st->id);
    return cgroup_load(st->cgroup, cg, err);
}

enum brig_status cgroup_ops_status(const struct brig_state *st, enum brig_status status)
{
    if ((status != BRIG_STATUS_RUNNING && status != BRIG_STATUS_CREATED) || st->cgroup == NULL)
        return status;
    autocg struct brig_cgroup *cg = NULL;
    if (cgroup_load(st->cgroup, &cg, NULL) < 0) return status;
    return cgroup_frozen(cg) ? BRIG_STATUS_PAUSED : status;
}

bool cgroup_ops_oom_kills(const struct brig_state *st, uint64_t *n)
{
    autocg struct brig_cgroup *cg = NULL;
    if (st->cgroup == NULL || cgroup_load(st->cgroup, &cg, NULL) < 0) return false;
    return cgroup_oom_kills(cg, n, NULL) == 0;
}

/* Lock the container, read its state and its live status (paused included). */
static int ops_open(const struct brig_globals *g, const char *id, int *dirfd,
                    struct brig_state **st, enum brig_status *status, struct brig_error **err)
{
    TRY(state_dir_open(g->root, id, dirfd, err));
    if (state_read(*dirfd, st, err) < 0) return brig_wrap(err, "container %s", id);
    *status = cgroup_ops_status(*st, state_status(*dirfd, *st));
    return 0;
}

static int ops_freeze(const struct brig_globals *g, const char *id, bool pause,
                      struct brig_error **err)
{
    autoclose int dirfd = -1;
    autostate struct brig_state *st = NULL;
    enum brig_status status = BRIG_STATUS_STOPPED;
    TRY(ops_open(g, id, &dirfd, &st, &status, err));
    const char *cmd = pause ? "pause" : "resume";
    if (pause && status == BRIG_STATUS_PAUSED)
        return brig_failx(err, "pause %s: container is already paused", id);
    if (pause && status != BRIG_STATUS_RUNNING && status != BRIG_STATUS_CREATED)
        return brig_failx(err, "pause %s: container is not running (%s)", id, state_status_name(status));
    if (!pause && status != BRIG_STATUS_PAUSED)
        return brig_failx(err, "resume %s: container is not paused (%s)", id, state_status_name(status));
    autocg struct brig_cgroup *cg = NULL;
    if (ops_load_cgroup(st, &cg, err) < 0 || cgroup_freeze(cg, pause, err) < 0)
        return brig_wrap(err, "%s %s", cmd, id);
    brig_debug("%s %s: done", cmd, id);
    return 0;
}

int container_pause(const struct brig_globals *g, const char *id, struct brig_error **err)
{
    return ops_freeze(g, id, true, err);
}

int container_resume(const struct brig_globals *g, const char *id, struct brig_error **err)
{
    return ops_freeze(g, id, false, err);
}

#define OPS_OPT(dst, src) do { if ((src).set) (dst) = (src); } while (0)

/* Under a sandbox policy an update is judged as create was: the saved
 * config.json with the update's limits in place, so `update --pids-limit
 * -1` cannot lift what the policy bounds. What the check cannot judge here
 * (raw unified keys, device rules) is refused under a policy. */
static int ops_update_judge(const struct brig_globals *g, const char *id, int dirfd,
                            const struct brig_state *st, const struct brig_resources *r,
                            struct brig_error **err)
{
    autopolicy struct brig_policy *p = NULL;
    TRY(policy_resolve_text(g->policy, g->policy_text, &p, err));
    if (p == NULL) return 0;
    if (r->n_unified > 0 || r->n_devices > 0)
        return brig_failx(err, "update %s: linux.resources.%s cannot be judged by the sandbox policy: "
                          "refused under a policy", id, r->n_unified > 0 ? "unified" : "devices");
    autofree char *text = NULL;
    size_t len = 0;
    autospec struct brig_spec *spec = NULL;
    if (brig_read_file_at(dirfd, "config.json", 16u << 20, &text, &len, err) < 0 ||
        spec_parse(text, len, st->bundle, &spec, err) < 0)
        return brig_wrap(err, "update %s: the container's saved config.json", id);
    struct brig_resources *cur = &spec->linux_cfg.resources;
    cur->present = true;
    OPS_OPT(cur->memory.limit, r->memory.limit);
    OPS_OPT(cur->memory.reservation, r->memory.reservation);
    OPS_OPT(cur->memory.swap, r->memory.swap);
    OPS_OPT(cur->memory.kernel, r->memory.kernel);
    OPS_OPT(cur->memory.kernel_tcp, r->memory.kernel_tcp);
    OPS_OPT(cur->cpu.shares, r->cpu.shares);
    OPS_OPT(cur->cpu.period, r->cpu.period);
    OPS_OPT(cur->cpu.quota, r->cpu.quota);
    OPS_OPT(cur->cpu.burst, r->cpu.burst);
    OPS_OPT(cur->cpu.realtime_period, r->cpu.realtime_period);
    OPS_OPT(cur->cpu.realtime_runtime, r->cpu.realtime_runtime);
    OPS_OPT(cur->cpu.idle, r->cpu.idle);
    OPS_OPT(cur->pids.limit, r->pids.limit);
    return policy_enforce_resolved(p, spec, "update", id, err);
}

int container_update(const struct brig_globals *g, const char *id, const struct brig_resources *r,
                     struct brig_error **err)
{
    autoclose int dirfd = -1;
    autostate struct brig_state *st = NULL;
    enum brig_status status = BRIG_STATUS_STOPPED;
    TRY(ops_open(g, id, &dirfd, &st, &status, err));
    if (status == BRIG_STATUS_STOPPED || status == BRIG_STATUS_CREATING)
        return brig_failx(err, "update %s: container is not running (%s)", id, state_status_name(status));
    TRY(ops_update_judge(g, id, dirfd, st, r, err));
    autocg struct brig_cgroup *cg = NULL;
    if (ops_load_cgroup(st, &cg, err) < 0 || cgroup_update(cg, r, err) < 0)
        return brig_wrap(err, "update %s", id);
    /* The limits live in the cgroup only: state.json records where the
     * cgroup is, not what it holds, so there is nothing else to rewrite. */
    return 0;
}

/* ---- events ------------------------------------------------------------ */

static void ops_stats_json(struct brig_jw *w, const char *id, const struct cgroup_stats *s)
{
    jw_obj_open(w);
    jw_kstr(w, "type", "stats");
    jw_kstr(w, "id", id);
    jw_key(w, "data");
    jw_obj_open(w);
    if (s->has_cpu) {
        jw_key(w, "cpu");
        jw_obj_open(w);
        jw_key(w, "usage");
        jw_obj_open(w);
        jw_ku64(w, "total", s->cpu_total);
        if (s->n_percpu > 0) {
            jw_key(w, "percpu");
            jw_arr_open(w);
            for (size_t i = 0; i < s->n_percpu; i++) jw_u64(w, s->percpu[i]);
            jw_arr_close(w);
        }
        jw_ku64(w, "kernel", s->cpu_kernel);
        jw_ku64(w, "user", s->cpu_user);
        jw_obj_close(w);
        jw_key(w, "throttling");
        jw_obj_open(w);
        jw_ku64(w, "periods", s->periods);
        jw_ku64(w, "throttled_periods", s->throttled_periods);
        jw_ku64(w, "throttled_time", s->throttled_time);
        jw_obj_close(w);
        jw_obj_close(w);
    }
    if (s->has_memory) {
        jw_key(w, "memory");
        jw_obj_open(w);
        jw_ku64(w, "cache", s->mem_cache);
        jw_key(w, "usage");
        jw_obj_open(w);
        jw_ku64(w, "limit", s->mem_limit);
        jw_ku64(w, "usage", s->mem_usage);
        jw_ku64(w, "max", s->mem_max);
        jw_ku64(w, "failcnt", s->mem_failcnt);
        jw_obj_close(w);
        if (s->has_swap) {
            jw_key(w, "swap");
            jw_obj_open(w);
            jw_ku64(w, "limit", s->swap_limit);
            jw_ku64(w, "usage", s->swap_usage);
            jw_ku64(w, "max", s->swap_max);
            jw_ku64(w, "failcnt", s->swap_failcnt);
            jw_obj_close(w);
        }
        if (s->n_raw > 0) {
            jw_key(w, "raw");
            jw_obj_open(w);
            for (size_t i = 0; i < s->n_raw; i++) jw_ku64(w, s->raw_keys[i], s->raw_vals[i]);
            jw_obj_close(w);
        }
        /* Not in runc's format: the OOM kills the kernel counted. */
        if (s->has_oom) jw_ku64(w, "oom_kills", s->oom_kills);
        jw_obj_close(w);
    }
    if (s->has_pids) {
        jw_key(w, "pids");
        jw_obj_open(w);
        jw_ku64(w, "current", s->pids_current);
        jw_ku64(w, "limit", s->pids_limit);
        jw_obj_close(w);
    }
    jw_obj_close(w);
    jw_obj_close(w);
}

static int ops_print_line(const char *text, struct brig_error **err)
{
    if (printf("%s\n", text) < 0 || fflush(stdout) == EOF) return brig_fail(err, errno, "write stdout");
    return 0;
}

static int ops_print_stats(const struct brig_cgroup *cg, const char *id, struct brig_error **err)
{
    struct cgroup_stats s;
    TRY(cgroup_stats_read(cg, &s, err));
    autojw struct brig_jw *w = jw_new(false);
    ops_stats_json(w, id, &s);
    cgroup_stats_clear(&s);
    const char *text = jw_text(w, NULL);
    if (text == NULL) return brig_failx(err, "events: cannot format the stats");
    return ops_print_line(text, err);
}

static int ops_print_oom(const char *id, struct brig_error **err)
{
    autojw struct brig_jw *w = jw_new(false);
    jw_obj_open(w);
    jw_kstr(w, "type", "oom");
    jw_kstr(w, "id", id);
    jw_obj_close(w);
    return ops_print_line(jw_text(w, NULL), err);
}

static long long ops_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A process is in cg (false once it is gone or unreadable). */
static bool ops_cgroup_has_procs(const struct brig_cgroup *cg)
{
    autofree pid_t *pids = NULL;
    size_t n = 0;
    return cgroup_pids(cg, &pids, &n, NULL) == 0 && n > 0;
}

/* OOM kills are counted, not queued: poll the counter often (cheap: one
 * small file) and print one event per kill since the last look. */
#define EVENTS_POLL_MS 100

int container_events(const struct brig_globals *g, const char *id, bool stats_only,
                     long interval_ms, struct brig_error **err)
{
    if (interval_ms <= 0) return brig_failx(err, "events: --interval must be positive");
    /* Unlocked: events runs for the container's lifetime and must not
     * block kill, pause or delete. */
    autoclose int dirfd = -1;
    autostate struct brig_state *st = NULL;
    TRY(state_dir_open_unlocked(g->root, id, &dirfd, err));
    autofree char *broken = NULL;
    if (state_read_tolerant(dirfd, id, &st, &broken, err) < 0) return brig_wrap(err, "container %s", id);
    enum brig_status status = state_status(dirfd, st);
    /* A broken entry's stats are its cgroup's, while it has processes. */
    if (broken != NULL) {
        if (st->cgroup == NULL)
            return brig_failx(err, "events %s: %s, and it is cut before its cgroup", id, broken);
        brig_warn("events %s: %s; reporting the cgroup it still names", id, broken);
        status = BRIG_STATUS_RUNNING;
    }
    if (status == BRIG_STATUS_STOPPED || status == BRIG_STATUS_CREATING)
        return brig_failx(err, "events %s: container is not running (%s)", id, state_status_name(status));
    autocg struct brig_cgroup *cg = NULL;
    if (ops_load_cgroup(st, &cg, err) < 0) return brig_wrap(err, "events %s", id);
    if (stats_only) {
        if (ops_print_stats(cg, id, err) < 0) return brig_wrap(err, "events %s", id);
        return 0;
    }
    uint64_t seen = 0, now_kills = 0;
    bool have_oom = cgroup_oom_kills(cg, &seen, NULL) == 0;
    brig_debug("events %s: every %ld ms, oom counter %s", id, interval_ms, have_oom ? "read" : "absent");
    long long next = ops_now_ms();
    for (;;) {
        bool alive = broken != NULL ? ops_cgroup_has_procs(cg) : state_status(dirfd, st) != BRIG_STATUS_STOPPED;
        if (have_oom && cgroup_oom_kills(cg, &now_kills, NULL) == 0) {
            for (; seen < now_kills; seen++) TRY(ops_print_oom(id, err));
        }
        if (!alive) break;
        if (ops_now_ms() >= next) {
            autoerr struct brig_error *e = NULL;
            if (ops_print_stats(cg, id, &e) < 0) {
                if (e->errnum == EPIPE) return brig_failx(err, "events %s: %s", id, e->msg);
                brig_debug("events %s: %s", id, e->msg);
            }
            next += interval_ms;
            if (next < ops_now_ms()) next = ops_now_ms() + interval_ms;
        }
        long long wait = next - ops_now_ms();
        if (wait > EVENTS_POLL_MS) wait = EVENTS_POLL_MS;
        if (wait > 0) {
            struct timespec ts = {wait / 1000, (wait % 1000) * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
    brig_debug("events %s: container stopped", id);
    return 0;
}

/* Which linux.resources field asks for a limit, or NULL: the devices list
 * is judged apart (cgroup_disabled_check). */
static const char *ops_resource_limit(const struct brig_resources *r)
{
    if (r->memory.limit.set || r->memory.reservation.set || r->memory.swap.set ||
        r->memory.kernel.set || r->memory.kernel_tcp.set || r->memory.swappiness.set ||
        r->memory.has_disable_oom_killer)
        return "linux.resources.memory";
    if (r->cpu.shares.set || r->cpu.period.set || r->cpu.realtime_period.set || r->cpu.burst.set ||
        r->cpu.quota.set || r->cpu.realtime_runtime.set || r->cpu.idle.set || r->cpu.cpus != NULL ||
        r->cpu.mems != NULL)
        return "linux.resources.cpu";
    if (r->pids.limit.set) return "linux.resources.pids";
    if (r->block_io.has_weight || r->block_io.has_leaf_weight || r->block_io.n_weight_devices ||
        r->block_io.n_throttle_read_bps || r->block_io.n_throttle_write_bps ||
        r->block_io.n_throttle_read_iops || r->block_io.n_throttle_write_iops)
        return "linux.resources.blockIO";
    if (r->n_hugepage_limits) return "linux.resources.hugepageLimits";
    if (r->network.has_class_id || r->network.n_priorities) return "linux.resources.network";
    if (r->n_rdma) return "linux.resources.rdma";
    if (r->n_unified) return "linux.resources.unified";
    return NULL;
}

int cgroup_disabled_check(const struct brig_spec *s, bool policy, const char *rootless_why,
                          struct brig_error **err)
{
    /* Rootless, it is said why there is no cgroup and how to get one. */
    autofree char *none = rootless_why == NULL
                              ? brig_strdup("--cgroup-manager disabled makes no cgroup to enforce it")
                              : brig_asprintf("rootless brig (uid %u) has no cgroup to enforce it: %s. "
                                              "To get one, %s", (unsigned)geteuid(), rootless_why,
                                              CGROUP_DELEGATION_FIX);
    if (policy && rootless_why != NULL)
        return brig_failx(err, "the sandbox policy's limits: rootless brig (uid %u) has no cgroup to "
                          "enforce them: %s. To get one, %s; or let the policy run without its limits "
                          "when rootless (\"rootless\": {\"limits\": \"optional\"})",
                          (unsigned)geteuid(), rootless_why, CGROUP_DELEGATION_FIX);
    if (policy)
        return brig_failx(err, "--cgroup-manager disabled: the sandbox policy's limits are "
                               "cgroup limits, refusing to run without a cgroup");
    if (!s->has_linux || !s->linux_cfg.resources.present) return 0;
    const struct brig_resources *r = &s->linux_cfg.resources;
    const char *field = ops_resource_limit(r);
    if (field != NULL) return brig_failx(err, "%s: %s", field, none);
    /* Device rules are the cgroup's; without one only the nodes brig makes
     * exist, unless the process can make more: a rootless brig's never can
     * (mknod of a device needs CAP_MKNOD on the host). */
    bool userns = s->linux_cfg.namespaces[BRIG_NS_USER].present || rootless_why != NULL;
    if (r->n_devices > 0 && !userns && s->process.has_caps &&
        (s->process.caps.sets[BRIG_CAP_BOUNDING] & (1ull << 27 /* CAP_MKNOD */)))
        return brig_failx(err, "linux.resources.devices: --cgroup-manager disabled makes no "
                               "cgroup to enforce them, and CAP_MKNOD is in the bounding set");
    return 0;
}
